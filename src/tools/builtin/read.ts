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
 * - A PNG, JPEG, GIF or WebP file (told by its magic bytes, not its extension) is returned as an image block (Claude
 *   Code's Read): the executor stores its bytes as an artifact and history holds only the reference. `offset` and
 *   `limit` do not apply to it; an image over `LIMITS.imageMaxBytes` is refused with a message saying so.
 * - A `switchyard-artifact://` reference (stored output, read-artifact.ts) with a line over {@link MAX_LINE_CHARS}
 *   characters is paged by characters, not lines, so nothing of it is out of reach: `offset`/`limit` count characters
 *   (default {@link DEFAULT_CHARACTER_LIMIT}), a first line says which follow and where to continue, and the rest is
 *   the stored text unchanged. Stored output whose lines all fit is read by lines, as a file is. Deciding scans the
 *   stored output once per Read (it stops at the first long line).
 */
import { stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { z } from 'zod';
import { RESULT_BUDGETS, TOOL_TIMEOUTS } from '../../contracts/defaults.js';
import type { ImageMediaType } from '../../contracts/tool-result.js';
import { ToolUseError, defineTool } from '../define-tool.js';
import type { ToolOutputObject } from '../define-tool.js';
import { IMAGE_SIGNATURE_BYTES, detectImageMediaType } from '../support/image-media-type.js';
import { resolveLimit } from '../limits.js';
import {
  checkToolPath,
  filePathToolFields,
  openFileProblem,
  realPathFacts,
  realPathOfOpenFile,
  resolveToolPath,
} from '../paths.js';
import {
  artifactReferenceProblem,
  characterWindowNote,
  hasLineLongerThan,
  isArtifactReference,
  openArtifact,
  readCharacterWindow,
} from './read-artifact.js';
import {
  NotARegularFileError,
  openRegularFile,
  openRegularFileWithStats,
  readFirstChunk,
  scanTextLines,
} from '../support/text-lines.js';
import { fileReadRecord } from '../support/read-before-edit.js';
import { imageDisplay, relativeToCwd } from '../support/displays.js';

const DEFAULT_LINE_LIMIT = 2_000;
const MAX_LINE_CHARS = 2_000;
/** Characters one Read of stored output paged by characters returns when no `limit` is given. */
const DEFAULT_CHARACTER_LIMIT = 100_000;
/** Room kept under the result budget for the note that says where to continue. */
const CONTINUATION_NOTE_BYTES = 512;

const readInputSchema = z.strictObject({
  file_path: z.string().min(1).describe('Path of the file to read, absolute (inside cwd) or relative to cwd'),
  offset: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('1-based line to start at (1-based character, for stored output Read pages by characters)'),
  limit: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(
      `Number of lines to read (default ${DEFAULT_LINE_LIMIT}; characters, default ${DEFAULT_CHARACTER_LIMIT}, for stored output Read pages by characters)`,
    ),
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
  const [value, unit] =
    bytes >= 1024 * 1024 ? [bytes / (1024 * 1024), 'MB'] : bytes >= 1024 ? [bytes / 1024, 'KB'] : [bytes, 'bytes'];
  return `${Number.isInteger(value) ? value : value.toFixed(1)} ${unit}`;
}

/** The image format of an open file, by its first bytes; undefined for anything that is not a supported image. */
async function sniffImage(handle: FileHandle): Promise<ImageMediaType | undefined> {
  const head = Buffer.alloc(IMAGE_SIGNATURE_BYTES);
  const { bytesRead } = await handle.read(head, 0, IMAGE_SIGNATURE_BYTES, 0);
  return detectImageMediaType(head.subarray(0, bytesRead));
}

/** Why an image of `size` bytes cannot be returned, or undefined when it can. */
function oversizeImageReason(mediaType: ImageMediaType, size: number): string | undefined {
  const maxBytes = resolveLimit('imageMaxBytes');
  if (size <= maxBytes) return undefined;
  return (
    `Image file (${mediaType}, ${formatSize(size)}) exceeds the maximum image size Read returns (${formatSize(maxBytes)}, ` +
    'the model APIs refuse larger images): make a smaller copy (scale it down or re-encode it) and read that.'
  );
}

/** The whole image as an image block, after checking its size again on the open file. */
async function readImage(handle: FileHandle, mediaType: ImageMediaType): Promise<ToolOutputObject> {
  const oversize = oversizeImageReason(mediaType, (await handle.stat()).size);
  if (oversize !== undefined) throw new ToolUseError(oversize, 'image_too_large');
  // Positional reads up to one byte over the cap: a file that grew since the stat cannot make this read unbounded.
  const maxBytes = resolveLimit('imageMaxBytes');
  const buffer = Buffer.alloc(maxBytes + 1);
  let length = 0;
  while (length < buffer.length) {
    const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
    if (bytesRead === 0) break;
    length += bytesRead;
  }
  const tooLarge = oversizeImageReason(mediaType, length);
  if (tooLarge !== undefined) throw new ToolUseError(tooLarge, 'image_too_large');
  // Claude Code's image output for hooks, without the base64 bytes (they are in the artifact store).
  return {
    content: '',
    images: [{ mediaType, data: buffer.subarray(0, length) }],
    hookResponse: { type: 'image', file: { type: mediaType, originalSize: length } },
  };
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

/**
 * A window of stored output (an artifact reference) that has a line over the per-line cut: `offset` and `limit` count
 * characters, no line is cut, and a first line says which characters follow and where to continue, so the model's
 * successive Reads, concatenated, give the whole output.
 */
async function readByCharacters(handle: FileHandle, input: ReadInput, signal: AbortSignal): Promise<ToolOutputObject> {
  const window = await readCharacterWindow(handle, {
    start: (input.offset ?? 1) - 1,
    limit: input.limit ?? DEFAULT_CHARACTER_LIMIT,
    maxBytes: RESULT_BUDGETS.Read.maxModelBytes - CONTINUATION_NOTE_BYTES,
    signal,
  });
  if (window.text.includes('\0')) throw new ToolUseError(`Cannot read binary file: ${input.file_path}`, 'binary_file');
  if (window.start > 0 && window.start >= window.total)
    throw new ToolUseError(
      `offset ${input.offset} is past the end of the output (${window.total} characters)`,
      'offset_past_end',
    );
  return {
    content: `${characterWindowNote(input.file_path, window, MAX_LINE_CHARS)}\n${window.text}`,
    hookResponse: {
      type: 'text',
      file: { filePath: input.file_path, content: window.text, startChar: window.start + 1, totalChars: window.total },
    },
  };
}

export const readTool = defineTool({
  name: 'Read',
  aliases: ['read_file', 'ReadFile'],
  description:
    'Reads a file under the session directory: a text file as its lines, numbered like `cat -n`; a PNG, JPEG, GIF or WebP image as the image itself. ' +
    'Also opens the switchyard-artifact:// reference a <persisted-output> result gives (use offset and limit). ' +
    `Stored output with a line over ${MAX_LINE_CHARS} characters is paged by characters instead of lines, nothing cut: ` +
    'offset and limit count characters, and the first line of each answer says which characters follow and the offset to continue at.',
  inputSchema: readInputSchema,
  concurrentSafe: true,
  readOnly: true,
  sideEffectScope: 'none',
  idempotent: true,
  timeout: { defaultMs: TOOL_TIMEOUTS.Read.defaultMs, maxMs: TOOL_TIMEOUTS.Read.maxMs },
  resultBudget: RESULT_BUDGETS.Read,
  ...filePathToolFields,
  // An artifact reference is not a path: it stays as the model gave it (see read-artifact.ts).
  resolveInput: (input, context) =>
    isArtifactReference(input.file_path) ? input : filePathToolFields.resolveInput(input, context),
  async validateInput(input, context) {
    if (isArtifactReference(input.file_path)) {
      const problem = artifactReferenceProblem(input.file_path, context.sessionId);
      return problem === undefined
        ? { ok: true }
        : { ok: false, message: problem, errorCode: 'artifact_not_accessible' };
    }
    const filePath = resolveToolPath(context.cwd, input.file_path);
    // The file's `stat` goes along with the path's confinement check (its answer counts only when the path is
    // confined), so a call waits for one trip through libuv's thread pool, not two in turn.
    const [escape, info] = await Promise.all([
      checkToolPath({
        cwd: context.cwd,
        toolName: 'Read',
        absolutePath: filePath,
        allowRules: context.allowRules,
        ...(context.realPath === undefined ? {} : { realPath: context.realPath }),
      }),
      stat(filePath).catch(() => undefined),
    ]);
    if (escape !== undefined) return { ok: false, message: escape, errorCode: 'path_escape' };
    if (info === undefined) return { ok: false, message: `File does not exist: ${filePath}`, errorCode: 'not_found' };
    if (info.isDirectory())
      return { ok: false, message: `${filePath} is a directory, not a file`, errorCode: 'is_directory' };
    if (!info.isFile()) return { ok: false, message: `${filePath} is not a regular file`, errorCode: 'not_a_file' };
    // Small enough for either kind: whether it is an image changes nothing, so the file is not opened to tell.
    if (info.size <= resolveLimit('imageMaxBytes') && oversizeReason(input, info.size) === undefined)
      return { ok: true };
    const image = await openRegularFile(filePath)
      .then(async (handle) => sniffImage(handle).finally(() => handle.close()))
      .catch(() => undefined);
    if (image !== undefined) {
      const oversizeImage = oversizeImageReason(image, info.size);
      return oversizeImage === undefined
        ? { ok: true }
        : { ok: false, message: oversizeImage, errorCode: 'image_too_large' };
    }
    const oversize = oversizeReason(input, info.size);
    if (oversize !== undefined) return { ok: false, message: oversize, errorCode: 'file_too_large' };
    return { ok: true };
  },
  permissionFacts: async (input, context) =>
    isArtifactReference(input.file_path) ? {} : realPathFacts(context.cwd, input.file_path, context.realPath),
  async execute(input, context) {
    let handle: FileHandle;
    /** The open file's size, when opening it already told it. */
    let size: number | undefined;
    if (isArtifactReference(input.file_path)) {
      // No workspace path: read-artifact.ts confines it to the session's own artifacts.
      handle = await openArtifact(input.file_path, context);
    } else {
      const opened = await openRegularFileWithStats(input.file_path).catch((error: unknown) => {
        throw error instanceof NotARegularFileError ? new ToolUseError(error.message, 'not_a_file') : error;
      });
      handle = opened.handle;
      size = opened.stats.size;
      // Checked on what was opened, not on what validation saw: a link retargeted since (a directory swapped for a link
      // to a denied place, a file link pointed outside cwd) cannot lead the read elsewhere.
      let problem: ReturnType<typeof openFileProblem>;
      try {
        problem = openFileProblem({
          cwd: context.cwd,
          toolName: 'Read',
          requestedPath: input.file_path,
          openedPath: await realPathOfOpenFile(handle, input.file_path),
          allowRules: context.allowRules ?? [],
          denyRules: context.denyRules,
        });
      } catch (error) {
        await handle.close();
        throw error;
      }
      if (problem !== undefined) {
        await handle.close();
        throw new ToolUseError(problem.message, problem.errorCode);
      }
    }
    try {
      // One read serves both the image check and, for text, the scan's first chunk.
      const firstChunk = await readFirstChunk(handle, size);
      const image = detectImageMediaType(firstChunk.bytes.subarray(0, IMAGE_SIGNATURE_BYTES));
      if (image !== undefined) {
        const sessionState = await fileReadRecord(context, input.file_path);
        const read = await readImage(handle, image);
        // The executor fills in the artifact once it has stored the bytes (an `image` display, v1.3).
        const display = imageDisplay({
          mediaType: image,
          bytes: read.images?.[0]?.data.byteLength ?? 0,
          artifact: '',
          filePath: relativeToCwd(context.cwd, input.file_path),
        });
        return { ...read, display, ...(sessionState === undefined ? {} : { sessionState }) };
      }
      if (isArtifactReference(input.file_path) && (await hasLineLongerThan(handle, MAX_LINE_CHARS, context.signal)))
        return await readByCharacters(handle, input, context.signal);
      // Checked again on the open file: it may have grown or been replaced since validation.
      const oversize = oversizeReason(input, size ?? (await handle.stat()).size);
      if (oversize !== undefined) throw new ToolUseError(oversize, 'file_too_large');
      const first = input.offset ?? 1;
      const end = first + (input.limit ?? DEFAULT_LINE_LIMIT);
      const maxOutputBytes = RESULT_BUDGETS.Read.maxModelBytes - CONTINUATION_NOTE_BYTES;
      const formatted: string[] = [];
      const lines: string[] = [];
      let outputBytes = 0;
      let continueAt: number | undefined;
      const outcome = await scanTextLines({
        handle,
        firstChunk,
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
          lines.push(line.text);
          outputBytes += bytes;
          return undefined;
        },
      });
      if (outcome.type === 'binary')
        throw new ToolUseError(`Cannot read binary file: ${input.file_path}`, 'binary_file');
      if (outcome.lineCount > 0 && first > outcome.lineCount) {
        throw new ToolUseError(
          `offset ${input.offset} is past the end of the file (${outcome.lineCount} lines)`,
          'offset_past_end',
        );
      }
      if (continueAt !== undefined) {
        formatted.push(
          `(Output stops before line ${continueAt}: one Read returns at most ${RESULT_BUDGETS.Read.maxModelBytes} bytes. Continue with offset ${continueAt}.)`,
        );
      }
      // Claude Code's Read output for PostToolUse hooks (`tool_response.file.content`): the lines without numbers.
      const file: Record<string, unknown> = {
        filePath: input.file_path,
        content: lines.join('\n'),
        numLines: lines.length,
        startLine: first,
      };
      if (!outcome.stopped) file.totalLines = outcome.lineCount;
      const sessionState = await fileReadRecord(context, input.file_path);
      return {
        content: formatted.join('\n'),
        hookResponse: { type: 'text', file },
        ...(sessionState === undefined ? {} : { sessionState }),
      };
    } finally {
      // Not waited for: nothing of the answer depends on it, and the call would wait one more trip through libuv's
      // thread pool for it.
      void handle.close().catch(() => undefined);
    }
  },
});
