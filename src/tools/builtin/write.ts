/**
 * `Write { file_path, content }`: creates or overwrites a text file (Claude Code's Write).
 *
 * Decisions:
 * - The path is confined like Read's (`checkToolPath` with tool name `Write`): inside cwd, symlinks included, or
 *   outside only when an allow rule such as `Write(/tmp/xyz/**)` names it. Missing parent directories are created
 *   (inside the confined path: the deepest existing ancestor is what the confinement check resolves).
 * - No "read before write" bookkeeping (Claude Code keeps one per session): the call's approval preview shows the
 *   diff against the file as it is now.
 * - The content is written as given (UTF-8, line endings untouched), in place (not via a temporary file and a
 *   rename), so the file's inode, mode and any hard links are kept: the new bytes first, then the cut to their length,
 *   so a worker killed mid-write never leaves an empty file. An abort before the write stops the call; once the write
 *   has started it runs to its end.
 * - Protected paths (`.git/**`, `.switchyard/**`, shell start-up files…, see `protected-paths.ts`) are a `strongAsk`
 *   permission fact: they always ask, in `acceptEdits` too, and are denied in `dontAsk`.
 * - The path is checked again at execution (`openConfinedFile`): a symlink swapped in after approval fails the call
 *   with `path_changed` before anything is read or written.
 * - The display is a `file_diff` against the previous text ('' for a new file). When the previous content is binary
 *   or over {@link MAX_DIFF_SOURCE_BYTES}, no diff is computed and the display is a one-line `text`.
 */
import { readFile, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { z } from 'zod';
import { RESULT_BUDGETS, TOOL_TIMEOUTS } from '../../contracts/defaults.js';
import type { ToolDisplay } from '../../contracts/tool-result.js';
import { defineTool } from '../define-tool.js';
import { createFileDiff, formatFileDiff } from '../support/file-diff.js';
import type { FileDiffDisplay } from '../support/file-diff.js';
import { openConfinedFile, protectedWriteFacts } from '../support/file-write-guard.js';
import type { ConfinedFile } from '../support/file-write-guard.js';
import { checkToolPath, filePathToolFields, realPathAsSeenByRules, resolveToolPath } from '../paths.js';
import { fileReadRecord, requireReadBeforeEdit } from '../support/read-before-edit.js';

/** Largest existing file read for a diff (Write) or edited at all (Edit). */
export const MAX_DIFF_SOURCE_BYTES = 10 * 1024 * 1024;

/** Characters of diff text in an approval preview. */
export const APPROVAL_PREVIEW_CHARS = 4_000;

const BINARY_SNIFF_BYTES = 8_192;

/** What is at a path now, as Write and Edit need to know it. */
export type ExistingFile =
  | { kind: 'missing' }
  | { kind: 'directory' }
  | { kind: 'special' }
  | { kind: 'binary'; bytes: number }
  | { kind: 'too_large'; bytes: number }
  | { kind: 'text'; text: string };

/**
 * Reads the file at a path for a diff or an edit: missing, a directory, something else that is not a regular file
 * (a FIFO or a device, which must not be read), binary (NUL in the first 8 KB), too large, or its UTF-8 text.
 */
export async function readExistingFile(filePath: string): Promise<ExistingFile> {
  const info = await stat(filePath).catch(() => undefined);
  if (info === undefined) return { kind: 'missing' };
  if (info.isDirectory()) return { kind: 'directory' };
  if (!info.isFile()) return { kind: 'special' };
  if (info.size > MAX_DIFF_SOURCE_BYTES) return { kind: 'too_large', bytes: info.size };
  const buffer = await readFile(filePath);
  if (buffer.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return { kind: 'binary', bytes: buffer.length };
  return { kind: 'text', text: buffer.toString('utf8') };
}

/** What an open regular file holds, as {@link readExistingFile} reports it (read through the handle, never the path). */
export async function readOpenFile(handle: FileHandle): Promise<ExistingFile> {
  const { size } = await handle.stat();
  if (size > MAX_DIFF_SOURCE_BYTES) return { kind: 'too_large', bytes: size };
  const buffer = Buffer.alloc(size);
  let read = 0;
  while (read < size) {
    const { bytesRead } = await handle.read(buffer, read, size - read, read);
    if (bytesRead === 0) break;
    read += bytesRead;
  }
  const bytes = buffer.subarray(0, read);
  if (bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return { kind: 'binary', bytes: bytes.length };
  return { kind: 'text', text: bytes.toString('utf8') };
}

/** The diff of a file_diff display as unified-diff text, cut to {@link APPROVAL_PREVIEW_CHARS}. */
export function approvalPreview(display: FileDiffDisplay): string {
  const text = formatFileDiff(display);
  return text.length > APPROVAL_PREVIEW_CHARS
    ? `${text.slice(0, APPROVAL_PREVIEW_CHARS)}\n… (preview truncated)`
    : text;
}

function describeUndiffable(filePath: string, existing: ExistingFile): string | undefined {
  if (existing.kind === 'binary') return `${filePath} was a binary file (${existing.bytes} bytes); no diff is shown`;
  if (existing.kind === 'too_large') return `${filePath} was ${existing.bytes} bytes, too large to diff`;
  return undefined;
}

const writeInputSchema = z.strictObject({
  file_path: z.string().min(1).describe('Path of the file to write, absolute (inside cwd) or relative to cwd'),
  content: z.string().describe('The complete new content of the file'),
});

/** Reads what the open file holds (for the diff), then replaces it; returns what was there. */
async function replaceContent(options: {
  file: ConfinedFile;
  content: string;
  signal: AbortSignal;
}): Promise<ExistingFile> {
  const existing: ExistingFile =
    options.file.handle === undefined ? { kind: 'missing' } : await readOpenFile(options.file.handle);
  options.signal.throwIfAborted();
  await options.file.write(options.content);
  return existing;
}

export const writeTool = defineTool({
  name: 'Write',
  aliases: ['write_file'],
  description:
    'Creates or overwrites a text file under the session directory with the given content, creating parent directories.',
  inputSchema: writeInputSchema,
  concurrentSafe: false,
  readOnly: false,
  sideEffectScope: 'workspace',
  idempotent: false,
  editsFiles: true,
  // Read before edit checks the session's record of the file (`read-before-edit.ts`).
  readsSessionState: true,
  timeout: { defaultMs: TOOL_TIMEOUTS.other.defaultMs },
  resultBudget: RESULT_BUDGETS.Write,
  ...filePathToolFields,
  async validateInput(input, context) {
    const filePath = resolveToolPath(context.cwd, input.file_path);
    const escape = await checkToolPath({
      cwd: context.cwd,
      toolName: 'Write',
      absolutePath: filePath,
      allowRules: context.allowRules,
    });
    if (escape !== undefined) return { ok: false, message: escape, errorCode: 'path_escape' };
    const info = await stat(filePath).catch(() => undefined);
    if (info?.isDirectory() === true)
      return { ok: false, message: `${filePath} is a directory, not a file`, errorCode: 'is_directory' };
    if (info !== undefined && !info.isFile())
      return { ok: false, message: `${filePath} is not a regular file`, errorCode: 'not_a_file' };
    return { ok: true };
  },
  async prepareApproval(input, context) {
    const existing = await readExistingFile(input.file_path);
    const real = await realPathAsSeenByRules(context.cwd, input.file_path);
    const through = real === input.file_path ? '' : `Writes ${real} (${input.file_path} is a symlink to it).\n`;
    const note = describeUndiffable(input.file_path, existing);
    if (note !== undefined)
      return {
        preview: `${through}${note}; it would be replaced by ${Buffer.byteLength(input.content)} bytes of text.`,
      };
    const before = existing.kind === 'text' ? existing.text : '';
    return {
      preview: `${through}${approvalPreview(createFileDiff({ filePath: input.file_path, before, after: input.content }))}`,
    };
  },
  permissionFacts: (input, context) => protectedWriteFacts({ cwd: context.cwd, absolutePath: input.file_path }),
  async execute(input, context) {
    const filePath = input.file_path;
    await requireReadBeforeEdit(context, filePath);
    const file = await openConfinedFile({
      cwd: context.cwd,
      filePath,
      toolName: 'Write',
      denyRules: context.denyRules,
    });
    const existing = await replaceContent({ file, content: input.content, signal: context.signal }).finally(() =>
      file.close(),
    );
    const note = describeUndiffable(filePath, existing);
    const display: ToolDisplay =
      note === undefined
        ? createFileDiff({ filePath, before: existing.kind === 'text' ? existing.text : '', after: input.content })
        : { type: 'text', text: note };
    const content =
      existing.kind === 'missing'
        ? `File created successfully at: ${filePath}`
        : `The file ${filePath} has been updated.`;
    // Claude Code's Write output for PostToolUse hooks (`tool_response.filePath`…).
    const hookResponse = {
      type: existing.kind === 'missing' ? 'create' : 'update',
      filePath,
      content: input.content,
      structuredPatch: display.type === 'file_diff' ? display.hunks : [],
      originalFile: existing.kind === 'text' ? existing.text : null,
    };
    const sessionState = await fileReadRecord(context, filePath);
    return { content, display, hookResponse, ...(sessionState === undefined ? {} : { sessionState }) };
  },
});
