// `npm run bench`: Switchyard side by side with two hand-written Temporal sessions (regular activities, local
// activities) and with plain `Promise.all`, on one dev server (a second one, without eager activity dispatch, for the
// mutating calls). Writes bench/results/<scenario>.json, bench/results/latency.svg and BENCHMARKS.md. Only same-run
// ratios count: within a round the contenders alternate, and every figure that matters is the median, with its
// interquartile range, of the rounds' ratios (bench/stats.ts `pairedRatio`); absolute times are context.
// Not a test: nothing here asserts a timing. `BENCH_ROUNDS` (default 30), `BENCH_LATENCY_ROUNDS` (default four times
// `BENCH_ROUNDS`: the rounds of the 1, 4 and 16 Reads scenarios, whose one-Read median moved by ±0.05 between runs of the
// same commit at 30), `BENCH_THROUGHPUT_SECONDS` (default 4, one
// window) and `BENCH_THROUGHPUT_PAIRS` (default 3 alternating windows per contender and size) size the run. Switchyard runs twice: as shipped (short read-only calls as local activities) and with
// `localReadOnlyCalls: false` (every call a regular activity, as when tool workers are separate), so the lever shows.
// `BENCH_WAITING_SESSIONS` (default 200) sizes the memory scenario. A run of 10 rounds or more is appended to the
// ledger bench/results/runs.json (bench/ledger.ts); a smaller one is a trial and is not.
// `NODE_OPTIONS=--expose-gc npm run bench` lets the memory scenario collect garbage before each reading.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import type { WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { serverSentEvents } from '../src/client/model-formats/server-sent-events.js';
import { SwitchyardClient } from '../src/client/switchyard-client.js';
import type { SessionHandle } from '../src/client/switchyard-client.js';
import type { SessionOptions } from '../src/contracts/session.js';
import { switchyardDataConverter } from '../src/config/data-converter.js';
import { startConsole } from '../src/console/console-server.js';
import { grpcCompressionFor } from '../src/config/grpc-compression.js';
import { startDevServer } from '../src/server/dev-server.js';
import { createLogger } from '../src/worker/logger.js';
import { installTemporalRuntime } from '../src/worker/runtime.js';
import { MIN_LEDGER_ROUNDS, gitState, recordRun } from './ledger.js';
import { readmeBenchSummary, withReadmeSummary } from './readme-summary.js';
import { rawActivities } from './raw/activities.js';
import { runCallsUpdate, stopSignal } from './raw/messages.js';
import { TEN_READS_ONE_LINE, writeReport } from './report.js';
import type {
  BenchReport,
  ContenderRow,
  HistoryBreakdownRow,
  HistoryRow,
  PairRow,
  ThroughputRatioRow,
  ThroughputRow,
  WaitingMemory,
} from './report.js';
import { startServerWithoutEagerDispatch } from './servers.js';
import { pairedRatio, round, stats } from './stats.js';
import { benchWorker, slowReadTool, stampStarts, stampTool } from './tools.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
/**
 * Rounds of the Reads-per-turn scenarios. Their ratios are the headline, and the median of a few dozen pairs is a
 * coarse one: at 30 pairs, the one-Read median of three runs of the same commit read 0.97, 0.96 and 1.07 (each pair's
 * ratio spreads over about ±0.15 on this machine). Four times the pairs halve that spread; they cost about a minute.
 */
const LATENCY_ROUNDS = Number(process.env.BENCH_LATENCY_ROUNDS ?? ROUNDS * 4);
const THROUGHPUT_SECONDS = Number(process.env.BENCH_THROUGHPUT_SECONDS ?? 4);
const THROUGHPUT_PAIRS = Number(process.env.BENCH_THROUGHPUT_PAIRS ?? 3);
const WAITING_SESSIONS = Number(process.env.BENCH_WAITING_SESSIONS ?? 200);
const here = path.dirname(fileURLToPath(import.meta.url));
// The code this run loads: the commit, and whether src/workflows or src/activities differ from it (for the ledger).
const git = await gitState(path.join(here, '..'));
const progress = (line: string): void => {
  process.stderr.write(`[bench] ${line}\n`);
};

installTemporalRuntime(createLogger({ env: { SWITCHYARD_LOG_LEVEL: 'warn', SWITCHYARD_LOG_FORMAT: 'json' } }));
const startedAt = performance.now();
const server = process.env.TEMPORAL_ADDRESS ? undefined : await startDevServer({ onProgress: progress });
const address = process.env.TEMPORAL_ADDRESS ?? server?.address ?? 'localhost:7233';
const cwd = await mkdtemp(path.join(os.tmpdir(), 'switchyard-bench-'));
const filePath = path.join(cwd, 'file.txt');
await writeFile(filePath, `${'x'.repeat(79)}\n`.repeat(25)); // 2,000 bytes, 25 lines
// The history scenario's one-line file: its Read results are 15 bytes, so its turn's bytes are what the pipeline adds.
await writeFile(path.join(cwd, 'line.txt'), 'one line\n');
const suffix = Date.now().toString(36);
const taskQueue = `bench-switchyard-${suffix}`;
const regularTaskQueue = `bench-switchyard-regular-${suffix}`;
const rawTaskQueue = `bench-raw-${suffix}`;
const nativeConnection = await NativeConnection.connect({ address, ...grpcCompressionFor(address) });
const switchyardWorker = async (options: {
  taskQueue: string;
  localReadOnlyCalls: boolean;
  connection?: NativeConnection;
}): Promise<Worker> =>
  await benchWorker({ connection: nativeConnection, ...options, cwd, extraTools: [slowReadTool, stampTool] });
// As shipped: the default worker options (local read-only calls on).
const worker = await switchyardWorker({ taskQueue, localReadOnlyCalls: true });
const regularWorker = await switchyardWorker({ taskQueue: regularTaskQueue, localReadOnlyCalls: false });
const rawWorker = await Worker.create({
  connection: nativeConnection,
  taskQueue: rawTaskQueue,
  workflowsPath: fileURLToPath(new URL('./raw/workflows.ts', import.meta.url)),
  activities: rawActivities,
});
const connection = await Connection.connect({ address });
const temporalClient = new Client({ connection });
// Switchyard's side as `SwitchyardClient.connect` builds it (with Switchyard's payload converter); raw Temporal's with
// the SDK's default converter. Same connection.
const switchyardClient = new Client({ connection, dataConverter: switchyardDataConverter });
const client = new SwitchyardClient({ client: switchyardClient, taskQueue });
const regularClient = new SwitchyardClient({ client: switchyardClient, taskQueue: regularTaskQueue });
const workersDone = Promise.all([worker.run(), regularWorker.run(), rawWorker.run()]);
const REGULAR = 'Switchyard, regular activities';
const RAW = 'raw Temporal';
const RAW_LOCAL = 'raw Temporal, local activities';
/** Every scenario's same-round ratios (`pairedRatio`), as the scenarios add them. */
const pairs: PairRow[] = [];

/** Each Switchyard contender over each hand-written one, round by round. */
function addPairs(scenario: string, calls: number, samples: Record<string, number[]>): void {
  for (const contender of ['Switchyard', REGULAR])
    for (const against of [RAW, RAW_LOCAL]) {
      const top = samples[contender];
      const bottom = samples[against];
      if (top !== undefined && bottom !== undefined)
        pairs.push({ scenario, calls, contender, against, ...pairedRatio(top, bottom) });
    }
}

/** Runs `body` once to warm up, then `ROUNDS` times, each contender in turn within a round (alternating). */
async function alternate(
  contenders: Record<string, (round: number) => Promise<void>>,
  rounds = ROUNDS,
): Promise<Record<string, number[]>> {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(contenders).map((name) => [name, []]));
  for (const run of Object.values(contenders)) await run(-1);
  for (let index = 0; index < rounds; index++) {
    for (const [name, run] of Object.entries(contenders)) {
      const started = performance.now();
      await run(index);
      samples[name]?.push(performance.now() - started);
    }
  }
  return samples;
}

const reads = (count: number, file = 'file.txt'): Array<{ id: string; name: string; input: { file_path: string } }> =>
  Array.from({ length: count }, (_, index) => ({ id: `r${index}`, name: 'Read', input: { file_path: file } }));

/** Events and protobuf bytes of a workflow's history, as the server stores them. */
async function historySize(handle: WorkflowHandle): Promise<{ events: number; bytes: number }> {
  const history = await handle.fetchHistory();
  return {
    events: history.events?.length ?? 0,
    bytes: proto.temporal.api.history.v1.History.encode(history).finish().length,
  };
}

async function latencyByCalls(): Promise<ContenderRow[]> {
  const session = await client.startSession(`bench-latency-${suffix}`, { cwd });
  const regularSession = await regularClient.startSession(`bench-latency-regular-${suffix}`, { cwd });
  const raw = await temporalClient.workflow.start('rawSession', {
    taskQueue: rawTaskQueue,
    workflowId: `bench-raw-${suffix}`,
  });
  const rawLocal = await temporalClient.workflow.start('rawLocalSession', {
    taskQueue: rawTaskQueue,
    workflowId: `bench-raw-local-${suffix}`,
  });
  const rawUpdate = (handle: WorkflowHandle, calls: number) =>
    handle.executeUpdate(runCallsUpdate, {
      args: [{ calls: Array.from({ length: calls }, (_, index) => ({ id: `r${index}`, path: filePath })) }],
    });
  const rows: ContenderRow[] = [];
  for (const calls of [1, 4, 16]) {
    progress(`latency: ${calls} Read call(s) per turn, ${LATENCY_ROUNDS} rounds`);
    const samples = await alternate(
      {
        'in-process Promise.all': async () => {
          await Promise.all(Array.from({ length: calls }, () => rawActivities.readFileActivity(filePath)));
        },
        'raw Temporal': async () => {
          await rawUpdate(raw, calls);
        },
        Switchyard: async (index) => {
          await session.executeTurn({ turnId: `c${calls}-${index}`, calls: reads(calls) });
        },
        [REGULAR]: async (index) => {
          await regularSession.executeTurn({ turnId: `c${calls}-${index}`, calls: reads(calls) });
        },
        // Last, so the contenders before it follow each other as they did before it was added (the order within a round
        // shifts what each one inherits from the one before: the server's leftover work, garbage to collect).
        [RAW_LOCAL]: async () => {
          await rawUpdate(rawLocal, calls);
        },
      },
      LATENCY_ROUNDS,
    );
    const scenario = `${calls} call${calls === 1 ? '' : 's'} per turn`;
    for (const [contender, values] of Object.entries(samples))
      rows.push({ scenario, calls, contender, ...stats(values) });
    addPairs(scenario, calls, samples);
  }
  await Promise.all([raw.signal(stopSignal), rawLocal.signal(stopSignal)]);
  return rows;
}

async function slowReads(): Promise<ContenderRow[]> {
  progress('ten 200 ms read-only calls in one turn');
  const session = await client.startSession(`bench-slow-${suffix}`, { cwd });
  const regularSession = await regularClient.startSession(`bench-slow-regular-${suffix}`, { cwd });
  const raw = await temporalClient.workflow.start('rawSession', {
    taskQueue: rawTaskQueue,
    workflowId: `bench-raw-slow-${suffix}`,
  });
  const rawLocal = await temporalClient.workflow.start('rawLocalSession', {
    taskQueue: rawTaskQueue,
    workflowId: `bench-raw-local-slow-${suffix}`,
  });
  const calls = Array.from({ length: 10 }, (_, index) => ({ id: `s${index}`, name: 'SlowRead', input: { ms: 200 } }));
  const rawCalls = Array.from({ length: 10 }, (_, index) => ({ id: `s${index}`, waitMs: 200 }));
  const samples = await alternate(
    {
      [RAW]: async () => void (await raw.executeUpdate(runCallsUpdate, { args: [{ calls: rawCalls }] })),
      Switchyard: async (index) => void (await session.executeTurn({ turnId: `slow-${index}`, calls })),
      [REGULAR]: async (index) => void (await regularSession.executeTurn({ turnId: `slow-${index}`, calls })),
      [RAW_LOCAL]: async () => void (await rawLocal.executeUpdate(runCallsUpdate, { args: [{ calls: rawCalls }] })),
    },
    Math.min(ROUNDS, 20),
  );
  await Promise.all([raw.signal(stopSignal), rawLocal.signal(stopSignal)]);
  const scenario = 'ten 200 ms read-only calls';
  addPairs(scenario, 10, samples);
  return Object.entries(samples).map(([contender, values]) => ({ scenario, calls: 10, contender, ...stats(values) }));
}

async function switchyardOnly(): Promise<ContenderRow[]> {
  const session = await client.startSession(`bench-misc-${suffix}`, { cwd });
  const rows: ContenderRow[] = [];
  progress('five exclusive calls in a row');
  const exclusive = await alternate({
    Switchyard: async (index) => {
      await session.executeTurn({
        turnId: `five-${index}`,
        calls: Array.from({ length: 5 }, (_, call) => ({
          id: `t${call}`,
          name: 'submit_result',
          input: { result: call },
        })),
      });
    },
  });
  rows.push({
    scenario: 'five exclusive calls in a row',
    calls: 5,
    contender: 'Switchyard',
    ...stats(exclusive.Switchyard ?? []),
  });

  progress('approval: signal → call start, and the whole round trip');
  const signalToStart: number[] = [];
  const approvals = await alternate({
    Switchyard: async (index) => {
      const label = `stamp-${index}`;
      const turn = session.executeTurn({
        turnId: `ask-${index}`,
        calls: [{ id: 'e', name: 'Stamp', input: { label } }],
      });
      let pending = await session.pendingApprovals();
      while (pending.length === 0) pending = await session.pendingApprovals();
      const [request] = pending;
      if (request === undefined) throw new Error('no pending approval');
      const signalled = performance.now();
      await session.approve({ requestId: request.requestId, decision: 'allow', inputDigest: request.inputDigest });
      await turn;
      const started = stampStarts.get(label);
      if (started !== undefined && index >= 0) signalToStart.push(started - signalled);
    },
  });
  rows.push({
    scenario: 'approval: ask → signal → result',
    calls: 1,
    contender: 'Switchyard',
    ...stats(approvals.Switchyard ?? []),
  });
  rows.push({
    scenario: 'approval: signal sent → call starts',
    calls: 1,
    contender: 'Switchyard',
    ...stats(signalToStart),
  });

  progress('streaming: add one call → its result');
  const streaming = await alternate({
    Switchyard: async (index) => {
      const turn = session.streamTurn(`stream-${index}`);
      await turn.add({ id: 'r', name: 'Read', input: { file_path: 'file.txt' } });
      const iterator = turn.results();
      await iterator.next();
      await turn.end();
      for (;;) if ((await iterator.next()).done === true) break;
    },
  });
  rows.push({
    scenario: 'streaming: add one call → its result',
    calls: 1,
    contender: 'Switchyard',
    ...stats(streaming.Switchyard ?? []),
  });
  rows.push(await consoleUpdates());
  return rows;
}

/**
 * Event → console: how long after a session logs that a call waits for approval (the `PermissionRequested` event's
 * time, workflow time) an open session page of `switchyard console` has the request, as its stream delivers it.
 */
async function consoleUpdates(): Promise<ContenderRow> {
  progress('console: event → session page update');
  const token = `bench-${suffix}-0123456789abcdef`;
  const running = await startConsole({ client: switchyardClient, port: 0, token, identity: 'bench' });
  const session = await client.startSession(`bench-console-${suffix}`, { cwd });
  const response = await fetch(new URL(`/stream/session/${encodeURIComponent(session.sessionId)}`, running.url), {
    headers: { authorization: `Bearer ${token}` },
  });
  if (!response.ok || response.body === null) throw new Error(`console stream: ${response.status}`);
  const events = serverSentEvents(response.body);
  /** The next message of the stream, and when it arrived. */
  const nextMessage = async (): Promise<{ data: string; at: number }> => {
    const { value, done } = await events.next();
    if (done === true) throw new Error('the console stream ended');
    return { data: value.data, at: Date.now() };
  };
  await nextMessage();
  const latencies: number[] = [];
  await alternate({
    Switchyard: async (index) => {
      const turn = session.executeTurn({
        turnId: `console-${index}`,
        calls: [{ id: 'e', name: 'Stamp', input: { label: `console-${index}` } }],
      });
      let message = await nextMessage();
      let requestId: string | undefined;
      for (;;) {
        requestId = /data-request=\\"([^"\\]+)\\"/.exec(message.data)?.[1];
        if (requestId !== undefined) break;
        message = await nextMessage();
      }
      const { events } = await session.events();
      const requested = events.find((event) => event.type === 'PermissionRequested' && event.requestId === requestId);
      if (requested === undefined) throw new Error(`no PermissionRequested event for ${requestId}`);
      if (index >= 0) latencies.push(message.at - Date.parse(requested.at));
      const [request] = await session.pendingApprovals();
      if (request === undefined) throw new Error('no pending approval');
      await session.approve({ requestId: request.requestId, decision: 'allow', inputDigest: request.inputDigest });
      await turn;
      // The page shows the request gone before the next round asks again.
      while ((await nextMessage()).data.includes('data-request=')) continue;
    },
  });
  await events.return(undefined);
  await running.close();
  await session.end();
  return { scenario: 'console: event → session page update', calls: 1, contender: 'Switchyard', ...stats(latencies) };
}

/**
 * Mutating calls, which always run as regular activities: a `Write` of a new file, and a `Bash` that a session rule
 * allows (`touch`, unsandboxed: the sandbox's own cost is bench/sandbox-overhead.ts's), against the hand-written
 * regular-activity session doing the same (bench/raw/), each on the bench's server (eager activity dispatch on, as
 * `switchyard dev` runs it) and on a second one without it (as `temporal server start-dev` runs by default). The four
 * contenders alternate within each round.
 */
async function mutatingCalls(): Promise<ContenderRow[]> {
  progress('mutating calls: a Write turn and an allowed Bash turn, eager activity dispatch on and off');
  const offServer = await startServerWithoutEagerDispatch();
  const offNative = await NativeConnection.connect({ address: offServer.address });
  const offQueue = `bench-switchyard-off-${suffix}`;
  const offRawQueue = `bench-raw-off-${suffix}`;
  const offWorker = await switchyardWorker({ taskQueue: offQueue, localReadOnlyCalls: true, connection: offNative });
  const offRawWorker = await Worker.create({
    connection: offNative,
    taskQueue: offRawQueue,
    workflowsPath: fileURLToPath(new URL('./raw/workflows.ts', import.meta.url)),
    activities: rawActivities,
  });
  const offRunning = Promise.all([offWorker.run(), offRawWorker.run()]);
  const offConnection = await Connection.connect({ address: offServer.address });
  const rows: ContenderRow[] = [];
  try {
    const offSwitchyard = new SwitchyardClient({
      client: new Client({ connection: offConnection, dataConverter: switchyardDataConverter }),
      taskQueue: offQueue,
    });
    const offTemporal = new Client({ connection: offConnection });
    const sessionOptions: SessionOptions = {
      cwd,
      permissionMode: 'acceptEdits',
      rules: { allow: ['Bash(touch:*)'] },
      sandbox: { mode: 'off' },
    };
    const sides = [
      { eager: 'on', switchyard: client, temporal: temporalClient, rawQueue: rawTaskQueue },
      { eager: 'off', switchyard: offSwitchyard, temporal: offTemporal, rawQueue: offRawQueue },
    ] as const;
    const scenarios = [
      {
        scenario: 'one Write (new file)',
        call: (name: string) => ({ id: 'w', name: 'Write', input: { file_path: `${name}.txt`, content: 'written\n' } }),
        raw: (name: string) => ({ id: 'w', write: { path: path.join(cwd, `${name}.txt`), content: 'written\n' } }),
      },
      {
        scenario: 'one allowed Bash (touch)',
        call: (name: string) => ({ id: 'b', name: 'Bash', input: { command: `touch ${name}.stamp` } }),
        raw: (name: string) => ({ id: 'b', command: `touch ${name}.stamp`, cwd }),
      },
    ];
    for (const entry of scenarios) {
      const contenders: Record<string, (round: number) => Promise<void>> = {};
      for (const side of sides) {
        const tag = `${entry.scenario.split(' ')[1]}-${side.eager}-${suffix}`;
        const session = await side.switchyard.startSession(`bench-mutating-${tag}`, sessionOptions);
        const raw = await side.temporal.workflow.start('rawSession', {
          taskQueue: side.rawQueue,
          workflowId: `bench-raw-mutating-${tag}`,
        });
        contenders[`raw Temporal, eager ${side.eager}`] = async (index) => {
          await raw.executeUpdate(runCallsUpdate, { args: [{ calls: [entry.raw(`raw-${tag}-${index}`)] }] });
        };
        contenders[`Switchyard, eager ${side.eager}`] = async (index) => {
          const turn = await session.executeTurn({ turnId: `m-${index}`, calls: [entry.call(`sy-${tag}-${index}`)] });
          if (turn.results[0]?.isError === true) throw new Error(`${entry.scenario}: ${turn.results[0].modelContent}`);
        };
      }
      const samples = await alternate(contenders, Math.min(ROUNDS, 20));
      for (const [contender, values] of Object.entries(samples))
        rows.push({ scenario: entry.scenario, calls: 1, contender, ...stats(values) });
      const ratio = (contender: string, against: string): void => {
        const top = samples[contender];
        const bottom = samples[against];
        if (top !== undefined && bottom !== undefined)
          pairs.push({ scenario: entry.scenario, calls: 1, contender, against, ...pairedRatio(top, bottom) });
      };
      ratio('Switchyard, eager on', 'raw Temporal, eager on');
      ratio('Switchyard, eager off', 'raw Temporal, eager off');
      ratio('Switchyard, eager on', 'Switchyard, eager off');
      ratio('raw Temporal, eager on', 'raw Temporal, eager off');
    }
  } finally {
    offWorker.shutdown();
    offRawWorker.shutdown();
    await offRunning;
    await offConnection.close();
    await offNative.close();
    await offServer.stop();
  }
  return rows;
}

/** Bytes by event type that the events after `from` take, largest first. */
function breakdown(
  events: NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>,
  from: number,
): HistoryBreakdownRow[] {
  const byType = new Map<string, { events: number; bytes: number }>();
  for (const event of events.slice(from)) {
    const type = proto.temporal.api.enums.v1.EventType[event.eventType ?? 0] ?? String(event.eventType);
    const entry = byType.get(type) ?? { events: 0, bytes: 0 };
    entry.events += 1;
    entry.bytes += proto.temporal.api.history.v1.HistoryEvent.encode(event).finish().length;
    byType.set(type, entry);
  }
  return [...byType.entries()]
    .map(([eventType, entry]) => ({ eventType: eventType.replace(/^EVENT_TYPE_/, ''), ...entry }))
    .sort((a, b) => b.bytes - a.bytes);
}

async function historyCost(): Promise<{
  rows: HistoryRow[];
  breakdown: HistoryBreakdownRow[];
  modelTextBytes: number;
}> {
  progress('history per turn');
  const rows: HistoryRow[] = [];
  let tenReadsBreakdown: HistoryBreakdownRow[] = [];
  let modelTextBytes = 0;
  const bigOutput = "head -c 5000000 /dev/zero | tr '\\0' x";
  const cases: Array<{ scenario: string; calls: Array<{ id: string; name: string; input: unknown }> }> = [
    { scenario: 'one Read', calls: reads(1) },
    { scenario: 'ten Reads', calls: reads(10) },
    // What the pipeline adds: each result is 15 bytes, so the 2,048-byte target is about Switchyard's own bytes.
    { scenario: TEN_READS_ONE_LINE, calls: reads(10, 'line.txt') },
    { scenario: 'one Bash with 5 MB of output', calls: [{ id: 'b', name: 'Bash', input: { command: bigOutput } }] },
  ];
  for (const [contender, sessions] of [
    ['Switchyard', client],
    [REGULAR, regularClient],
  ] as const) {
    for (const entry of cases) {
      const session: SessionHandle = await sessions.startSession(
        `bench-history-${contender === REGULAR ? 'regular-' : ''}${entry.scenario.replaceAll(' ', '-')}-${suffix}`,
        {
          cwd,
          // Reads are allowed in `default` mode; the Bash command would ask, so that case bypasses permissions.
          permissionMode: entry.scenario.includes('Bash') ? 'bypassPermissions' : 'default',
        },
      );
      // A first turn so that the session's start is not counted.
      await session.executeTurn({ turnId: 'warm', calls: reads(1) });
      const before = await historySize(session.workflow);
      const turn = await session.executeTurn({ turnId: 'measured', calls: entry.calls });
      const after = await historySize(session.workflow);
      const events = after.events - before.events;
      const bytes = after.bytes - before.bytes;
      rows.push({
        contender,
        scenario: entry.scenario,
        calls: entry.calls.length,
        events,
        bytes,
        eventsPerCall: round(events / entry.calls.length),
        bytesPerCall: Math.round(bytes / entry.calls.length),
      });
      if (contender === 'Switchyard' && entry.scenario === 'ten Reads') {
        tenReadsBreakdown = breakdown((await session.workflow.fetchHistory()).events ?? [], before.events);
        modelTextBytes = turn.results.reduce((sum, result) => sum + Buffer.byteLength(result.modelContent), 0);
      }
    }
  }
  // The hand-written session's ten reads: the same file, plain activities.
  const raw = await temporalClient.workflow.start('rawSession', {
    taskQueue: rawTaskQueue,
    workflowId: `bench-raw-history-${suffix}`,
  });
  await raw.executeUpdate(runCallsUpdate, { args: [{ calls: [{ id: 'warm', path: filePath }] }] });
  const before = await historySize(raw);
  await raw.executeUpdate(runCallsUpdate, {
    args: [{ calls: Array.from({ length: 10 }, (_, index) => ({ id: `r${index}`, path: filePath })) }],
  });
  const after = await historySize(raw);
  await raw.signal(stopSignal);
  const events = after.events - before.events;
  const bytes = after.bytes - before.bytes;
  rows.push({
    contender: 'raw Temporal',
    scenario: 'ten Reads',
    calls: 10,
    events,
    bytes,
    eventsPerCall: round(events / 10),
    bytesPerCall: Math.round(bytes / 10),
  });
  return { rows, breakdown: tenReadsBreakdown, modelTextBytes };
}

/** The dev server's process, found by its port in /proc (Linux); undefined elsewhere or for an external server. */
async function serverPid(): Promise<number | undefined> {
  if (server === undefined) return undefined;
  const port = address.split(':').pop() ?? '';
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    const args = cmdline.split('\0');
    if (args.includes('start-dev') && args[args.indexOf('--port') + 1] === port) return Number(entry);
  }
  return undefined;
}

/** CPU seconds a process has used (user + system), from /proc/<pid>/stat; undefined when unreadable. */
async function processCpuSeconds(pid: number | undefined): Promise<number | undefined> {
  if (pid === undefined) return undefined;
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (fields === undefined) return undefined;
  // utime and stime are fields 14 and 15 of stat(5), in clock ticks (100 per second on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** One window of `sessions` running `turn` back to back: turn latencies, errors, CPU of this process and the server. */
async function loadWindow(options: {
  seconds: number;
  turns: Array<(turn: number) => Promise<void>>;
  pid: number | undefined;
}): Promise<{
  latencies: number[];
  errors: number;
  elapsedSeconds: number;
  ownCpuSeconds: number;
  serverCpuSeconds?: number;
}> {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + options.seconds * 1_000;
  const ownCpuBefore = process.cpuUsage();
  const serverCpuBefore = await processCpuSeconds(options.pid);
  await Promise.all(
    options.turns.map(async (runTurn) => {
      for (let turn = 0; performance.now() < deadline; turn++) {
        const turnStarted = performance.now();
        try {
          await runTurn(turn);
          latencies.push(performance.now() - turnStarted);
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsedSeconds = (performance.now() - started) / 1_000;
  const ownCpu = process.cpuUsage(ownCpuBefore);
  const serverCpuAfter = await processCpuSeconds(options.pid);
  return {
    latencies,
    errors,
    elapsedSeconds,
    ownCpuSeconds: (ownCpu.user + ownCpu.system) / 1e6,
    ...(serverCpuBefore === undefined || serverCpuAfter === undefined
      ? {}
      : { serverCpuSeconds: serverCpuAfter - serverCpuBefore }),
  };
}

/**
 * N sessions of 4-Read turns back to back, Switchyard (as shipped) and the hand-written local-activity session taking
 * turns in windows of THROUGHPUT_SECONDS (after a one-second warm-up of each), THROUGHPUT_PAIRS pairs per N: calls
 * per second and this process's CPU per call (client and workers) of each window, and their ratios pair by pair.
 */
async function throughput(): Promise<{ rows: ThroughputRow[]; ratios: ThroughputRatioRow[] }> {
  const rows: ThroughputRow[] = [];
  const ratioRows: ThroughputRatioRow[] = [];
  const pid = await serverPid();
  for (const sessions of [1, 8, 64]) {
    progress(
      `throughput: ${sessions} session(s) running 4-Read turns back to back, ${THROUGHPUT_PAIRS} × ${THROUGHPUT_SECONDS} s windows each for Switchyard and the local-activity session`,
    );
    const handles = await Promise.all(
      Array.from({ length: sessions }, (_, index) =>
        client.startSession(`bench-load-${sessions}-${index}-${suffix}`, { cwd }),
      ),
    );
    const rawHandles = await Promise.all(
      Array.from({ length: sessions }, (_, index) =>
        temporalClient.workflow.start('rawLocalSession', {
          taskQueue: rawTaskQueue,
          workflowId: `bench-raw-load-${sessions}-${index}-${suffix}`,
        }),
      ),
    );
    const rawCalls = Array.from({ length: 4 }, (_, index) => ({ id: `r${index}`, path: filePath }));
    const contenders = {
      Switchyard: handles.map(
        (session, sessionIndex) => async (turn: number) =>
          void (await session.executeTurn({
            turnId: `load-${sessionIndex}-${turn}-${performance.now()}`,
            calls: reads(4),
          })),
      ),
      [RAW_LOCAL]: rawHandles.map(
        (handle) => async () => void (await handle.executeUpdate(runCallsUpdate, { args: [{ calls: rawCalls }] })),
      ),
    };
    for (const turns of Object.values(contenders)) await loadWindow({ seconds: 1, turns, pid: undefined });
    const windows: Record<string, Array<Awaited<ReturnType<typeof loadWindow>>>> = { Switchyard: [], [RAW_LOCAL]: [] };
    for (let pair = 0; pair < THROUGHPUT_PAIRS; pair++)
      for (const [name, turns] of Object.entries(contenders))
        windows[name]?.push(await loadWindow({ seconds: THROUGHPUT_SECONDS, turns, pid }));
    await Promise.all(rawHandles.map((handle) => handle.signal(stopSignal)));
    const perWindow = (name: string) =>
      (windows[name] ?? []).map((window) => {
        const calls = window.latencies.length * 4;
        return {
          callsPerSecond: calls / window.elapsedSeconds,
          cpuMsPerCall: calls === 0 ? Number.NaN : (1_000 * window.ownCpuSeconds) / calls,
        };
      });
    for (const [contender, list] of Object.entries(windows)) {
      const latencies = list.flatMap((window) => window.latencies);
      const seconds = list.reduce((sum, window) => sum + window.elapsedSeconds, 0);
      const ownCpu = list.reduce((sum, window) => sum + window.ownCpuSeconds, 0);
      const serverCpu = list.every((window) => window.serverCpuSeconds !== undefined)
        ? list.reduce((sum, window) => sum + (window.serverCpuSeconds ?? 0), 0)
        : undefined;
      const turnStats = stats(latencies);
      // Share of one core over the windows: the client and the workers (this process), and the dev server.
      const percent = (cpuSeconds: number): number => Math.round((100 * cpuSeconds) / seconds);
      rows.push({
        contender,
        sessions,
        turns: latencies.length,
        calls: latencies.length * 4,
        errors: list.reduce((sum, window) => sum + window.errors, 0),
        seconds: round(seconds),
        callsPerSecond: round((latencies.length * 4) / seconds),
        p50: turnStats.p50,
        p95: turnStats.p95,
        benchCpuPercent: percent(ownCpu),
        benchCpuMsPerCall: latencies.length === 0 ? 0 : Math.round((100_000 * ownCpu) / (latencies.length * 4)) / 100,
        ...(serverCpu === undefined ? {} : { serverCpuPercent: percent(serverCpu) }),
      });
    }
    const switchyard = perWindow('Switchyard');
    const rawLocal = perWindow(RAW_LOCAL);
    ratioRows.push({
      sessions,
      callsPerSecond: pairedRatio(
        switchyard.map((window) => window.callsPerSecond),
        rawLocal.map((window) => window.callsPerSecond),
      ),
      cpuPerCall: pairedRatio(
        switchyard.map((window) => window.cpuMsPerCall),
        rawLocal.map((window) => window.cpuMsPerCall),
      ),
    });
  }
  return { rows, ratios: ratioRows };
}

/**
 * The memory scenario (bench/memory.ts), in a process of its own: a new worker and client, and nothing else, so the
 * waiting sessions cannot fill room that the earlier scenarios left in this process's heaps, which hides what they cost.
 */
async function waitingMemory(): Promise<WaitingMemory> {
  const child = spawn(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', fileURLToPath(new URL('./memory.ts', import.meta.url))],
    {
      env: {
        ...process.env,
        BENCH_MEMORY_ADDRESS: address,
        BENCH_MEMORY_CWD: cwd,
        BENCH_WAITING_SESSIONS: String(WAITING_SESSIONS),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  const last = output.trim().split('\n').at(-1) ?? '';
  if (code !== 0 || !last.startsWith('{')) throw new Error(`the memory scenario failed (exit ${code}): ${last}`);
  return JSON.parse(last) as WaitingMemory;
}

const require = createRequire(import.meta.url);
const sdkVersion = (
  JSON.parse(await readFile(require.resolve('@temporalio/worker/package.json'), 'utf8')) as { version: string }
).version;
const report: BenchReport = {
  date: new Date().toISOString(),
  machine: {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  },
  versions: {
    temporalSdk: sdkVersion,
    server: process.env.TEMPORAL_ADDRESS
      ? `external (${address})`
      : 'embedded dev server (temporal CLI 1.5.1, server 1.29.1, SQLite in memory)',
  },
  rounds: ROUNDS,
  latencyRounds: LATENCY_ROUNDS,
  latency: [],
  switchyardOnly: [],
  history: [],
  historyBreakdown: [],
  tenReadsModelTextBytes: 0,
  throughput: [],
  throughputRatios: [],
  mutating: [],
  pairs: [],
  durationSeconds: 0,
};
try {
  // First, while the worker holds only this scenario's sessions (the other scenarios do not end theirs).
  report.memory = await waitingMemory();
  report.latency = await latencyByCalls();
  report.latency.push(...(await slowReads()));
  report.mutating = await mutatingCalls();
  report.switchyardOnly = await switchyardOnly();
  const history = await historyCost();
  report.history = history.rows;
  report.historyBreakdown = history.breakdown;
  report.tenReadsModelTextBytes = history.modelTextBytes;
  const load = await throughput();
  report.throughput = load.rows;
  report.throughputRatios = load.ratios;
  report.pairs = pairs;
} finally {
  worker.shutdown();
  regularWorker.shutdown();
  rawWorker.shutdown();
  await workersDone;
  await connection.close();
  await nativeConnection.close();
  await server?.stop();
  await rm(cwd, { recursive: true, force: true });
}
report.durationSeconds = round((performance.now() - startedAt) / 1_000);
const resultsDir = path.join(here, 'results');
const runs = await recordRun({
  file: path.join(resultsDir, 'runs.json'),
  report,
  git,
  throughputSeconds: THROUGHPUT_SECONDS,
});
const markdown = await writeReport({
  report,
  resultsDir,
  markdownPath: path.join(here, '..', 'BENCHMARKS.md'),
  runs,
});
// The front page quotes a run of the ledger, never a trial.
if (report.rounds >= MIN_LEDGER_ROUNDS) {
  const readmePath = path.join(here, '..', 'README.md');
  await writeFile(readmePath, withReadmeSummary(await readFile(readmePath, 'utf8'), readmeBenchSummary(report)));
}
process.stdout.write(markdown);
