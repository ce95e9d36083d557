import { processEnvironment } from '../../config/environment.js';
import { BASH_LIMITS } from '../../contracts/defaults.js';
import type { SandboxLimits } from './bubblewrap-arguments.js';

/**
 * Default resource limits of a sandboxed command, each overridden by a worker environment variable (read per call).
 * - memory: 4 GiB of address space per process: room for node, a compiler or a test run; `sort /dev/zero` ends with
 *   "memory exhausted" instead of taking the machine's memory;
 * - processes: 512 at once in one sandbox: a build's parallel jobs fit, a fork bomb stops there;
 * - file size: the Bash spool limit (`SWITCHYARD_BASH_MAX_SPOOL_BYTES`), unless set on its own;
 * - CPU time: one hour per process, so a background dev server still runs a working day at low load.
 */
export const SANDBOX_LIMIT_DEFAULTS = {
  memoryBytes: 4 * 1024 * 1024 * 1024,
  processes: 512,
  cpuSeconds: 3_600,
} as const;

export const SANDBOX_LIMIT_ENV_VARIABLES = {
  memoryBytes: 'SWITCHYARD_SANDBOX_MEMORY_BYTES',
  processes: 'SWITCHYARD_SANDBOX_MAX_PROCESSES',
  fileBytes: 'SWITCHYARD_SANDBOX_MAX_FILE_BYTES',
  cpuSeconds: 'SWITCHYARD_SANDBOX_CPU_SECONDS',
} as const satisfies Record<keyof SandboxLimits, string>;

function positiveInteger(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

/** The limits from the worker's environment; a malformed value throws an error naming its variable. */
export function sandboxLimitsFromEnv(env: NodeJS.ProcessEnv = processEnvironment()): SandboxLimits {
  const spool = positiveInteger(env, 'SWITCHYARD_BASH_MAX_SPOOL_BYTES', BASH_LIMITS.spoolBytes);
  return {
    memoryBytes: positiveInteger(env, SANDBOX_LIMIT_ENV_VARIABLES.memoryBytes, SANDBOX_LIMIT_DEFAULTS.memoryBytes),
    processes: positiveInteger(env, SANDBOX_LIMIT_ENV_VARIABLES.processes, SANDBOX_LIMIT_DEFAULTS.processes),
    fileBytes: positiveInteger(env, SANDBOX_LIMIT_ENV_VARIABLES.fileBytes, spool),
    cpuSeconds: positiveInteger(env, SANDBOX_LIMIT_ENV_VARIABLES.cpuSeconds, SANDBOX_LIMIT_DEFAULTS.cpuSeconds),
  };
}
