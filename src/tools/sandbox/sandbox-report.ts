import { processEnvironment } from '../../config/environment.js';
import type { SandboxAvailability } from './bubblewrap-availability.js';
import { bubblewrapAvailability } from './bubblewrap-availability.js';
import { pidsCgroupAvailable } from './process-cgroup.js';

export interface SandboxStartupFacts {
  availability: SandboxAvailability;
  /** The worker's `SWITCHYARD_SANDBOX` (empty: `auto`). */
  workerMode: string | undefined;
  /** Whether the worker runs as root (RLIMIT_NPROC does not apply to root). */
  root: boolean;
  pidsCgroup: boolean;
}

/**
 * The worker's start-up line about the OS sandbox: a warning when sessions will run commands unsandboxed (no
 * bubblewrap, or `SWITCHYARD_SANDBOX=off`) or without a process limit (root without a pids cgroup).
 */
export function sandboxStartupLine(facts: SandboxStartupFacts): { level: 'info' | 'warn'; message: string } {
  const mode = facts.workerMode === undefined || facts.workerMode === '' ? 'auto' : facts.workerMode;
  if (mode === 'off') {
    return {
      level: 'warn',
      message:
        "OS sandbox off (SWITCHYARD_SANDBOX=off): Bash and background tasks run with the worker's full rights unless a session sets sandbox.mode",
    };
  }
  if (!facts.availability.available) {
    return {
      level: 'warn',
      message:
        mode === 'required'
          ? `OS sandbox unavailable: ${facts.availability.reason}. SWITCHYARD_SANDBOX=required: Bash calls will fail with sandbox_unavailable`
          : `OS sandbox unavailable: ${facts.availability.reason}. Bash and background tasks run UNSANDBOXED, with the worker's full rights (sessions with sandbox.mode "required" fail their calls instead)`,
    };
  }
  if (facts.root && !facts.pidsCgroup) {
    return {
      level: 'warn',
      message: `OS sandbox on (${facts.availability.binary}, mode ${mode}); the worker runs as root without a writable pids cgroup, so sandboxed commands have no process limit`,
    };
  }
  return {
    level: 'info',
    message: `OS sandbox on (${facts.availability.binary}, mode ${mode}; process limit by ${facts.pidsCgroup ? 'pids cgroup' : 'RLIMIT_NPROC'})`,
  };
}

/** Probes this worker and returns its start-up line. */
export async function probeSandboxStartupLine(
  env: NodeJS.ProcessEnv = processEnvironment(),
): Promise<{ level: 'info' | 'warn'; message: string }> {
  const availability = await bubblewrapAvailability(env);
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const pidsCgroup = availability.available ? await pidsCgroupAvailable() : false;
  return sandboxStartupLine({ availability, workerMode: env.SWITCHYARD_SANDBOX, root, pidsCgroup });
}
