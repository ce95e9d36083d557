/**
 * How a tool starts a process on a model's behalf: inside the OS sandbox when the session's mode and the worker allow
 * it, else as before, loudly. One function for foreground Bash and background tasks, so both get the same wall.
 */
import { realpath } from 'node:fs/promises';
import os from 'node:os';
import type { SandboxMode, SandboxOptions } from '../../contracts/session.js';
import { sandboxModes } from '../../contracts/session.js';
import { ToolUseError } from '../define-tool.js';
import { bubblewrapArguments, cgroupLimitedCommand, limitedCommand } from './bubblewrap-arguments.js';
import type { SandboxLimits } from './bubblewrap-arguments.js';
import { SandboxSettingError, bubblewrapAvailability } from './bubblewrap-availability.js';
import { BRIDGE_SCRIPT, SANDBOX_PROXY_PORT, domainProxy } from './domain-proxy.js';
import { createCallCgroup } from './process-cgroup.js';
import { sandboxLimitsFromEnv } from './sandbox-limits.js';
import { sandboxPaths } from './sandbox-paths.js';
import { sandboxFloorRefusal } from './sandbox-floor.js';
import { toolSettings } from '../tool-settings.js';
import type { ToolEnvironment } from '../tool-settings.js';

export const SANDBOX_UNAVAILABLE = 'sandbox_unavailable';

/**
 * The worker's sandbox mode: `env`'s `SWITCHYARD_SANDBOX` when a test passes one (a value that is not a mode throws,
 * naming it), else the worker's settings (`toolSettings()`, checked when they were resolved); undefined when unset.
 */
function workerSandboxMode(env: ToolEnvironment | undefined): SandboxMode | undefined {
  if (env === undefined) return toolSettings().sandbox.workerMode;
  const raw = env.SWITCHYARD_SANDBOX;
  if (raw === undefined || raw === '') return undefined;
  if (!(sandboxModes as readonly string[]).includes(raw))
    throw new Error(`SWITCHYARD_SANDBOX must be one of ${sandboxModes.join(', ')}, got "${raw}"`);
  return raw as SandboxMode;
}

/**
 * The mode a call runs under: the session's option, else the worker's `SWITCHYARD_SANDBOX`, else `auto`. A worker's
 * `required` is a floor no session option lowers: such a worker answers `required` whatever the session asked (a
 * session that asked for `off` or `auto` has its calls refused, see `sandboxFloorRefusal`). `env` (a test's) stands in
 * for the worker's settings.
 */
export function effectiveSandboxMode(options: SandboxOptions | undefined, env?: ToolEnvironment): SandboxMode {
  const worker = workerSandboxMode(env);
  if (worker === 'required') return 'required';
  const mode = options?.mode ?? worker ?? 'auto';
  // A Bash call allowed without asking because it runs sandboxed must never run outside the sandbox.
  return mode === 'auto' && options?.autoAllowBash === true ? 'required' : mode;
}

/** Why this worker refuses to start a process for a session with these options (`sandboxFloorRefusal`), or undefined. */
function floorRefusal(options: SandboxOptions | undefined, env: ToolEnvironment | undefined): string | undefined {
  const refusal = sandboxFloorRefusal({ sessionMode: options?.mode, workerMode: workerSandboxMode(env) });
  return refusal === undefined ? undefined : `${refusal}. The command did not run.`;
}

/**
 * Whether a Bash call that would ask only by default may run unasked (`sandbox.autoAllowBash`): the session turned it
 * on, did not turn the sandbox off, and this worker can sandbox. The call then runs under `required` (see above).
 */
export async function sandboxAllowsWithoutAsking(
  options: SandboxOptions | undefined,
  env?: ToolEnvironment,
): Promise<boolean> {
  if (options?.autoAllowBash !== true || options.mode === 'off' || effectiveSandboxMode(options, env) === 'off')
    return false;
  if (floorRefusal(options, env) !== undefined) return false;
  // A misconfigured SWITCHYARD_BWRAP allows nothing unasked; the call itself then fails, naming the setting.
  return bubblewrapAvailability(env).then(
    (availability) => availability.available,
    () => false,
  );
}

/**
 * The worker's temporary folder (`os.tmpdir()`, from `TMPDIR`) when it is outside `/tmp`: the sandbox's own `/tmp` is
 * a fresh one, but a `TMPDIR` elsewhere would show every session's proxy sockets and Bash spool files through the
 * read-only root. It is masked as an empty folder instead; this call's own proxy socket folder is bound in after.
 */
async function temporaryAreasToMask(): Promise<string[]> {
  const temporary = await realpath(os.tmpdir()).catch(() => undefined);
  if (temporary === undefined || temporary === '/tmp' || temporary.startsWith('/tmp/')) return [];
  if (temporary === '/')
    throw new ToolUseError(
      'The worker\'s TMPDIR is "/": the sandbox cannot hide other sessions\' files in it. Set TMPDIR to a folder of its own. The command did not run.',
      SANDBOX_UNAVAILABLE,
    );
  return [temporary];
}

/** Whether `inner` is `outer` or inside it. */
const isWithin = (inner: string, outer: string): boolean =>
  inner === outer || inner.startsWith(outer.endsWith('/') ? outer : `${outer}/`);

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
 * A session mode below the worker's `required` floor, a `SWITCHYARD_BWRAP` that is not absolute, or a bubblewrap
 * binary the sandbox could write also throw `sandbox_unavailable`: the command never runs unconfined instead.
 */
export async function prepareSandboxLaunch(options: {
  context: SandboxLaunchContext;
  /** A test's worker variables, standing in for the worker's settings (`toolSettings()`). */
  env?: ToolEnvironment;
}): Promise<SandboxLaunch> {
  const { context, env } = options;
  const refusal = floorRefusal(context.sandbox, env);
  if (refusal !== undefined) throw new ToolUseError(refusal, SANDBOX_UNAVAILABLE);
  const mode = effectiveSandboxMode(context.sandbox, env);
  if (mode === 'off') return { sandboxed: false };
  const availability = await bubblewrapAvailability(env).catch((error: unknown) => {
    if (error instanceof SandboxSettingError)
      throw new ToolUseError(`${error.message}. The command did not run.`, SANDBOX_UNAVAILABLE);
    throw error;
  });
  if (!availability.available) {
    if (mode === 'required') {
      throw new ToolUseError(
        `This session requires the OS sandbox (sandbox.mode "required"), and ${availability.reason}. The command did not run.`,
        SANDBOX_UNAVAILABLE,
      );
    }
    return { sandboxed: false, reason: availability.reason };
  }
  const limits = env === undefined ? toolSettings().sandbox.limits : sandboxLimitsFromEnv(env);
  const paths = await sandboxPaths({
    cwd: context.cwd,
    home: os.homedir(),
    sessionId: context.sessionId,
    ...(context.dataDir === undefined ? {} : { dataDir: context.dataDir }),
    denyRules: context.denyRules,
    options: context.sandbox ?? {},
  });
  // The launcher itself must be out of the sandbox's reach: a bubblewrap the command can rewrite confines nothing.
  const launcher = await realpath(availability.binary).catch(() => availability.binary);
  const reachable = paths.writable.find((writable) => isWithin(launcher, writable));
  if (reachable !== undefined)
    throw new ToolUseError(
      `The bubblewrap binary ${launcher} is inside ${reachable}, which this session's sandbox may write, so it cannot confine the command. The command did not run.`,
      SANDBOX_UNAVAILABLE,
    );
  const masked = [...paths.masked, ...(await temporaryAreasToMask()).filter((area) => !paths.masked.includes(area))];
  const allowedDomains = context.sandbox?.network?.allowedDomains ?? [];
  const proxy = allowedDomains.length === 0 ? undefined : await domainProxy(allowedDomains);
  const cgroup = await createCallCgroup(limits.processes);
  const bwrap = bubblewrapArguments({
    ...paths,
    masked,
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
