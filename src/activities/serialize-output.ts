import { rm } from 'node:fs/promises';
import { PERSISTED_PREVIEW_CHARS, RESULT_BUDGETS } from '../contracts/defaults.js';
import { texts } from '../contracts/texts.js';
import type { ResultBudgetInfo } from '../contracts/tool-result.js';
import type { ResultBudget, Tool } from '../tools/define-tool.js';
import type { ArtifactStore } from '../contracts/artifact-store.js';
import { formatPersistedOutputEnvelope, previewFirstChars, previewLastChars } from '../contracts/persisted-output.js';

/** Budget of tools that declare none (100000 bytes, truncate, keep head; docs/SEMANTICS.md, Result budget). */
export const DEFAULT_RESULT_BUDGET: ResultBudget = RESULT_BUDGETS.default;

/** Results longer than this get an envelope ready, so the aggregate budget can swap them without a round trip. */
export const AGGREGATE_REPLACEMENT_MIN_CHARS = 2 * PERSISTED_PREVIEW_CHARS;

export interface SerializedOutput {
  modelContent: string;
  budget?: ResultBudgetInfo;
  /** An envelope that may replace `modelContent` when the turn's aggregate budget is exceeded. */
  /** `artifact` when the envelope points at the stored whole output; absent for a shorter cut (no store). */
  aggregateReplacement?: { envelope: string; artifact?: string };
}

export interface SerializeOutputOptions {
  tool: Pick<Tool, 'name' | 'resultBudget' | 'formatPersistedModelContent'>;
  content: string;
  spool?: { path: string; bytes: number };
  store?: ArtifactStore;
  sessionId: string;
  callId: string;
  /** Told when the store fails (the call still succeeds, truncated). */
  onStoreError?: (error: unknown) => void;
}

/** Cuts a UTF-8 string to at most `maxBytes` bytes from its head or tail without splitting a character. */
export function cutUtf8(text: string, maxBytes: number, keep: 'head' | 'tail'): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  if (keep === 'head') {
    let end = maxBytes;
    while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
    return bytes.subarray(0, end).toString('utf8');
  }
  let start = bytes.length - maxBytes;
  while (start < bytes.length && ((bytes[start] ?? 0) & 0xc0) === 0x80) start++;
  return bytes.subarray(start).toString('utf8');
}

export function truncationNotice(originalBytes: number, limitBytes: number): string {
  return `[Tool output truncated by resultBudget: ${originalBytes} bytes, limit ${limitBytes} bytes]`;
}

/**
 * Model content of a successful output (docs/SEMANTICS.md, Result budget): empty → `(<tool> completed with no output)`;
 * within `min(maxModelBytes, maxInlineBytes)` → as it is; above it, policy `artifact` stores the whole output and
 * the model gets the `<persisted-output>` envelope (or the tool's own); policy `truncate`, or a store that is
 * missing or failed, keeps the head or tail and appends the truncation notice. A store failure never fails the call.
 */
export async function serializeOutput(options: SerializeOutputOptions): Promise<SerializedOutput> {
  const { tool, content, spool, store } = options;
  const budget = tool.resultBudget ?? DEFAULT_RESULT_BUDGET;
  const limit = Math.min(budget.maxModelBytes, budget.maxInlineBytes ?? budget.maxModelBytes);
  const originalBytes = spool?.bytes ?? Buffer.byteLength(content, 'utf8');
  const dropSpool = async (): Promise<void> => {
    if (spool !== undefined) await rm(spool.path, { force: true });
  };

  if (originalBytes === 0 || (spool === undefined && content.trim() === '')) {
    await dropSpool();
    return { modelContent: texts.emptyOutput(tool.name) };
  }
  if (originalBytes <= limit) {
    await dropSpool();
    const result: SerializedOutput = { modelContent: content };
    // Within budget `content` is the whole output (the spool, already deleted, held nothing more).
    const { spool: _spool, ...whole } = options;
    if (content.length > AGGREGATE_REPLACEMENT_MIN_CHARS)
      result.aggregateReplacement = await aggregateReplacement({ ...whole, keep: budget.keep, originalBytes });
    return result;
  }

  let storeFailed = false;
  if (budget.policy === 'artifact' && store !== undefined) {
    try {
      const { envelope, uri } = await persist({ ...options, store, keep: budget.keep, originalBytes });
      return {
        modelContent: envelope,
        budget: {
          truncated: true,
          originalBytes,
          modelBytes: Buffer.byteLength(envelope, 'utf8'),
          policy: 'artifact',
          artifact: uri,
        },
      };
    } catch (error) {
      storeFailed = true;
      options.onStoreError?.(error);
    }
  }
  const kept = cutUtf8(content, limit, budget.keep);
  const notice = truncationNotice(originalBytes, limit);
  // The notice follows the kept text whichever end was kept (docs/SEMANTICS.md, Deliberate choices).
  const modelContent = `${kept}\n${notice}`;
  const result: SerializedOutput = {
    modelContent,
    budget: { truncated: true, originalBytes, modelBytes: Buffer.byteLength(modelContent, 'utf8'), policy: 'truncate' },
  };
  // Even cut to its own budget, a result may be too much beside the turn's others: the aggregate budget can swap in
  // the whole output's envelope (a store that just failed is not asked again), or a shorter cut.
  if (modelContent.length > AGGREGATE_REPLACEMENT_MIN_CHARS) {
    const { store: _unused, ...withoutStore } = options;
    result.aggregateReplacement = await aggregateReplacement({
      ...(storeFailed ? withoutStore : options),
      keep: budget.keep,
      originalBytes,
    });
  }
  await dropSpool();
  return result;
}

/** The notice under a result the turn's aggregate budget cut because it could not be stored. */
export function aggregateTruncationNotice(originalBytes: number, keptBytes: number, keep: 'head' | 'tail'): string {
  return `[Tool output truncated by the turn's aggregate budget: ${originalBytes} bytes, ${keep === 'head' ? 'first' : 'last'} ${keptBytes} bytes kept]`;
}

/**
 * What the turn's aggregate budget may swap in for a large result: the `<persisted-output>` envelope of the whole
 * output when the store takes it, otherwise a preview of the kept end with a notice, so the budget holds without a
 * store too. A store failure never fails the call.
 */
async function aggregateReplacement(
  options: SerializeOutputOptions & { keep: 'head' | 'tail'; originalBytes: number },
): Promise<{ envelope: string; artifact?: string }> {
  const { store } = options;
  if (store !== undefined) {
    const persisted = await persist({ ...options, store }).catch((error: unknown) => {
      options.onStoreError?.(error);
      return undefined;
    });
    if (persisted !== undefined) return { envelope: persisted.envelope, artifact: persisted.uri };
  }
  const preview = options.keep === 'head' ? previewFirstChars(options.content) : previewLastChars(options.content);
  const notice = aggregateTruncationNotice(
    options.originalBytes,
    Buffer.byteLength(preview.preview, 'utf8'),
    options.keep,
  );
  return { envelope: `${preview.preview}\n${notice}` };
}

async function persist(
  options: SerializeOutputOptions & { store: ArtifactStore; keep: 'head' | 'tail'; originalBytes: number },
): Promise<{ envelope: string; uri: string }> {
  const { store, spool, sessionId, callId } = options;
  const stored =
    spool === undefined
      ? await store.put({ sessionId, callId, content: options.content })
      : await store.put({ sessionId, callId, file: spool.path });
  // The model gets the URI, which Read opens (confined to the session's own artifacts), never a worker's path.
  const envelopeInput = {
    content: options.content,
    originalBytes: options.originalBytes,
    persistedPath: stored.uri,
    keep: options.keep,
  };
  const envelope =
    options.tool.formatPersistedModelContent?.({ ...envelopeInput, uri: stored.uri }) ??
    formatPersistedOutputEnvelope(envelopeInput);
  return { envelope, uri: stored.uri };
}
