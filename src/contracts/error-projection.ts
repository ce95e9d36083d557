import { ERROR_PROJECTION } from './defaults.js';

/** Messages of wrapper errors that say nothing by themselves; projection skips them to reach the cause. */
const WRAPPER_MESSAGES = new Set([
  '',
  'Activity task failed',
  'Activity execution failed',
  'Workflow execution failed',
]);

function messageOf(error: unknown): string | undefined {
  if (typeof error === 'string') return error;
  if (error !== null && typeof error === 'object' && 'message' in error && typeof error.message === 'string') {
    return error.message;
  }
  return undefined;
}

function causeOf(error: unknown): unknown {
  return error !== null && typeof error === 'object' && 'cause' in error ? error.cause : undefined;
}

/**
 * The error message the model sees (docs/SEMANTICS.md, Error projection): follow the `cause` chain up to 12 levels,
 * take the first message that is not a wrapper's, collapse whitespace, cut at 500 characters.
 */
export function projectErrorMessage(error: unknown): string {
  let current: unknown = error;
  let chosen: string | undefined;
  for (let depth = 0; depth < ERROR_PROJECTION.maxCauseDepth && current !== undefined && current !== null; depth++) {
    const message = messageOf(current)?.replace(/\s+/g, ' ').trim();
    if (message !== undefined && !WRAPPER_MESSAGES.has(message)) {
      chosen = message;
      break;
    }
    current = causeOf(current);
  }
  const text = chosen ?? (messageOf(error)?.replace(/\s+/g, ' ').trim() || 'Unknown error');
  return text.length > ERROR_PROJECTION.maxChars ? text.slice(0, ERROR_PROJECTION.maxChars) : text;
}
