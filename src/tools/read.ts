/**
 * `Read { file_path, offset?, limit? }`: the lines of a text file, numbered like `cat -n` (Claude Code's Read).
 *
 * Decisions:
 * - The file is streamed (`text-lines.ts`): only the requested lines are kept, and of each at most
 *   {@link MAX_LINE_CHARS} characters, so reading line 1 of a 300 MB file costs one chunk of memory.
 * - Without `offset` and `limit`, a file over `LIMITS.readMaxFileBytes` is refused with a message suggesting them
 *   (Claude Code's behaviour); with either, any size is read.
 * - The output stops before it outgrows the Read result budget, with a note giving the `offset` to continue at, so an
 *   enormous `limit` cannot hold the file in memory either.
 * - Only regular files: a named pipe or a device is refused instead of blocking (opened non-blocking, checked again
 *   after opening). A file with a NUL byte in its first 8 KB is binary and refused.
 */
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { RESULT_BUDGETS, TOOL_TIMEOUTS } from '../contracts/defaults.js';
import { ToolUseError, defineTool } from './define-tool.js';
import { resolveLimit } from './limits.js';
import { checkToolPath, filePathToolFields, resolveToolPath } from './paths.js';
import { NotARegularFileError, openRegularFile, scanTextLines } from './text-lines.js';

const DEFAULT_LINE_LIMIT = 2_000;
const MAX_LINE_CHARS = 2_000;
/** Room kept under the result budget for the note that says where to continue. */
const CONTINUATION_NOTE_BYTES = 512;

const readInputSchema = z.strictObject({
  file_path: z.string().min(1).describe('Path of the file to read, absolute (inside cwd) or relative to cwd'),
  offset: z.number().int().min(1).optional().describe('1-based line to start at'),
  limit: z.number().int().min(1).optional().describe(`Number of lines to read (default ${DEFAULT_LINE_LIMIT})`),
});

type ReadInput = z.infer<typeof readInputSchema>;

/** Lines as `cat -n` prints them: right-aligned number, a tab, the line (long lines cut). */
export function formatNumberedLines(lines: readonly string[], firstLineNumber: number): string {
  return lines.map((line, index) => formatNumberedLine(line, firstLineNumber + index)).join('\n');
}

function formatNumberedLine(line: string, lineNumber: number): string {
  const text = line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}… [line truncated]` : line;
  return `${String(lineNumber).padStart(6)}\t${text}`;
}

/** `256 KB`, `293.0 KB`, `200.0 MB`. */
function formatSize(bytes: number): string {
  const [value, unit] = bytes >= 1024 * 1024 ? [bytes / (1024 * 1024), 'MB'] : bytes >= 1024 ? [bytes / 1024, 'KB'] : [bytes, 'bytes'];
  return `${Number.isInteger(value) ? value : value.toFixed(1)} ${unit}`;
}

/** Why a file of `size` bytes cannot be read without a range, or undefined when it can. */
function oversizeReason(input: ReadInput, size: number): string | undefined {
  if (input.offset !== undefined || input.limit !== undefined) return undefined;
  const maxBytes = resolveLimit('readMaxFileBytes');
  if (size <= maxBytes) return undefined;
  return (
    `File content (${formatSize(size)}) exceeds the maximum size Read returns without a range (${formatSize(maxBytes)}): ` +
    'use offset and limit to read part of it, or Grep to find what you need in it.'
  );
}

export const readTool = defineTool({
  name: 'Read',
  aliases: ['read_file', 'ReadFile'],
  description: 'Reads a text file under the session directory and returns its lines, numbered like `cat -n`.',
  inputSchema: readInputSchema,
  concurrentSafe: true,
  readOnly: true,
  sideEffectScope: 'none',
  idempotent: true,
  timeout: { defaultMs: TOOL_TIMEOUTS.Read.defaultMs, maxMs: TOOL_TIMEOUTS.Read.maxMs },
  resultBudget: RESULT_BUDGETS.Read,
  ...filePathToolFields,
  async validateInput(input, context) {
    const filePath = resolveToolPath(context.cwd, input.file_path);
    const escape = await checkToolPath({ cwd: context.cwd, toolName: 'Read', absolutePath: filePath, allowRules: context.allowRules });
    if (escape !== undefined) return { ok: false, message: escape, errorCode: 'path_escape' };
    const info = await stat(filePath).catch(() => undefined);
    if (info === undefined) return { ok: false, message: `File does not exist: ${filePath}`, errorCode: 'not_found' };
    if (info.isDirectory()) return { ok: false, message: `${filePath} is a directory, not a file`, errorCode: 'is_directory' };
    if (!info.isFile()) return { ok: false, message: `${filePath} is not a regular file`, errorCode: 'not_a_file' };
    const oversize = oversizeReason(input, info.size);
    if (oversize !== undefined) return { ok: false, message: oversize, errorCode: 'file_too_large' };
    return { ok: true };
  },
  async execute(input, context) {
    const handle = await openRegularFile(input.file_path).catch((error: unknown) => {
      throw error instanceof NotARegularFileError ? new ToolUseError(error.message, 'not_a_file') : error;
    });
    try {
      // Checked again on the open file: it may have grown or been replaced since validation.
      const oversize = oversizeReason(input, (await handle.stat()).size);
      if (oversize !== undefined) throw new ToolUseError(oversize, 'file_too_large');
      const first = input.offset ?? 1;
      const end = first + (input.limit ?? DEFAULT_LINE_LIMIT);
      const maxOutputBytes = RESULT_BUDGETS.Read.maxModelBytes - CONTINUATION_NOTE_BYTES;
      const formatted: string[] = [];
      let outputBytes = 0;
      let continueAt: number | undefined;
      const outcome = await scanTextLines({
        handle,
        signal: context.signal,
        keepChars: MAX_LINE_CHARS + 1,
        visit: (line) => {
          if (line.number < first) return undefined;
          if (line.number >= end) return 'stop';
          const text = formatNumberedLine(line.text, line.number);
          const bytes = Buffer.byteLength(text) + 1;
          if (formatted.length > 0 && outputBytes + bytes > maxOutputBytes) {
            continueAt = line.number;
            return 'stop';
          }
          formatted.push(text);
          outputBytes += bytes;
          return undefined;
        },
      });
      if (outcome.type === 'binary') throw new ToolUseError(`Cannot read binary file: ${input.file_path}`, 'binary_file');
      if (outcome.lineCount > 0 && first > outcome.lineCount) {
        throw new ToolUseError(`offset ${input.offset} is past the end of the file (${outcome.lineCount} lines)`, 'offset_past_end');
      }
      if (continueAt !== undefined) {
        formatted.push(`(Output stops before line ${continueAt}: one Read returns at most ${RESULT_BUDGETS.Read.maxModelBytes} bytes. Continue with offset ${continueAt}.)`);
      }
      return formatted.join('\n');
    } finally {
      await handle.close();
    }
  },
});
