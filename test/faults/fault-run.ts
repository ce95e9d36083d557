// Seeded fault injection against a real Temporal dev server: sessions run mixed turns with the real built-in tools
// (concurrent Read and Grep, Write then Edit of one file in one reply, Bash appending to a ledger, background Bash
// tasks read back with TaskOutput in a later turn) beside two stand-ins (Sleep, and LedgerAppend: an exclusive,
// non-idempotent append), with approvals answered or denied at random times, streaming turns and continue-as-new
// forced small, while a driver SIGKILLs the worker process at random moments and restarts it, and in some runs also
// restarts the Temporal server on its database file. Afterwards the run checks the invariants (docs/ARCHITECTURE.md) from the
// ledger files, the files written, the background tasks on disk and the histories. Everything random comes from one
// seed, printed with every violation, so a failing run can be replayed with `FAULT_SEED=<seed>`.
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
import { BackgroundTaskStore } from '../../src/tools/background/background-task-store.js';
import type { DevServer } from '../../src/server/dev-server.js';
import { scratchDir } from '../support/scratch.js';
import { killProcess, spawnWorkerProcess } from '../support/spawn-worker.js';
import { formatReplayReport, replayAllHistories } from '../support/replay-all.js';
import { inject } from 'vitest';
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
  /** Background tasks Bash reported started (each checked on disk at the end). */
  backgroundTasks: number;
  /** Calls by kind: how many, and how many succeeded. */
  byKind: Partial<Record<CallKind, { calls: number; succeeded: number }>>;
  approvalsGranted: number;
  approvalsDenied: number;
  interruptedCalls: number;
  runs: number;
  /** Every run of the scenario's server replayed against the workflow bundle at the end: histories, events. */
  replayedHistories: number;
  replayedEvents: number;
  durationMs: number;
  violations: string[];
}

/**
 * What a planned call is, for the checks: `ledger` (LedgerAppend), `bash` (a foreground Bash append) and `background`
 * (a background Bash whose command appends first) each append their token to a ledger file of their own and must do
 * so at most once; `write` and `edit` are a Write then an Edit of one file in the same reply; `taskOutput` reads a
 * background task started in an earlier turn.
 */
type CallKind = 'read' | 'grep' | 'sleep' | 'ledger' | 'bash' | 'background' | 'write' | 'edit' | 'taskOutput';

interface PlannedCall {
  call: ToolCall;
  kind: CallKind;
  /** The token a non-idempotent call appends, or a Write/Edit pair writes. */
  token?: string;
  /** The file of a Write/Edit pair. */
  file?: string;
  /** The task a TaskOutput call reads. */
  taskId?: string;
}

interface TurnRecord {
  sessionId: string;
  turnId: string;
  planned: PlannedCall[];
  results?: ToolResult[];
  streaming: boolean;
}

/** Ledger files (in the scenario directory) of the calls that must run at most once, by kind. */
const LEDGERS = { ledger: 'ledger.txt', bash: 'bash-ledger.txt', background: 'background-ledger.txt' } as const;
type LedgerKind = keyof typeof LEDGERS;
const isLedgerKind = (kind: CallKind): kind is LedgerKind => kind in LEDGERS;

/** The text Read and Grep find in the scenario directory. */
const NOTES = 'fault notes: the quick brown fox\nline two\n';

const between = (random: () => number, low: number, high: number): number =>
  low + Math.floor(random() * (high - low + 1));

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
  await writeFile(path.join(dir, 'notes.txt'), NOTES);
  await mkdir(path.join(dir, 'work'));
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
  const workerOptions = { tools: 'faults' as const };
  let worker: ChildProcess | undefined = await spawnWorkerProcess(workerTarget, workerOptions);
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
    backgroundTasks: 0,
    byKind: {},
    approvalsGranted: 0,
    approvalsDenied: 0,
    interruptedCalls: 0,
    runs: 0,
    replayedHistories: 0,
    replayedEvents: 0,
    durationMs: 0,
    violations,
  };
  const turns: TurnRecord[] = [];
  /** Approval decisions by `<sessionId>/<turnId>/<callId>`. */
  const decisions = new Map<string, 'allow' | 'deny'>();
  let faultsDone = false;
  let completedTurns = 0;
  const finalDeadline = (): number => Date.now() + 180_000;

  /** Background tasks started and not yet read, by session (a later turn reads one with TaskOutput). */
  const unreadTasks = new Map<string, string[]>();
  /** Every background task a Bash call reported started: its session and token. */
  const startedTasks = new Map<string, { sessionId: string; token: string }>();

  const planTurn = (sessionId: string, turnNumber: number): TurnRecord => {
    const turnId = `turn-${turnNumber}`;
    const planned: PlannedCall[] = [];
    const count = between(random, 1, 6);
    const unread = unreadTasks.get(sessionId) ?? [];
    if (unread.length > 0 && random() < 0.7) {
      const taskId = unread.shift() as string;
      const taskOutput = { task_id: taskId, block: true, timeout: between(random, 500, 4_000) };
      planned.push({
        kind: 'taskOutput',
        taskId,
        call: { id: 'out', name: 'TaskOutput', input: taskOutput },
      });
    }
    for (let index = 0; index < count; index += 1) {
      const id = `c${index}`;
      const token = `${sessionId}/${turnId}/${id}`;
      const pick = random();
      if (pick < 0.3) {
        planned.push({
          kind: 'ledger',
          token,
          call: {
            id,
            name: 'LedgerAppend',
            input: { file_path: LEDGERS.ledger, text: `${token}\n`, delay_ms: between(random, 0, 600) },
          },
        });
      } else if (pick < 0.4) {
        const command = `sleep 0.${between(random, 0, 5)}; printf '%s\\n' '${token}' >> ${LEDGERS.bash}`;
        planned.push({ kind: 'bash', token, call: { id, name: 'Bash', input: { command } } });
      } else if (pick < 0.48) {
        const command = `printf '%s\\n' '${token}' >> ${LEDGERS.background}; sleep ${between(random, 0, 3)}.${between(random, 0, 9)}; echo 'done ${token}'`;
        planned.push({
          kind: 'background',
          token,
          call: { id, name: 'Bash', input: { command, run_in_background: true } },
        });
      } else if (pick < 0.58) {
        // The sequence a model sends: Write a new file, then Edit it, in one reply.
        const file = `work/${sessionId}-${turnId}-${id}.txt`;
        planned.push({
          kind: 'write',
          token,
          file,
          call: { id, name: 'Write', input: { file_path: file, content: `alpha ${token}\n` } },
        });
        planned.push({
          kind: 'edit',
          token,
          file,
          call: { id: `${id}e`, name: 'Edit', input: { file_path: file, old_string: 'alpha', new_string: 'omega' } },
        });
      } else if (pick < 0.72) {
        planned.push({ kind: 'read', call: { id, name: 'Read', input: { file_path: 'notes.txt' } } });
      } else if (pick < 0.8) {
        planned.push({
          kind: 'grep',
          call: { id, name: 'Grep', input: { pattern: 'quick brown', path: 'notes.txt', output_mode: 'content' } },
        });
      } else {
        planned.push({
          kind: 'sleep',
          call: { id, name: 'Sleep', input: { ms: between(random, 20, 700), label: `${turnId}/${id}` } },
        });
      }
    }
    return { sessionId, turnId, planned, streaming: random() < 0.3 };
  };

  /** Notes the background tasks a turn started, for TaskOutput in a later turn and for the final check. */
  const noteStartedTasks = (turn: TurnRecord): void => {
    for (const [index, planned] of turn.planned.entries()) {
      const taskId = turn.results?.[index]?.backgroundTask?.taskId;
      if (planned.kind !== 'background' || taskId === undefined || planned.token === undefined) continue;
      startedTasks.set(taskId, { sessionId: turn.sessionId, token: planned.token });
      unreadTasks.set(turn.sessionId, [...(unreadTasks.get(turn.sessionId) ?? []), taskId]);
    }
  };

  const runTurn = async (session: SessionHandle, turn: TurnRecord): Promise<void> => {
    const calls = turn.planned.map((p) => p.call);
    const deadline = Date.now() + 600_000;
    if (!turn.streaming) {
      const result = await retrying(
        `turn ${turn.sessionId}/${turn.turnId}`,
        () => session.executeTurn({ turnId: turn.turnId, calls }),
        deadline,
      );
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
        () =>
          session.workflow.executeUpdate(awaitResultsUpdate, {
            args: [{ turnId: turn.turnId, since }],
            updateId: `${turn.turnId}:await:${since}`,
          }),
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
      noteStartedTasks(turn);
      completedTurns += 1;
    }
    const last: TurnRecord = {
      sessionId: session.sessionId,
      turnId: 'after-faults',
      planned: [{ kind: 'sleep', call: { id: 'ping', name: 'Sleep', input: { ms: 1, label: 'still here' } } }],
      streaming: false,
    };
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
        const pending: ApprovalRequest[] | undefined = await bounded(connection, 3_000, () =>
          session.pendingApprovals(),
        );
        for (const request of pending ?? []) {
          const key = `${session.sessionId}/${request.turnId}/${request.callId}`;
          const decision = decisions.get(key) ?? (random() < 0.8 ? 'allow' : 'deny');
          if (!decisions.has(key)) {
            decisions.set(key, decision);
            if (decision === 'allow') report.approvalsGranted += 1;
            else report.approvalsDenied += 1;
          }
          await bounded(connection, 5_000, () =>
            session.approve({
              requestId: request.requestId,
              decision,
              inputDigest: request.inputDigest,
              by: 'fault-driver',
            }),
          );
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
      worker = await spawnWorkerProcess(workerTarget, workerOptions);
      log(
        `[faults seed ${options.seed}] kill ${report.kills}/${options.kills}${report.serverRestarts > 0 ? `, server restarts ${report.serverRestarts}` : ''}, turns so far ${turns.length}`,
      );
    }
    faultsDone = true;
  })();

  try {
    await killer;
    const settled = await Promise.race([
      Promise.allSettled(sessionLoops),
      sleep(finalDeadline() - Date.now()).then(() => 'timeout' as const),
    ]);
    loopsSettled = true;
    if (settled === 'timeout') violate('sessions did not finish their turns within 180 s after the last kill');
    else
      for (const outcome of settled)
        if (outcome.status === 'rejected') violate(`a session loop failed: ${String(outcome.reason)}`);
    await approver;

    // Invariants, from the ledger files, the files written, the background tasks on disk and the histories.
    const appended = new Map<string, number>();
    for (const file of Object.values(LEDGERS)) {
      const lines = (await readFile(path.join(dir, file), 'utf8').catch(() => ''))
        .split('\n')
        .filter((line) => line !== '');
      report.ledgerAppends += lines.length;
      for (const line of lines) appended.set(line, (appended.get(line) ?? 0) + 1);
    }
    for (const [token, count] of appended) if (count > 1) violate(`non-idempotent call ${token} ran ${count} times`);
    const fileText = (file: string): Promise<string | undefined> =>
      readFile(path.join(dir, file), 'utf8').catch(() => undefined);
    for (const turn of turns) {
      if (turn.results === undefined) continue;
      report.turns += 1;
      if (turn.streaming) report.streamingTurns += 1;
      report.calls += turn.planned.length;
      const ids = turn.results.map((r) => r.callId);
      const expected = turn.planned.map((p) => p.call.id);
      if (JSON.stringify(ids) !== JSON.stringify(expected))
        violate(
          `turn ${turn.sessionId}/${turn.turnId} returned results for ${JSON.stringify(ids)}, expected ${JSON.stringify(expected)}`,
        );
      for (const [index, plannedCall] of turn.planned.entries()) {
        const result = turn.results[index];
        if (result === undefined) continue;
        if (result.errorCode === 'interrupted') report.interruptedCalls += 1;
        const tally = (report.byKind[plannedCall.kind] ??= { calls: 0, succeeded: 0 });
        tally.calls += 1;
        if (result.status === 'success') tally.succeeded += 1;
        const key = `${turn.sessionId}/${turn.turnId}/${plannedCall.call.id}`;
        const decision = decisions.get(key);
        if (decision === 'deny' && result.status === 'success')
          violate(`${key}: the approver denied it, yet it succeeded`);
        const { kind, token, file } = plannedCall;
        if (isLedgerKind(kind) && token !== undefined) {
          const count = appended.get(token) ?? 0;
          if (result.status === 'success' && count !== 1)
            violate(`${token} (${kind}) succeeded but appended ${count} times`);
          if (result.status === 'denied' && count !== 0)
            violate(`${token} (${kind}) was denied but appended ${count} times`);
          if (decision === 'deny' && count !== 0) violate(`${token} (${kind}): the approver denied it, yet it ran`);
        }
        if (kind === 'write' && file !== undefined) {
          const text = await fileText(file);
          if (result.status === 'success' && text !== `alpha ${token}\n` && text !== `omega ${token}\n`)
            violate(`${key}: Write succeeded but ${file} holds ${JSON.stringify(text)}`);
          if ((result.status === 'denied' || decision === 'deny') && text !== undefined)
            violate(`${key}: Write was denied but ${file} exists`);
        }
        if (kind === 'edit' && file !== undefined) {
          const text = await fileText(file);
          if (result.status === 'success' && text !== `omega ${token}\n`)
            violate(`${key}: Edit succeeded but ${file} holds ${JSON.stringify(text)}`);
          if ((result.status === 'denied' || decision === 'deny') && text === `omega ${token}\n`)
            violate(`${key}: Edit was denied but ${file} was edited`);
        }
        if (
          (kind === 'read' || kind === 'grep') &&
          result.status === 'success' &&
          !result.modelContent.includes('the quick brown fox')
        ) {
          violate(
            `${key}: ${kind} succeeded without the file's text: ${JSON.stringify(result.modelContent.slice(0, 200))}`,
          );
        }
        if (kind === 'taskOutput' && result.status === 'success' && plannedCall.taskId !== undefined) {
          const started = startedTasks.get(plannedCall.taskId);
          const content = result.modelContent;
          if (!content.includes(`Task ${plannedCall.taskId} `))
            violate(`${key}: TaskOutput's text has no status line: ${JSON.stringify(content.slice(-300))}`);
          if (
            content.includes('exited with code') &&
            !content.includes(`done ${started?.token ?? '?'}\nTask ${plannedCall.taskId} exited with code 0.`)
          ) {
            violate(
              `${key}: TaskOutput of an ended task lacks its output or code 0: ${JSON.stringify(content.slice(-300))}`,
            );
          }
        }
      }
    }
    for (const token of appended.keys()) {
      const [sessionId, turnId, callId] = token.split('/');
      const owner = turns.find((t) => t.sessionId === sessionId && t.turnId === turnId);
      if (owner?.planned.every((p) => p.call.id !== callId) !== false)
        violate(`ledger line ${token} belongs to no planned call`);
    }
    // Background tasks run detached from the worker: every one a Bash call reported started ran to its end, once.
    const store = new BackgroundTaskStore(dir);
    for (const [taskId, { sessionId, token }] of startedTasks) {
      report.backgroundTasks += 1;
      const record = await store.get(sessionId, taskId);
      if (record === undefined) {
        violate(`background task ${taskId} (${token}) is not on disk`);
        continue;
      }
      const state = await store.waitForEnd(record, { timeoutMs: 15_000 });
      const output = await readFile(store.outputPath(record), 'utf8').catch(() => '');
      if (state.status !== 'exited' || state.exitCode !== 0 || output !== `done ${token}\n`) {
        violate(
          `background task ${taskId} (${token}) ended ${JSON.stringify(state)} with output ${JSON.stringify(output)}`,
        );
      }
      if ((appended.get(token) ?? 0) !== 1)
        violate(`background task ${taskId} (${token}) appended ${appended.get(token) ?? 0} times`);
    }
    // Every run of every session: no WorkflowTaskFailed.
    for (const session of sessions) {
      for await (const execution of client.client.workflow.list({ query: `WorkflowId = '${session.sessionId}'` })) {
        report.runs += 1;
        const history = await client.client.workflow.getHandle(session.sessionId, execution.runId).fetchHistory();
        const failed = (history.events ?? []).filter((event) => event.workflowTaskFailedEventAttributes != null);
        for (const event of failed) {
          violate(
            `WorkflowTaskFailed in ${session.sessionId} run ${execution.runId}: ${event.workflowTaskFailedEventAttributes?.failure?.message ?? '?'}`,
          );
        }
        // Keep the evidence: the failing run's whole history, replayable with Worker.runReplayHistory.
        if (failed.length > 0) {
          await mkdir(resultsDir, { recursive: true });
          await writeFile(
            path.join(resultsDir, `history-${session.sessionId}-${execution.runId}.json`),
            JSON.stringify(history),
          );
        }
      }
    }
    // Every history the scenario made (all sessions, all runs) replays against the workflow bundle: a
    // nondeterminism that only shows on replay (a worker that picks a session up after a kill) is a violation.
    const replayed = await replayAllHistories({
      address: server.address,
      namespace: server.namespace,
      bundles: (type) => (type === 'toolSession' ? inject('workflowBundlePath') : undefined),
    });
    report.replayedHistories = replayed.histories;
    report.replayedEvents = replayed.events;
    for (const failure of replayed.failures) violate(`history does not replay: ${failure}`);
    log(formatReplayReport(replayed, `faults seed ${options.seed}`));
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
    `(${report.streamingTurns} streaming), ${report.calls} calls, ${report.ledgerAppends} ledger appends, ${report.backgroundTasks} background tasks, ` +
    `${report.approvalsGranted} approvals granted / ${report.approvalsDenied} denied, ${report.interruptedCalls} calls interrupted by a lost worker, ` +
    `${report.runs} workflow runs (${report.replayedHistories} histories, ${report.replayedEvents} events replayed), ${(report.durationMs / 1000).toFixed(0)} s, ${report.violations.length} violations; ` +
    `succeeded/calls by kind: ${Object.entries(report.byKind)
      .map(([kind, tally]) => `${kind} ${tally.succeeded}/${tally.calls}`)
      .join(', ')}`
  );
}
