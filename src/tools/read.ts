import { open, stat } from 'node:fs/promises';
import { z } from 'zod';
import { RESULT_BUDGETS, TOOL_TIMEOUTS } from '../contracts/defaults.js';
import { ToolUseError, defineTool } from './define-tool.js';
import { checkToolPath, filePathToolFields, resolveToolPath } from './paths.js';

const DEFAULT_LINE_LIMIT = 2_000;
const MAX_LINE_CHARS = 2_000;
const BINARY_SNIFF_BYTES = 8_192;

const readInputSchema = z.strictObject({
  file_path: z.string().min(1).describe('Path of the file to read, absolute (inside cwd) or relative to cwd'),
  offset: z.number().int().min(1).optional().describe('1-based line to start at'),
  limit: z.number().int().min(1).optional().describe(`Number of lines to read (default ${DEFAULT_LINE_LIMIT})`),
});

/** Lines as `cat -n` prints them: right-aligned number, a tab, the line (long lines cut). */
export function formatNumberedLines(lines: readonly string[], firstLineNumber: number): string {
  return lines
    .map((line, index) => {
      const text = line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}… [line truncated]` : line;
      return `${String(firstLineNumber + index).padStart(6)}\t${text}`;
    })
    .join('\n');
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
    return { ok: true };
  },
  async execute(input, context) {
    const handle = await open(input.file_path, 'r');
    try {
      const sniff = Buffer.alloc(BINARY_SNIFF_BYTES);
      const { bytesRead } = await handle.read(sniff, 0, BINARY_SNIFF_BYTES, 0);
      if (sniff.subarray(0, bytesRead).includes(0)) {
        throw new ToolUseError(`Cannot read binary file: ${input.file_path}`, 'binary_file');
      }
      context.signal.throwIfAborted();
      const text = await handle.readFile({ encoding: 'utf8', signal: context.signal });
      const lines = text.split(/\r?\n/);
      if (lines.at(-1) === '') lines.pop();
      const start = (input.offset ?? 1) - 1;
      const selected = lines.slice(start, start + (input.limit ?? DEFAULT_LINE_LIMIT));
      if (lines.length > 0 && start >= lines.length) {
        throw new ToolUseError(`offset ${input.offset} is past the end of the file (${lines.length} lines)`, 'offset_past_end');
      }
      return formatNumberedLines(selected, start + 1);
    } finally {
      await handle.close();
    }
  },
});
