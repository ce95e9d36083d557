/**
 * Which image format a file's bytes are, from their magic numbers: the four formats the model APIs accept. The
 * extension is never trusted: a `.png` holding text is text, a PNG named `.txt` is an image.
 */
import type { ImageMediaType } from '../../contracts/tool-result.js';

/** Bytes `detectImageMediaType` needs to tell every supported format apart. */
export const IMAGE_SIGNATURE_BYTES = 12;

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function startsWith(bytes: Uint8Array, signature: readonly number[], offset = 0): boolean {
  return (
    bytes.length >= offset + signature.length && signature.every((value, index) => bytes[offset + index] === value)
  );
}

function ascii(text: string): number[] {
  return [...text].map((character) => character.charCodeAt(0));
}

/**
 * The media type of an image by its first bytes (at least {@link IMAGE_SIGNATURE_BYTES} of them for WebP):
 * PNG `89 50 4E 47 0D 0A 1A 0A`, JPEG `FF D8 FF`, GIF `GIF87a`/`GIF89a`, WebP `RIFF????WEBP`. Undefined for
 * anything else (including SVG, which is text, and formats the APIs refuse such as BMP or TIFF).
 */
export function detectImageMediaType(bytes: Uint8Array): ImageMediaType | undefined {
  if (startsWith(bytes, PNG_SIGNATURE)) return 'image/png';
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(bytes, ascii('GIF87a')) || startsWith(bytes, ascii('GIF89a'))) return 'image/gif';
  if (startsWith(bytes, ascii('RIFF')) && startsWith(bytes, ascii('WEBP'), 8)) return 'image/webp';
  return undefined;
}
