import { texts } from '../contracts/texts.js';
import type { ResultBudgetInfo } from '../contracts/tool-result.js';
import type { ResultBudget } from '../tools/define-tool.js';

/** Budget of tools that declare none (seed 000: 100000 bytes, truncate, keep head). */
export const DEFAULT_RESULT_BUDGET: ResultBudget = { maxModelBytes: 100_000, policy: 'truncate', keep: 'head' };

export interface SerializedOutput {
  modelContent: string;
  budget?: ResultBudgetInfo;
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
 * Model content of a successful output (seed 000 `serializeOutput`): empty → placeholder; within
 * `min(maxModelBytes, maxInlineBytes)` → as it is; above → truncated to the budget with a notice.
 * The artifact branch joins in the execution issue; without a store, `artifact` falls back to truncation.
 */
export function serializeOutput(options: { toolName: string; content: string; budget?: ResultBudget }): SerializedOutput {
  const { toolName, content } = options;
  const budget = options.budget ?? DEFAULT_RESULT_BUDGET;
  if (content.trim() === '') return { modelContent: texts.emptyOutput(toolName) };
  const limit = Math.min(budget.maxModelBytes, budget.maxInlineBytes ?? budget.maxModelBytes);
  const originalBytes = Buffer.byteLength(content, 'utf8');
  if (originalBytes <= limit) return { modelContent: content };
  const kept = cutUtf8(content, limit, budget.keep);
  const notice = truncationNotice(originalBytes, limit);
  const modelContent = budget.keep === 'head' ? `${kept}\n${notice}` : `${notice}\n${kept}`;
  return {
    modelContent,
    budget: { truncated: true, originalBytes, modelBytes: Buffer.byteLength(modelContent, 'utf8'), policy: 'truncate' },
  };
}
