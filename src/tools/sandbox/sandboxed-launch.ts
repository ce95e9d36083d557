/**
 * How a tool starts a process on a model's behalf: inside the OS sandbox when the session's mode and the worker allow
 * it, else as before, loudly. One function for foreground Bash and background tasks, so both get the same wall.
 */
import { processEnvironment } from '../../config/environment.js';
import os from 'node:os';
import type { SandboxMode, SandboxOptions } from '../../contracts/session.js';
import { sandboxModes } from '../../contracts/session.js';
import { ToolUseError } from '../define-tool.js';
import { bubblewrapArguments, cgroupLimitedCommand, limitedCommand } from './bubblewrap-arguments.js';
import type { SandboxLimits } from './bubblewrap-arguments.js';
import { bubblewrapAvailability } from './bubblewrap-availability.js';
import { BRIDGE_SCRIPT, SANDBOX_PROXY_PORT, domainProxy } from './domain-proxy.js';
import { createCallCgroup } from './process-cgroup.js';
import { sandboxLimitsFromEnv } from './sandbox-limits.js';
import { sandboxPaths } from './sandbox-paths.js';

export const SANDBOX_UNAVAILABLE = 'sandbox_unavailable';

/** The mode a call runs under: the session's option, else the worker's `SWITCHYARD_SANDBOX`, else `auto`. */
export function effectiveSandboxMode(
  options: SandboxOptions | undefined,
  env: NodeJS.ProcessEnv = processEnvironment(),
): SandboxMode {
  const raw = env.SWITCHYARD_SANDBOX;
  if (raw !== undefined && raw !== '' && !(sandboxModes as readonly string[]).includes(raw)) {
    throw new Error(`SWITCHYARD_SANDBOX must be one of ${sandboxModes.join(', ')}, got "${raw}"`);
  }
  const mode = options?.mode ?? (raw === undefined || raw === '' ? 'auto' : (raw as SandboxMode));
  // A Bash call allowed without asking because it runs sandboxed must never run outside the sandbox.
  return mode === 'auto' && options?.autoAllowBash === true ? 'required' : mode;
}

/**
 * Whether a Bash call that would ask only by default may run unasked (`sandbox.autoAllowBash`): the session turned it
 * on, did not turn the sandbox off, and this worker can sandbox. The call then runs under `required` (see above).
 */
export async function sandboxAllowsWithoutAsking(
  options: SandboxOptions | undefined,
  env: NodeJS.ProcessEnv = processEnvironment(),
): Promise<boolean> {
  if (options?.autoAllowBash !== true || effectiveSandboxMode(options, env) === 'off') return false;
  return (await bubblewrapAvailability(env)).available;
}

export type SandboxLaunch =
  | {
      sandboxed: true;
      /** The argv (file first) that runs `command` (an argv) in the sandbox. */
      argv(command: readonly string[]): string[];
      /** Environment additions for the sandboxed process (private TMPDIR, the proxy). */
      env: Record<string, string>;
      limits: SandboxLimits;
      /** After the process ended: a note for the model when a limit refused something, and cleanup. */
      finish(): Promise<{ note?: string }>;
    }
  | {
      sandboxed: false;
      /** Why it runs unsandboxed although the session did not turn the sandbox off (`auto` on a worker without one). */
      reason?: string;
    };

export interface SandboxLaunchContext {
  sessionId: string;
  cwd: string;
  denyRules: readonly string[];
  sandbox?: SandboxOptions;
  dataDir?: string;
}

/**
 * Prepares the sandbox of one process start. `required` on a worker that cannot sandbox throws a `ToolUseError` with
 * code `sandbox_unavailable`; `auto` there answers `sandboxed: false` with the reason; `off` answers `sandboxed: false`.
 */
export async function prepareSandboxLaunch(options: {
  context: SandboxLaunchContext;
  env?: NodeJS.ProcessEnv;
}): Promise<SandboxLaunch> {
  const { context } = options;
  const env = options.env ?? processEnvironment();
  const mode = effectiveSandboxMode(context.sandbox, env);
  if (mode === 'off') return { sandboxed: false };
  const availability = await bubblewrapAvailability(env);
  if (!availability.available) {
    if (mode === 'required') {
      throw new ToolUseError(
        `This session requires the OS sandbox (sandbox.mode "required"), and ${availability.reason}. The command did not run.`,
        SANDBOX_UNAVAILABLE,
      );
    }
    return { sandboxed: false, reason: availability.reason };
  }
  const limits = sandboxLimitsFromEnv(env);
  const paths = await sandboxPaths({
    cwd: context.cwd,
    home: os.homedir(),
    sessionId: context.sessionId,
    ...(context.dataDir === undefined ? {} : { dataDir: context.dataDir }),
    denyRules: context.denyRules,
    options: context.sandbox ?? {},
  });
  const allowedDomains = context.sandbox?.network?.allowedDomains ?? [];
  const proxy = allowedDomains.length === 0 ? undefined : await domainProxy(allowedDomains);
  const cgroup = await createCallCgroup(limits.processes);
  const bwrap = bubblewrapArguments({
    ...paths,
    network: proxy === undefined ? { kind: 'none' } : { kind: 'proxy', socketDirectory: proxy.socketDirectory },
  });
  const sandboxEnv: Record<string, string> = { TMPDIR: '/tmp' };
  if (proxy !== undefined) {
    const url = `http://127.0.0.1:${SANDBOX_PROXY_PORT}`;
    for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'all_proxy'])
      sandboxEnv[name] = url;
    // Every host goes through the proxy, loopback names too: the sandbox's own loopback has nothing on it.
    sandboxEnv.NO_PROXY = '';
    sandboxEnv.no_proxy = '';
  }
  return {
    sandboxed: true,
    env: sandboxEnv,
    limits,
    argv(command) {
      const inner =
        proxy === undefined
          ? [...command]
          : [process.execPath, '-e', BRIDGE_SCRIPT, proxy.socketPath, String(SANDBOX_PROXY_PORT), ...command];
      // One shell besides the command's own: outside with a cgroup (root), inside without one (see the two builders).
      if (cgroup !== undefined)
        return cgroupLimitedCommand({
          procsFile: cgroup.procsFile,
          limits,
          command: [availability.binary, ...bwrap, '--', ...inner],
        });
      return [availability.binary, ...bwrap, '--', ...limitedCommand({ limits, command: inner })];
    },
    async finish() {
      if (cgroup === undefined) return {};
      const refused = await cgroup.refusedForks();
      await cgroup.remove();
      return refused === 0
        ? {}
        : {
            note: `The sandbox's process limit (${limits.processes} processes, SWITCHYARD_SANDBOX_MAX_PROCESSES) refused ${refused} fork(s).`,
          };
    },
  };
}
