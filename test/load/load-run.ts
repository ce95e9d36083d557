// Load scenarios against a real server with one worker process: many sessions each waiting for an approval (found
// through one visibility query, approved by a script, drained), and a sustained mixed load for a fixed time.
// `npm run test:load` runs the full sizes; `test/integration/load.test.ts` a CI-sized slice. Figures: RELIABILITY.md.
import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { ApprovalRequest } from '../../src/contracts/approval.js';
import { pendingApprovalsSearchAttribute } from '../../src/contracts/messages.js';
import type { Harness } from '../support/harness.js';
import { uniqueName } from '../support/harness.js';
import { killProcess, spawnWorkerProcess } from '../support/spawn-worker.js';

/** Resident set size of a process in MiB, from /proc (Linux). */
export async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match === null ? Number.NaN : Number(match[1]) / 1024;
}

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/** Runs `body` over `items` with at most `limit` at a time. */
async function pool<T>(items: readonly T[], limit: number, body: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const item = items[next] as T;
        next += 1;
        await body(item);
      }
    }),
  );
}

export interface PendingDrainReport {
  sessions: number;
  /** Start of all sessions until every one shows up in the visibility query. */
  visibleMs: number;
  /** First approval signal until the last turn returned. */
  drainMs: number;
  workerRssStartMiB: number;
  workerRssPeakMiB: number;
  allCompleted: boolean;
}

/**
 * `sessions` sessions on one worker process, each with one Bash-like exclusive call (`Edit`) waiting for approval;
 * all found with one visibility query on `SwitchyardPendingApprovals > 0`, approved by this script, drained.
 */
export async function pendingApprovalDrain(
  harness: Harness,
  options: { sessions: number; cwd: string },
): Promise<PendingDrainReport> {
  const worker: ChildProcess = await spawnWorkerProcess(harness);
  const pid = worker.pid as number;
  try {
    const workerRssStartMiB = await rssMiB(pid);
    let workerRssPeakMiB = workerRssStartMiB;
    const sampler = setInterval(() => {
      rssMiB(pid).then(
        (mib) => {
          workerRssPeakMiB = Math.max(workerRssPeakMiB, mib);
        },
        () => undefined,
      );
    }, 500);
    const prefix = uniqueName('drain');
    const started = Date.now();
    const sessions: SessionHandle[] = [];
    const turns: Promise<unknown>[] = [];
    await pool(
      Array.from({ length: options.sessions }, (_, index) => index),
      16,
      async (index) => {
        const session = await harness.client.startSession(`${prefix}-${index}`, { cwd: options.cwd });
        sessions.push(session);
        turns.push(
          session.executeTurn({
            turnId: 't',
            calls: [
              {
                id: 'e',
                name: 'FakeEdit',
                input: { file_path: path.join(options.cwd, `drain-${index}.txt`), text: 'approved\n' },
              },
            ],
          }),
        );
      },
    );
    // One visibility query finds every waiting session of this run.
    const query = `${pendingApprovalsSearchAttribute} > 0 AND TaskQueue = '${harness.taskQueue}'`;
    for (;;) {
      const count = (await harness.client.client.workflow.count(query)).count;
      if (count >= options.sessions) break;
      if (Date.now() - started > 600_000)
        throw new Error(`only ${count} of ${options.sessions} sessions visible as waiting after 600 s`);
      await sleep(250);
    }
    const visibleMs = Date.now() - started;
    const drainStarted = Date.now();
    const ids: string[] = [];
    for await (const execution of harness.client.client.workflow.list({ query })) ids.push(execution.workflowId);
    await pool(ids, 16, async (id) => {
      const session = harness.client.session(id);
      const [request] = (await session.pendingApprovals()) as [ApprovalRequest];
      await session.approve({
        requestId: request.requestId,
        decision: 'allow',
        inputDigest: request.inputDigest,
        by: 'load-script',
      });
    });
    const outcomes = await Promise.allSettled(turns);
    const drainMs = Date.now() - drainStarted;
    clearInterval(sampler);
    workerRssPeakMiB = Math.max(workerRssPeakMiB, await rssMiB(pid));
    const allCompleted = outcomes.every(
      (outcome) =>
        outcome.status === 'fulfilled' &&
        (outcome.value as { results: { status: string }[] }).results[0]?.status === 'success',
    );
    return { sessions: options.sessions, visibleMs, drainMs, workerRssStartMiB, workerRssPeakMiB, allCompleted };
  } finally {
    await killProcess(worker);
  }
}

export interface SustainedLoadReport {
  sessions: number;
  seconds: number;
  turns: number;
  calls: number;
  callsPerSecond: number;
  errors: number;
  p50TurnMs: number;
  p95TurnMs: number;
  /** Worker RSS sampled every 5 s: first, last and the least-squares slope over the second half (MiB per minute). */
  workerRssStartMiB: number;
  workerRssEndMiB: number;
  rssSlopeMiBPerMinute: number;
}

/**
 * `sessions` sessions run turns back to back for `seconds`: each turn 1–4 concurrent reads (`Sleep` 5–50 ms, `Read`
 * of a small file) and sometimes an exclusive append, in `bypassPermissions`. Reports throughput, errors, latency
 * percentiles and the worker's memory trend.
 */
export async function sustainedLoad(
  harness: Harness,
  options: { sessions: number; seconds: number; cwd: string },
): Promise<SustainedLoadReport> {
  const worker: ChildProcess = await spawnWorkerProcess(harness);
  const pid = worker.pid as number;
  const samples: { at: number; mib: number }[] = [];
  try {
    const started = Date.now();
    samples.push({ at: 0, mib: await rssMiB(pid) });
    const sampler = setInterval(() => {
      rssMiB(pid).then(
        (mib) => samples.push({ at: Date.now() - started, mib }),
        () => undefined,
      );
    }, 5_000);
    const deadline = started + options.seconds * 1000;
    const latencies: number[] = [];
    let calls = 0;
    let errors = 0;
    const prefix = uniqueName('load');
    await Promise.all(
      Array.from({ length: options.sessions }, async (_, index) => {
        const session = await harness.client.startSession(`${prefix}-${index}`, {
          cwd: options.cwd,
          permissionMode: 'bypassPermissions',
        });
        for (let turnNumber = 0; Date.now() < deadline; turnNumber += 1) {
          const turnCalls = Array.from({ length: 1 + (turnNumber % 4) }, (_, callIndex) => ({
            id: `r${callIndex}`,
            name: 'Sleep',
            input: { ms: 5 + ((turnNumber * 7 + callIndex * 13) % 46) },
          }));
          if (turnNumber % 5 === 4)
            turnCalls.push({
              id: 'w',
              name: 'FakeEdit',
              input: { file_path: path.join(options.cwd, `load-${index}.txt`), text: `${turnNumber}\n` },
            } as never);
          const turnStarted = Date.now();
          try {
            const result = await session.executeTurn({ turnId: `t${turnNumber}`, calls: turnCalls });
            latencies.push(Date.now() - turnStarted);
            calls += result.results.length;
            errors += result.results.filter((r) => r.status !== 'success').length;
          } catch {
            errors += turnCalls.length;
          }
        }
      }),
    );
    clearInterval(sampler);
    samples.push({ at: Date.now() - started, mib: await rssMiB(pid) });
    const elapsedSeconds = (Date.now() - started) / 1000;
    const secondHalf = samples.filter((sample) => sample.at >= (options.seconds * 1000) / 2);
    return {
      sessions: options.sessions,
      seconds: options.seconds,
      turns: latencies.length,
      calls,
      callsPerSecond: calls / elapsedSeconds,
      errors,
      p50TurnMs: percentile(latencies, 50),
      p95TurnMs: percentile(latencies, 95),
      workerRssStartMiB: samples[0]?.mib ?? Number.NaN,
      workerRssEndMiB: samples.at(-1)?.mib ?? Number.NaN,
      rssSlopeMiBPerMinute: slopePerMinute(secondHalf),
    };
  } finally {
    await killProcess(worker);
  }
}

/** Least-squares slope of RSS over time, in MiB per minute (NaN with fewer than three samples). */
export function slopePerMinute(samples: readonly { at: number; mib: number }[]): number {
  if (samples.length < 3) return Number.NaN;
  const n = samples.length;
  const meanX = samples.reduce((sum, s) => sum + s.at, 0) / n;
  const meanY = samples.reduce((sum, s) => sum + s.mib, 0) / n;
  const covariance = samples.reduce((sum, s) => sum + (s.at - meanX) * (s.mib - meanY), 0);
  const variance = samples.reduce((sum, s) => sum + (s.at - meanX) ** 2, 0);
  return variance === 0 ? 0 : (covariance / variance) * 60_000;
}

export function formatDrain(report: PendingDrainReport): string {
  return `${report.sessions} sessions waiting: all visible in ${(report.visibleMs / 1000).toFixed(1)} s, drained in ${(report.drainMs / 1000).toFixed(1)} s after the first approval, worker RSS ${report.workerRssStartMiB.toFixed(0)} → peak ${report.workerRssPeakMiB.toFixed(0)} MiB, all completed: ${report.allCompleted}`;
}

export function formatSustained(report: SustainedLoadReport): string {
  return `${report.sessions} sessions for ${report.seconds} s: ${report.turns} turns, ${report.calls} calls (${report.callsPerSecond.toFixed(1)}/s), ${report.errors} errors, turn p50 ${report.p50TurnMs} ms / p95 ${report.p95TurnMs} ms, worker RSS ${report.workerRssStartMiB.toFixed(0)} → ${report.workerRssEndMiB.toFixed(0)} MiB (second-half slope ${report.rssSlopeMiBPerMinute.toFixed(2)} MiB/min)`;
}
