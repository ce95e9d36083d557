// Seeded fault injection against a real Temporal dev server: sessions run mixed turns (concurrent reads, exclusive
// non-idempotent ledger appends, approvals answered or denied at random times, streaming turns, continue-as-new
// forced small) while a driver SIGKILLs the worker process at random moments and restarts it, and in some runs
// also restarts the Temporal server on its database file. Afterwards the run checks DESIGN.md §2's invariants from
// the ledger file and the histories. Everything random comes from one seed, printed with every violation, so a
// failing run can be replayed with `FAULT_SEED=<seed>`.
import type { ChildProcess } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { SwitchyardClient } from '../../src/client/switchyard-client.js';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { ApprovalRequest } from '../../src/contracts/approval.js';
import { awaitResultsUpdate } from '../../src/contracts/messages.js';
import type { ToolCall } from '../../src/contracts/tool-call.js';
import type { ToolResult } from '../../src/contracts/tool-result.js';
import { startDevServer } from '../../src/server/dev-server.js';
import type { DevServer } from '../../src/server/dev-server.js';
import { scratchDir } from '../support/scratch.js';
import { killProcess, spawnWorkerProcess } from '../support/spawn-worker.js';
import { freePort } from '../support/free-port.js';

/** Where a failing run's history is kept (ignored by git). */
const resultsDir = fileURLToPath(new URL('./results', import.meta.url));

/** mulberry32: small, fast and good enough to make a scenario reproducible from its seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface FaultRunOptions {
  seed: number;
  /** Worker SIGKILLs to inject before the sessions are allowed to finish. */
  kills: number;
  /** Sessions running turns back to back at the same time. */
  sessions: number;
  /** Chance, per kill, that the Temporal server is restarted too (0 disables it). */
  serverRestartChance: number;
  /** Progress lines (one per kill); default silent. */
  log?: (line: string) => void;
}

export interface FaultRunReport {
  seed: number;
  kills: number;
  serverRestarts: number;
  turns: number;
  streamingTurns: number;
  calls: number;
  ledgerAppends: number;
  approvalsGranted: number;
  approvalsDenied: number;
  interruptedCalls: number;
  runs: number;
  durationMs: number;
  violations: string[];
}

interface PlannedCall {
  call: ToolCall;
  /** The ledger token of an Edit call; absent for reads. */
  token?: string;
}

interface TurnRecord {
  sessionId: string;
  turnId: string;
  planned: PlannedCall[];
  results?: ToolResult[];
  streaming: boolean;
}

const between = (random: () => number, low: number, high: number): number => low + Math.floor(random() * (high - low + 1));


/** Retries `body` while the server or the worker is away; updates and signals are idempotent by their ids. */
async function retrying<T>(what: string, body: () => Promise<T>, deadline: number): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await body();
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${what} still failing at the deadline: ${String(error)}`);
      await sleep(Math.min(2_000, 200 * attempt));
    }
  }
}

/**
 * Runs `call` with a gRPC deadline: resolves with its answer, or undefined when it failed or no worker answered in
 * time (queries need a worker). The deadline ends the call itself, so nothing of it is left to retry after the
 * connection closes (a call left running would throw "Channel has been shut down" from a timer).
 */
async function bounded<T>(connection: Connection, timeoutMs: number, call: () => Promise<T>): Promise<T | undefined> {
  return connection.withDeadline(Date.now() + timeoutMs, call).catch(() => undefined);
}

export async function runFaultScenario(options: FaultRunOptions): Promise<FaultRunReport> {
  const started = Date.now();
  const random = seededRandom(options.seed);
  const log = options.log ?? (() => {});
  const dir = await scratchDir('switchyard-faults-');
  const ledger = path.join(dir, 'ledger.txt');
  const dbFilename = path.join(dir, 'temporal.db');
  const port = await freePort();
  const taskQueue = `faults-${options.seed}`;
  const violations: string[] = [];
  const violate = (message: string): void => {
    violations.push(`[seed ${options.seed}] ${message}`);
  };

  let server: DevServer = await startDevServer({ port, uiPort: await freePort(), dbFilename });
  const address = server.address;
  const namespace = server.namespace;
  const workerTarget = { address, namespace, taskQueue, dataDir: dir };
  let worker: ChildProcess | undefined = await spawnWorkerProcess(workerTarget);
  const connection = await Connection.connect({ address });
  const client = new SwitchyardClient({ client: new Client({ connection, namespace }), taskQueue });

  const report: FaultRunReport = {
    seed: options.seed,
    kills: 0,
    serverRestarts: 0,
    turns: 0,
    streamingTurns: 0,
    calls: 0,
    ledgerAppends: 0,
    approvalsGranted: 0,
    approvalsDenied: 0,
    interruptedCalls: 0,
    runs: 0,
    durationMs: 0,
    violations,
  };
  const turns: TurnRecord[] = [];
  /** Approval decisions by `<sessionId>/<turnId>/<callId>`. */
  const decisions = new Map<string, 'allow' | 'deny'>();
  let faultsDone = false;
  let completedTurns = 0;
  const finalDeadline = (): number => Date.now() + 180_000;

  const planTurn = (sessionId: string, turnNumber: number): TurnRecord => {
    const turnId = `turn-${turnNumber}`;
    const planned: PlannedCall[] = [];
    const count = between(random, 1, 6);
    for (let index = 0; index < count; index += 1) {
      const id = `c${index}`;
      if (random() < 0.4) {
        const token = `${sessionId}/${turnId}/${id}`;
        planned.push({ token, call: { id, name: 'Edit', input: { file_path: ledger, text: `${token}\n`, delay_ms: between(random, 0, 600) } } });
      } else {
        planned.push({ call: { id, name: 'Sleep', input: { ms: between(random, 20, 700), label: `${turnId}/${id}` } } });
      }
    }
    return { sessionId, turnId, planned, streaming: random() < 0.3 };
  };

  const runTurn = async (session: SessionHandle, turn: TurnRecord): Promise<void> => {
    const calls = turn.planned.map((p) => p.call);
    const deadline = Date.now() + 600_000;
    if (!turn.streaming) {
      const result = await retrying(`turn ${turn.sessionId}/${turn.turnId}`, () => session.executeTurn({ turnId: turn.turnId, calls }), deadline);
      turn.results = result.results;
      return;
    }
    const stream = session.streamTurn(turn.turnId);
    for (const call of calls) {
      await retrying(`add ${call.id} to ${turn.sessionId}/${turn.turnId}`, () => stream.add(call), deadline);
      await sleep(between(random, 0, 150));
    }
    await retrying(`end ${turn.sessionId}/${turn.turnId}`, () => stream.end(), deadline);
    // Results arrive a page per `awaitResults` update; each page is retried on its own and resumes by index.
    const results: ToolResult[] = [];
    for (;;) {
      const since = results.length;
      const page = await retrying(
        `results of ${turn.sessionId}/${turn.turnId} from ${since}`,
        () => session.workflow.executeUpdate(awaitResultsUpdate, { args: [{ turnId: turn.turnId, since }], updateId: `${turn.turnId}:await:${since}` }),
        deadline,
      );
      results.push(...page.results);
      if (page.done) break;
    }
    turn.results = results;
  };

  const sessions: SessionHandle[] = [];
  for (let index = 0; index < options.sessions; index += 1) {
    const sessionId = `faults-${options.seed}-s${index}`;
    const mode = random() < 0.6 ? 'default' : 'bypassPermissions';
    sessions.push(
      await client.startSession(sessionId, {
        cwd: dir,
        permissionMode: mode,
        heartbeatTimeoutMs: 1_000,
        continueAsNewAfterEvents: between(random, 40, 120),
      }),
    );
  }

  // Each session runs turns back to back until the faults are done, then one more to show it still answers.
  const sessionLoops = sessions.map(async (session) => {
    let turnNumber = 0;
    while (!faultsDone) {
      turnNumber += 1;
      const turn = planTurn(session.sessionId, turnNumber);
      turns.push(turn);
      await runTurn(session, turn);
      completedTurns += 1;
    }
    const last: TurnRecord = { sessionId: session.sessionId, turnId: 'after-faults', planned: [{ call: { id: 'ping', name: 'Sleep', input: { ms: 1, label: 'still here' } } }], streaming: false };
    turns.push(last);
    await runTurn(session, last);
  });

  let loopsSettled = false;
  const sessionLoopsPending = (): boolean => !loopsSettled;

  // Answers approvals at random moments: mostly allow, sometimes deny, always with the request's own digest.
  const approver = (async () => {
    while (!faultsDone || sessionLoopsPending()) {
      await sleep(between(random, 50, 900));
      for (const session of sessions) {
        const pending: ApprovalRequest[] | undefined = await bounded(connection, 3_000, () => session.pendingApprovals());
        for (const request of pending ?? []) {
          const key = `${session.sessionId}/${request.turnId}/${request.callId}`;
          const decision = decisions.get(key) ?? (random() < 0.8 ? 'allow' : 'deny');
          if (!decisions.has(key)) {
            decisions.set(key, decision);
            if (decision === 'allow') report.approvalsGranted += 1;
            else report.approvalsDenied += 1;
          }
          await bounded(connection, 5_000, () => session.approve({ requestId: request.requestId, decision, inputDigest: request.inputDigest, by: 'fault-driver' }));
        }
      }
    }
  })();

  // The killer: SIGKILL the worker at random moments, sometimes restart the server too, then bring it back.
  const killer = (async () => {
    while (report.kills < options.kills) {
      // Let the sessions move between kills (a turn completes, or 20 s pass), then strike at a random moment.
      const turnsBefore = completedTurns;
      const patience = Date.now() + 20_000;
      while (completedTurns === turnsBefore && Date.now() < patience) await sleep(100);
      await sleep(between(random, 0, 2_000));
      await killProcess(worker as ChildProcess);
      worker = undefined;
      report.kills += 1;
      if (random() < options.serverRestartChance) {
        await server.stop();
        await sleep(between(random, 0, 500));
        server = await startDevServer({ port, uiPort: await freePort(), dbFilename });
        report.serverRestarts += 1;
      }
      await sleep(between(random, 0, 1_500));
      worker = await spawnWorkerProcess(workerTarget);
      log(`[faults seed ${options.seed}] kill ${report.kills}/${options.kills}${report.serverRestarts > 0 ? `, server restarts ${report.serverRestarts}` : ''}, turns so far ${turns.length}`);
    }
    faultsDone = true;
  })();

  try {
    await killer;
    const settled = await Promise.race([Promise.allSettled(sessionLoops), sleep(finalDeadline() - Date.now()).then(() => 'timeout' as const)]);
    loopsSettled = true;
    if (settled === 'timeout') violate('sessions did not finish their turns within 180 s after the last kill');
    else for (const outcome of settled) if (outcome.status === 'rejected') violate(`a session loop failed: ${String(outcome.reason)}`);
    await approver;

    // Invariants, from the ledger and the histories.
    const ledgerLines = (await readFile(ledger, 'utf8').catch(() => '')).split('\n').filter((line) => line !== '');
    report.ledgerAppends = ledgerLines.length;
    const appended = new Map<string, number>();
    for (const line of ledgerLines) appended.set(line, (appended.get(line) ?? 0) + 1);
    for (const [token, count] of appended) if (count > 1) violate(`non-idempotent call ${token} ran ${count} times`);
    for (const turn of turns) {
      if (turn.results === undefined) continue;
      report.turns += 1;
      if (turn.streaming) report.streamingTurns += 1;
      report.calls += turn.planned.length;
      const ids = turn.results.map((r) => r.callId);
      const expected = turn.planned.map((p) => p.call.id);
      if (JSON.stringify(ids) !== JSON.stringify(expected)) violate(`turn ${turn.sessionId}/${turn.turnId} returned results for ${JSON.stringify(ids)}, expected ${JSON.stringify(expected)}`);
      for (const [index, plannedCall] of turn.planned.entries()) {
        const result = turn.results[index];
        if (result === undefined) continue;
        if (result.errorCode === 'interrupted') report.interruptedCalls += 1;
        if (plannedCall.token === undefined) continue;
        const count = appended.get(plannedCall.token) ?? 0;
        const decision = decisions.get(plannedCall.token);
        if (result.status === 'success' && count !== 1) violate(`${plannedCall.token} succeeded but appended ${count} times`);
        if (result.status === 'denied' && count !== 0) violate(`${plannedCall.token} was denied but appended ${count} times`);
        if (decision === 'deny' && count !== 0) violate(`${plannedCall.token}: the approver denied it, yet it ran`);
        if (decision === 'deny' && result.status === 'success') violate(`${plannedCall.token}: the approver denied it, yet it succeeded`);
      }
    }
    for (const token of appended.keys()) {
      const [sessionId, turnId, callId] = token.split('/');
      const owner = turns.find((t) => t.sessionId === sessionId && t.turnId === turnId);
      if (owner?.planned.every((p) => p.call.id !== callId) !== false) violate(`ledger line ${token} belongs to no planned call`);
    }
    // Every run of every session: no WorkflowTaskFailed.
    for (const session of sessions) {
      for await (const execution of client.client.workflow.list({ query: `WorkflowId = '${session.sessionId}'` })) {
        report.runs += 1;
        const history = await client.client.workflow.getHandle(session.sessionId, execution.runId).fetchHistory();
        const failed = (history.events ?? []).filter((event) => event.workflowTaskFailedEventAttributes != null);
        for (const event of failed) {
          violate(`WorkflowTaskFailed in ${session.sessionId} run ${execution.runId}: ${event.workflowTaskFailedEventAttributes?.failure?.message ?? '?'}`);
        }
        // Keep the evidence: the failing run's whole history, replayable with Worker.runReplayHistory.
        if (failed.length > 0) {
          await mkdir(resultsDir, { recursive: true });
          await writeFile(path.join(resultsDir, `history-${session.sessionId}-${execution.runId}.json`), JSON.stringify(history));
        }
      }
    }
  } finally {
    faultsDone = true;
    loopsSettled = true;
    if (worker !== undefined) await killProcess(worker);
    await connection.close();
    await server.stop();
  }
  report.durationMs = Date.now() - started;
  return report;
}

/** One line of figures for RELIABILITY.md. */
export function formatReport(report: FaultRunReport): string {
  return (
    `seed ${report.seed}: ${report.kills} worker kills, ${report.serverRestarts} server restarts, ${report.turns} turns ` +
    `(${report.streamingTurns} streaming), ${report.calls} calls, ${report.ledgerAppends} ledger appends, ` +
    `${report.approvalsGranted} approvals granted / ${report.approvalsDenied} denied, ${report.interruptedCalls} calls interrupted by a lost worker, ` +
    `${report.runs} workflow runs, ${(report.durationMs / 1000).toFixed(0)} s, ${report.violations.length} violations`
  );
}
