import { LIMITS } from '../contracts/defaults.js';

export type LimitName = keyof typeof LIMITS;

/** The worker environment variable that overrides each limit (documented beside the limit in `LIMITS`). */
export const LIMIT_ENV_VARIABLES: Readonly<Record<LimitName, string>> = {
  readMaxFileBytes: 'SWITCHYARD_READ_MAX_FILE_BYTES',
  imageMaxBytes: 'SWITCHYARD_IMAGE_MAX_BYTES',
  grepMaxLineChars: 'SWITCHYARD_GREP_MAX_LINE_CHARS',
  grepLineWork: 'SWITCHYARD_GREP_LINE_WORK',
  grepMaxPatternChars: 'SWITCHYARD_GREP_MAX_PATTERN_CHARS',
  todoMaxItems: 'SWITCHYARD_TODO_MAX_ITEMS',
  todoMaxChars: 'SWITCHYARD_TODO_MAX_CHARS',
};

/**
 * The value of a limit: its environment variable when set, else the default in `LIMITS`. Read at each call, so a
 * misconfigured worker fails the calls that use the limit with a message naming the variable.
 */
export function resolveLimit(name: LimitName): number {
  const variable = LIMIT_ENV_VARIABLES[name];
  const raw = process.env[variable];
  if (raw === undefined || raw === '') return LIMITS[name];
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${variable} must be a positive integer, got "${raw}"`);
  return value;
}
