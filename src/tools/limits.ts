import { toolSettings } from './tool-settings.js';
import type { LimitName } from './tool-settings.js';

export type { LimitName };

/** The environment variable that overrides each limit (documented beside the limit in `LIMITS`). */
export const LIMIT_ENV_VARIABLES: Readonly<Record<LimitName, string>> = {
  readMaxFileBytes: 'SWITCHYARD_READ_MAX_FILE_BYTES',
  imageMaxBytes: 'SWITCHYARD_IMAGE_MAX_BYTES',
  grepMaxLineChars: 'SWITCHYARD_GREP_MAX_LINE_CHARS',
  grepLineWork: 'SWITCHYARD_GREP_LINE_WORK',
  grepMaxPatternChars: 'SWITCHYARD_GREP_MAX_PATTERN_CHARS',
  todoMaxItems: 'SWITCHYARD_TODO_MAX_ITEMS',
  todoMaxChars: 'SWITCHYARD_TODO_MAX_CHARS',
};

/** The value of a limit on this worker: its variable as the worker's settings resolved it, else the default in `LIMITS`. */
export function resolveLimit(name: LimitName): number {
  return toolSettings().limits[name];
}
