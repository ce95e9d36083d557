/**
 * Streaming line splitting for the reading tools (Read, Grep): a file is read in fixed chunks and cut at `\n`
 * without ever re-scanning text already seen, so a long line costs linear time, and at most `keepChars` characters of
 * a line are held in memory, so a 300 MB line costs no more than a short one.
 */
import { constants, fstatSync } from 'node:fs';
import type { Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';

/** Bytes read per chunk. */
const CHUNK_BYTES = 64 * 1024;

/** A file whose first this many bytes hold a NUL byte is binary. */
export const BINARY_SNIFF_BYTES = 8_192;

/** Longest stretch of synchronous line work before the scan yields to the event loop (heartbeats, other calls). */
const YIELD_AFTER_MS = 20;

export interface TextLine {
  /** The line without its `\n` or `\r\n`, cut to `keepChars` characters. */
  text: string;
  /** 1-based. */
  number: number;
  /** Characters of the whole line; more than `text.length` when it was cut. */
  length: number;
}

/** `stop` ends the scan early. */
export type LineVisitor = (line: TextLine) => 'stop' | undefined;

export type ScanOutcome = { type: 'binary' } | { type: 'scanned'; lineCount: number; stopped: boolean };

/** Why a path could not be opened as a regular file. */
export class NotARegularFileError extends Error {
  override readonly name = 'NotARegularFileError';
  constructor(readonly filePath: string) {
    super(`${filePath} is not a regular file`);
  }
}

/**
 * Opens a regular file for reading. Non-blocking, so a named pipe swapped in after validation cannot park a libuv
 * thread forever; anything but a regular file is refused.
 */
export async function openRegularFile(filePath: string): Promise<FileHandle> {
  return (await openRegularFileWithStats(filePath)).handle;
}

/** {@link openRegularFile}, with the stats of the open file (its size), so the caller need not ask for them again. */
export async function openRegularFileWithStats(filePath: string): Promise<{ handle: FileHandle; stats: Stats }> {
  const handle = await open(filePath, constants.O_RDONLY | constants.O_NONBLOCK);
  let stats: Stats;
  try {
    // Asked synchronously, of the open descriptor: no path to walk and nothing to read, the kernel answers from the
    // file it holds open (a network file system from the attributes the open has just fetched), where a trip through
    // libuv's thread pool would make the call wait one more round and cost the worker's thread more than the answer.
    stats = fstatSync(handle.fd);
  } catch (error) {
    await handle.close();
    throw error;
  }
  if (stats.isFile()) return { handle, stats };
  await handle.close();
  throw new NotARegularFileError(filePath);
}

/** A flat copy of a string, so a short cut of a long line does not keep the whole chunk it was sliced from alive. */
export function detachString(text: string): string {
  return Buffer.from(text, 'utf16le').toString('utf16le');
}

/** A chunk of a file as one read returned it. */
export interface FileChunk {
  bytes: Buffer;
  /** The read returned less than it asked for: for a regular file, its end. */
  atEnd: boolean;
}

/**
 * How much the first read of a file asks for, given the file's size from its stats: one byte more than the file
 * (so the read that returns all of it is short, and is seen to be the end), and at most a chunk. A small file then
 * takes a small buffer (under 4 KiB, a slice of Node's shared pool) instead of a fresh 64 KiB one per read, which a
 * busy worker would otherwise allocate outside V8's heap for every Read, and Grep for every file it opens. The size
 * is a hint: a file that grew since makes the read full, and the scan reads on.
 */
function firstReadBytes(size: number | undefined): number {
  return size === undefined ? CHUNK_BYTES : Math.min(CHUNK_BYTES, Math.max(0, size) + 1);
}

/**
 * The file's first chunk (what {@link scanTextLines} reads first), for a caller that looks at the start of a file
 * before scanning it, so the scan need not read it again. `size` is the file's size from its stats, when known
 * (see `firstReadBytes`).
 */
export async function readFirstChunk(handle: FileHandle, size?: number): Promise<FileChunk> {
  const requested = firstReadBytes(size);
  const buffer = Buffer.allocUnsafe(requested);
  const { bytesRead } = await handle.read(buffer, 0, requested, 0);
  return { bytes: buffer.subarray(0, bytesRead), atEnd: bytesRead < requested };
}

/**
 * Feeds the lines of a text file to `visit`, in order, from the file's start. A file with a NUL byte in its first
 * {@link BINARY_SNIFF_BYTES} bytes is binary: nothing is visited. `signal` is checked at every chunk. `handle` is a
 * regular file (see {@link openRegularFile}), so a read that returns less than it asked for has reached the end of the
 * file and no further read is made. `firstChunk`, when given, is {@link readFirstChunk}'s answer for the same handle;
 * otherwise the scan reads it, sized by `size` (the file's size from its stats) when given.
 */
export async function scanTextLines(options: {
  handle: FileHandle;
  signal: AbortSignal;
  keepChars: number;
  visit: LineVisitor;
  firstChunk?: FileChunk;
  size?: number;
}): Promise<ScanOutcome> {
  const { handle, signal, keepChars, visit } = options;
  let firstChunk = options.firstChunk;
  let buffer: Buffer | undefined;
  const decoder = new StringDecoder('utf8');
  let position = 0;
  let lineNumber = 0;
  // The line being assembled: kept pieces, their length, the whole line's length, and its last character.
  let pieces: string[] = [];
  let keptChars = 0;
  let lineChars = 0;
  let lastChar = '';
  let sliceStarted = performance.now();

  const append = (text: string, from: number, to: number): void => {
    if (to === from) return;
    const room = keepChars - keptChars;
    if (room > 0) {
      const piece = text.slice(from, Math.min(to, from + room));
      pieces.push(piece);
      keptChars += piece.length;
    }
    lineChars += to - from;
    lastChar = text[to - 1] ?? '';
  };
  const finishLine = (): 'stop' | undefined => {
    lineNumber++;
    let text = pieces.length === 1 ? (pieces[0] ?? '') : pieces.join('');
    let length = lineChars;
    if (lastChar === '\r') {
      length--;
      if (text.length > length) text = text.slice(0, length);
    }
    pieces = [];
    keptChars = 0;
    lineChars = 0;
    lastChar = '';
    return visit({ text, number: lineNumber, length });
  };

  for (;;) {
    signal.throwIfAborted();
    let read: FileChunk;
    if (firstChunk !== undefined) {
      read = firstChunk;
      firstChunk = undefined;
    } else if (position === 0) {
      read = await readFirstChunk(handle, options.size);
    } else {
      buffer ??= Buffer.allocUnsafe(CHUNK_BYTES);
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, position);
      read = { bytes: buffer.subarray(0, bytesRead), atEnd: bytesRead < CHUNK_BYTES };
    }
    const chunk = read.bytes;
    const bytesRead = chunk.length;
    if (position === 0 && chunk.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return { type: 'binary' };
    position += bytesRead;
    // A short read of a regular file is its end: the decoder's tail joins this chunk's text.
    const atEnd = read.atEnd;
    const text = bytesRead === 0 ? decoder.end() : decoder.write(chunk) + (atEnd ? decoder.end() : '');
    let from = 0;
    for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', from)) {
      append(text, from, newline);
      if (finishLine() === 'stop') return { type: 'scanned', lineCount: lineNumber, stopped: true };
      from = newline + 1;
      if (performance.now() - sliceStarted > YIELD_AFTER_MS) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        signal.throwIfAborted();
        sliceStarted = performance.now();
      }
    }
    append(text, from, text.length);
    if (atEnd) break;
  }
  if (lineChars > 0 && finishLine() === 'stop') return { type: 'scanned', lineCount: lineNumber, stopped: true };
  return { type: 'scanned', lineCount: lineNumber, stopped: false };
}
