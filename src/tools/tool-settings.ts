// What the built-in tools take from the worker they run on: their limits, Bash's deadlines and spool cap, the session
// disk quota, the sandbox's worker mode, binary and limits, which variables child processes inherit, and the worker's
// environment itself (what child processes inherit from, and the key files it names, which the sandbox hides). The
// tools never read the environment: whatever runs them hands them these settings. A worker scopes its own to the
// activities it registers (`runWithToolSettings`, called by the worker factory with the settings
// `settingsFromEnvironment` resolved at its start, src/config/settings.ts), so two workers in one process each run
// their tools with their own; tools run outside any worker (a test, a benchmark calling a tool directly) take the
// process's (`useToolSettings`).
import { AsyncLocalStorage } from 'node:async_hooks';
import { BASH_LIMITS, BASH_TIMEOUTS, LIMITS } from '../contracts/defaults.js';
import type { SandboxMode } from '../contracts/session.js';
import type { SandboxLimits } from './sandbox/bubblewrap-arguments.js';

/** A set of environment variables, as the process that runs the tools hands them over. */
export type ToolEnvironment = Readonly<Record<string, string | undefined>>;

export type LimitName = keyof typeof LIMITS;

/** Comma-separated name globs of `SWITCHYARD_ENV_INCLUDE` and `SWITCHYARD_ENV_EXCLUDE` (src/tools/support/environment-policy.ts). */
export interface EnvironmentGlobs {
  include: readonly string[];
  exclude: readonly string[];
}

/** The tools' settings, resolved by the process that runs them (for a worker: at start, by its factory). */
export interface ToolSettings {
  /** The worker's environment: child processes inherit what `environmentPolicy` allows of it. */
  environment: ToolEnvironment;
  /** Each limit of `LIMITS` as this worker sets it (`SWITCHYARD_READ_MAX_FILE_BYTES`, …). */
  limits: Readonly<Record<LimitName, number>>;
  /** Bash's default and largest deadline (`BASH_DEFAULT_TIMEOUT_MS`, `BASH_MAX_TIMEOUT_MS`). */
  bashTimeouts: { defaultMs: number; maxMs: number };
  /** The output one Bash call or task may write (`SWITCHYARD_BASH_MAX_SPOOL_BYTES`). */
  bashSpoolBytes: number;
  /** One session's disk quota (`SWITCHYARD_SESSION_DISK_BYTES`; 0: none). */
  sessionDiskBytes: number;
  sandbox: {
    /** The worker's `SWITCHYARD_SANDBOX`, undefined when unset. */
    workerMode: SandboxMode | undefined;
    /** `SWITCHYARD_BWRAP` as set (checked where it is used: src/tools/sandbox/bubblewrap-availability.ts). */
    bwrap: string | undefined;
    limits: SandboxLimits;
  };
  /** `SWITCHYARD_ENV_INCLUDE` and `SWITCHYARD_ENV_EXCLUDE`. */
  environmentPolicy: EnvironmentGlobs;
}

/** The default disk quota of one session (stored outputs and background output together): 1 GiB. */
export const DEFAULT_SESSION_DISK_BYTES = 1024 * 1024 * 1024;

/**
 * Default resource limits of a sandboxed command.
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

/**
 * The settings of tools run by a process that handed them none: every default, and an empty environment (child
 * processes inherit nothing, no worker variable names a key file).
 */
export const DEFAULT_TOOL_SETTINGS: ToolSettings = {
  environment: {},
  limits: { ...LIMITS },
  bashTimeouts: { defaultMs: BASH_TIMEOUTS.defaultMs, maxMs: BASH_TIMEOUTS.maxMs },
  bashSpoolBytes: BASH_LIMITS.spoolBytes,
  sessionDiskBytes: DEFAULT_SESSION_DISK_BYTES,
  sandbox: {
    workerMode: undefined,
    bwrap: undefined,
    limits: { ...SANDBOX_LIMIT_DEFAULTS, fileBytes: BASH_LIMITS.spoolBytes },
  },
  environmentPolicy: { include: [], exclude: [] },
};

/** Settings, or a function the tools call each time they need them. */
export type ToolSettingsSource = ToolSettings | (() => ToolSettings);

const sourceOf = (settings: ToolSettingsSource): (() => ToolSettings) =>
  typeof settings === 'function' ? settings : () => settings;

let processSource: () => ToolSettings = () => DEFAULT_TOOL_SETTINGS;

/** The settings of the worker whose activity is running, through every callback and process event it leads to. */
const scoped = new AsyncLocalStorage<() => ToolSettings>();

/**
 * Hands the tools this process runs outside any worker their settings: the resolved object, or a function the tools
 * call each time they need it (a test that changes its process's environment between calls passes one that resolves
 * it again). A worker's activities do not see them: they run with their worker's (`runWithToolSettings`).
 */
export function useToolSettings(settings: ToolSettingsSource): void {
  processSource = sourceOf(settings);
}

/**
 * Runs `body` with `settings` as its tools' settings, and everything it starts — awaited work, timers, child process
 * events — with them too. The worker factory runs each activity it registers, and its own start-up checks, this way.
 */
export function runWithToolSettings<T>(settings: ToolSettingsSource, body: () => T): T {
  return scoped.run(sourceOf(settings), body);
}

/**
 * The settings of the tool code running now: its worker's (see `runWithToolSettings`), else the process's (see
 * `useToolSettings`); a source that cannot resolve them throws.
 */
export function toolSettings(): ToolSettings {
  return (scoped.getStore() ?? processSource)();
}

/** Bash's default and largest deadline. */
export function bashTimeouts(): { defaultMs: number; maxMs: number } {
  return toolSettings().bashTimeouts;
}

/** The output one Bash call or task may write. */
export function bashSpoolBytes(): number {
  return toolSettings().bashSpoolBytes;
}

/** One session's disk quota (0: none). */
export function sessionDiskBytes(): number {
  return toolSettings().sessionDiskBytes;
}
