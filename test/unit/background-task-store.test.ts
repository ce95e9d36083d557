import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { BackgroundTaskRecord } from '../../src/contracts/background-tasks.js';
import { BackgroundTaskStore } from '../../src/tools/background/background-task-store.js';
import { taskOutputTool, taskStopTool } from '../../src/tools/background/background-task-tools.js';
import { bashTool } from '../../src/tools/builtin/bash.js';
import type { ToolOutputObject } from '../../src/tools/define-tool.js';
import { processExists } from '../support/processes.js';
import { scratchDir } from '../support/scratch.js';
import { toolContext } from '../support/tool-context.js';
import { waitFor } from '../support/wait-for.js';

const started: BackgroundTaskRecord[] = [];

afterEach(() => {
  for (const record of started.splice(0)) {
    try {
      process.kill(-record.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
});

async function startTask(
  store: BackgroundTaskStore,
  command: string,
  sessionId = 's1',
  maxOutputBytes?: number,
): Promise<BackgroundTaskRecord> {
  const cwd = await scratchDir();
  const record = await store.start({
    sessionId,
    turnId: 't',
    callId: `c-${started.length}`,
    command,
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    ...(maxOutputBytes === undefined ? {} : { maxOutputBytes }),
  });
  started.push(record);
  return record;
}

describe('BackgroundTaskStore', () => {
  it('runs a command detached, in its own process group, and records its exit code durably', async () => {
    const store = new BackgroundTaskStore(await scratchDir());
    const record = await startTask(store, 'echo out; echo err >&2; exit 3');
    expect(record.taskId).toMatch(/^bg_[0-9a-f]{8}$/);
    expect(processExists(-record.pid) || (await store.exitCode(record)) !== undefined).toBe(true);
    const state = await store.waitForEnd(record, { timeoutMs: 10_000 });
    expect(state).toEqual({ status: 'exited', exitCode: 3 });
    // Another store over the same directory (a restarted worker) finds the same task and code.
    const again = new BackgroundTaskStore(path.dirname(store.root));
    const found = await again.get('s1', record.taskId);
    expect(found?.pid).toBe(record.pid);
    expect(await again.state(found as BackgroundTaskRecord)).toEqual({ status: 'exited', exitCode: 3 });
    expect(await readFile(again.outputPath(record), 'utf8')).toBe('out\nerr\n');
  });

  it('reads output since the last read, and the same range again for a retry of the same call', async () => {
    const store = new BackgroundTaskStore(await scratchDir());
    const record = await startTask(store, 'printf one; exit 0');
    await store.waitForEnd(record, { timeoutMs: 10_000 });
    const first = await store.readNew(record, { callId: 'a', maxInlineBytes: 1_000, running: false });
    expect(first).toMatchObject({ from: 0, to: 3, text: 'one' });
    await writeFile(store.outputPath(record), 'one two', { flag: 'w' });
    const retry = await store.readNew(record, { callId: 'a', maxInlineBytes: 1_000, running: false });
    expect(retry).toMatchObject({ from: 0, to: 7, text: 'one two' });
    const next = await store.readNew(record, { callId: 'b', maxInlineBytes: 1_000, running: false });
    expect(next).toMatchObject({ from: 7, to: 7, text: '' });
  });

  it('hands a range larger than the inline limit over as a spool file, with its tail in memory', async () => {
    const store = new BackgroundTaskStore(await scratchDir());
    const record = await startTask(store, 'seq 1 2000');
    await store.waitForEnd(record, { timeoutMs: 10_000 });
    const output = await store.readNew(record, { callId: 'a', maxInlineBytes: 100, running: false });
    const full = await readFile(store.outputPath(record), 'utf8');
    expect(output.spool?.bytes).toBe(Buffer.byteLength(full));
    expect(await readFile(output.spool?.path ?? '', 'utf8')).toBe(full);
    expect(output.text.endsWith('1999\n2000\n')).toBe(true);
    expect(Buffer.byteLength(output.text)).toBeLessThanOrEqual(100);
  });

  it('stops a running task: its whole process group dies and it reads as killed', async () => {
    const store = new BackgroundTaskStore(await scratchDir());
    const record = await startTask(store, 'sleep 60 & sleep 60; echo never');
    expect((await store.state(record)).status).toBe('running');
    const state = await store.stop(record, { graceMs: 1_000 });
    expect(state.status).toBe('killed');
    await waitFor(
      async () => processExists(-record.pid),
      (alive) => !alive,
      { what: 'the process group to be gone', timeoutMs: 5_000 },
    );
    const reread = await store.get('s1', record.taskId);
    expect(reread?.stopRequestedAt).toBeDefined();
    expect(await store.state(reread as BackgroundTaskRecord)).toMatchObject({ status: 'killed' });
  });

  it('stops a task whose output passes its limit: the file holds exactly the limit, and the state says why', async () => {
    const store = new BackgroundTaskStore(await scratchDir());
    // A hostile or runaway command: endless output, and it ignores SIGPIPE, so only a kill ends it.
    const record = await startTask(store, "trap '' PIPE; yes spam", 's1', 100_000);
    const state = await store.waitForEnd(record, { timeoutMs: 10_000 });
    expect(state).toEqual({ status: 'killed', exitCode: null, outputLimitBytes: 100_000 });
    expect((await stat(store.outputPath(record))).size).toBe(100_000);
    await waitFor(
      async () => processExists(-record.pid),
      (alive) => !alive,
      { what: 'the process group to be gone', timeoutMs: 5_000 },
    );
  }, 20_000);

  it('runs while a process the command left behind still writes to its output, and ends with all of it read', async () => {
    const store = new BackgroundTaskStore(await scratchDir());
    const record = await startTask(store, '(sleep 1; echo late) & echo early; exit 2');
    await waitFor(
      () => readFile(store.outputPath(record), 'utf8'),
      (text) => text === 'early\n',
      { what: 'the first line', timeoutMs: 5_000 },
    );
    expect((await store.state(record)).status).toBe('running');
    expect(await store.waitForEnd(record, { timeoutMs: 10_000 })).toEqual({ status: 'exited', exitCode: 2 });
    expect(await readFile(store.outputPath(record), 'utf8')).toBe('early\nlate\n');
  });

  it('output of exactly the limit is not over it: the task exits with its own code', async () => {
    const store = new BackgroundTaskStore(await scratchDir());
    const record = await startTask(store, 'head -c 1000 /dev/zero; sleep 0.3; exit 5', 's1', 1_000);
    expect(await store.waitForEnd(record, { timeoutMs: 10_000 })).toEqual({ status: 'exited', exitCode: 5 });
    expect((await stat(store.outputPath(record))).size).toBe(1_000);
  });

  it('reports a task that died without writing an exit code as killed, and a reused pid as not the task', async () => {
    const store = new BackgroundTaskStore(await scratchDir());
    const record = await startTask(store, 'sleep 60');
    process.kill(-record.pid, 'SIGKILL');
    await waitFor(
      () => store.state(record),
      (state) => state.status !== 'running',
      { what: 'the task to end', timeoutMs: 5_000 },
    );
    expect(await store.state(record)).toEqual({ status: 'killed', exitCode: null });
    // This test process is alive, but its start time is not the recorded one.
    expect(await store.isAlive({ pid: process.pid, processStartTicks: '1' })).toBe(process.platform !== 'linux');
  });

  it('keeps sessions apart and refuses ids that are not task ids', async () => {
    const store = new BackgroundTaskStore(await scratchDir());
    const record = await startTask(store, 'true', 'session-a');
    expect(await store.get('session-b', record.taskId)).toBeUndefined();
    expect(await store.get('session-a', '../session-b')).toBeUndefined();
    expect((await store.list('session-a')).map((task) => task.taskId)).toEqual([record.taskId]);
    expect(await store.list('session-b')).toEqual([]);
  });

  it('stopSession stops only the running tasks of that session', async () => {
    const store = new BackgroundTaskStore(await scratchDir());
    const running = await startTask(store, 'sleep 60', 'ending');
    const done = await startTask(store, 'exit 0', 'ending');
    const other = await startTask(store, 'sleep 60', 'other');
    await store.waitForEnd(done, { timeoutMs: 10_000 });
    const stopped = await store.stopSession('ending', { graceMs: 500 });
    expect(stopped.map((entry) => [entry.record.taskId, entry.state.status])).toEqual([[running.taskId, 'killed']]);
    expect((await store.state(other)).status).toBe('running');
  });
});

describe('Bash run_in_background, TaskOutput and TaskStop (tools)', () => {
  it('Bash returns at once with a task id; TaskOutput blocks until the end and reports output and exit code', async () => {
    const dataDir = await scratchDir();
    const cwd = await scratchDir();
    const context = toolContext({ cwd, dataDir, sessionId: 'tools' });
    // The command cannot end before the test creates `go`: Bash returning at all, with the task still running,
    // shows it did not wait for the command (no wall-clock bound, which a loaded machine would break).
    const start = (await bashTool.execute(
      { command: 'until [ -e go ]; do sleep 0.05; done; echo finished; exit 4', run_in_background: true },
      context,
    )) as ToolOutputObject;
    expect(start.backgroundTask?.kind).toBe('started');
    const taskId = start.backgroundTask?.taskId ?? '';
    expect(start.content).toContain(`Command running in background with ID: ${taskId}`);
    const store = new BackgroundTaskStore(dataDir);
    const record = (await store.get('tools', taskId)) as BackgroundTaskRecord;
    started.push(record);
    expect((await store.state(record)).status).toBe('running');
    await writeFile(path.join(cwd, 'go'), '');

    const read = (await taskOutputTool.execute(
      { task_id: taskId },
      { ...context, callId: 'read' },
    )) as ToolOutputObject;
    expect(read.content).toBe(`finished\nTask ${taskId} exited with code 4.`);
    expect(read.backgroundTask).toEqual({ kind: 'observed', taskId, status: 'exited', exitCode: 4 });
    const again = (await taskOutputTool.execute(
      { task_id: taskId, block: false },
      { ...context, callId: 'read2' },
    )) as ToolOutputObject;
    expect(again.content).toBe(`(no new output)\nTask ${taskId} exited with code 4.`);

    const stop = (await taskStopTool.execute({ task_id: taskId }, { ...context, callId: 'stop' })) as ToolOutputObject;
    expect(stop.content).toBe(`Task ${taskId} exited with code 4. Nothing to stop.`);
  });

  it('TaskOutput without block returns at once for a running task; TaskStop kills it', async () => {
    const dataDir = await scratchDir();
    const context = toolContext({ cwd: await scratchDir(), dataDir, sessionId: 'tools' });
    const start = (await bashTool.execute(
      { command: 'echo begun; sleep 60', run_in_background: true },
      context,
    )) as ToolOutputObject;
    const taskId = start.backgroundTask?.taskId ?? '';
    const record = (await new BackgroundTaskStore(dataDir).get('tools', taskId)) as BackgroundTaskRecord;
    started.push(record);
    const read = await waitFor(
      async () =>
        (await taskOutputTool.execute(
          { task_id: taskId, block: true, timeout: 200 },
          { ...context, callId: `r-${Date.now()}` },
        )) as ToolOutputObject,
      (output) => output.content.startsWith('begun'),
      { what: 'the first output' },
    );
    expect(read.content).toMatch(new RegExp(`^begun\\nTask ${taskId} is still running \\(waited \\d+ms\\)\\.$`));
    const stop = (await taskStopTool.execute({ task_id: taskId }, { ...context, callId: 'stop' })) as ToolOutputObject;
    expect(stop).toMatchObject({
      content: `Task ${taskId} was stopped (killed).`,
      backgroundTask: { kind: 'observed', taskId, status: 'killed' },
    });
    await waitFor(
      async () => processExists(-record.pid),
      (alive) => !alive,
      { what: 'the group to die', timeoutMs: 5_000 },
    );
  });

  it('a background command whose output passes SWITCHYARD_BASH_MAX_SPOOL_BYTES is stopped, and TaskOutput says why', async () => {
    const dataDir = await scratchDir();
    const context = toolContext({ cwd: await scratchDir(), dataDir, sessionId: 'tools' });
    const previous = process.env.SWITCHYARD_BASH_MAX_SPOOL_BYTES;
    process.env.SWITCHYARD_BASH_MAX_SPOOL_BYTES = '50000';
    let start: ToolOutputObject;
    try {
      start = (await bashTool.execute({ command: 'yes spam', run_in_background: true }, context)) as ToolOutputObject;
    } finally {
      if (previous === undefined) delete process.env.SWITCHYARD_BASH_MAX_SPOOL_BYTES;
      else process.env.SWITCHYARD_BASH_MAX_SPOOL_BYTES = previous;
    }
    const taskId = start.backgroundTask?.taskId ?? '';
    started.push((await new BackgroundTaskStore(dataDir).get('tools', taskId)) as BackgroundTaskRecord);
    const read = (await taskOutputTool.execute(
      { task_id: taskId, timeout: 10_000 },
      { ...context, callId: 'read' },
    )) as ToolOutputObject;
    expect(read.content).toBe(
      `${'spam\n'.repeat(10_000)}Task ${taskId} was stopped: its output passed the limit of 50000 bytes (SWITCHYARD_BASH_MAX_SPOOL_BYTES for one Bash command, or what was left of the session's disk quota, SWITCHYARD_SESSION_DISK_BYTES, when it started).`,
    );
    expect(read.backgroundTask).toEqual({ kind: 'observed', taskId, status: 'killed', exitCode: null });
  }, 20_000);

  it('an unknown task id is a tool error naming it', async () => {
    const context = toolContext({ cwd: await scratchDir(), dataDir: await scratchDir() });
    await expect(taskOutputTool.execute({ task_id: 'bg_00000000' }, context)).rejects.toThrow(
      'No background task with ID "bg_00000000" in this session.',
    );
    await expect(taskStopTool.execute({ task_id: 'nope' }, context)).rejects.toThrow(
      'No background task with ID "nope" in this session.',
    );
  });
});
