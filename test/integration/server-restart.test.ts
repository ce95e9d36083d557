import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Client, Connection, WorkflowUpdateStage } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';
import { SwitchyardClient } from '../../src/client/switchyard-client.js';
import type { ApprovalRequest } from '../../src/contracts/approval.js';
import { executeTurnUpdate } from '../../src/contracts/messages.js';
import { startDevServer } from '../../src/server/dev-server.js';
import { createSwitchyardWorker } from '../../src/worker/create-worker.js';
import { scratchDir } from '../support/scratch.js';
import { testTools } from '../support/test-tools.js';
import { waitFor } from '../support/wait-for.js';
import { freePort } from '../support/free-port.js';


describe('a pending approval across a Temporal server restart (dev server with --db-filename)', () => {
  it('survives the server and the worker going away, and the call runs exactly once after approval', async () => {
    const dir = await scratchDir();
    const dbFilename = path.join(dir, 'temporal.db');
    const target = path.join(dir, 'approved.txt');
    const codePath = inject('workflowBundlePath');
    const taskQueue = `restart-${Date.now()}`;

    const run = async <T>(body: (client: SwitchyardClient) => Promise<T>): Promise<T> => {
      // A fresh port each life: the session lives in the database file, not in the address.
      const server = await startDevServer({ port: await freePort(), dbFilename });
      const native = await NativeConnection.connect({ address: server.address });
      const worker = await createSwitchyardWorker({ connection: native, taskQueue, tools: testTools(), defaultCwd: dir, dataDir: dir, userSettingsDir: false, workflowBundle: { codePath } });
      const connection = await Connection.connect({ address: server.address });
      try {
        return await worker.runUntil(body(new SwitchyardClient({ client: new Client({ connection }), taskQueue })));
      } finally {
        await connection.close();
        await native.close();
        await server.stop();
      }
    };

    // First life: the call asks for approval; the client gives up waiting (the update is still in history).
    const request = await run(async (client) => {
      const session = await client.startSession('restart-session', { cwd: dir });
      // Accepted, then the client leaves: the turn lives in history, not in this process.
      await session.workflow.startUpdate(executeTurnUpdate, {
        args: [{ turnId: 't', calls: [{ id: 'e', name: 'FakeEdit', input: { file_path: target, text: 'once\n' } }] }],
        updateId: 't',
        waitForStage: WorkflowUpdateStage.ACCEPTED,
      });
      const [pending] = (await waitFor(() => session.pendingApprovals(), (list) => list.length === 1)) as [ApprovalRequest];
      return pending;
    });

    // Second life: a new server process on the same database, a new worker; approve, then re-attach to the turn.
    const result = await run(async (client) => {
      const session = client.session('restart-session');
      expect((await session.pendingApprovals()).map((r) => r.requestId)).toEqual([request.requestId]);
      await session.approve({ requestId: request.requestId, decision: 'allow', inputDigest: request.inputDigest });
      return session.executeTurn({ turnId: 't', calls: [{ id: 'e', name: 'FakeEdit', input: { file_path: target, text: 'once\n' } }] });
    });
    expect(result.results[0]).toMatchObject({ callId: 'e', status: 'success' });
    expect(await readFile(target, 'utf8')).toBe('once\n');
  });
});
