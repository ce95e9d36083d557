import type { SandboxAvailability } from './bubblewrap-availability.js';
import { bubblewrapAvailability } from './bubblewrap-availability.js';
import { pidsCgroupAvailable } from './process-cgroup.js';
import { backgroundWrapperBinaries } from '../background/background-task-wrapper.js';
import { toolSettings } from '../tool-settings.js';
import type { ToolEnvironment } from '../tool-settings.js';

export interface SandboxStartupFacts {
  availability: SandboxAvailability;
  /** The worker's `SWITCHYARD_SANDBOX` (empty: `auto`). */
  workerMode: string | undefined;
  /** Whether the worker runs as root (RLIMIT_NPROC does not apply to root). */
  root: boolean;
  pidsCgroup: boolean;
  /** The programs that confine or wrap a command, by name, as resolved once for this worker (absolute paths). */
  binaries?: Record<string, string | undefined>;
}

/** `; trusted binaries: bwrap=/usr/bin/bwrap, …` for the start-up line, or nothing when none were given. */
function binariesText(binaries: SandboxStartupFacts['binaries']): string {
  if (binaries === undefined) return '';
  const listed = Object.entries(binaries).map(([name, file]) => `${name}=${file ?? '(none)'}`);
  return listed.length === 0 ? '' : `; trusted binaries (never looked up through PATH): ${listed.join(', ')}`;
}

/**
 * The worker's start-up line about the OS sandbox: a warning when sessions will run commands unsandboxed (no
 * bubblewrap, or `SWITCHYARD_SANDBOX=off`) or without a process limit (root without a pids cgroup).
 */
export function sandboxStartupLine(facts: SandboxStartupFacts): { level: 'info' | 'warn'; message: string } {
  const line = sandboxStartupWords(facts);
  return { level: line.level, message: `${line.message}${binariesText(facts.binaries)}` };
}

function sandboxStartupWords(facts: SandboxStartupFacts): { level: 'info' | 'warn'; message: string } {
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

/**
 * Probes this worker and returns its start-up line, which names the programs resolved for confining and wrapping
 * commands. Throws (the worker does not start) when `SWITCHYARD_BWRAP` is not an absolute path. `env` (a test's)
 * stands in for the worker's settings (`toolSettings()`).
 */
export async function probeSandboxStartupLine(
  env?: ToolEnvironment,
): Promise<{ level: 'info' | 'warn'; message: string }> {
  const availability = await bubblewrapAvailability(env);
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const pidsCgroup = availability.available ? await pidsCgroupAvailable() : false;
  const wrapper = backgroundWrapperBinaries();
  const binaries = {
    bwrap: availability.available ? availability.binary : undefined,
    bash: wrapper.bash,
    stdbuf: wrapper.capping?.stdbuf,
    head: wrapper.capping?.head,
    wc: wrapper.capping?.wc,
    mv: wrapper.mv,
  };
  const workerMode = env === undefined ? toolSettings().sandbox.workerMode : env.SWITCHYARD_SANDBOX;
  return sandboxStartupLine({ availability, workerMode, root, pidsCgroup, binaries });
}
