import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

/** A range of a task's output handed to the caller: in memory when it fits `maxInlineBytes`, else in a spool file. */
export interface BackgroundTaskOutput {
  from: number;
  to: number;
  /** The whole range when it fits, else its last `maxInlineBytes` bytes (cut at a character boundary). */
  text: string;
  /** The whole range in a file of its own (the caller owns and deletes it), when it did not fit. */
  spool?: { path: string; bytes: number };
}

/** Bytes at the end of `buffer` that start a UTF-8 character the buffer does not finish (0 to 3). */
function incompleteUtf8Tail(buffer: Buffer): number {
  for (let back = 1; back <= Math.min(3, buffer.length); back++) {
    const byte = buffer[buffer.length - back] ?? 0;
    if ((byte & 0xc0) === 0x80) continue;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? back : 0;
  }
  return 0;
}

/**
 * A task's output from byte `from` to its end (`BackgroundTaskStore.readNew` moves the read offset past it): the last
 * `maxInlineBytes` as text, and the whole range in a spool file in `spoolDirectory` when it is longer. While the task
 * runs (`running`), the range never ends inside a UTF-8 character.
 */
export async function readOutputRange(options: {
  outputPath: string;
  spoolDirectory: string;
  from: number;
  maxInlineBytes: number;
  running: boolean;
}): Promise<BackgroundTaskOutput> {
  const { outputPath, from } = options;
  const size = await stat(outputPath).then(
    (stats) => stats.size,
    () => 0,
  );
  let to = Math.max(from, size);
  let text = '';
  let spool: BackgroundTaskOutput['spool'];
  const inlineFrom = Math.max(from, to - options.maxInlineBytes);
  if (to > from) {
    const handle = await open(outputPath, 'r');
    try {
      const buffer = Buffer.alloc(to - inlineFrom);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, inlineFrom);
      let bytes = buffer.subarray(0, bytesRead);
      to = inlineFrom + bytesRead;
      if (options.running) {
        const cut = incompleteUtf8Tail(bytes);
        bytes = bytes.subarray(0, bytes.length - cut);
        to -= cut;
      }
      // A tail that starts inside a character drops the partial character.
      let start = 0;
      if (inlineFrom > from) while (start < bytes.length && ((bytes[start] ?? 0) & 0xc0) === 0x80) start++;
      text = bytes.subarray(start).toString('utf8');
    } finally {
      await handle.close();
    }
    if (inlineFrom > from) {
      const spoolPath = path.join(options.spoolDirectory, `read-${randomBytes(4).toString('hex')}.log`);
      await pipeline(createReadStream(outputPath, { start: from, end: to - 1 }), createWriteStream(spoolPath));
      spool = { path: spoolPath, bytes: to - from };
    }
  }
  return spool === undefined ? { from, to, text } : { from, to, text, spool };
}
