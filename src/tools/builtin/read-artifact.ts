/**
 * Read of a `switchyard-artifact://<session>/<id>` reference: the one a `<persisted-output>` envelope gives the model
 * for an output too large to hand it whole. Read opens it like a file (offset and limit apply), but only an artifact
 * of the calling session: the session is part of the reference, so a reference from another session, or a made-up
 * one, is refused before anything is opened.
 */
import type { FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { ARTIFACT_URI_SCHEME } from '../../contracts/artifact-store.js';
import type { ArtifactStore } from '../../contracts/artifact-store.js';
import { ToolUseError } from '../define-tool.js';
import { openRegularFile } from '../support/text-lines.js';

const ARTIFACT_REFERENCE = /^switchyard-artifact:\/\/([^/]+)\/([^/]+)$/;

/** Whether a Read `file_path` is an artifact reference rather than a path. */
export function isArtifactReference(filePath: string): boolean {
  return filePath.startsWith(`${ARTIFACT_URI_SCHEME}//`);
}

function decodedSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** Why the session `sessionId` may not open `reference`, or undefined when it may. */
export function artifactReferenceProblem(reference: string, sessionId: string): string | undefined {
  const match = ARTIFACT_REFERENCE.exec(reference);
  const session = match?.[1] === undefined ? undefined : decodedSegment(match[1]);
  if (match === null || session === undefined)
    return `Not a Switchyard artifact reference: ${reference} (expected switchyard-artifact://<session>/<id>)`;
  if (session !== sessionId)
    return `${reference} belongs to another session: Read opens only the artifacts of this session.`;
  return undefined;
}

/** Opens the artifact for Read; every refusal is a `ToolUseError` the model can act on. */
export async function openArtifact(
  reference: string,
  context: { sessionId: string; artifacts: ArtifactStore | undefined },
): Promise<FileHandle> {
  const problem = artifactReferenceProblem(reference, context.sessionId);
  if (problem !== undefined) throw new ToolUseError(problem, 'artifact_not_accessible');
  if (context.artifacts === undefined)
    throw new ToolUseError(
      `This worker has no artifact store, so ${reference} cannot be read.`,
      'artifact_not_accessible',
    );
  let file: string;
  try {
    file = context.artifacts.locate(reference);
  } catch (error) {
    throw new ToolUseError(error instanceof Error ? error.message : String(error), 'artifact_not_accessible');
  }
  return openRegularFile(file).catch((error: unknown) => {
    const code = (error as NodeJS.ErrnoException).code;
    // The worker's own path stays out of the message: the model knows the artifact by its reference only.
    throw new ToolUseError(
      code === 'ENOENT' ? `Artifact not found: ${reference} (it may have been pruned)` : `Cannot read ${reference}`,
      'artifact_not_accessible',
    );
  });
}

const WINDOW_CHUNK_BYTES = 64 * 1024;

/** The decoded text of an open file, chunk by chunk from its start (positional reads; `signal` checked each chunk). */
async function* decodedChunks(handle: FileHandle, signal: AbortSignal): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  const buffer = Buffer.allocUnsafe(WINDOW_CHUNK_BYTES);
  let position = 0;
  for (;;) {
    signal.throwIfAborted();
    const { bytesRead } = await handle.read(buffer, 0, WINDOW_CHUNK_BYTES, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    yield decoder.write(buffer.subarray(0, bytesRead));
  }
  const rest = decoder.end();
  if (rest.length > 0) yield rest;
}

/**
 * Whether a line of the stored output is longer than `maxChars` characters: such output has no line structure Read's
 * per-line cut could page through (one-line JSON, a minified page), so Read pages it by characters instead.
 */
export async function hasLineLongerThan(handle: FileHandle, maxChars: number, signal: AbortSignal): Promise<boolean> {
  let run = 0;
  for await (const text of decodedChunks(handle, signal)) {
    let from = 0;
    for (;;) {
      const newline = text.indexOf('\n', from);
      const end = newline === -1 ? text.length : newline;
      run += end - from;
      if (run > maxChars) return true;
      if (newline === -1) break;
      run = 0;
      from = newline + 1;
    }
  }
  return false;
}

/** UTF-8 bytes of one UTF-16 code unit (a surrogate pair's two units make its 4 bytes). */
function utf8UnitBytes(code: number): number {
  if (code < 0x80) return 1;
  if (code < 0x800) return 2;
  if (code >= 0xd800 && code <= 0xdfff) return 2;
  return 3;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** A window of stored output by characters (UTF-16 units, as a string's length counts them). */
export interface CharacterWindow {
  text: string;
  /** 0-based index of the window's first character. */
  start: number;
  /** 0-based index after the window's last character. */
  end: number;
  /** Characters in the whole output. */
  total: number;
}

/**
 * Characters `[start, start + limit)` of the stored output, fewer when their UTF-8 form would pass `maxBytes`; the
 * window never ends between the two halves of a surrogate pair, so the windows of successive reads, concatenated,
 * are the output.
 */
export async function readCharacterWindow(
  handle: FileHandle,
  options: { start: number; limit: number; maxBytes: number; signal: AbortSignal },
): Promise<CharacterWindow> {
  const pieces: string[] = [];
  let position = 0;
  let bytes = 0;
  let end = options.start;
  let full = false;
  for await (const text of decodedChunks(handle, options.signal)) {
    const chunkStart = position;
    position += text.length;
    if (full || position <= end) continue;
    const from = end - chunkStart;
    const to = Math.min(text.length, options.start + options.limit - chunkStart);
    let cut = from;
    while (cut < to) {
      const unitBytes = utf8UnitBytes(text.charCodeAt(cut));
      if (bytes + unitBytes > options.maxBytes) break;
      bytes += unitBytes;
      cut += 1;
    }
    // A pair is never split: its first half goes with its second, into this window or the next.
    if (cut > from && cut < text.length && isHighSurrogate(text.charCodeAt(cut - 1))) cut -= 1;
    pieces.push(text.slice(from, cut));
    end = chunkStart + cut;
    if (cut < to || end >= options.start + options.limit) full = true;
  }
  return { text: pieces.join(''), start: options.start, end, total: position };
}

/**
 * The first line of a Read of stored output paged by characters: which characters follow, out of how many, and the
 * `offset` to continue at. Everything after this line's newline is the stored output's own characters, unchanged.
 */
export function characterWindowNote(reference: string, window: CharacterWindow, maxLineChars: number): string {
  const range =
    window.end > window.start
      ? `Characters ${window.start + 1}-${window.end} of ${window.total}`
      : `No characters (${window.total} in all)`;
  const next = window.end < window.total ? `Continue with offset ${window.end + 1}.` : 'This is the end of the output.';
  return (
    `[${range} of ${reference}, which has a line over ${maxLineChars} characters: here offset and limit count ` +
    `characters, and the text after this line is the output as stored. ${next}]`
  );
}
