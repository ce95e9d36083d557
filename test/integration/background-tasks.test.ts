import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { BackgroundTaskRecord, BackgroundTaskView } from '../../src/contracts/background-tasks.js';
import type { SessionEvent } from '../../src/contracts/events.js';
import { BackgroundTaskStore } from '../../src/tools/background/background-task-store.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { runCli } from '../support/cli-process.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { processExists } from '../support/processes.js';
import { killProcess, spawnWorkerProcess } from '../support/spawn-worker.js';
import { waitFor } from '../support/wait-for.js';

describe(
  'background tasks on a real server (Bash run_in_background, TaskOutput, TaskStop)',
  { timeout: 180_000 },
  () => {
    let harness: Harness;
    let cwd: string;
    const groups: number[] = [];
    beforeAll(async () => {
      cwd = await scratchDir();
      harness = await createHarness({ tools: builtinTools(), defaultCwd: cwd });
    });
    afterEach(() => {
      for (const pid of groups.splice(0)) {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
    });
    afterAll(async () => harness.close());

    /** Default permission mode: Bash needs the allow rule; TaskOutput (read-only) and TaskStop need none. */
    const startSession = (): Promise<SessionHandle> => harness.startSession({ cwd, rules: { allow: ['Bash'] } });

    async function startInBackground(
      session: SessionHandle,
      turnId: string,
      command: string,
    ): Promise<{ taskId: string; record: BackgroundTaskRecord; modelContent: string }> {
      const turn = await session.executeTurn({
        turnId,
        calls: [{ id: 'bg', name: 'Bash', input: { command, run_in_background: true, description: 'background job' } }],
      });
      const result = turn.results[0];
      expect(result?.status).toBe('success');
      const taskId = result?.backgroundTask?.taskId ?? '';
      expect(taskId).toMatch(/^bg_[0-9a-f]{8}$/);
      const record = await new BackgroundTaskStore(harness.dataDir).get(session.sessionId, taskId);
      if (record === undefined) throw new Error(`no record on disk for ${taskId}`);
      groups.push(record.pid);
      return { taskId, record, modelContent: result?.modelContent ?? '' };
    }

    const read = async (session: SessionHandle, turnId: string, input: Record<string, unknown>) =>
      (await session.executeTurn({ turnId, calls: [{ id: 'read', name: 'TaskOutput', input }] })).results[0];

    const eventsOf = async (session: SessionHandle): Promise<SessionEvent[]> => (await session.events()).events;

    it('a background Bash returns in under a second; TaskOutput later returns its output and exit code; events and the backgroundTasks query show it', async () => {
      await harness.withWorker(async () => {
        const session = await startSession();
        const { taskId, record, modelContent } = await startInBackground(
          session,
          't1',
          'echo hello; sleep 3; echo bye; exit 5',
        );
        // The call returned at once: its execution (ToolCallStarted → ToolCallResult, workflow time) took under a
        // second, and the command was still running when its result arrived.
        expect(await new BackgroundTaskStore(harness.dataDir).state(record)).toEqual({ status: 'running' });
        const timeline = (await eventsOf(session)).filter(
          (event) => event.turnId === 't1' && (event.type === 'ToolCallStarted' || event.type === 'ToolCallResult'),
        );
        expect(timeline.map((event) => event.type)).toEqual(['ToolCallStarted', 'ToolCallResult']);
        expect(Date.parse(timeline[1]?.at ?? '') - Date.parse(timeline[0]?.at ?? '')).toBeLessThan(1_000);
        expect(modelContent).toContain(`Command running in background with ID: ${taskId}`);
        expect(modelContent).toContain('TaskOutput');
        expect(await session.backgroundTasks()).toMatchObject([
          {
            taskId,
            status: 'running',
            command: 'echo hello; sleep 3; echo bye; exit 5',
            description: 'background job',
            turnId: 't1',
            callId: 'bg',
          },
        ]);

        const output = await read(session, 't2', { task_id: taskId });
        expect(output).toMatchObject({
          status: 'success',
          modelContent: `hello\nbye\nTask ${taskId} exited with code 5.`,
        });
        const again = await read(session, 't3', { task_id: taskId, block: false });
        expect(again?.modelContent).toBe(`(no new output)\nTask ${taskId} exited with code 5.`);

        const tasks: BackgroundTaskView[] = await session.backgroundTasks();
        expect(tasks).toMatchObject([{ taskId, status: 'exited', exitCode: 5 }]);
        const events = await eventsOf(session);
        const background = events.filter(
          (event) => event.type === 'BackgroundTaskStarted' || event.type === 'BackgroundTaskEnded',
        );
        expect(background).toMatchObject([
          {
            type: 'BackgroundTaskStarted',
            turnId: 't1',
            callId: 'bg',
            taskId,
            command: 'echo hello; sleep 3; echo bye; exit 5',
          },
          {
            type: 'BackgroundTaskEnded',
            turnId: 't2',
            callId: 'read',
            taskId,
            status: 'exited',
            exitCode: 5,
            reason: 'observed',
          },
        ]);
      });
    });

    it('a background task outlives a SIGKILLed worker; after the restart TaskOutput reports its output and exit code', async () => {
      const release = path.join(cwd, 'release-after-kill');
      const worker = await spawnWorkerProcess(harness, { tools: 'builtin' });
      let session: SessionHandle;
      let taskId: string;
      let pid: number;
      try {
        session = await startSession();
        ({
          taskId,
          record: { pid },
        } = await startInBackground(
          session,
          't1',
          `echo before; while [ ! -f ${release} ]; do sleep 0.1; done; echo after; exit 7`,
        ));
        // The task has begun (its first line is on disk) before its worker is killed.
        const outputPath = new BackgroundTaskStore(harness.dataDir).outputPath({
          sessionId: session.sessionId,
          taskId,
        });
        await waitFor(
          () => readFile(outputPath, 'utf8'),
          (text) => text === 'before\n',
          { what: 'the first output' },
        );
      } finally {
        await killProcess(worker);
      }
      // The worker is gone; its background task is not.
      expect(processExists(-pid)).toBe(true);
      await writeFile(release, '');
      await harness.withWorker(async () => {
        const output = await read(session, 't2', { task_id: taskId, timeout: 30_000 });
        expect(output?.modelContent).toBe(`before\nafter\nTask ${taskId} exited with code 7.`);
        expect(await session.backgroundTasks()).toMatchObject([{ taskId, status: 'exited', exitCode: 7 }]);
      });
    });

    it('TaskStop kills a running task; an interrupt leaves it running', async () => {
      await harness.withWorker(async () => {
        const session = await startSession();
        const { taskId, record } = await startInBackground(session, 't1', 'echo started; sleep 60');
        // A TaskOutput that waits for the end, interrupted while it waits.
        const waiting = read(session, 't2', { task_id: taskId, timeout: 60_000 });
        await waitFor(
          () => eventsOf(session),
          (events) => events.some((event) => event.type === 'ToolCallStarted' && event.turnId === 't2'),
          { what: 'TaskOutput to start waiting' },
        );
        await session.interrupt('user pressed Esc');
        expect((await waiting)?.status).toBe('cancelled');
        expect(processExists(-record.pid)).toBe(true);
        expect(await session.backgroundTasks()).toMatchObject([{ taskId, status: 'running' }]);

        const stop = (
          await session.executeTurn({
            turnId: 't3',
            calls: [{ id: 'stop', name: 'KillShell', input: { task_id: taskId } }],
          })
        ).results[0];
        expect(stop).toMatchObject({
          status: 'success',
          toolName: 'TaskStop',
          modelContent: `Task ${taskId} was stopped (killed).`,
        });
        await waitFor(
          async () => processExists(-record.pid),
          (alive) => !alive,
          { what: 'the process group to die', timeoutMs: 5_000 },
        );
        expect(await session.backgroundTasks()).toMatchObject([{ taskId, status: 'killed' }]);
        expect((await eventsOf(session)).filter((event) => event.type === 'BackgroundTaskEnded')).toMatchObject([
          { turnId: 't3', callId: 'stop', taskId, status: 'killed', reason: 'stopped' },
        ]);
        // What it wrote before it was stopped can still be read.
        const output = await read(session, 't4', { task_id: taskId });
        expect(output?.modelContent).toBe(`started\nTask ${taskId} was stopped (killed).`);
      });
    });

    it('ending the session kills its running tasks and records why', async () => {
      await harness.withWorker(async () => {
        const session = await startSession();
        const { taskId, record } = await startInBackground(session, 't1', 'sleep 60');
        const { taskId: doneId } = await startInBackground(session, 't2', 'exit 0');
        await read(session, 't3', { task_id: doneId });
        await session.end();
        await waitFor(
          () => session.workflow.describe(),
          (description) => description.status.name === 'CANCELLED',
          { what: 'the session to end' },
        );
        await waitFor(
          async () => processExists(-record.pid),
          (alive) => !alive,
          { what: 'the task to be killed', timeoutMs: 5_000 },
        );
        expect(await session.backgroundTasks()).toMatchObject([
          { taskId, status: 'killed' },
          { taskId: doneId, status: 'exited', exitCode: 0 },
        ]);
        const ended = (await eventsOf(session)).filter((event) => event.type === 'BackgroundTaskEnded');
        expect(ended).toMatchObject([
          { taskId: doneId, reason: 'observed' },
          { taskId, turnId: 't1', status: 'killed', reason: 'session_ended' },
        ]);
      });
    });

    it('a background command meets the same permission rules as a foreground one', async () => {
      await harness.withWorker(async () => {
        const session = await harness.startSession({ cwd, rules: { allow: ['Bash'], deny: ['Bash(rm:*)'] } });
        const turn = await session.executeTurn({
          turnId: 't1',
          calls: [{ id: 'rm', name: 'Bash', input: { command: 'rm -rf important', run_in_background: true } }],
        });
        expect(turn.results[0]).toMatchObject({ status: 'denied' });
        expect(turn.results[0]?.backgroundTask).toBeUndefined();
        expect(await session.backgroundTasks()).toEqual([]);
      });
    });

    it("`switchyard tasks` lists a session's tasks and stops one with --stop", async () => {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        TEMPORAL_ADDRESS: harness.address,
        TEMPORAL_NAMESPACE: harness.namespace,
        SWITCHYARD_TASK_QUEUE: harness.taskQueue,
        SWITCHYARD_DATA_DIR: harness.dataDir,
        HOME: await scratchDir('switchyard-home-'),
      };
      const help = await runCli(['tasks', '--help'], env);
      expect(help.stdout).toContain('Usage: switchyard tasks SESSION [--stop TASK_ID] [--json]');
      await harness.withWorker(async () => {
        const session = await startSession();
        const { taskId, record } = await startInBackground(session, 't1', 'sleep 60');
        const listed = await runCli(['tasks', session.sessionId], env);
        expect(listed.stdout).toMatch(new RegExp(`^${taskId}  running\\s+\\S+  sleep 60\\n$`));
        const stopped = await runCli(['tasks', session.sessionId, '--stop', taskId, '--json'], env);
        expect(JSON.parse(stopped.stdout)).toMatchObject({
          toolName: 'TaskStop',
          status: 'success',
          modelContent: `Task ${taskId} was stopped (killed).`,
        });
        await waitFor(
          async () => processExists(-record.pid),
          (alive) => !alive,
          { what: 'the task to die', timeoutMs: 5_000 },
        );
        expect(await session.backgroundTasks()).toMatchObject([{ taskId, status: 'killed' }]);
      });
    });
  },
);
