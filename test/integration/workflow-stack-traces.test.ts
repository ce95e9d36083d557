import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SwitchyardClient } from '../../src/client/switchyard-client.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { createSwitchyardWorker } from '../../src/worker/create-worker.js';
import { createHarness, scratchDir, uniqueName } from '../support/harness.js';
import type { Harness } from '../support/harness.js';

/**
 * By default the workflow bundle caps stack traces (src/workflows/stack-trace-limit.ts) and the workflow threads run
 * without the SDK's promise hook (src/worker/workflow-threads.ts), so nothing is recorded per promise.
 * `workflowStackTraces: true` bundles without the cap, keeps the hook and gets the frames back.
 * Observed through the SDK's `__stack_trace` query on a session that waits for an approval.
 */
describe('stack traces in workflow code', () => {
  let harness: Harness;
  let cwd: string;
  let temporal: Client;
  let connection: Connection;
  beforeAll(async () => {
    cwd = await scratchDir();
    harness = await createHarness({ tools: builtinTools(), defaultCwd: cwd });
    connection = await Connection.connect({ address: harness.address });
    temporal = new Client({ connection, namespace: harness.namespace });
  });
  afterAll(async () => {
    await connection.close();
    await harness.close();
  });

  /**
   * A session waiting for approval of a real Write (it asks in `default` mode); returns its `__stack_trace`, or the
   * query's error message.
   */
  async function stackTraceOfWaitingSession(client: SwitchyardClient): Promise<string> {
    const session = await client.startSession(uniqueName('stack'), { cwd });
    const turn = session.executeTurn({
      turnId: 't1',
      calls: [{ id: 'w1', name: 'Write', input: { file_path: path.join(cwd, 'new.txt'), content: 'x' } }],
    });
    for (let attempt = 0; attempt < 200 && (await session.pendingApprovals()).length === 0; attempt++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await session.pendingApprovals()).toHaveLength(1);
    const trace = await temporal.workflow
      .getHandle(session.sessionId)
      .query<string>('__stack_trace')
      .catch((error: unknown) => `query failed: ${error instanceof Error ? error.message : String(error)}`);
    await session.end();
    await turn.catch(() => undefined);
    return trace;
  }

  it('records nothing by default: the workflow threads run without the SDK promise hook, and the query says so', async () => {
    const trace = await harness.withWorker(() => stackTraceOfWaitingSession(harness.client));
    expect(trace).toMatch(/^query failed: .*Workflow stack traces are not enabled on this worker/);
  });

  it('records frames of Switchyard workflow code with workflowStackTraces: true (bundled at start)', async () => {
    await writeFile(path.join(cwd, 'marker.txt'), 'x');
    const taskQueue = uniqueName('tq-stack');
    const nativeConnection = await NativeConnection.connect({ address: inject('temporalAddress') });
    const worker = await createSwitchyardWorker({
      connection: nativeConnection,
      namespace: harness.namespace,
      taskQueue,
      tools: builtinTools(),
      defaultCwd: cwd,
      userSettingsDir: false,
      dataDir: harness.dataDir,
      workflowStackTraces: true,
    });
    const running = worker.run();
    try {
      const client = new SwitchyardClient({ client: temporal, taskQueue });
      const trace = await stackTraceOfWaitingSession(client);
      expect(trace).toMatch(/src\/workflows\/[\w-]+\.ts/);
    } finally {
      worker.shutdown();
      await running;
      await nativeConnection.close();
    }
  }, 180_000);
});
