import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { testTools } from '../support/test-tools.js';
import { waitFor } from '../support/wait-for.js';

/** The heartbeat details of the session's first pending activity, decoded. */
async function heartbeatOf(session: SessionHandle): Promise<{ activeMs: number; queuedMs: number } | undefined> {
  const description = await session.workflow.describe();
  const data = description.raw.pendingActivities?.[0]?.heartbeatDetails?.payloads?.[0]?.data;
  return data === undefined || data === null ? undefined : (JSON.parse(Buffer.from(data).toString()) as { activeMs: number; queuedMs: number });
}

describe('execution: deadlines, admission, lost workers, budgets (real server, real processes)', () => {
  let harness: Harness;
  let cwd: string;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    cwd = await scratchDir();
    harness = await createHarness({ tools: testTools(), defaultCwd: cwd });
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await harness.close();
  });

  /** A worker in its own process, so it can be SIGKILLed mid-call. */
  async function spawnWorker(): Promise<ChildProcess> {
    const child = spawn(process.execPath, ['--import', 'tsx', path.resolve('test/support/worker-process.ts')], {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: harness.address,
        TEMPORAL_NAMESPACE: harness.namespace,
        SWITCHYARD_TASK_QUEUE: harness.taskQueue,
        WORKFLOW_BUNDLE: inject('workflowBundlePath'),
        SWITCHYARD_DATA_DIR: harness.dataDir,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('worker ready')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`worker process exited early (${code})`)));
    });
    return child;
  }

  it('does not count time waiting at an admission gate: a call that waits longer than its deadline still succeeds', async () => {
    const result = await harness.withWorker(
      async () => {
        const session = await harness.startSession({ cwd });
        return session.executeTurn({
          turnId: 't',
          calls: ['a', 'b', 'c'].map((label) => ({ id: label, name: 'GatedWork', input: { label, work_ms: 600, timeout_ms: 1_000 } })),
        });
      },
      { admissionGates: { model: 1 } },
    );
    expect(result.results.map((r) => r.status)).toEqual(['success', 'success', 'success']);
    // One permit, three 600 ms jobs: the last waited about 1,200 ms, more than its whole 1,000 ms deadline.
    const longestWait = Math.max(...result.results.map((r) => r.timings.queuedMs));
    expect(longestWait).toBeGreaterThan(1_000);
  });

  it('resumes an idempotent call after its worker is SIGKILLed, within its original budget', async () => {
    const budgetMs = 6_000;
    const workMs = 2_500;
    const session = await harness.startSession({ cwd, heartbeatTimeoutMs: 2_000 });
    const first = await spawnWorker();
    const turn = session.executeTurn({ turnId: 't', calls: [{ id: 'r', name: 'ResumableWork', input: { work_ms: workMs, timeout_ms: budgetMs } }] });
    const beforeKill = await waitFor(() => heartbeatOf(session), (beat) => (beat?.activeMs ?? 0) >= 1_500, { what: 'a heartbeat past 1.5 s' });
    first.kill('SIGKILL');
    const { worker, done } = await harness.startWorker();
    try {
      const result = await turn;
      expect(result.results[0]?.status).toBe('success');
      const report = JSON.parse(result.results[0]?.modelContent ?? '{}') as { attempt: number; startedWithRemainingMs: number; activeMs: number };
      expect(report.attempt).toBe(2);
      // Arithmetic: the retry started from the last heartbeat's elapsed time (≥ 1.5 s), not from a fresh budget,
      // so it began with at most 6,000 − 1,500 = 4,500 ms, and in all it used first-attempt time + 2,500 ≤ 6,000.
      expect(report.startedWithRemainingMs).toBeLessThanOrEqual(budgetMs - (beforeKill?.activeMs ?? 0));
      expect(report.startedWithRemainingMs).toBeGreaterThanOrEqual(workMs);
      expect(report.activeMs).toBeLessThanOrEqual(budgetMs);
      expect(report.activeMs).toBeGreaterThanOrEqual(workMs + (beforeKill?.activeMs ?? 0));
    } finally {
      worker.shutdown();
      await done;
    }
  });

  it('never restarts a non-idempotent call after its worker dies, and says it was interrupted', async () => {
    const target = path.join(cwd, 'append-once.txt');
    const session = await harness.startSession({ cwd, heartbeatTimeoutMs: 2_000, permissionMode: 'bypassPermissions' });
    const first = await spawnWorker();
    const turn = session.executeTurn({ turnId: 't', calls: [{ id: 'a', name: 'AppendThenWait', input: { file_path: target, wait_ms: 60_000 } }] });
    await waitFor(() => readFile(target, 'utf8').catch(() => ''), (text) => text === 'ran\n', { what: 'the append' });
    first.kill('SIGKILL');
    const { worker, done } = await harness.startWorker();
    try {
      const result = await turn;
      expect(result.results[0]).toMatchObject({
        status: 'error',
        errorCode: 'interrupted',
        modelContent: 'AppendThenWait was interrupted because its worker stopped; it may have partly run. It was not restarted automatically.',
      });
      expect(await readFile(target, 'utf8')).toBe('ran\n');
    } finally {
      worker.shutdown();
      await done;
    }
  });

  it('replaces the largest results under the aggregate budget, and keeps them replaced across continue-as-new', async () => {
    const outcome = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, aggregateBudgetChars: 200_000, continueAsNewAfterEvents: 3 });
      const firstRun = (await session.workflow.describe()).runId;
      const request = {
        turnId: 'big',
        calls: [
          { id: 'a', name: 'BigOutput', input: { size: 60_000, char: 'a' } },
          { id: 'b', name: 'BigOutput', input: { size: 90_000, char: 'b' } },
          { id: 'c', name: 'BigOutput', input: { size: 80_000, char: 'c' } },
        ],
      };
      const result = await session.executeTurn(request);
      await waitFor(async () => (await session.workflow.describe()).runId, (runId) => runId !== firstRun, { what: 'continue-as-new' });
      const reread = await session.executeTurn(request);
      const artifact = result.results[1]?.budget?.artifact ?? '';
      return { result, reread, full: await harness.client.readArtifact(artifact) };
    });
    const [a, b, c] = outcome.result.results;
    expect(a?.modelContent).toHaveLength(60_000);
    expect(b?.modelContent.startsWith('<persisted-output>\nOutput too large (87.9 KB).')).toBe(true);
    expect(b?.budget).toMatchObject({ truncated: true, originalBytes: 90_000, policy: 'artifact' });
    expect(c?.modelContent).toHaveLength(80_000);
    expect(outcome.full).toHaveLength(90_000);
    expect(outcome.reread).toEqual(outcome.result);
    // The CLI reads the same artifact back.
    const { stdout } = await promisify(execFile)(process.execPath, [path.resolve('bin/switchyard.js'), 'artifact', b?.budget?.artifact ?? ''], {
      env: { ...process.env, SWITCHYARD_DATA_DIR: harness.dataDir },
      maxBuffer: 1024 * 1024,
    });
    expect(stdout).toBe(outcome.full);
  });
});
