import { BACKGROUND_TASK_DEFAULTS } from '../contracts/background-tasks.js';
import type {
  BackgroundTaskEndReason,
  BackgroundTaskReport,
  BackgroundTaskStatus,
  BackgroundTaskView,
} from '../contracts/background-tasks.js';
import type { NewSessionEvent } from '../contracts/events.js';
import { clipText } from '../contracts/clip-fields.js';
import { CARRIED_FIELD_MAX_CHARS } from '../contracts/defaults.js';

/**
 * The session's view of its background tasks (query `backgroundTasks`), carried across continue-as-new. Pure: it
 * learns only from call results (Bash started a task, TaskOutput/TaskStop saw its status) and from the activity that
 * stops them when the session ends; the truth about a process is on the worker's disk.
 */
export class BackgroundTaskLedger {
  readonly #tasks: Map<string, BackgroundTaskView>;

  constructor(carried?: readonly BackgroundTaskView[]) {
    this.#tasks = new Map((carried ?? []).map((task) => [task.taskId, task]));
  }

  /**
   * Records what a call reported, emitting `BackgroundTaskStarted` for a new task and `BackgroundTaskEnded` the first
   * time a known task is seen ended.
   */
  observe(options: {
    report: BackgroundTaskReport;
    turnId: string;
    callId: string;
    toolName: string;
    emit: (event: NewSessionEvent) => void;
  }): void {
    const { report, turnId, callId, emit } = options;
    switch (report.kind) {
      case 'started': {
        if (this.#tasks.has(report.taskId)) return;
        // The command is kept for display and carried across continue-as-new: clipped, like every carried field.
        const command = clipText(report.command, CARRIED_FIELD_MAX_CHARS.text);
        const view: BackgroundTaskView = {
          taskId: report.taskId,
          command,
          turnId,
          callId,
          startedAt: report.startedAt,
          status: 'running',
        };
        if (report.description !== undefined) view.description = report.description;
        this.#tasks.set(report.taskId, view);
        this.#trim();
        emit({ type: 'BackgroundTaskStarted', turnId, callId, taskId: report.taskId, command });
        return;
      }
      case 'observed':
        this.#end({
          taskId: report.taskId,
          status: report.status,
          ...(report.exitCode === undefined ? {} : { exitCode: report.exitCode }),
          turnId,
          callId,
          reason: options.toolName === 'TaskStop' ? 'stopped' : 'observed',
          emit,
        });
        return;
      default: {
        const exhaustive: never = report;
        return exhaustive;
      }
    }
  }

  /** Records tasks stopped because the session ended. */
  sessionEnded(options: {
    tasks: ReadonlyArray<{
      taskId: string;
      status: Exclude<BackgroundTaskStatus, 'running'>;
      exitCode?: number | null;
    }>;
    emit: (event: NewSessionEvent) => void;
  }): void {
    for (const task of options.tasks) {
      const view = this.#tasks.get(task.taskId);
      this.#end({ ...task, turnId: view?.turnId ?? '', reason: 'session_ended', emit: options.emit });
    }
  }

  #end(options: {
    taskId: string;
    status: BackgroundTaskStatus;
    exitCode?: number | null;
    turnId: string;
    callId?: string;
    reason: BackgroundTaskEndReason;
    emit: (event: NewSessionEvent) => void;
  }): void {
    const view = this.#tasks.get(options.taskId);
    if (view === undefined || view.status !== 'running' || options.status === 'running') return;
    view.status = options.status;
    if (options.exitCode !== undefined) view.exitCode = options.exitCode;
    view.endedAt = new Date().toISOString();
    options.emit({
      type: 'BackgroundTaskEnded',
      turnId: options.turnId,
      taskId: options.taskId,
      status: options.status,
      reason: options.reason,
      ...(options.callId === undefined ? {} : { callId: options.callId }),
      ...(options.exitCode === undefined ? {} : { exitCode: options.exitCode }),
    });
  }

  /** Whether any task may still run (as far as the session knows). */
  get anyRunning(): boolean {
    return [...this.#tasks.values()].some((task) => task.status === 'running');
  }

  list(): BackgroundTaskView[] {
    return [...this.#tasks.values()].map((task) => ({ ...task }));
  }

  carry(): BackgroundTaskView[] {
    return this.list();
  }

  /** Keeps at most `retainedPerSession` tasks, dropping the oldest ended ones first (running ones are never dropped). */
  #trim(): void {
    for (const [taskId, task] of this.#tasks) {
      if (this.#tasks.size <= BACKGROUND_TASK_DEFAULTS.retainedPerSession) return;
      if (task.status !== 'running') this.#tasks.delete(taskId);
    }
  }
}
