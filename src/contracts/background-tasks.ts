/**
 * Background tasks (wire contract v1.1): `Bash { run_in_background: true }` starts a command detached from the worker;
 * `TaskOutput` reads it, `TaskStop` stops it. Pure types and defaults, safe to import from workflow code.
 *
 * A task is known in two places: on the worker's disk (`BackgroundTaskRecord`, the truth about the process: its pid,
 * its output file, its exit code) and in the session's workflow state (`BackgroundTaskView`, what the session has seen:
 * query `backgroundTasks`, events `BackgroundTaskStarted` / `BackgroundTaskEnded`). The workflow learns of a task from
 * the results of the calls that start, read and stop it; it never does I/O itself.
 */

/** `running`: its process is alive. `exited`: it ended by itself, with `exitCode`. `killed`: TaskStop or the session's end stopped it, or it died without an exit code. */
export const backgroundTaskStatuses = ['running', 'exited', 'killed'] as const;
export type BackgroundTaskStatus = (typeof backgroundTaskStatuses)[number];

/** Background-task tool defaults (docs/SEMANTICS.md, Defaults); TaskOutput's `block`/`timeout` as in Claude Code. */
export const BACKGROUND_TASK_DEFAULTS = {
  /** TaskOutput waits this long with `block` (its default) when the call gives no `timeout`. */
  blockTimeoutMs: 30_000,
  /** Largest `timeout` TaskOutput accepts. TaskOutput has no deadline of its own beyond it. */
  maxBlockTimeoutMs: 600_000,
  /** TaskStop's deadline (docs/SEMANTICS.md, Defaults). */
  stopTimeoutMs: 10_000,
  /** After SIGTERM, the task's process group gets SIGKILL this long later. */
  stopGraceMs: 2_000,
  /** How often a blocking TaskOutput looks at the task. */
  pollIntervalMs: 200,
  /** Tasks a session keeps in its workflow state (the oldest ended ones are dropped first). */
  retainedPerSession: 200,
} as const;

/** The on-disk record of one task: `<dataDir>/background/<session>/<taskId>/task.json`. Worker-side only. */
export interface BackgroundTaskRecord {
  taskId: string;
  sessionId: string;
  /** The call that started it. */
  turnId: string;
  callId: string;
  command: string;
  description?: string;
  cwd: string;
  /** Pid of the wrapper shell, which leads the task's own process group and session. */
  pid: number;
  /** The process's start time (`/proc/<pid>/stat` field 22), so a reused pid is not taken for the task; absent off Linux. */
  processStartTicks?: string;
  /** ISO time the task started. */
  startedAt: string;
  /** Bytes of `output.log` already handed to the model by TaskOutput. */
  readOffset: number;
  /**
   * The last TaskOutput read: a retry of the same call (an idempotent read after a lost worker) reads the same range
   * again instead of skipping it. Its `callId` is `<turnId>/<callId>`: call ids are unique only within a turn.
   */
  lastRead?: { callId: string; from: number; to: number };
  /** Set by TaskStop and by the session's end before they signal the process group. */
  stopRequestedAt?: string;
}

/** What a call tells its session about a background task (`ToolOutputObject.backgroundTask`, `CallOutcome.backgroundTask`). */
export type BackgroundTaskReport =
  | { kind: 'started'; taskId: string; command: string; description?: string; startedAt: string }
  | { kind: 'observed'; taskId: string; status: BackgroundTaskStatus; exitCode?: number | null };

/** Why a `BackgroundTaskEnded` event was recorded. */
export type BackgroundTaskEndReason = 'observed' | 'stopped' | 'session_ended';

/** One task as the session knows it (query `backgroundTasks`, wire contract v1.1). */
export interface BackgroundTaskView {
  taskId: string;
  command: string;
  description?: string;
  /** The turn and call that started it. */
  turnId: string;
  callId: string;
  startedAt: string;
  /** As last observed: `running` until a TaskOutput or TaskStop saw it end, or the session ended. */
  status: BackgroundTaskStatus;
  /** The exit code once `exited`; null when it ended without one. */
  exitCode?: number | null;
  endedAt?: string;
}

/** Result of the `stopBackgroundTasks` activity run when a session ends. */
export interface StoppedBackgroundTasks {
  tasks: Array<{ taskId: string; status: Exclude<BackgroundTaskStatus, 'running'>; exitCode?: number | null }>;
}
