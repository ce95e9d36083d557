import { PERSISTED_PREVIEW_CHARS } from './defaults.js';

export const PERSISTED_OUTPUT_OPEN_TAG = '<persisted-output>';
export const PERSISTED_OUTPUT_CLOSE_TAG = '</persisted-output>';

/** `245.0 KB` style sizes, as in the envelope (docs/SEMANTICS.md, Persisted-output envelope). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  if (bytes < 1024 * 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  return `${(bytes / (1024 * 1024 * 1024)).toFixed(1)} GB`;
}

/**
 * The first `limit` characters, cut at the last newline when that newline falls in the second half; `hasMore` when
 * anything was left out.
 */
export function previewFirstChars(
  content: string,
  limit: number = PERSISTED_PREVIEW_CHARS,
): { preview: string; hasMore: boolean } {
  if (content.length <= limit) return { preview: content, hasMore: false };
  const head = content.slice(0, limit);
  const lastNewline = head.lastIndexOf('\n');
  return { preview: lastNewline > limit / 2 ? head.slice(0, lastNewline) : head, hasMore: true };
}

/** The last `limit` characters, cut after the first newline when it falls in the first half (for tail-keeping tools). */
export function previewLastChars(
  content: string,
  limit: number = PERSISTED_PREVIEW_CHARS,
): { preview: string; hasMore: boolean } {
  if (content.length <= limit) return { preview: content, hasMore: false };
  const tail = content.slice(-limit);
  const firstNewline = tail.indexOf('\n');
  return {
    preview: firstNewline >= 0 && firstNewline < limit / 2 ? tail.slice(firstNewline + 1) : tail,
    hasMore: true,
  };
}

export interface PersistedOutputEnvelopeInput {
  /** The output, or as much of its head/tail as the preview needs. */
  content: string;
  originalBytes: number;
  persistedPath: string;
  keep: 'head' | 'tail';
  previewChars?: number;
}

/** The envelope the model gets instead of a large output (docs/SEMANTICS.md, Persisted-output envelope). */
export function formatPersistedOutputEnvelope(input: PersistedOutputEnvelopeInput): string {
  const previewChars = input.previewChars ?? PERSISTED_PREVIEW_CHARS;
  const header = `Output too large (${formatBytes(input.originalBytes)}). Full output saved to: ${input.persistedPath}`;
  if (input.keep === 'tail') {
    const preview = previewLastChars(input.content, previewChars);
    return [
      PERSISTED_OUTPUT_OPEN_TAG,
      header,
      '',
      `Preview (last ${formatBytes(previewChars)}):`,
      preview.hasMore ? '...' : undefined,
      preview.preview,
      PERSISTED_OUTPUT_CLOSE_TAG,
    ]
      .filter((line): line is string => line !== undefined)
      .join('\n');
  }
  const preview = previewFirstChars(input.content, previewChars);
  return [
    PERSISTED_OUTPUT_OPEN_TAG,
    header,
    '',
    `Preview (first ${formatBytes(previewChars)}):`,
    preview.preview,
    preview.hasMore ? '...' : undefined,
    PERSISTED_OUTPUT_CLOSE_TAG,
  ]
    .filter((line): line is string => line !== undefined)
    .join('\n');
}
