import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import { conditionTools } from '../support/condition-tools.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { killProcess, spawnWorkerProcess } from '../support/spawn-worker.js';
import { testTools } from '../support/test-tools.js';
import { waitFor } from '../support/wait-for.js';

/** The heartbeat details of the session's first pending activity, decoded. */
async function heartbeatOf(session: SessionHandle): Promise<{ activeMs: number; queuedMs: number } | undefined> {
  const description = await session.workflow.describe();
  const data = description.raw.pendingActivities?.[0]?.heartbeatDetails?.payloads?.[0]?.data;
  return data === undefined || data === null
    ? undefined
    : (JSON.parse(Buffer.from(data).toString()) as { activeMs: number; queuedMs: number });
}

describe('execution: deadlines, admission, lost workers, budgets (real server, real processes)', () => {
  let harness: Harness;
  let cwd: string;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    cwd = await scratchDir();
    harness = await createHarness({ tools: [...testTools(), ...conditionTools()], defaultCwd: cwd });
  });
  afterAll(async () => {
    await Promise.all(children.map(killProcess));
    await harness.close();
  });

  /** A worker in its own process, so it can be SIGKILLed mid-call. */
  async function spawnWorker(): Promise<ChildProcess> {
    const child = await spawnWorkerProcess(harness);
    children.push(child);
    return child;
  }

  it('does not count time waiting at an admission gate: a call that waits longer than its deadline still succeeds', async () => {
    const result = await harness.withWorker(
      async () => {
        const session = await harness.startSession({ cwd });
        return session.executeTurn({
          turnId: 't',
          calls: ['a', 'b', 'c', 'd'].map((label) => ({
            id: label,
            name: 'GatedWork',
            input: { label, work_ms: 800, timeout_ms: 2_000 },
          })),
        });
      },
      { admissionGates: { model: 1 } },
    );
    expect(result.results.map((r) => [r.status, r.modelContent])).toEqual(
      ['a', 'b', 'c', 'd'].map((label) => ['success', `${label} done`]),
    );
    // One permit, four 800 ms jobs: the last waited while three others held the permit, about 2,400 ms, longer
    // than its whole 2,000 ms deadline (load only makes the wait longer). Its own 800 ms of work leaves 1,200 ms
    // of the deadline as margin. (These read-only calls start as local activities and move to regular ones after the
    // 1 s local budget; the wait of both attempts counts.)
    const longestWait = Math.max(...result.results.map((r) => r.timings.queuedMs));
    expect(longestWait).toBeGreaterThan(2_000);
  });

  it('resumes an idempotent call after its worker is SIGKILLed, within its original budget', async () => {
    // Over the 30 s up to which read-only calls run as local activities: this call is a regular, heartbeating activity.
    const budgetMs = 40_000;
    const release = path.join(cwd, 'resume.release');
    const session = await harness.startSession({ cwd, heartbeatTimeoutMs: 2_000 });
    const first = await spawnWorker();
    const turn = session.executeTurn({
      turnId: 't',
      calls: [{ id: 'r', name: 'ResumableUntilReleased', input: { release_file: release, timeout_ms: budgetMs } }],
    });
    // The call runs until the test creates the release file, so the kill lands mid-call however slow the machine.
    const beforeKill = await waitFor(
      () => heartbeatOf(session),
      (beat) => (beat?.activeMs ?? 0) >= 1_500,
      { what: 'a heartbeat past 1.5 s' },
    );
    await killProcess(first);
    const { worker, done } = await harness.startWorker();
    try {
      // The retry runs on the new worker (it heartbeats as attempt 2); only then may the call finish.
      await waitFor(
        async () => (await session.workflow.describe()).raw.pendingActivities?.[0]?.attempt ?? 0,
        (attempt) => attempt >= 2,
        {
          what: 'the retry to start',
          timeoutMs: 60_000,
        },
      );
      await writeFile(release, '');
      const result = await turn;
      expect(result.results[0]?.status).toBe('success');
      const report = JSON.parse(result.results[0]?.modelContent ?? '{}') as {
        attempt: number;
        startedWithRemainingMs: number;
        activeMs: number;
      };
      expect(report.attempt).toBe(2);
      // The retry started from the last heartbeat's elapsed time (at least the 1.5 s seen before the kill), not
      // from a fresh budget, and counted the first attempt's time in its own.
      expect(report.startedWithRemainingMs).toBeLessThanOrEqual(budgetMs - (beforeKill?.activeMs ?? 0));
      expect(report.activeMs).toBeGreaterThanOrEqual(beforeKill?.activeMs ?? Number.POSITIVE_INFINITY);
      expect(report.activeMs).toBeLessThanOrEqual(budgetMs);
    } finally {
      worker.shutdown();
      await done;
    }
  });

  it('never restarts a non-idempotent call after its worker dies, and says it was interrupted', async () => {
    const target = path.join(cwd, 'append-once.txt');
    const session = await harness.startSession({ cwd, heartbeatTimeoutMs: 2_000, permissionMode: 'bypassPermissions' });
    const first = await spawnWorker();
    const turn = session.executeTurn({
      turnId: 't',
      calls: [{ id: 'a', name: 'AppendThenWait', input: { file_path: target, wait_ms: 60_000 } }],
    });
    await waitFor(
      () => readFile(target, 'utf8').catch(() => ''),
      (text) => text === 'ran\n',
      { what: 'the append' },
    );
    await killProcess(first);
    const { worker, done } = await harness.startWorker();
    try {
      const result = await turn;
      expect(result.results[0]).toMatchObject({
        status: 'error',
        errorCode: 'interrupted',
        modelContent:
          'AppendThenWait was interrupted because its worker stopped; it may have partly run. It was not restarted automatically.',
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
      await waitFor(
        async () => (await session.workflow.describe()).runId,
        (runId) => runId !== firstRun,
        { what: 'continue-as-new' },
      );
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
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [path.resolve('bin/switchyard.js'), 'artifact', b?.budget?.artifact ?? ''],
      {
        env: { ...process.env, SWITCHYARD_DATA_DIR: harness.dataDir },
        maxBuffer: 1024 * 1024,
      },
    );
    expect(stdout).toBe(outcome.full);
  });
});
