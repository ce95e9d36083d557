import { execFile } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { BundleOptions } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { TurnResult } from '../../src/contracts/tool-result.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { killProcess, spawnWorkerProcess } from '../support/spawn-worker.js';
import { waitFor } from '../support/wait-for.js';

const run = promisify(execFile);

/**
 * The release this one upgrades from: the commit the current round of work started from (ROLLING_UPGRADE_FROM
 * overrides it). Its workflow code is taken with `git archive` into a temporary folder outside the repository and
 * bundled with its own bundler options; its worker runs that bundle with today's activities (a worker process of
 * test/support/worker-process.ts), so what is tested is the workflow code of the two releases sharing a task queue.
 */
const from = process.env.ROLLING_UPGRADE_FROM ?? '091fb03';

async function bundleOldWorkflows(): Promise<string> {
  const dir = await scratchDir('switchyard-old-release-');
  const { stdout } = await run('git', ['archive', '--format=tar', from, 'src'], {
    encoding: 'buffer',
    maxBuffer: 256 * 1024 * 1024,
  });
  const tar = path.join(dir, 'src.tar');
  await writeFile(tar, stdout);
  await run('tar', ['-xf', tar, '-C', dir]);
  await symlink(path.resolve('node_modules'), path.join(dir, 'node_modules'));
  const options = (await import(pathToFileURL(path.join(dir, 'src/worker/workflow-bundle-options.ts')).href)) as {
    workflowBundlerOptions: Partial<BundleOptions>;
  };
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(dir, 'src/workflows/index.ts'),
    ...options.workflowBundlerOptions,
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
  });
  const bundle = path.join(dir, 'old-workflows.js');
  await writeFile(bundle, code);
  return bundle;
}

// `npm run test:faults`: a rolling deploy. A worker of the old release and one of HEAD share a task queue; sessions
// waiting for an approval, in the middle of a group of Bash calls and with a background task running are started
// on the old one, which is then SIGKILLed; the HEAD worker carries them to the end. Every call ends once: no Bash
// appends twice, none is lost.
describe(`rolling upgrade from ${from} to HEAD on one task queue`, () => {
  let harness: Harness;
  let cwd: string;
  let oldBundle: string;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    cwd = await scratchDir('switchyard-upgrade-');
    harness = await createHarness({ defaultCwd: cwd });
    oldBundle = await bundleOldWorkflows();
  });
  afterAll(async () => {
    await Promise.all(children.map(killProcess));
    await harness.close();
  });

  it('sessions waiting, mid-group and with a background task are carried across killing the old worker', async () => {
    const ledger = path.join(cwd, 'ledger.txt');
    const oldWorker = await spawnWorkerProcess(harness, {
      tools: 'builtin',
      env: { WORKFLOW_BUNDLE: oldBundle, SWITCHYARD_WORKER_CWD: cwd },
    });
    children.push(oldWorker);
    const append = (token: string, wait = 0): string =>
      `${wait > 0 ? `sleep ${wait}; ` : ''}echo ${token} >> ${ledger}`;
    // 1. Waiting for an approval.
    const waiting = await harness.startSession({ cwd });
    const waitingTurn = waiting.executeTurn({
      turnId: 't1',
      calls: [{ id: 'w', name: 'Bash', input: { command: append('approved') } }],
    });
    await waitFor(
      () => waiting.pendingApprovals(),
      (list) => list.length === 1,
      { what: 'the session to wait for an approval' },
    );
    // 2. A background task running.
    const background = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
    const backgroundJob = { command: append('background', 10), run_in_background: true, description: 'upgrade job' };
    const started = await background.executeTurn({
      turnId: 't1',
      calls: [{ id: 'bg', name: 'Bash', input: backgroundJob }],
    });
    const taskId = started.results[0]?.backgroundTask?.taskId ?? '';
    expect(taskId).not.toBe('');
    // 3. In the middle of a group: three Bash calls one after the other, the old worker killed during the second
    // (8 s long; the HEAD worker starts meanwhile, so either may be running it).
    const grouped = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
    const groupTurn = grouped.executeTurn({
      turnId: 't1',
      calls: [
        { id: 'g1', name: 'Bash', input: { command: append('g1') } },
        { id: 'g2', name: 'Bash', input: { command: `${append('g2')}; sleep 8` } },
        { id: 'g3', name: 'Bash', input: { command: append('g3') } },
      ],
    });
    await waitFor(
      () => readFile(ledger, 'utf8').catch(() => ''),
      (text) => text.includes('g2'),
      { what: 'the group to reach its second call' },
    );
    const newWorker = await spawnWorkerProcess(harness, { tools: 'builtin', env: { SWITCHYARD_WORKER_CWD: cwd } });
    children.push(newWorker);
    await killProcess(oldWorker);

    // The HEAD worker answers the approval, finishes the group and reads the background task.
    const killedAt = new Date().toISOString();
    const [request] = await waitFor(
      () => waiting.pendingApprovals(),
      (list) => list.length === 1,
    );
    await waiting.approve({ requestId: request!.requestId, decision: 'allow', inputDigest: request!.inputDigest });
    const results: Record<string, TurnResult> = {
      waiting: await waitingTurn,
      grouped: await groupTurn,
      background: await background.executeTurn({
        turnId: 't2',
        calls: [{ id: 'read', name: 'TaskOutput', input: { task_id: taskId } }],
      }),
    };
    const statuses = Object.fromEntries(
      Object.entries(results).map(([name, turn]) => [
        name,
        turn.results.map((result) => (result.errorCode === 'interrupted' ? 'interrupted' : result.status)),
      ]),
    );
    // g2 was running when the old worker died: it ends `interrupted` (at most once) if the old worker ran it,
    // `success` if the HEAD worker did.
    expect(statuses.waiting).toEqual(['success']);
    expect(statuses.background).toEqual(['success']);
    expect(statuses.grouped?.[0]).toBe('success');
    expect(['success', 'interrupted'], JSON.stringify(results.grouped?.results[1])).toContain(statuses.grouped?.[1]);
    expect(statuses.grouped).toHaveLength(3);
    const lines = (await readFile(ledger, 'utf8')).trim().split('\n').sort();
    // Every call ends once: no token twice; none lost (g3 runs after g2 ended either way).
    expect(lines).toEqual(['approved', 'background', 'g1', 'g2', 'g3'].sort());
    process.stderr.write(
      `[rolling-upgrade] ${from} -> HEAD: 3 sessions, ${Object.values(results).reduce((sum, turn) => sum + turn.results.length, 0) + 1} calls, statuses ${JSON.stringify(statuses)}, ledger ${lines.length} lines, 0 duplicates, old worker killed at ${killedAt}\n`,
    );
    await Promise.all([waiting, background, grouped].map((session: SessionHandle) => session.end().catch(() => {})));
  });
});
