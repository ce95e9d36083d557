import type { ArtifactStore } from '../contracts/artifact-store.js';
import type { ContentBlock } from '../contracts/tool-result.js';
import type { ToolOutputImage } from '../tools/define-tool.js';
import { detectImageMediaType } from '../tools/support/image-media-type.js';

export type ImageBlock = Extract<ContentBlock, { type: 'image' }>;

export interface StoredImages {
  /** Image blocks for `ToolResult.content`, in the tool's order: only images the model can be sent. */
  blocks: ImageBlock[];
  /** One line per image for the result's text form: `[image: image/png, 512000 bytes, switchyard-artifact://…]`. */
  lines: string[];
}

/**
 * Stores a tool's images in the artifact store (ZCode persists media blocks as artifacts before the record is
 * written), so only their references enter history. An image whose bytes are no supported format, one over
 * `maxBytes`, or one the store could not take gets a text line saying why and no block; the call still succeeds.
 */
export async function storeImages(options: {
  images: readonly ToolOutputImage[];
  store: ArtifactStore | undefined;
  sessionId: string;
  callId: string;
  maxBytes: number;
  onStoreError?: (error: unknown) => void;
}): Promise<StoredImages> {
  const { store, sessionId, callId, maxBytes } = options;
  const stored: StoredImages = { blocks: [], lines: [] };
  for (const image of options.images) {
    const bytes = image.data.byteLength;
    const mediaType = detectImageMediaType(image.data);
    if (mediaType === undefined) {
      stored.lines.push(`[image: ${image.mediaType}, ${bytes} bytes; not shown: not a PNG, JPEG, GIF or WebP image]`);
      continue;
    }
    if (store === undefined) {
      stored.lines.push(`[image: ${mediaType}, ${bytes} bytes; not shown: the worker has no artifact store]`);
      continue;
    }
    let uri: string;
    try {
      uri = (await store.put({ sessionId, callId, data: image.data })).uri;
    } catch (error) {
      options.onStoreError?.(error);
      stored.lines.push(`[image: ${mediaType}, ${bytes} bytes; not shown: the artifact store failed]`);
      continue;
    }
    if (bytes > maxBytes) {
      stored.lines.push(
        `[image: ${mediaType}, ${bytes} bytes, ${uri}; not shown: larger than the ${maxBytes}-byte image limit]`,
      );
      continue;
    }
    stored.blocks.push({ type: 'image', mediaType, artifact: uri, bytes });
    stored.lines.push(`[image: ${mediaType}, ${bytes} bytes, ${uri}]`);
  }
  return stored;
}
