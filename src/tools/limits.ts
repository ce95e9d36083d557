import { limitFromEnv } from '../config/environment.js';
import type { LimitName } from '../config/environment.js';

export { LIMIT_ENV_VARIABLES } from '../config/environment.js';
export type { LimitName };

/**
 * The value of a limit: its environment variable when set, else the default in `LIMITS`. Read at each call, so a
 * misconfigured worker fails the calls that use the limit with a message naming the variable.
 */
export function resolveLimit(name: LimitName): number {
  return limitFromEnv(name);
}
