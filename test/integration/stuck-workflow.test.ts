import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import type { WorkflowHandle } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { HooklessWorkflowThreadsWorker } from '../../src/worker/workflow-threads.js';
import { uniqueName } from '../support/harness.js';

const workflowsPath = fileURLToPath(new URL('../fixtures/workflows/stuck-workflows.ts', import.meta.url));

/**
 * A workflow stuck in a loop fails its workflow task after the worker's isolate timeout (the SDK's 5 s), and the
 * worker goes on running other workflows. src/worker/workflow-threads.ts guards each activation as a whole rather
 * than each call into the sandbox; this test fails (by timing out) when nothing guards it.
 */
describe('a workflow stuck in a loop', () => {
  let connection: Connection;
  let client: Client;
  beforeAll(async () => {
    connection = await Connection.connect({ address: inject('temporalAddress') });
    client = new Client({ connection, namespace: inject('temporalNamespace') });
  });
  afterAll(async () => {
    await connection.close();
  });

  it('fails its workflow task with the isolate timeout, and the worker still runs other workflows', async () => {
    await withWorker({ name: 'stuck' }, async (taskQueue) => {
      const stuck = await client.workflow.start('spinForever', { taskQueue, workflowId: uniqueName('spin') });
      expect(await firstTaskFailure(stuck)).toMatch(/timed out after 5000ms/);
      const answered = await client.workflow.execute('answer', { taskQueue, workflowId: uniqueName('answer') });
      expect(answered).toBe(42);
      await stuck.terminate('test over');
    });
  });

  it('replays a workflow that waited in the same thread meanwhile: it goes on from its history', async () => {
    // One workflow thread, so the waiting workflow and the stuck one share it.
    await withWorker({ name: 'stuck-bystander', workflowThreadPoolSize: 1 }, async (taskQueue) => {
      const waiting = await client.workflow.start('waitForWord', { taskQueue, workflowId: uniqueName('wait') });
      // Its first task done: it waits in the thread's cache.
      await waitFor(async () =>
        (await waiting.fetchHistory()).events?.some((event) => event.workflowTaskCompletedEventAttributes != null),
      );
      const stuck = await client.workflow.start('spinForever', { taskQueue, workflowId: uniqueName('spin') });
      expect(await firstTaskFailure(stuck)).toMatch(/timed out after 5000ms/);
      await waiting.signal('word', 'hello');
      expect(await waiting.result()).toBe('heard hello');
      // The thread it waited in was replaced: its next task failed, saying why, and Temporal replayed it.
      expect(await firstTaskFailure(waiting)).toMatch(/workflow thread .* was replaced/);
      await stuck.terminate('test over');
    });
  });

  /** Runs `body` while a hook-less worker polls a task queue of its own. */
  async function withWorker(
    options: { name: string; workflowThreadPoolSize?: number },
    body: (taskQueue: string) => Promise<void>,
  ): Promise<void> {
    const taskQueue = uniqueName(options.name);
    const nativeConnection = await NativeConnection.connect({ address: inject('temporalAddress') });
    try {
      const worker = await HooklessWorkflowThreadsWorker.create({
        connection: nativeConnection,
        namespace: inject('temporalNamespace'),
        taskQueue,
        workflowsPath,
        ...(options.workflowThreadPoolSize === undefined
          ? {}
          : { workflowThreadPoolSize: options.workflowThreadPoolSize }),
      });
      await worker.runUntil(() => body(taskQueue));
    } finally {
      await nativeConnection.close();
    }
  }
});

/** The message of the first failed workflow task in a workflow's history, once there is one. */
async function firstTaskFailure(handle: WorkflowHandle): Promise<string> {
  return await waitFor(async () => {
    const history = await handle.fetchHistory();
    return history.events?.find((event) => event.workflowTaskFailedEventAttributes != null)
      ?.workflowTaskFailedEventAttributes?.failure?.message;
  });
}

/** `probe`'s first truthy answer, asked every 100 ms for up to 30 s. */
async function waitFor<T>(probe: () => Promise<T | undefined | null | false>): Promise<T> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const answer = await probe();
    if (answer) return answer;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('gave up waiting after 30 s');
}
