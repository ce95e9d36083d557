import { BASH_LIMITS } from '../../contracts/defaults.js';
import { SANDBOX_LIMIT_DEFAULTS } from '../tool-settings.js';
import type { ToolEnvironment } from '../tool-settings.js';
import type { SandboxLimits } from './bubblewrap-arguments.js';

export { SANDBOX_LIMIT_DEFAULTS } from '../tool-settings.js';

export const SANDBOX_LIMIT_ENV_VARIABLES = {
  memoryBytes: 'SWITCHYARD_SANDBOX_MEMORY_BYTES',
  processes: 'SWITCHYARD_SANDBOX_MAX_PROCESSES',
  fileBytes: 'SWITCHYARD_SANDBOX_MAX_FILE_BYTES',
  cpuSeconds: 'SWITCHYARD_SANDBOX_CPU_SECONDS',
} as const satisfies Record<keyof SandboxLimits, string>;

function positiveInteger(env: ToolEnvironment, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

/**
 * The sandbox's resource limits from a worker's variables (`SANDBOX_LIMIT_ENV_VARIABLES`, defaults in
 * `SANDBOX_LIMIT_DEFAULTS`); a malformed value throws an error naming its variable. The worker's settings resolve them
 * once (src/config/settings.ts); the tools read them from `toolSettings()`.
 */
export function sandboxLimitsFromEnv(env: ToolEnvironment): SandboxLimits {
  const spool = positiveInteger(env, 'SWITCHYARD_BASH_MAX_SPOOL_BYTES', BASH_LIMITS.spoolBytes);
  return {
    memoryBytes: positiveInteger(env, SANDBOX_LIMIT_ENV_VARIABLES.memoryBytes, SANDBOX_LIMIT_DEFAULTS.memoryBytes),
    processes: positiveInteger(env, SANDBOX_LIMIT_ENV_VARIABLES.processes, SANDBOX_LIMIT_DEFAULTS.processes),
    fileBytes: positiveInteger(env, SANDBOX_LIMIT_ENV_VARIABLES.fileBytes, spool),
    cpuSeconds: positiveInteger(env, SANDBOX_LIMIT_ENV_VARIABLES.cpuSeconds, SANDBOX_LIMIT_DEFAULTS.cpuSeconds),
  };
}
