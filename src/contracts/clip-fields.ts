/**
 * Clipping of the fields a client or a signal sender supplies that the session logs or carries (decision log, events,
 * continue-as-new input): a field of any length arrives, at most `CARRIED_FIELD_MAX_CHARS` of it stays. Pure: called
 * at the entry of a signal handler, before anything reads the signal.
 */
import { CARRIED_FIELD_MAX_CHARS } from './defaults.js';

/** `text` cut to `maxChars` characters, the cut marked with `…` (never a lone half of a surrogate pair). */
export function clipText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let end = Math.max(0, maxChars - 1);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}

/** Fields of a signal that hold free text; every other string field is an identifier (shorter limit). */
const TEXT_FIELDS = new Set(['reason', 'detail', 'message']);

/**
 * A signal's payload with each top-level string field clipped (identifiers to `CARRIED_FIELD_MAX_CHARS.id`, the free
 * text fields to `.text`); anything that is not a plain object is returned as is, for the handler's own validation.
 * A clipped identifier ends with `…`, so it never equals a real one and the signal is ignored as unknown.
 */
export function clipSignalFields<T>(raw: T, limits: { id: number; text: number } = CARRIED_FIELD_MAX_CHARS): T {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  let clipped: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    if (typeof value !== 'string') continue;
    const max = TEXT_FIELDS.has(key) ? limits.text : limits.id;
    if (value.length <= max) continue;
    clipped ??= { ...(raw as Record<string, unknown>) };
    clipped[key] = clipText(value, max);
  }
  return (clipped ?? raw) as T;
}
