import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openRegularFile, readFirstChunk, scanTextLines } from '../../src/tools/support/text-lines.js';
import { scratchDir } from '../support/scratch.js';

const CHUNK = 64 * 1024;

/**
 * The lines of `content` as scanTextLines sees them, how many reads it made (with or without the first chunk), and
 * how many bytes each read asked for (the first chunk's read included). `size` is the size hint the scan (or the first chunk's read) is given.
 */
async function scan(content: string | Buffer, options: { firstChunk?: boolean; size?: number } = {}) {
  const file = path.join(await scratchDir(), 'file.txt');
  await writeFile(file, content);
  const handle = await openRegularFile(file);
  let reads = 0;
  const asked: number[] = [];
  const counted = new Proxy(handle, {
    get(target, key, receiver) {
      if (key === 'read') {
        // Every read here is read(buffer, offset, length, position).
        return (...args: unknown[]) => {
          reads++;
          asked.push(args[2] as number);
          return (target.read as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      const value: unknown = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  try {
    const firstChunk = options.firstChunk === true ? await readFirstChunk(counted, options.size) : undefined;
    // The reads the scan itself made: the first chunk's read, when it was given, is not one of them.
    reads = 0;
    const lines: string[] = [];
    const outcome = await scanTextLines({
      handle: counted,
      signal: new AbortController().signal,
      keepChars: 10 * CHUNK,
      visit: (line) => void lines.push(line.text),
      ...(firstChunk === undefined ? {} : { firstChunk }),
      ...(options.size === undefined ? {} : { size: options.size }),
    });
    return { lines, outcome, reads, asked };
  } finally {
    await handle.close();
  }
}

describe('scanTextLines', () => {
  it('reads a small file once, and not at all when given its first chunk: a short read is the end', async () => {
    const content = 'one\ntwo\nthree\n';
    const plain = await scan(content);
    expect(plain.lines).toEqual(['one', 'two', 'three']);
    expect(plain.reads).toBe(1);
    const given = await scan(content, { firstChunk: true });
    expect(given.lines).toEqual(plain.lines);
    expect(given.reads).toBe(0);
  });

  it('sizes the first read by the file size it is given: one byte more than the file, at most a chunk', async () => {
    const content = `${'x'.repeat(79)}\n`.repeat(25);
    for (const firstChunk of [false, true]) {
      const sized = await scan(content, { firstChunk, size: 2_000 });
      expect(sized.lines).toHaveLength(25);
      expect(sized.asked).toEqual([2_001]);
    }
    expect((await scan(content)).asked).toEqual([CHUNK]);
    const big = await scan(`${'y'.repeat(99)}\n`.repeat(1_000), { size: 100_000 });
    expect(big.lines).toHaveLength(1_000);
    expect(big.asked).toEqual([CHUNK, CHUNK]);
    const empty = await scan('', { size: 0 });
    expect(empty.outcome).toEqual({ type: 'scanned', lineCount: 0, stopped: false });
    expect(empty.asked).toEqual([1]);
  });

  it('reads on when the file grew past the size it was given: a full first read is not the end', async () => {
    const content = Array.from({ length: 3_000 }, (_, index) => `line ${index}`).join('\n');
    for (const firstChunk of [false, true]) {
      const { lines, asked } = await scan(content, { firstChunk, size: 10 });
      expect(lines).toHaveLength(3_000);
      expect(lines.at(-1)).toBe('line 2999');
      expect(asked[0]).toBe(11);
    }
  });

  it('reads on past full chunks: a file of exactly one chunk, and one with a character split across the chunk edge', async () => {
    const exact = `${'x'.repeat(CHUNK - 1)}\n`;
    const exactScan = await scan(exact);
    expect(exactScan.lines).toEqual(['x'.repeat(CHUNK - 1)]);
    // The full chunk, then the read that finds the end.
    expect(exactScan.reads).toBe(2);
    // "é" is two bytes: its first byte ends the first chunk, its second starts the next.
    const split = `${'a'.repeat(CHUNK - 1)}é\nlast line without newline`;
    for (const firstChunk of [false, true]) {
      const { lines, outcome } = await scan(split, { firstChunk });
      expect(lines).toEqual([`${'a'.repeat(CHUNK - 1)}é`, 'last line without newline']);
      expect(outcome).toEqual({ type: 'scanned', lineCount: 2, stopped: false });
    }
  });

  it('ends a file cut in the middle of a character with the replacement character, as before', async () => {
    const { lines } = await scan(Buffer.concat([Buffer.from('ok\nbad '), Buffer.from([0xc3])]));
    expect(lines).toEqual(['ok', 'bad \ufffd']);
  });

  it('finds a NUL byte in the first chunk given, as in one it read itself', async () => {
    const binary = Buffer.concat([Buffer.from('PK'), Buffer.from([0]), Buffer.from('rest\n')]);
    expect((await scan(binary)).outcome).toEqual({ type: 'binary' });
    expect((await scan(binary, { firstChunk: true })).outcome).toEqual({ type: 'binary' });
  });
});
