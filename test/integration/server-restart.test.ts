import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Client, Connection, WorkflowUpdateStage } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';
import { SwitchyardClient } from '../../src/client/switchyard-client.js';
import type { ApprovalRequest } from '../../src/contracts/approval.js';
import { executeTurnUpdate } from '../../src/contracts/messages.js';
import { startDevServer } from '../../src/server/dev-server.js';
import { createSwitchyardWorker } from '../../src/worker/create-worker.js';
import { startCli } from '../support/cli-process.js';
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
      const worker = await createSwitchyardWorker({
        connection: native,
        taskQueue,
        tools: testTools(),
        defaultCwd: dir,
        dataDir: dir,
        userSettingsDir: false,
        workflowBundle: { codePath },
      });
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
      const [pending] = (await waitFor(
        () => session.pendingApprovals(),
        (list) => list.length === 1,
      )) as [ApprovalRequest];
      return pending;
    });

    // Second life: a new server process on the same database, a new worker; approve, then re-attach to the turn.
    const result = await run(async (client) => {
      const session = client.session('restart-session');
      expect((await session.pendingApprovals()).map((r) => r.requestId)).toEqual([request.requestId]);
      await session.approve({ requestId: request.requestId, decision: 'allow', inputDigest: request.inputDigest });
      return session.executeTurn({
        turnId: 't',
        calls: [{ id: 'e', name: 'FakeEdit', input: { file_path: target, text: 'once\n' } }],
      });
    });
    expect(result.results[0]).toMatchObject({ callId: 'e', status: 'success' });
    expect(await readFile(target, 'utf8')).toBe('once\n');
  });

  it(
    '`switchyard run` lives through the server going away: after the approval it prints the results and exits 0',
    { timeout: 300_000 },
    async () => {
      const dir = await scratchDir();
      const dbFilename = path.join(dir, 'temporal.db');
      const target = path.join(dir, 'approved.txt');
      const codePath = inject('workflowBundlePath');
      const taskQueue = `restart-run-${Date.now()}`;
      // One port for both lives: the CLI keeps its TEMPORAL_ADDRESS.
      const port = await freePort();
      const life = async () => {
        const server = await startDevServer({ port, dbFilename });
        const native = await NativeConnection.connect({ address: server.address });
        const worker = await createSwitchyardWorker({
          connection: native,
          taskQueue,
          tools: testTools(),
          defaultCwd: dir,
          dataDir: dir,
          userSettingsDir: false,
          workflowBundle: { codePath },
        });
        const running = worker.run();
        const connection = await Connection.connect({ address: server.address });
        const client = new SwitchyardClient({ client: new Client({ connection }), taskQueue });
        return {
          client,
          stop: async () => {
            await connection.close();
            worker.shutdown();
            await running;
            await native.close();
            await server.stop();
          },
        };
      };
      const calls = path.join(dir, 'calls.json');
      await writeFile(
        calls,
        JSON.stringify([{ id: 'e', name: 'FakeEdit', input: { file_path: target, text: 'once\n' } }]),
      );
      const first = await life();
      const env = {
        ...process.env,
        TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
        TEMPORAL_NAMESPACE: 'default',
        SWITCHYARD_TASK_QUEUE: taskQueue,
      };
      const run = startCli(['run', calls, '--session', 'restart-run', '--cwd', dir], env);
      try {
        await waitFor(
          () =>
            first.client
              .session('restart-run')
              .pendingApprovals()
              .catch(() => []),
          (list) => list.length === 1,
          { what: 'the approval request', timeoutMs: 120_000 },
        );
      } finally {
        await first.stop();
      }
      const second = await life();
      try {
        const session = second.client.session('restart-run');
        const [request] = (await waitFor(
          () => session.pendingApprovals(),
          (list) => list.length === 1,
        )) as [ApprovalRequest];
        await session.approve({ requestId: request.requestId, decision: 'allow', inputDigest: request.inputDigest });
        const { code, stdout } = await run.exited;
        expect(code, run.output()).toBe(0);
        expect(stdout).toContain('e FakeEdit: success');
        expect(run.output()).not.toContain('Channel has been shut down');
        expect(await readFile(target, 'utf8')).toBe('once\n');
      } finally {
        run.child.kill('SIGKILL');
        await second.stop();
      }
    },
  );
});
