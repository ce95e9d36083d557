import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { storeImages } from '../../src/activities/store-images.js';
import { FileArtifactStore } from '../../src/artifacts/file-artifact-store.js';
import { main } from '../../src/cli/main.js';
import { LIMITS } from '../../src/contracts/defaults.js';
import { detectImageMediaType } from '../../src/tools/support/image-media-type.js';
import { formatMcpResult } from '../../src/tools/mcp/mcp.js';
import { readTool } from '../../src/tools/builtin/read.js';
import { noisePng } from '../support/png.js';
import { scratchDir } from '../support/scratch.js';
import { toolContext } from '../support/tool-context.js';

const bytes = (...values: Array<number | string>): Uint8Array =>
  Buffer.concat(
    values.map((value) => (typeof value === 'string' ? Buffer.from(value, 'latin1') : Buffer.from([value]))),
  );

describe('image detection by magic bytes', () => {
  it('tells PNG, JPEG, GIF and WebP apart by their signatures', () => {
    expect(detectImageMediaType(bytes(0x89, 'PNG\r\n\x1a\n', 0, 0, 0, 13))).toBe('image/png');
    expect(detectImageMediaType(bytes(0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 'JFIF'))).toBe('image/jpeg');
    expect(detectImageMediaType(bytes('GIF89a', 1, 0, 1, 0))).toBe('image/gif');
    expect(detectImageMediaType(bytes('GIF87a'))).toBe('image/gif');
    expect(detectImageMediaType(bytes('RIFF', 0x24, 0, 0, 0, 'WEBPVP8 '))).toBe('image/webp');
  });

  it('refuses near misses and other formats', () => {
    expect(detectImageMediaType(bytes(0x89, 'PNG\r\n'))).toBeUndefined(); // cut short
    expect(detectImageMediaType(bytes('RIFF', 0x24, 0, 0, 0, 'WAVEfmt '))).toBeUndefined(); // a WAV is RIFF too
    expect(detectImageMediaType(bytes('BM', 0, 0, 0, 0))).toBeUndefined(); // BMP: the APIs refuse it
    expect(detectImageMediaType(bytes('<svg xmlns="http://www.w3.org/2000/svg">'))).toBeUndefined();
    expect(detectImageMediaType(new Uint8Array())).toBeUndefined();
  });
});

describe('Read of images', () => {
  let cwd: string;
  const png = noisePng(20_000);
  beforeAll(async () => {
    cwd = await scratchDir();
    await writeFile(path.join(cwd, 'picture.png'), png);
    await writeFile(path.join(cwd, 'really-a-png.txt'), png);
    await writeFile(path.join(cwd, 'not-a-png.png'), 'just text\n');
    await writeFile(path.join(cwd, 'big.png'), noisePng(LIMITS.readMaxFileBytes + 50_000));
  });
  afterEach(() => {
    delete process.env.SWITCHYARD_IMAGE_MAX_BYTES;
  });
  const read = async (file: string) => readTool.execute({ file_path: path.join(cwd, file) }, toolContext({ cwd }));
  const validate = async (file: string) =>
    readTool.validateInput?.({ file_path: file }, { sessionId: 's', cwd, allowRules: [], denyRules: [] });

  it('returns an image by its bytes, whatever the extension', async () => {
    for (const file of ['picture.png', 'really-a-png.txt']) {
      const output = await read(file);
      expect(output).toMatchObject({ content: '', images: [{ mediaType: 'image/png' }] });
      expect(typeof output === 'object' && Buffer.from(output.images?.[0]?.data ?? []).equals(png)).toBe(true);
    }
    expect(await read('not-a-png.png')).toMatchObject({ content: '     1\tjust text' });
  });

  it('accepts an image larger than the text limit, and refuses one over the image limit with a clear message', async () => {
    expect(await validate('big.png')).toEqual({ ok: true });
    expect(await read('big.png')).toMatchObject({ images: [{ mediaType: 'image/png' }] });
    process.env.SWITCHYARD_IMAGE_MAX_BYTES = '10000';
    const refused = await validate('picture.png');
    expect(refused).toMatchObject({ ok: false, errorCode: 'image_too_large' });
    expect(refused?.ok === false && refused.message).toMatch(
      /^Image file \(image\/png, 19\.\d KB\) exceeds the maximum image size Read returns \(9\.8 KB/,
    );
    // Checked again at execution (the file may have changed since validation).
    await expect(read('picture.png')).rejects.toThrow(/exceeds the maximum image size Read returns/);
  });
});

describe("storing a tool's images", () => {
  it('stores the bytes as an artifact and gives a block and a text line; refuses what the model cannot be sent', async () => {
    const store = new FileArtifactStore(await scratchDir());
    const png = noisePng(2_000);
    const stored = await storeImages({
      images: [
        { mediaType: 'image/jpeg', data: png }, // mislabelled: the bytes win
        { mediaType: 'image/png', data: Buffer.from('12345') },
        { mediaType: 'image/png', data: noisePng(5_000) },
      ],
      store,
      sessionId: 's',
      callId: 'c',
      maxBytes: 4_000,
    });
    expect(stored.blocks).toHaveLength(1);
    const [block] = stored.blocks;
    expect(block).toMatchObject({ type: 'image', mediaType: 'image/png', bytes: png.length });
    expect(Buffer.from(await store.readBytes(block?.artifact ?? '')).equals(png)).toBe(true);
    expect(stored.lines[0]).toBe(`[image: image/png, ${png.length} bytes, ${block?.artifact}]`);
    expect(stored.lines[1]).toBe('[image: image/png, 5 bytes; not shown: not a PNG, JPEG, GIF or WebP image]');
    expect(stored.lines[2]).toMatch(
      /^\[image: image\/png, \d+ bytes, switchyard-artifact:\/\/s\/\S+; not shown: larger than the 4000-byte image limit\]$/,
    );
    const withoutStore = await storeImages({
      images: [{ mediaType: 'image/png', data: png }],
      store: undefined,
      sessionId: 's',
      callId: 'c',
      maxBytes: 4_000,
    });
    expect(withoutStore).toEqual({
      blocks: [],
      lines: [`[image: image/png, ${png.length} bytes; not shown: the worker has no artifact store]`],
    });
  });
});

describe('MCP image content', () => {
  it('becomes an image of the output (bytes decoded), while undecodable images stay placeholders', () => {
    const png = noisePng(1_000);
    const output = formatMcpResult({
      content: [
        { type: 'text', text: 'a screenshot' },
        { type: 'image', data: png.toString('base64'), mimeType: 'image/png' },
        { type: 'image', data: Buffer.from('12345').toString('base64'), mimeType: 'image/png' },
      ],
    });
    expect(output).toMatchObject({
      content: 'a screenshot\n[image: image/png, 5 bytes]',
      images: [{ mediaType: 'image/png' }],
    });
    expect(typeof output === 'object' && Buffer.from(output.images?.[0]?.data ?? []).equals(png)).toBe(true);
  });
});

describe('switchyard artifact <uri>', () => {
  const saved = process.env.SWITCHYARD_DATA_DIR;
  afterEach(() => {
    vi.restoreAllMocks();
    if (saved === undefined) delete process.env.SWITCHYARD_DATA_DIR;
    else process.env.SWITCHYARD_DATA_DIR = saved;
  });

  it("writes an image artifact's bytes unchanged, so it can be redirected to a file", async () => {
    const dataDir = await scratchDir();
    process.env.SWITCHYARD_DATA_DIR = dataDir;
    const png = noisePng(3_000);
    const { uri } = await new FileArtifactStore(dataDir).put({ sessionId: 's', callId: 'c', data: png });
    const written: Buffer[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(Buffer.from(chunk));
      return true;
    });
    expect(await main(['artifact', uri])).toBe(0);
    expect(Buffer.concat(written).equals(png)).toBe(true);
  });
});
