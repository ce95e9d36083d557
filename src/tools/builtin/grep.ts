/**
 * `Grep { pattern, path?, glob?, output_mode?, -i?, -n? }`: a regular expression in ripgrep's syntax searched line by
 * line in the files under a directory, or in one file (Claude Code's Grep, without ripgrep).
 *
 * Decisions:
 * - The pattern is ripgrep's default regex syntax (`-i` ignores case), matched by re2js in time linear in the line,
 *   so no pattern can hang the worker; look-ahead and backreferences are refused with a message saying so (see
 *   `grep-pattern.ts` for the engine choice and the translation). Each line (`\n`-separated, a trailing `\r` removed)
 *   is tested on its own.
 * - `path` (default cwd) may be a directory or a file, confined like Glob's search directory (a rule
 *   `Grep(/tmp/xyz/**)` also allows `/tmp/xyz`). The walk is Glob's `walkFiles` (tinyglobby): `.git` never
 *   entered, files that `.gitignore` excludes and `node_modules` skipped unless `include_ignored` is true, symlinks
 *   neither followed nor searched, files a `Read(...)` deny rule names skipped (a denied file given as `path` is an
 *   error); hidden files are searched. At execution the path is checked again, and each file is judged on what was
 *   opened (as Read does): one that leads outside cwd and the search root, or to a denied place, ends the call when
 *   it is the `path`, and is skipped when the walk met it (a folder swapped for a link after the walk listed it).
 * - `glob` filters the walked files (Glob's dialect, `contracts/glob-match.ts`): a glob without `/` is matched against
 *   the file name (`*.ts`), one with `/` against the path relative to `path` (`src/**\/*.ts`); several globs may be separated by spaces, and a leading
 *   `!` excludes. A file given as `path` is searched whatever `glob` says.
 * - Files are streamed in 64 KB chunks and split at `\n` without re-scanning (`text-lines.ts`); a file with a NUL
 *   byte in its first 8 KB is binary and skipped silently. A line longer than `LIMITS.grepMaxLineChars`, or than
 *   `LIMITS.grepLineWork` / the pattern's program size, is not searched (one note counts them), which bounds both the
 *   memory of one line and the time one match holds the event loop. `context.signal` is checked at every directory
 *   and every chunk.
 * - Output paths are absolute. `content`: `path:line` (`path:lineNo:line` with `-n`), lines cut at
 *   {@link MAX_LINE_CHARS} characters, in walk order; `count`: `path:count` of matching lines, in walk order;
 *   `files_with_matches`: paths, newest modification time first. At most {@link MAX_GREP_RESULT_LINES} lines,
 *   then the search stops with a note.
 */
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { RESULT_BUDGETS, TOOL_TIMEOUTS } from '../../contracts/defaults.js';
import { ToolUseError, defineTool } from '../define-tool.js';
import type { ValidationOutcome } from '../define-tool.js';
import { GlobSyntaxError, compileGlob } from '../../contracts/glob-match.js';
import { checkSearchPath, searchRootNow, walkFiles } from './glob.js';
import type { WalkedFile } from './glob.js';
import { compileGrepPattern } from './grep-pattern.js';
import type { LinePattern } from './grep-pattern.js';
import { resolveLimit } from '../limits.js';
import { isInside, openFileProblem, realPathFacts, realPathOfOpenFile, resolveToolPath } from '../paths.js';
import type { OpenFileProblem } from '../paths.js';
import { createReadDenyFilter } from '../support/read-deny.js';
import type { ReadDenyFilter } from '../support/read-deny.js';
import { NotARegularFileError, detachString, openRegularFileWithStats, scanTextLines } from '../support/text-lines.js';
import { relativeToCwd, searchDisplay } from '../support/displays.js';
import { DISPLAY_LIMITS } from '../../contracts/defaults.js';

/** Largest number of result lines before the search stops. */
export const MAX_GREP_RESULT_LINES = 10_000;

/** Characters of a matching line shown in `content` mode. */
export const MAX_LINE_CHARS = 500;

export const GREP_TRUNCATED_NOTE = `(Results are truncated at ${MAX_GREP_RESULT_LINES} lines. Consider using a more specific path, glob or pattern.)`;

const grepInputSchema = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .describe("Regular expression in ripgrep's syntax to search file contents for, line by line"),
  path: z
    .string()
    .min(1)
    .optional()
    .describe('File or directory to search, absolute (inside cwd) or relative to cwd (default: cwd)'),
  glob: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Only search files matching this glob: "*.ts" matches file names, "src/**/*.{ts,tsx}" paths under path; separate several with spaces, prefix "!" to exclude',
    ),
  output_mode: z
    .enum(['content', 'files_with_matches', 'count'])
    .optional()
    .describe(
      '"content": matching lines; "files_with_matches": paths of matching files (default); "count": matching lines per file',
    ),
  '-i': z.boolean().optional().describe('Case-insensitive search'),
  '-n': z.boolean().optional().describe('Prefix matching lines with their line numbers (content mode)'),
  include_ignored: z
    .boolean()
    .optional()
    .describe('Also search files that .gitignore excludes and files under node_modules (default: false)'),
});

type GrepInput = z.infer<typeof grepInputSchema>;

/** The pattern of a Grep call, compiled under the worker's limits. */
function compileCallPattern(input: GrepInput): ReturnType<typeof compileGrepPattern> {
  return compileGrepPattern({
    pattern: input.pattern,
    ignoreCase: input['-i'] === true,
    maxPatternChars: resolveLimit('grepMaxPatternChars'),
  });
}

/** A predicate over walked files from Grep's `glob` (see the module comment), or undefined when there is none. */
export function compileGlobFilter(glob: string | undefined): ((file: WalkedFile) => boolean) | undefined {
  const globs = (glob ?? '').split(/\s+/).filter((text) => text !== '');
  if (globs.length === 0) return undefined;
  const compiled = globs.map((text) => {
    const exclude = text.startsWith('!');
    const pattern = exclude ? text.slice(1) : text;
    return { exclude, byPath: pattern.includes('/'), matcher: compileGlob(pattern.replace(/^(?:\.\/)+/, '')) };
  });
  const includes = compiled.filter((entry) => !entry.exclude);
  const excludes = compiled.filter((entry) => entry.exclude);
  const test = (entry: (typeof compiled)[number], file: WalkedFile) =>
    entry.matcher.test(entry.byPath ? file.relativePath : path.posix.basename(file.relativePath));
  return (file) =>
    (includes.length === 0 || includes.some((entry) => test(entry, file))) &&
    !excludes.some((entry) => test(entry, file));
}

/** Lines of one file that matched, and lines too long to search. */
interface FileScan {
  matches: number;
  skippedLines: number;
}

/**
 * Tests each line of a file against `pattern`, calling `onMatch` for each match (`stop` ends the file). Lines over
 * `maxLineChars` are not tested, only counted. Binary files and files that are no longer regular are skipped.
 */
async function scanFile(options: {
  filePath: string;
  pattern: LinePattern;
  maxLineChars: number;
  signal: AbortSignal;
  /** Why the file that was opened may not be read (checked on what was opened), or undefined. */
  openedProblem: (openedPath: string) => OpenFileProblem | undefined;
  /** A problem ends the call (the file named as `path`) instead of skipping the file (one met by the walk). */
  failOnProblem: boolean;
  onMatch: (line: string, lineNumber: number) => 'stop' | undefined;
}): Promise<FileScan> {
  const scan: FileScan = { matches: 0, skippedLines: 0 };
  let opened;
  try {
    opened = await openRegularFileWithStats(options.filePath);
  } catch (error) {
    // Gone or swapped for something else since the walk met it: nothing to search.
    if (error instanceof NotARegularFileError || (error as NodeJS.ErrnoException).code !== undefined) return scan;
    throw error;
  }
  const { handle } = opened;
  try {
    // What was opened, not what Prepare or the walk saw: a link retargeted since cannot lead the search elsewhere.
    const problem = options.openedProblem(await realPathOfOpenFile(handle, options.filePath));
    if (problem !== undefined) {
      if (options.failOnProblem) throw new ToolUseError(problem.message, problem.errorCode);
      return scan;
    }
    await scanTextLines({
      handle,
      size: opened.stats.size,
      signal: options.signal,
      keepChars: options.maxLineChars + 1,
      visit: (line) => {
        if (line.length > options.maxLineChars) {
          scan.skippedLines++;
          return undefined;
        }
        if (!options.pattern.test(line.text)) return undefined;
        scan.matches++;
        return options.onMatch(line.text, line.number);
      },
    });
    return scan;
  } finally {
    // Not waited for: nothing of the answer depends on it, and the walk would wait one more trip through libuv's
    // thread pool for every file.
    void handle.close().catch(() => undefined);
  }
}

function cutLine(line: string): string {
  return line.length > MAX_LINE_CHARS ? `${detachString(line.slice(0, MAX_LINE_CHARS))}… [line truncated]` : line;
}

async function* filesToSearch(options: {
  target: string;
  isDirectory: boolean;
  input: GrepInput;
  signal: AbortSignal;
  readDeny: ReadDenyFilter | undefined;
}): AsyncGenerator<WalkedFile> {
  if (!options.isDirectory) {
    yield { absolutePath: options.target, relativePath: path.basename(options.target) };
    return;
  }
  const filter = compileGlobFilter(options.input.glob);
  const walk = walkFiles(options.target, {
    signal: options.signal,
    readDeny: options.readDeny,
    includeIgnored: options.input.include_ignored === true,
  });
  for await (const file of walk) {
    if (filter === undefined || filter(file)) yield file;
  }
}

/** The note for lines that were too long to search. */
function skippedLinesNote(skippedLines: number, maxLineChars: number): string {
  const lines = skippedLines === 1 ? '1 line' : `${skippedLines} lines`;
  return (
    `(Not searched: ${lines} longer than ${maxLineChars} characters, the longest line this pattern may search ` +
    '(SWITCHYARD_GREP_MAX_LINE_CHARS, SWITCHYARD_GREP_LINE_WORK). Read such a file with offset and limit.)'
  );
}

export const grepTool = defineTool({
  name: 'Grep',
  aliases: ['search_file_content', 'grep'],
  description:
    "Searches file contents under a directory for a regular expression in ripgrep's syntax, line by line. Skips files that .gitignore excludes and node_modules unless include_ignored is true.",
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
  permissionFacts: (input, context) => realPathFacts(context.cwd, resolveToolPath(context.cwd, input.path ?? '.')),
  async validateInput(input, context): Promise<ValidationOutcome> {
    const compiled = compileCallPattern(input);
    if (compiled.type === 'invalid') return { ok: false, message: compiled.message, errorCode: 'invalid_pattern' };
    try {
      compileGlobFilter(input.glob);
    } catch (error) {
      if (error instanceof GlobSyntaxError) return { ok: false, message: error.message, errorCode: 'invalid_glob' };
      throw error;
    }
    const target = resolveToolPath(context.cwd, input.path ?? '.');
    const escape = await checkSearchPath({
      cwd: context.cwd,
      toolName: 'Grep',
      absolutePath: target,
      allowRules: context.allowRules,
    });
    if (escape !== undefined) return { ok: false, message: escape, errorCode: 'path_escape' };
    const info = await stat(target).catch(() => undefined);
    if (info === undefined) return { ok: false, message: `Path does not exist: ${target}`, errorCode: 'not_found' };
    if (!info.isDirectory() && !info.isFile())
      return { ok: false, message: `${target} is neither a file nor a directory`, errorCode: 'not_a_file' };
    return { ok: true };
  },
  async execute(input, context) {
    const compiled = compileCallPattern(input);
    if (compiled.type === 'invalid') throw new ToolUseError(compiled.message, 'invalid_pattern');
    const pattern = compiled.pattern;
    const target = resolveToolPath(context.cwd, input.path ?? '.');
    const allowRules = context.allowRules ?? [];
    const root = await searchRootNow({ cwd: context.cwd, toolName: 'Grep', absolutePath: target, allowRules });
    // A file may be read where validation allows it (inside the real cwd, or named by an absolute allow rule), or
    // inside the search root that was just checked (a root outside cwd that a rule allows); never where a deny rule
    // says no. The cwd's real path is the one the check above resolved, for the whole walk.
    const openedProblem = (openedPath: string): OpenFileProblem | undefined => {
      const problem = openFileProblem({
        cwd: context.cwd,
        realRoot: root.realCwd,
        toolName: 'Grep',
        requestedPath: input.path ?? '.',
        openedPath,
        allowRules,
        denyRules: context.denyRules,
      });
      return problem?.errorCode === 'path_escape' && root.outsideCwd && isInside(root.realRoot, openedPath)
        ? undefined
        : problem;
    };
    const info = await stat(target).catch(() => undefined);
    if (info === undefined) throw new ToolUseError(`Path does not exist: ${target}`, 'not_found');
    if (!info.isDirectory() && !info.isFile())
      throw new ToolUseError(`${target} is neither a file nor a directory`, 'not_a_file');
    const readDeny = await createReadDenyFilter({ cwd: context.cwd, denyRules: context.denyRules });
    if (readDeny !== undefined && info.isFile()) {
      const rule = readDeny.deniedBy([target, await realpath(target).catch(() => target)]);
      if (rule !== undefined)
        throw new ToolUseError(
          `Grep cannot search ${target}: reading it is denied by the rule ${rule}`,
          'denied_by_rule',
        );
    }
    // The longest line one match may take: bounded in memory, and in work for this pattern's program size.
    const maxLineChars = Math.min(
      resolveLimit('grepMaxLineChars'),
      Math.floor(resolveLimit('grepLineWork') / Math.max(1, pattern.programSize)),
    );
    const mode = input.output_mode ?? 'files_with_matches';
    const lineNumbers = input['-n'] === true;
    const lines: string[] = [];
    const matchedFiles: string[] = [];
    let truncated = false;
    let skippedLines = 0;
    let filesWithMatch = 0;
    let matchCount = 0;
    for await (const file of filesToSearch({
      target,
      isDirectory: info.isDirectory(),
      input,
      signal: context.signal,
      readDeny,
    })) {
      context.signal.throwIfAborted();
      const scan = await scanFile({
        filePath: file.absolutePath,
        pattern,
        maxLineChars,
        signal: context.signal,
        openedProblem,
        failOnProblem: !info.isDirectory(),
        onMatch: (line, lineNumber) => {
          if (mode === 'files_with_matches') return 'stop';
          if (mode === 'content') {
            if (lines.length >= MAX_GREP_RESULT_LINES) {
              truncated = true;
              return 'stop';
            }
            lines.push(
              lineNumbers
                ? `${file.absolutePath}:${lineNumber}:${cutLine(line)}`
                : `${file.absolutePath}:${cutLine(line)}`,
            );
          }
          return undefined;
        },
      });
      skippedLines += scan.skippedLines;
      if (scan.matches > 0) {
        filesWithMatch += 1;
        matchCount += scan.matches;
      }
      if (scan.matches > 0 && mode === 'count') lines.push(`${file.absolutePath}:${scan.matches}`);
      if (scan.matches > 0 && mode === 'files_with_matches') matchedFiles.push(file.absolutePath);
      if (lines.length + matchedFiles.length > MAX_GREP_RESULT_LINES) {
        truncated = true;
        lines.length = Math.min(lines.length, MAX_GREP_RESULT_LINES);
        matchedFiles.length = Math.min(matchedFiles.length, MAX_GREP_RESULT_LINES);
      }
      if (truncated) break;
    }
    if (mode === 'files_with_matches') {
      const withTimes = await Promise.all(
        matchedFiles.map(async (file) => ({ file, mtimeMs: (await stat(file).catch(() => undefined))?.mtimeMs ?? 0 })),
      );
      withTimes.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
      lines.push(...withTimes.map((entry) => entry.file));
    }
    const notes = [
      ...(truncated ? [GREP_TRUNCATED_NOTE] : []),
      ...(skippedLines > 0 ? [skippedLinesNote(skippedLines, maxLineChars)] : []),
    ];
    // What a UI draws (v1.3): the pattern, the counts and the first results (paths relative to cwd).
    const display = searchDisplay({
      tool: 'Grep',
      pattern: input.pattern,
      files: filesWithMatch,
      ...(mode === 'files_with_matches' ? {} : { matches: matchCount }),
      results: lines.slice(0, DISPLAY_LIMITS.searchFirstMatches).map((line) => relativeToCwd(context.cwd, line)),
      truncated: truncated || lines.length > DISPLAY_LIMITS.searchFirstMatches,
    });
    if (lines.length === 0) return { content: ['No matches found', ...notes].join('\n'), display };
    return { content: [...lines, ...notes].join('\n'), display };
  },
});
