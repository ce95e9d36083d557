import { access, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import type { Worker } from '@temporalio/worker';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { settingsFromEnvironment } from '../../src/config/settings.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { createSwitchyardWorker } from '../../src/worker/create-worker.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';

// Two workers in one process, each built from its own settings (as `switchyard worker` and an embedding program build
// them: `settingsFromEnvironment` of an environment). Each worker's built-in tools must run with that worker's
// settings, whichever worker was built last: a worker that requires the OS sandbox (with a bubblewrap it cannot run)
// refuses every command even after a worker without the floor, and with another bubblewrap, starts in the same
// process; a child process inherits only what its own worker's environment and allow list give it; Read keeps its own
// worker's size limit.

const exists = (file: string): Promise<boolean> =>
  access(file).then(
    () => true,
    () => false,
  );

/** A worker on `harness`'s task queue, built with the settings `variables` resolve to (over this process's own). */
async function startWorkerWith(
  harness: Harness,
  variables: Record<string, string>,
  connections: NativeConnection[],
): Promise<{ worker: Worker; done: Promise<void> }> {
  const connection = await NativeConnection.connect({ address: harness.address });
  connections.push(connection);
  const environment: Record<string, string | undefined> = { ...process.env, ...variables };
  const worker = await createSwitchyardWorker({
    connection,
    namespace: harness.namespace,
    taskQueue: harness.taskQueue,
    tools: builtinTools(),
    settings: await settingsFromEnvironment(environment),
    userSettingsDir: false,
    dataDir: await scratchDir('switchyard-worker-settings-data-'),
    workflowBundle: { codePath: inject('workflowBundlePath') },
  });
  return { worker, done: worker.run() };
}

describe('each worker in a process runs its tools with its own settings', () => {
  const harnesses: Harness[] = [];
  const connections: NativeConnection[] = [];
  const workers: { worker: Worker; done: Promise<void> }[] = [];

  const harness = async (): Promise<Harness> => {
    const created = await createHarness();
    harnesses.push(created);
    return created;
  };
  const start = async (on: Harness, variables: Record<string, string>): Promise<void> => {
    workers.push(await startWorkerWith(on, variables, connections));
  };

  afterAll(async () => {
    for (const { worker } of workers) worker.shutdown();
    await Promise.all(workers.map(({ done }) => done));
    await Promise.all(connections.map((connection) => connection.close()));
    await Promise.all(harnesses.map((created) => created.close()));
  });

  it('SWITCHYARD_SANDBOX=required holds on its worker after a worker without it starts in the same process', async () => {
    const required = await harness();
    const unset = await harness();
    // The floor, with a bubblewrap that cannot run: every Bash call of this worker is refused.
    await start(required, {
      SWITCHYARD_SANDBOX: 'required',
      SWITCHYARD_BWRAP: '/nonexistent/switchyard-test/bwrap',
    });
    // Built after it, without the floor.
    await start(unset, {});
    const cwd = await scratchDir();

    const onRequired = await required.startSession({ cwd, permissionMode: 'bypassPermissions' });
    const refused = await onRequired.executeTurn({
      turnId: 't1',
      calls: [
        { id: 'read-only', name: 'Bash', input: { command: 'echo ok' } },
        { id: 'write', name: 'Bash', input: { command: 'echo ran > required.txt' } },
      ],
    });
    expect(refused.results).toHaveLength(2);
    for (const result of refused.results) expect(result).toMatchObject({ errorCode: 'sandbox_unavailable' });
    expect(await exists(path.join(cwd, 'required.txt'))).toBe(false);

    const onUnset = await unset.startSession({ cwd, permissionMode: 'bypassPermissions' });
    const ran = await onUnset.executeTurn({
      turnId: 't1',
      calls: [{ id: 'write', name: 'Bash', input: { command: 'echo ran > unset.txt; echo ok' } }],
    });
    expect(ran.results[0]).toMatchObject({ status: 'success', modelContent: 'ok\n' });
    expect(await exists(path.join(cwd, 'unset.txt'))).toBe(true);
  });

  it("a Bash child inherits its own worker's environment and SWITCHYARD_ENV_INCLUDE, and Read keeps its own worker's SWITCHYARD_READ_MAX_FILE_BYTES, not the last-built worker's", async () => {
    const including = await harness();
    const plain = await harness();
    await start(including, {
      SWITCHYARD_SANDBOX: 'off',
      SWITCHYARD_ENV_INCLUDE: 'SWITCHYARD_TEST_PROBE_*',
      SWITCHYARD_TEST_PROBE_WORKER: 'including-worker',
      SWITCHYARD_READ_MAX_FILE_BYTES: '64',
    });
    await start(plain, { SWITCHYARD_SANDBOX: 'off', SWITCHYARD_TEST_PROBE_WORKER: 'plain-worker' });
    const cwd = await scratchDir();
    await writeFile(path.join(cwd, 'long.txt'), `${'x'.repeat(199)}\n`);

    for (const [on, probe, readRefused] of [
      [including, 'probe=including-worker\n', true],
      [plain, 'probe=unset\n', false],
    ] as const) {
      const session = await on.startSession({ cwd, permissionMode: 'bypassPermissions' });
      const turn = await session.executeTurn({
        turnId: 't1',
        // A Read (read-only: run by the session's plan, a local activity) and a Bash call (a regular activity).
        calls: [
          { id: 'read', name: 'Read', input: { file_path: path.join(cwd, 'long.txt') } },
          { id: 'probe', name: 'Bash', input: { command: 'echo "probe=${SWITCHYARD_TEST_PROBE_WORKER:-unset}"' } },
        ],
      });
      const [read, bash] = turn.results;
      expect(read?.isError).toBe(readRefused);
      expect(bash).toMatchObject({ status: 'success', modelContent: probe });
    }
  });
});
