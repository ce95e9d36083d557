import { appendFile, rm } from 'node:fs/promises';
import { z } from 'zod';
import { BACKGROUND_TASK_DEFAULTS } from '../../contracts/background-tasks.js';
import type { BackgroundTaskRecord } from '../../contracts/background-tasks.js';
import { DISPLAY_LIMITS, RESULT_BUDGETS, TOOL_TIMEOUTS } from '../../contracts/defaults.js';
import { BackgroundTaskStore } from './background-task-store.js';
import type { BackgroundTaskState } from './background-task-processes.js';
import { ToolUseError, defineTool } from '../define-tool.js';
import { backgroundTaskDisplay } from '../support/displays.js';
import type { ToolExecutionContext, ToolOutputObject } from '../define-tool.js';

/** One store per data directory, so per-task locks hold across calls of this worker. */
const stores = new Map<string, BackgroundTaskStore>();

/** The background task store under a worker's data directory. */
export function backgroundTaskStore(dataDir: string): BackgroundTaskStore {
  let store = stores.get(dataDir);
  if (store === undefined) {
    store = new BackgroundTaskStore(dataDir);
    stores.set(dataDir, store);
  }
  return store;
}

/** The background tasks this process started (through any data directory) that still run, oldest first. */
export async function runningTasksStartedHere(): Promise<
  Array<{ store: BackgroundTaskStore; record: BackgroundTaskRecord }>
> {
  const started = [...stores.values()].flatMap((store) => store.startedHere.map((record) => ({ store, record })));
  const running = await Promise.all(
    started.map(async (task) => ((await task.store.state(task.record)).status === 'running' ? task : undefined)),
  );
  return running.filter((task) => task !== undefined);
}

function storeOf(context: Pick<ToolExecutionContext, 'dataDir'>): BackgroundTaskStore {
  if (context.dataDir === undefined)
    throw new ToolUseError(
      'Background tasks are not available: this worker has no data directory.',
      'background_unavailable',
    );
  return backgroundTaskStore(context.dataDir);
}

/** What the model reads after Bash started a command in the background. */
export function backgroundStartedText(taskId: string): string {
  return (
    `Command running in background with ID: ${taskId}. Read its output with TaskOutput (task_id "${taskId}"); stop it ` +
    'with TaskStop. It keeps running after this turn and through worker restarts, until it ends, is stopped, or the session ends.'
  );
}

/**
 * Starts a Bash command in the background (Bash `run_in_background: true`) and returns at once: the command runs
 * detached from the worker, its output goes to a file under the data directory, and the result names the task.
 * Everything before this — schema, hooks, permission rules, the Bash classifier, approval — is the same as for a
 * foreground Bash call: it is one.
 */
export async function startBackgroundCommand(options: {
  command: string;
  description?: string;
  context: ToolExecutionContext;
  env: NodeJS.ProcessEnv;
  /** Output bytes the task may write; past them it is killed (Bash's `SWITCHYARD_BASH_MAX_SPOOL_BYTES`). */
  maxOutputBytes: number;
  /** The argv that runs the command (the OS sandbox's); default `/bin/bash -c <command>`. */
  argv?: readonly string[];
}): Promise<ToolOutputObject> {
  const { context } = options;
  const record = await storeOf(context).start({
    sessionId: context.sessionId,
    turnId: context.turnId,
    callId: context.callId,
    command: options.command,
    ...(options.description === undefined ? {} : { description: options.description }),
    cwd: context.cwd,
    env: options.env,
    maxOutputBytes: options.maxOutputBytes,
    ...(options.argv === undefined ? {} : { argv: options.argv }),
  });
  const report: ToolOutputObject['backgroundTask'] = {
    kind: 'started',
    taskId: record.taskId,
    command: record.command,
    startedAt: record.startedAt,
  };
  if (record.description !== undefined) report.description = record.description;
  return {
    content: backgroundStartedText(record.taskId),
    backgroundTask: report,
    display: backgroundTaskDisplay({
      phase: 'started',
      taskId: record.taskId,
      command: record.command,
      status: 'running',
    }),
  };
}

async function findTask(
  context: ToolExecutionContext,
  taskId: string,
): Promise<{ store: BackgroundTaskStore; record: BackgroundTaskRecord }> {
  const store = storeOf(context);
  const record = await store.get(context.sessionId, taskId);
  if (record === undefined)
    throw new ToolUseError(`No background task with ID "${taskId}" in this session.`, 'background_task_not_found');
  return { store, record };
}

/** The status line that ends every TaskOutput and TaskStop text. */
export function backgroundStatusText(options: {
  taskId: string;
  state: BackgroundTaskState;
  stopRequested: boolean;
  waitedMs?: number;
}): string {
  const { taskId, state } = options;
  switch (state.status) {
    case 'running':
      return `Task ${taskId} is still running${options.waitedMs === undefined ? '' : ` (waited ${options.waitedMs}ms)`}.`;
    case 'exited':
      return `Task ${taskId} exited with code ${state.exitCode ?? 'unknown'}.`;
    case 'killed':
      if (options.stopRequested) return `Task ${taskId} was stopped (killed).`;
      if (state.outputLimitBytes !== undefined) {
        // The limit a task starts with is the spool limit, or less when its session's disk quota had less left.
        return `Task ${taskId} was stopped: its output passed the limit of ${state.outputLimitBytes} bytes (SWITCHYARD_BASH_MAX_SPOOL_BYTES for one Bash command, or what was left of the session's disk quota, SWITCHYARD_SESSION_DISK_BYTES, when it started).`;
      }
      return `Task ${taskId} ended without an exit code (killed by a signal, or its host restarted).`;
    default: {
      const exhaustive: never = state.status;
      return exhaustive;
    }
  }
}

const taskOutputInputSchema = z.strictObject({
  task_id: z.string().min(1).describe('The ID of the background task, as Bash returned it'),
  block: z.boolean().optional().describe('Wait for the task to finish before reading (default true)'),
  timeout: z
    .number()
    .int()
    .min(0)
    .max(BACKGROUND_TASK_DEFAULTS.maxBlockTimeoutMs)
    .optional()
    .describe(
      `How long to wait with block, in milliseconds (default ${BACKGROUND_TASK_DEFAULTS.blockTimeoutMs}, at most ${BACKGROUND_TASK_DEFAULTS.maxBlockTimeoutMs})`,
    ),
});

/**
 * TaskOutput (alias BashOutput): the output a background task wrote since the last read, and its status. Read-only and
 * concurrency-safe; no deadline of its own: `timeout` bounds its wait. A retried read (lost worker) returns
 * the same range again.
 */
export const taskOutputTool = defineTool({
  name: 'TaskOutput',
  aliases: ['BashOutput'],
  description:
    'Reads what a background task (started by Bash with run_in_background) has written since the last read, and its status: ' +
    'running, exited with its exit code, or killed. With block (default true) it first waits for the task to end, up to timeout ms.',
  inputSchema: taskOutputInputSchema,
  readOnly: true,
  concurrentSafe: true,
  sideEffectScope: 'none',
  timeout: { kind: 'none' },
  resultBudget: RESULT_BUDGETS.TaskOutput,
  ruleContent: (input) => input.task_id,
  summarize: (input) => input.task_id,
  async execute(input, context) {
    const { store, record } = await findTask(context, input.task_id);
    const block = input.block ?? true;
    const timeoutMs = input.timeout ?? BACKGROUND_TASK_DEFAULTS.blockTimeoutMs;
    let state = await store.state(record);
    let waitedMs: number | undefined;
    if (block && state.status === 'running' && timeoutMs > 0) {
      const started = Date.now();
      context.reportProgress(`waiting for ${record.taskId}`);
      state = await store.waitForEnd(record, { timeoutMs, signal: context.signal });
      if (state.status === 'running') waitedMs = Date.now() - started;
    }
    const budget = RESULT_BUDGETS.TaskOutput;
    // A call id is unique only within its turn: the read is keyed by both.
    const output = await store.readNew(record, {
      callId: `${context.turnId}/${context.callId}`,
      maxInlineBytes: budget.maxModelBytes,
      running: state.status === 'running',
    });
    const status = backgroundStatusText({
      taskId: record.taskId,
      state,
      stopRequested: record.stopRequestedAt !== undefined,
      ...(waitedMs === undefined ? {} : { waitedMs }),
    });
    const body = output.to === output.from ? '(no new output)' : output.text;
    const separator = body.endsWith('\n') ? '' : '\n';
    const result: ToolOutputObject = {
      content: `${body}${separator}${status}`,
      // What a UI draws (v1.3): the task, whether it still runs, and the tail of what it wrote since the last read.
      display: backgroundTaskDisplay({
        phase: state.status === 'running' ? 'output' : 'finished',
        taskId: record.taskId,
        command: record.command,
        status: state.status,
        ...(state.exitCode === undefined ? {} : { exitCode: state.exitCode }),
        tail: output.text.slice(-DISPLAY_LIMITS.backgroundTailChars),
      }),
      backgroundTask: {
        kind: 'observed',
        taskId: record.taskId,
        status: state.status,
        ...(state.exitCode === undefined ? {} : { exitCode: state.exitCode }),
      },
    };
    if (output.spool !== undefined) {
      // The stored full output ends with the same status line as the model's tail.
      try {
        const line = `${output.text.endsWith('\n') ? '' : '\n'}${status}`;
        await appendFile(output.spool.path, line);
        result.spool = { path: output.spool.path, bytes: output.spool.bytes + Buffer.byteLength(line) };
      } catch (error) {
        await rm(output.spool.path, { force: true });
        throw error;
      }
    }
    return result;
  },
});

/** TaskStop (alias KillShell): stops a running background task of this session; its process group is killed. */
export const taskStopTool = defineTool({
  name: 'TaskStop',
  aliases: ['KillShell'],
  description:
    'Stops a running background task (started by Bash with run_in_background): its whole process group is killed.',
  inputSchema: z.strictObject({ task_id: z.string().min(1).describe('The ID of the background task to stop') }),
  timeout: { defaultMs: TOOL_TIMEOUTS.TaskStop.defaultMs, maxMs: TOOL_TIMEOUTS.TaskStop.maxMs },
  ruleContent: (input) => input.task_id,
  summarize: (input) => input.task_id,
  // It can only stop a task of this session, whose command was itself allowed: no default ask. Deny and ask rules
  // (`TaskStop`, `TaskStop(bg_…)`) and plan mode still apply: it is not read-only.
  prepareApproval: () => ({ narrowToAllow: true }),
  async execute(input, context) {
    const { store, record } = await findTask(context, input.task_id);
    const before = await store.state(record);
    if (before.status !== 'running') {
      const status = backgroundStatusText({
        taskId: record.taskId,
        state: before,
        stopRequested: record.stopRequestedAt !== undefined,
      });
      return {
        content: `${status} Nothing to stop.`,
        display: backgroundTaskDisplay({
          phase: 'finished',
          taskId: record.taskId,
          command: record.command,
          status: before.status,
          ...(before.exitCode === undefined ? {} : { exitCode: before.exitCode }),
        }),
        backgroundTask: {
          kind: 'observed',
          taskId: record.taskId,
          status: before.status,
          ...(before.exitCode === undefined ? {} : { exitCode: before.exitCode }),
        },
      };
    }
    const after = await store.stop(record);
    return {
      content: backgroundStatusText({ taskId: record.taskId, state: after, stopRequested: true }),
      display: backgroundTaskDisplay({
        phase: after.status === 'running' ? 'output' : 'finished',
        taskId: record.taskId,
        command: record.command,
        status: after.status,
        ...(after.exitCode === undefined ? {} : { exitCode: after.exitCode }),
      }),
      isError: after.status === 'running',
      ...(after.status === 'running' ? { errorCode: 'background_task_still_running' } : {}),
      backgroundTask: {
        kind: 'observed',
        taskId: record.taskId,
        status: after.status,
        ...(after.exitCode === undefined ? {} : { exitCode: after.exitCode }),
      },
    };
  },
});
