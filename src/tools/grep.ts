/**
 * `Grep { pattern, path?, glob?, output_mode?, -i?, -n? }`: a JavaScript RegExp searched line by line in the files
 * under a directory, or in one file (Claude Code's Grep, without ripgrep).
 *
 * Decisions:
 * - The pattern is a JavaScript RegExp without flags (`-i` adds `i`), tested against each line (`\n`-separated, a
 *   trailing `\r` removed); ripgrep-only syntax such as `(?i)` is an invalid pattern.
 * - `path` (default cwd) may be a directory or a file, confined like Glob's search directory (a rule
 *   `Grep(/tmp/xyz/**)` also allows `/tmp/xyz`). The walk is Glob's `walkFiles`: `node_modules` and `.git`
 *   skipped, symlinked directories not followed, symlinked files only when they lead inside the search directory;
 *   hidden files are searched and `.gitignore` is not read.
 * - `glob` filters the walked files: a glob without `/` is matched against the file name (`*.ts`), one with `/`
 *   against the path relative to `path` (`src/**\/*.ts`); several globs may be separated by spaces, and a leading
 *   `!` excludes. A file given as `path` is searched whatever `glob` says.
 * - Files are streamed in 64 KB chunks (no size limit); a file with a NUL byte in its first 8 KB is binary and
 *   skipped silently. `context.signal` is checked at every directory and every chunk.
 * - Output paths are absolute. `content`: `path:line` (`path:lineNo:line` with `-n`), lines cut at
 *   {@link MAX_LINE_CHARS} characters, in walk order; `count`: `path:count` of matching lines, in walk order;
 *   `files_with_matches`: paths, newest modification time first. At most {@link MAX_GREP_RESULT_LINES} lines,
 *   then the search stops with a note.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { z } from 'zod';
import { RESULT_BUDGETS, TOOL_TIMEOUTS } from '../contracts/defaults.js';
import { ToolUseError, defineTool } from './define-tool.js';
import type { ValidationOutcome } from './define-tool.js';
import { GlobSyntaxError, checkSearchPath, compileGlob, walkFiles } from './glob.js';
import type { WalkedFile } from './glob.js';
import { resolveToolPath } from './paths.js';

/** Largest number of result lines before the search stops. */
export const MAX_GREP_RESULT_LINES = 10_000;

/** Characters of a matching line shown in `content` mode. */
export const MAX_LINE_CHARS = 500;

const BINARY_SNIFF_BYTES = 8_192;
const CHUNK_BYTES = 64 * 1024;

export const GREP_TRUNCATED_NOTE = `(Results are truncated at ${MAX_GREP_RESULT_LINES} lines. Consider using a more specific path, glob or pattern.)`;

const grepInputSchema = z.strictObject({
  pattern: z.string().min(1).describe('JavaScript regular expression to search file contents for, line by line'),
  path: z.string().min(1).optional().describe('File or directory to search, absolute (inside cwd) or relative to cwd (default: cwd)'),
  glob: z
    .string()
    .min(1)
    .optional()
    .describe('Only search files matching this glob: "*.ts" matches file names, "src/**/*.{ts,tsx}" paths under path; separate several with spaces, prefix "!" to exclude'),
  output_mode: z
    .enum(['content', 'files_with_matches', 'count'])
    .optional()
    .describe('"content": matching lines; "files_with_matches": paths of matching files (default); "count": matching lines per file'),
  '-i': z.boolean().optional().describe('Case-insensitive search'),
  '-n': z.boolean().optional().describe('Prefix matching lines with their line numbers (content mode)'),
});

type GrepInput = z.infer<typeof grepInputSchema>;

/** The RegExp of a Grep call, or the `Invalid regular expression: …` message. */
export function compileGrepPattern(pattern: string, ignoreCase: boolean): RegExp | { error: string } {
  try {
    return new RegExp(pattern, ignoreCase ? 'i' : '');
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { error: message.startsWith('Invalid regular expression') ? message : `Invalid regular expression: ${message}` };
  }
}

/** A predicate over walked files from Grep's `glob` (see the module comment), or undefined when there is none. */
export function compileGlobFilter(glob: string | undefined): ((file: WalkedFile) => boolean) | undefined {
  const globs = (glob ?? '').split(/\s+/).filter((text) => text !== '');
  if (globs.length === 0) return undefined;
  const compiled = globs.map((text) => {
    const exclude = text.startsWith('!');
    const pattern = exclude ? text.slice(1) : text;
    return { exclude, byPath: pattern.includes('/'), regexp: compileGlob(pattern.replace(/^(?:\.\/)+/, '')) };
  });
  const includes = compiled.filter((entry) => !entry.exclude);
  const excludes = compiled.filter((entry) => entry.exclude);
  const test = (entry: (typeof compiled)[number], file: WalkedFile) => entry.regexp.test(entry.byPath ? file.relativePath : path.posix.basename(file.relativePath));
  return (file) => (includes.length === 0 || includes.some((entry) => test(entry, file))) && !excludes.some((entry) => test(entry, file));
}

type LineVisitor = (line: string, lineNumber: number) => 'stop' | undefined;

/** Feeds the lines of a text file to `visit`; false when the file is binary (and nothing was visited). */
async function scanLines(filePath: string, signal: AbortSignal, visit: LineVisitor): Promise<boolean> {
  const stream = createReadStream(filePath, { highWaterMark: CHUNK_BYTES });
  const decoder = new StringDecoder('utf8');
  const emit = (line: string, lineNumber: number) => visit(line.endsWith('\r') ? line.slice(0, -1) : line, lineNumber);
  let first = true;
  let carry = '';
  let lineNumber = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (first) {
        first = false;
        if (chunk.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return false;
      }
      signal.throwIfAborted();
      const lines = (carry + decoder.write(chunk)).split('\n');
      carry = lines.pop() ?? '';
      for (const line of lines) {
        lineNumber++;
        if (emit(line, lineNumber) === 'stop') return true;
      }
    }
    const last = carry + decoder.end();
    if (last !== '') emit(last, lineNumber + 1);
    return true;
  } finally {
    stream.destroy();
  }
}

function cutLine(line: string): string {
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}… [line truncated]` : line;
}

async function* filesToSearch(target: string, isDirectory: boolean, input: GrepInput, signal: AbortSignal): AsyncGenerator<WalkedFile> {
  if (!isDirectory) {
    yield { absolutePath: target, relativePath: path.basename(target) };
    return;
  }
  const filter = compileGlobFilter(input.glob);
  for await (const file of walkFiles(target, { signal })) {
    if (filter === undefined || filter(file)) yield file;
  }
}

export const grepTool = defineTool({
  name: 'Grep',
  aliases: ['search_file_content', 'grep'],
  description: 'Searches file contents under a directory for a JavaScript regular expression, line by line.',
  inputSchema: grepInputSchema,
  concurrentSafe: true,
  readOnly: true,
  sideEffectScope: 'none',
  idempotent: true,
  timeout: { defaultMs: TOOL_TIMEOUTS.other.defaultMs },
  resultBudget: RESULT_BUDGETS.Grep,
  ruleContent: (input) => input.path,
  ruleKind: 'path',
  summarize: (input) => (input.path === undefined ? input.pattern : `${input.pattern} in ${input.path}`),
  resolveInput: (input, context) => ({ ...input, path: resolveToolPath(context.cwd, input.path ?? '.') }),
  async validateInput(input, context): Promise<ValidationOutcome> {
    const compiled = compileGrepPattern(input.pattern, input['-i'] === true);
    if (!(compiled instanceof RegExp)) return { ok: false, message: compiled.error, errorCode: 'invalid_pattern' };
    try {
      compileGlobFilter(input.glob);
    } catch (error) {
      if (error instanceof GlobSyntaxError) return { ok: false, message: error.message, errorCode: 'invalid_glob' };
      throw error;
    }
    const target = resolveToolPath(context.cwd, input.path ?? '.');
    const escape = await checkSearchPath({ cwd: context.cwd, toolName: 'Grep', absolutePath: target, allowRules: context.allowRules });
    if (escape !== undefined) return { ok: false, message: escape, errorCode: 'path_escape' };
    const info = await stat(target).catch(() => undefined);
    if (info === undefined) return { ok: false, message: `Path does not exist: ${target}`, errorCode: 'not_found' };
    if (!info.isDirectory() && !info.isFile()) return { ok: false, message: `${target} is neither a file nor a directory`, errorCode: 'not_a_file' };
    return { ok: true };
  },
  async execute(input, context) {
    const regexp = compileGrepPattern(input.pattern, input['-i'] === true);
    if (!(regexp instanceof RegExp)) throw new ToolUseError(regexp.error, 'invalid_pattern');
    const target = resolveToolPath(context.cwd, input.path ?? '.');
    const info = await stat(target).catch(() => undefined);
    if (info === undefined) throw new ToolUseError(`Path does not exist: ${target}`, 'not_found');
    if (!info.isDirectory() && !info.isFile()) throw new ToolUseError(`${target} is neither a file nor a directory`, 'not_a_file');
    const mode = input.output_mode ?? 'files_with_matches';
    const lineNumbers = input['-n'] === true;
    const lines: string[] = [];
    const matchedFiles: string[] = [];
    let truncated = false;
    for await (const file of filesToSearch(target, info.isDirectory(), input, context.signal)) {
      context.signal.throwIfAborted();
      let count = 0;
      await scanLines(file.absolutePath, context.signal, (line, lineNumber) => {
        if (!regexp.test(line)) return undefined;
        count++;
        if (mode === 'files_with_matches') return 'stop';
        if (mode === 'content') {
          if (lines.length >= MAX_GREP_RESULT_LINES) {
            truncated = true;
            return 'stop';
          }
          lines.push(lineNumbers ? `${file.absolutePath}:${lineNumber}:${cutLine(line)}` : `${file.absolutePath}:${cutLine(line)}`);
        }
        return undefined;
      });
      if (count > 0 && mode === 'count') lines.push(`${file.absolutePath}:${count}`);
      if (count > 0 && mode === 'files_with_matches') matchedFiles.push(file.absolutePath);
      if (lines.length + matchedFiles.length > MAX_GREP_RESULT_LINES) {
        truncated = true;
        lines.length = Math.min(lines.length, MAX_GREP_RESULT_LINES);
        matchedFiles.length = Math.min(matchedFiles.length, MAX_GREP_RESULT_LINES);
      }
      if (truncated) break;
    }
    if (mode === 'files_with_matches') {
      const withTimes = await Promise.all(matchedFiles.map(async (file) => ({ file, mtimeMs: (await stat(file).catch(() => undefined))?.mtimeMs ?? 0 })));
      withTimes.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
      lines.push(...withTimes.map((entry) => entry.file));
    }
    if (lines.length === 0) return 'No matches found';
    if (truncated) lines.push(GREP_TRUNCATED_NOTE);
    return lines.join('\n');
  },
});
