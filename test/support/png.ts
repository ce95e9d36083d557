import { randomBytes } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typeAndData = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typeAndData));
  return Buffer.concat([length, typeAndData, crc]);
}

/**
 * A valid PNG of random RGB noise (signature, IHDR, one IDAT of deflated rows, IEND, correct CRCs) of about
 * `approximateBytes` bytes: random pixels do not compress, so the file is as large as its raw rows.
 */
export function noisePng(approximateBytes: number): Buffer {
  const width = 256;
  const rowBytes = 1 + width * 3;
  const height = Math.max(1, Math.round(approximateBytes / rowBytes));
  const rows = randomBytes(height * rowBytes);
  // Filter type 0 (None) at the start of every row.
  for (let row = 0; row < height; row++) rows[row * rowBytes] = 0;
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit depth, RGB, deflate, adaptive filtering, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
