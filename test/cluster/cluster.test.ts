import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SwitchyardClient } from '../../src/client/switchyard-client.js';
import type { ApprovalRequest } from '../../src/contracts/approval.js';
import { pendingApprovalsSearchAttribute } from '../../src/contracts/messages.js';
import { FileArtifactStore } from '../../src/artifacts/file-artifact-store.js';
import { createSwitchyardWorker } from '../../src/worker/create-worker.js';
import { scratchDir, uniqueName } from '../support/harness.js';
import { killProcess, spawnWorkerProcess } from '../support/spawn-worker.js';
import { testTools } from '../support/test-tools.js';
import { waitFor } from '../support/wait-for.js';
import { startCluster } from './cluster.js';
import type { Cluster } from './cluster.js';

// `npm run test:cluster`: the acceptance tests against a production-shaped cluster (Temporal server on PostgreSQL,
// search attribute created by an operator command), not the dev server.
describe('on a Temporal cluster with PostgreSQL', () => {
  let cluster: Cluster;
  let client: SwitchyardClient;
  let connection: Connection;
  let dir: string;
  const taskQueue = uniqueName('cluster');
  beforeAll(async () => {
    cluster = await startCluster({ progress: (line) => process.stderr.write(`[cluster] ${line}\n`) });
    dir = await scratchDir();
    connection = await Connection.connect({ address: cluster.address });
    client = new SwitchyardClient({
      client: new Client({ connection, namespace: cluster.namespace }),
      taskQueue,
      artifacts: new FileArtifactStore(dir),
    });
  }, 1_800_000);
  afterAll(async () => {
    await connection?.close();
    await cluster?.stop();
  });

  it('a waiting approval is found through the visibility query, approved, and the call runs once', async () => {
    const worker = await spawnWorkerProcess({
      address: cluster.address,
      namespace: cluster.namespace,
      taskQueue,
      dataDir: dir,
    });
    try {
      const target = path.join(dir, 'approved.txt');
      const session = await client.startSession(uniqueName('approval'), { cwd: dir });
      const turn = session.executeTurn({
        turnId: 't',
        calls: [{ id: 'e', name: 'FakeEdit', input: { file_path: target, text: 'once\n' } }],
      });
      const query = `${pendingApprovalsSearchAttribute} > 0 AND WorkflowId = '${session.sessionId}'`;
      await waitFor(
        async () => (await client.client.workflow.count(query)).count,
        (count) => count === 1,
        { what: 'the session in the visibility query', timeoutMs: 60_000 },
      );
      const [request] = (await session.pendingApprovals()) as [ApprovalRequest];
      await session.approve({
        requestId: request.requestId,
        decision: 'allow',
        inputDigest: request.inputDigest,
        by: 'cluster-test',
      });
      const result = await turn;
      expect(result.results[0]?.status).toBe('success');
      expect(await readFile(target, 'utf8')).toBe('once\n');
      await waitFor(
        async () => (await client.client.workflow.count(query)).count,
        (count) => count === 0,
        { what: 'the session to leave the visibility query', timeoutMs: 60_000 },
      );
    } finally {
      await killProcess(worker);
    }
  });

  it('a worker SIGKILLed mid-call: the non-idempotent call is reported interrupted, never re-run', async () => {
    const target = path.join(dir, 'append-once.txt');
    const first = await spawnWorkerProcess({
      address: cluster.address,
      namespace: cluster.namespace,
      taskQueue,
      dataDir: dir,
    });
    const session = await client.startSession(uniqueName('kill'), {
      cwd: dir,
      heartbeatTimeoutMs: 2_000,
      permissionMode: 'bypassPermissions',
    });
    const turn = session.executeTurn({
      turnId: 't',
      calls: [{ id: 'a', name: 'AppendThenWait', input: { file_path: target, wait_ms: 60_000 } }],
    });
    await waitFor(
      () => readFile(target, 'utf8').catch(() => ''),
      (text) => text === 'ran\n',
      { what: 'the append', timeoutMs: 60_000 },
    );
    await killProcess(first);
    const second = await spawnWorkerProcess({
      address: cluster.address,
      namespace: cluster.namespace,
      taskQueue,
      dataDir: dir,
    });
    try {
      const result = await turn;
      expect(result.results[0]).toMatchObject({ status: 'error', errorCode: 'interrupted' });
      expect(await readFile(target, 'utf8')).toBe('ran\n');
    } finally {
      await killProcess(second);
    }
  });

  it("scale-out: a workflow-only worker and a tool worker owning the workspace; the session's files change only there", async () => {
    const workspace = await scratchDir('cluster-workspace-');
    const toolQueue = uniqueName('cluster-ws');
    const workflowWorker = await spawnWorkerProcess(
      { address: cluster.address, namespace: cluster.namespace, taskQueue, dataDir: dir },
      { tools: 'builtin', env: { SWITCHYARD_WORKER_ROLE: 'workflows' } },
    );
    const toolWorker = await spawnWorkerProcess(
      { address: cluster.address, namespace: cluster.namespace, taskQueue: toolQueue, dataDir: dir },
      { tools: 'builtin', env: { SWITCHYARD_WORKER_ROLE: 'tools', SWITCHYARD_WORKER_CWD: workspace } },
    );
    try {
      const session = await client.startSession(uniqueName('scale-out'), {
        toolTaskQueue: toolQueue,
        permissionMode: 'bypassPermissions',
      });
      const result = await session.executeTurn({
        turnId: 't',
        calls: [{ id: 'w', name: 'Write', input: { file_path: 'note.txt', content: 'here\n' } }],
      });
      expect(result.results[0]?.status).toBe('success');
      expect(await readFile(path.join(workspace, 'note.txt'), 'utf8')).toBe('here\n');
    } finally {
      await killProcess(toolWorker);
      await killProcess(workflowWorker);
    }
  });

  it('a namespace without the search attribute: the worker refuses to start and names the command that creates it', async () => {
    const native = await NativeConnection.connect({ address: cluster.address });
    try {
      const bare = uniqueName('bare');
      await promisify(execFile)(cluster.cli, [
        'operator',
        'namespace',
        'create',
        '--namespace',
        bare,
        '--address',
        cluster.address,
      ]);
      await waitFor(
        () =>
          createSwitchyardWorker({
            connection: native,
            namespace: bare,
            taskQueue,
            tools: testTools(),
            workflowBundle: { codePath: inject('workflowBundlePath') },
          }).then(
            () => 'started',
            (error: unknown) => String(error),
          ),
        (outcome) => !/not found/i.test(outcome),
        { what: 'the new namespace to be usable', timeoutMs: 60_000 },
      ).then((outcome) => {
        expect(outcome).toMatch(/SwitchyardPendingApprovals/);
        expect(outcome).toMatch(
          /temporal operator search-attribute create --namespace \S+ --name SwitchyardPendingApprovals --type Int/,
        );
      });
    } finally {
      await native.close();
    }
  });
});
