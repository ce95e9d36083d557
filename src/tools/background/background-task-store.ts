import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { BACKGROUND_TASK_DEFAULTS } from '../../contracts/background-tasks.js';
import { BASH_LIMITS } from '../../contracts/defaults.js';
import type { BackgroundTaskRecord } from '../../contracts/background-tasks.js';
import { signalProcessGroup } from '../support/signal-process-group.js';
import { readOutputRange } from './background-task-output.js';
import type { BackgroundTaskOutput } from './background-task-output.js';
import { BackgroundTaskProcesses, procStat } from './background-task-processes.js';
import type { BackgroundTaskState } from './background-task-processes.js';
import { pruneBackgroundTasks } from './background-task-prune.js';
import type { BackgroundPruneReport } from './background-task-prune.js';
import { spawnBackgroundWrapper } from './background-task-wrapper.js';

/**
 * Background tasks on disk: `<dataDir>/background/<session>/<taskId>/` holds `task.json` (the record), `output.log`
 * (stdout and stderr, written by the process itself, so nothing of the worker is needed to keep it going) and
 * `exit-code` (written by the wrapper shell when the command ends). Everything a later worker needs to find a task,
 * read it and stop it is here: a restarted worker, or another worker process on the same host and data directory.
 * Tasks are per session: a session can name only its own.
 *
 * In parts: the layout and records (background-task-records.ts), the processes' state
 * (background-task-processes.ts), the wrapper that runs a task (background-task-wrapper.ts), reading its output
 * (background-task-output.ts) and pruning ended tasks (background-task-prune.ts); here, what changes a task.
 */
export class BackgroundTaskStore extends BackgroundTaskProcesses {
  /** The tasks this process started through this store, so whoever started the process can stop them at its end. */
  readonly startedHere: BackgroundTaskRecord[] = [];

  /**
   * Starts `command` in bash, detached: its own session and process group (so neither the worker's death nor its
   * signals reach it), stdin closed, stdout and stderr appended to `output.log`, at most `maxOutputBytes` of them
   * (default `BASH_LIMITS.spoolBytes`): past that the task is killed. Resolves once the process runs and its record is
   * on disk.
   */
  async start(
    options: Pick<BackgroundTaskRecord, 'sessionId' | 'turnId' | 'callId' | 'command' | 'description' | 'cwd'> & {
      env: NodeJS.ProcessEnv;
      maxOutputBytes?: number;
      /** The argv that runs the command; default `/bin/bash -c <command>` (the sandbox wraps it, see `src/tools/sandbox/`). */
      argv?: readonly string[];
    },
  ): Promise<BackgroundTaskRecord> {
    const maxOutputBytes = options.maxOutputBytes ?? BASH_LIMITS.spoolBytes;
    if (!Number.isSafeInteger(maxOutputBytes) || maxOutputBytes <= 0)
      throw new Error(`maxOutputBytes must be a positive integer, got ${maxOutputBytes}`);
    const taskId = `bg_${randomBytes(4).toString('hex')}`;
    const directory = this.taskDirectory(options.sessionId, taskId);
    await mkdir(directory, { recursive: true });
    const pid = await spawnBackgroundWrapper({
      directory,
      command: options.command,
      cwd: options.cwd,
      env: options.env,
      maxOutputBytes,
      ...(options.argv === undefined ? {} : { argv: options.argv }),
    });
    const record: BackgroundTaskRecord = {
      taskId,
      sessionId: options.sessionId,
      turnId: options.turnId,
      callId: options.callId,
      command: options.command,
      cwd: options.cwd,
      pid,
      startedAt: new Date().toISOString(),
      readOffset: 0,
    };
    if (options.description !== undefined && options.description !== '') record.description = options.description;
    const procfs = await procStat(pid);
    if (procfs !== undefined) record.processStartTicks = procfs.startTicks;
    await this.writeRecord(record);
    this.startedHere.push(record);
    return record;
  }

  /**
   * Removes the tasks that have ended (exited or killed: never a running one) and were last written longer than
   * `olderThanMs` ago, task by task, and a session's folder once it is empty. `dryRun` reports and removes nothing.
   */
  async prune(options: { olderThanMs: number; dryRun?: boolean; now?: Date }): Promise<BackgroundPruneReport> {
    return pruneBackgroundTasks(this.root, (record) => this.state(record), options);
  }

  /**
   * The output written since the last read, and the read offset moved past it. A retry by the same `callId` reads the
   * same range again (the first attempt's answer may have been lost with its worker). While the task runs, a range
   * never ends inside a UTF-8 character.
   */
  async readNew(
    record: BackgroundTaskRecord,
    options: { callId: string; maxInlineBytes: number; running: boolean },
  ): Promise<BackgroundTaskOutput> {
    return this.withLock(record, async () => {
      const current = (await this.get(record.sessionId, record.taskId)) ?? record;
      const from = current.lastRead?.callId === options.callId ? current.lastRead.from : current.readOffset;
      const output = await readOutputRange({
        outputPath: this.outputPath(current),
        spoolDirectory: this.taskDirectory(current.sessionId, current.taskId),
        from,
        maxInlineBytes: options.maxInlineBytes,
        running: options.running,
      });
      await this.writeRecord({
        ...current,
        readOffset: output.to,
        lastRead: { callId: options.callId, from, to: output.to },
      });
      return output;
    });
  }

  /**
   * Stops a running task: records the request, sends SIGTERM to its process group, SIGKILL after `graceMs` if the
   * wrapper still lives, and SIGKILL to the group again once it is gone (children that ignored SIGTERM). A task that
   * is not running is left as it is.
   */
  async stop(record: BackgroundTaskRecord, options: { graceMs?: number } = {}): Promise<BackgroundTaskState> {
    const before = await this.state(record);
    if (before.status !== 'running') return before;
    const requested = await this.withLock(record, async () => {
      const current = (await this.get(record.sessionId, record.taskId)) ?? record;
      const updated = { ...current, stopRequestedAt: current.stopRequestedAt ?? new Date().toISOString() };
      await this.writeRecord(updated);
      return updated;
    });
    signalProcessGroup(requested.pid, 'SIGTERM');
    const deadline = Date.now() + (options.graceMs ?? BACKGROUND_TASK_DEFAULTS.stopGraceMs);
    while ((await this.isAlive(requested)) && Date.now() < deadline) await sleep(50);
    signalProcessGroup(requested.pid, 'SIGKILL');
    const killDeadline = Date.now() + 2_000;
    while ((await this.isAlive(requested)) && Date.now() < killDeadline) await sleep(50);
    return this.state(requested);
  }

  /** Stops every running task of a session (its end); returns the final state of each task that was running. */
  async stopSession(
    sessionId: string,
    options: { graceMs?: number } = {},
  ): Promise<Array<{ record: BackgroundTaskRecord; state: BackgroundTaskState }>> {
    const records = await this.list(sessionId);
    const stopped = await Promise.all(
      records.map(async (record) => {
        if ((await this.state(record)).status !== 'running') return undefined;
        return { record, state: await this.stop(record, options) };
      }),
    );
    return stopped.filter(
      (entry): entry is { record: BackgroundTaskRecord; state: BackgroundTaskState } => entry !== undefined,
    );
  }
}
