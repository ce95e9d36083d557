import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BACKGROUND_TASK_DEFAULTS } from '../../contracts/background-tasks.js';
import type { BackgroundTaskRecord, BackgroundTaskStatus } from '../../contracts/background-tasks.js';
import { BackgroundTaskRecords, EXIT_CODE_FILE, OUTPUT_LIMIT_FILE } from './background-task-records.js';

/** What the store finds about a task's process right now. */
export interface BackgroundTaskState {
  status: BackgroundTaskStatus;
  /** With `exited` (and with `killed` when the command still wrote one): the exit code; null when none is known. */
  exitCode?: number | null;
  /** With `killed`: the task was stopped because its output passed this many bytes (`maxOutputBytes`). */
  outputLimitBytes?: number;
}

/** `/proc/<pid>/stat` fields 3 (state) and 22 (start time), or undefined where there is no procfs. */
export async function procStat(pid: number): Promise<{ state: string; startTicks: string } | undefined> {
  try {
    const text = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may contain spaces: count fields after the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '', startTicks: fields[19] ?? '' };
  } catch {
    return undefined;
  }
}

/**
 * A task's process as the disk and the process table show it: whether it runs, the exit code and output limit the
 * wrapper wrote (background-task-wrapper.ts), and so its state. The part of `BackgroundTaskStore`
 * (background-task-store.ts) that reads and never changes anything.
 */
export class BackgroundTaskProcesses extends BackgroundTaskRecords {
  /**
   * Whether the task's process group leader (the wrapper shell) still runs: signal 0 finds it, it is not a zombie, and
   * its start time is the recorded one (so a reused pid is not the task).
   */
  async isAlive(record: Pick<BackgroundTaskRecord, 'pid' | 'processStartTicks'>): Promise<boolean> {
    try {
      process.kill(record.pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
    }
    const procfs = await procStat(record.pid);
    if (procfs === undefined) return true;
    if (procfs.state === 'Z' || procfs.state === 'X') return false;
    return record.processStartTicks === undefined || procfs.startTicks === record.processStartTicks;
  }

  /** The exit code the wrapper wrote, or undefined when it wrote none (yet). */
  async exitCode(record: Pick<BackgroundTaskRecord, 'sessionId' | 'taskId'>): Promise<number | undefined> {
    return this.#readInteger(record, EXIT_CODE_FILE);
  }

  /** The output limit the wrapper recorded when it stopped the task for passing it, else undefined. */
  async outputLimitReached(record: Pick<BackgroundTaskRecord, 'sessionId' | 'taskId'>): Promise<number | undefined> {
    return this.#readInteger(record, OUTPUT_LIMIT_FILE);
  }

  async #readInteger(
    record: Pick<BackgroundTaskRecord, 'sessionId' | 'taskId'>,
    file: string,
  ): Promise<number | undefined> {
    try {
      const text = (
        await readFile(path.join(this.taskDirectory(record.sessionId, record.taskId), file), 'utf8')
      ).trim();
      const value = Number(text);
      return text !== '' && Number.isInteger(value) ? value : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * The task's state from the disk and the process table: an exit code file means it exited (or, after a stop request,
   * was killed); a live process means it runs; otherwise it died without writing a code (killed by a signal, or the
   * host restarted).
   */
  async state(record: BackgroundTaskRecord): Promise<BackgroundTaskState> {
    // Liveness first: the exit code is written just before the wrapper exits, so a live wrapper with a code is ending.
    const alive = await this.isAlive(record);
    const code = await this.exitCode(record);
    if (alive && code === undefined) return { status: 'running' };
    if (record.stopRequestedAt !== undefined) return { status: 'killed', exitCode: code ?? null };
    if (code !== undefined) return { status: 'exited', exitCode: code };
    const outputLimitBytes = await this.outputLimitReached(record);
    return outputLimitBytes === undefined
      ? { status: 'killed', exitCode: null }
      : { status: 'killed', exitCode: null, outputLimitBytes };
  }

  /** Waits until the task is no longer running, `timeoutMs` passes, or `signal` aborts (which rejects). */
  async waitForEnd(
    record: BackgroundTaskRecord,
    options: { timeoutMs: number; signal?: AbortSignal; pollIntervalMs?: number },
  ): Promise<BackgroundTaskState> {
    const deadline = Date.now() + options.timeoutMs;
    for (;;) {
      const current = await this.state(record);
      if (current.status !== 'running' || Date.now() >= deadline) return current;
      const wait = Math.min(
        options.pollIntervalMs ?? BACKGROUND_TASK_DEFAULTS.pollIntervalMs,
        Math.max(0, deadline - Date.now()),
      );
      await sleep(wait, undefined, options.signal === undefined ? {} : { signal: options.signal });
    }
  }
}
