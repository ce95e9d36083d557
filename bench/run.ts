// `npm run bench`: Switchyard side by side with a hand-written Temporal session and with plain `Promise.all`, on one
// dev server. Writes bench/results/<scenario>.json, bench/results/latency.svg and BENCHMARKS.md.
// Not a test: nothing here asserts a timing. `BENCH_ROUNDS` (default 30) and `BENCH_THROUGHPUT_SECONDS` (default 15)
// size the run.
import { readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import type { WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { SwitchyardClient } from '../src/client/switchyard-client.js';
import type { SessionHandle } from '../src/client/switchyard-client.js';
import { startDevServer } from '../src/server/dev-server.js';
import { builtinTools } from '../src/tools/builtin.js';
import { createSwitchyardWorker } from '../src/worker/create-worker.js';
import { createLogger } from '../src/worker/logger.js';
import { installTemporalRuntime } from '../src/worker/runtime.js';
import { scratchDir } from '../test/support/scratch.js';
import { rawActivities } from './raw/activities.js';
import { runCallsUpdate, stopSignal } from './raw/messages.js';
import { writeReport } from './report.js';
import type { BenchReport, ContenderRow, HistoryRow, ThroughputRow } from './report.js';
import { round, stats } from './stats.js';
import { slowReadTool, stampStarts, stampTool } from './tools.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const THROUGHPUT_SECONDS = Number(process.env.BENCH_THROUGHPUT_SECONDS ?? 15);
const here = path.dirname(fileURLToPath(import.meta.url));
const progress = (line: string): void => {
  process.stderr.write(`[bench] ${line}\n`);
};

installTemporalRuntime(createLogger({ env: { SWITCHYARD_LOG_LEVEL: 'warn', SWITCHYARD_LOG_FORMAT: 'json' } }));
const startedAt = performance.now();
const server = process.env.TEMPORAL_ADDRESS ? undefined : await startDevServer({ onProgress: progress });
const address = process.env.TEMPORAL_ADDRESS ?? server?.address ?? 'localhost:7233';
const cwd = await scratchDir('switchyard-bench-');
const filePath = path.join(cwd, 'file.txt');
await writeFile(filePath, `${'x'.repeat(79)}\n`.repeat(25)); // 2,000 bytes, 25 lines
const suffix = Date.now().toString(36);
const taskQueue = `bench-switchyard-${suffix}`;
const rawTaskQueue = `bench-raw-${suffix}`;
const nativeConnection = await NativeConnection.connect({ address });
const worker = await createSwitchyardWorker({
  connection: nativeConnection,
  taskQueue,
  tools: [...builtinTools(), slowReadTool, stampTool],
  defaultCwd: cwd,
  userSettingsDir: false,
  dataDir: cwd,
  localReadOnlyCalls: true,
});
const rawWorker = await Worker.create({
  connection: nativeConnection,
  taskQueue: rawTaskQueue,
  workflowsPath: fileURLToPath(new URL('./raw/workflows.ts', import.meta.url)),
  activities: rawActivities,
});
const connection = await Connection.connect({ address });
const temporalClient = new Client({ connection });
const client = new SwitchyardClient({ client: temporalClient, taskQueue });
const workersDone = Promise.all([worker.run(), rawWorker.run()]);

/** Runs `body` once to warm up, then `ROUNDS` times, each contender in turn within a round (alternating). */
async function alternate(contenders: Record<string, (round: number) => Promise<void>>, rounds = ROUNDS): Promise<Record<string, number[]>> {
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

const reads = (count: number): Array<{ id: string; name: string; input: { file_path: string } }> =>
  Array.from({ length: count }, (_, index) => ({ id: `r${index}`, name: 'Read', input: { file_path: 'file.txt' } }));

/** Events and protobuf bytes of a workflow's history, as the server stores them. */
async function historySize(handle: WorkflowHandle): Promise<{ events: number; bytes: number }> {
  const history = await handle.fetchHistory();
  return { events: history.events?.length ?? 0, bytes: proto.temporal.api.history.v1.History.encode(history).finish().length };
}

async function latencyByCalls(): Promise<ContenderRow[]> {
  const session = await client.startSession(`bench-latency-${suffix}`, { cwd });
  const raw = await temporalClient.workflow.start('rawSession', { taskQueue: rawTaskQueue, workflowId: `bench-raw-${suffix}` });
  const rows: ContenderRow[] = [];
  for (const calls of [1, 4, 16]) {
    progress(`latency: ${calls} Read call(s) per turn, ${ROUNDS} rounds`);
    const samples = await alternate({
      'in-process Promise.all': async () => {
        await Promise.all(Array.from({ length: calls }, () => rawActivities.readFileActivity(filePath)));
      },
      'raw Temporal': async () => {
        await raw.executeUpdate(runCallsUpdate, { args: [{ calls: Array.from({ length: calls }, (_, index) => ({ id: `r${index}`, path: filePath })) }] });
      },
      Switchyard: async (index) => {
        await session.executeTurn({ turnId: `c${calls}-${index}`, calls: reads(calls) });
      },
    });
    for (const [contender, values] of Object.entries(samples)) rows.push({ scenario: `${calls} call${calls === 1 ? '' : 's'} per turn`, calls, contender, ...stats(values) });
  }
  await raw.signal(stopSignal);
  return rows;
}

async function slowReads(): Promise<ContenderRow[]> {
  progress('ten 200 ms read-only calls in one turn');
  const session = await client.startSession(`bench-slow-${suffix}`, { cwd });
  const calls = Array.from({ length: 10 }, (_, index) => ({ id: `s${index}`, name: 'SlowRead', input: { ms: 200 } }));
  const samples = await alternate({ Switchyard: async (index) => void (await session.executeTurn({ turnId: `slow-${index}`, calls })) }, Math.min(ROUNDS, 15));
  return [{ scenario: 'ten 200 ms read-only calls', calls: 10, contender: 'Switchyard', ...stats(samples.Switchyard ?? []) }];
}

async function switchyardOnly(): Promise<ContenderRow[]> {
  const session = await client.startSession(`bench-misc-${suffix}`, { cwd });
  const rows: ContenderRow[] = [];
  progress('five exclusive calls in a row');
  const exclusive = await alternate({
    Switchyard: async (index) => {
      await session.executeTurn({ turnId: `five-${index}`, calls: Array.from({ length: 5 }, (_, call) => ({ id: `t${call}`, name: 'submit_result', input: { result: call } })) });
    },
  });
  rows.push({ scenario: 'five exclusive calls in a row', calls: 5, contender: 'Switchyard', ...stats(exclusive.Switchyard ?? []) });

  progress('approval: signal → call start, and the whole round trip');
  const signalToStart: number[] = [];
  const approvals = await alternate({
    Switchyard: async (index) => {
      const label = `stamp-${index}`;
      const turn = session.executeTurn({ turnId: `ask-${index}`, calls: [{ id: 'e', name: 'Stamp', input: { label } }] });
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
  rows.push({ scenario: 'approval: ask → signal → result', calls: 1, contender: 'Switchyard', ...stats(approvals.Switchyard ?? []) });
  rows.push({ scenario: 'approval: signal sent → call starts', calls: 1, contender: 'Switchyard', ...stats(signalToStart) });

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
  rows.push({ scenario: 'streaming: add one call → its result', calls: 1, contender: 'Switchyard', ...stats(streaming.Switchyard ?? []) });
  return rows;
}

async function historyCost(): Promise<HistoryRow[]> {
  progress('history per turn');
  const rows: HistoryRow[] = [];
  const bigOutput = "head -c 5000000 /dev/zero | tr '\\0' x";
  const cases: Array<{ scenario: string; calls: Array<{ id: string; name: string; input: unknown }> }> = [
    { scenario: 'one Read', calls: reads(1) },
    { scenario: 'ten Reads', calls: reads(10) },
    { scenario: 'one Bash with 5 MB of output', calls: [{ id: 'b', name: 'Bash', input: { command: bigOutput } }] },
  ];
  for (const entry of cases) {
    const session: SessionHandle = await client.startSession(`bench-history-${entry.scenario.replaceAll(' ', '-')}-${suffix}`, { cwd, permissionMode: 'bypassPermissions' });
    // A first turn so that the session's start is not counted.
    await session.executeTurn({ turnId: 'warm', calls: reads(1) });
    const before = await historySize(session.workflow);
    await session.executeTurn({ turnId: 'measured', calls: entry.calls });
    const after = await historySize(session.workflow);
    const events = after.events - before.events;
    const bytes = after.bytes - before.bytes;
    rows.push({ scenario: entry.scenario, calls: entry.calls.length, events, bytes, eventsPerCall: round(events / entry.calls.length), bytesPerCall: Math.round(bytes / entry.calls.length) });
  }
  return rows;
}

async function throughput(): Promise<ThroughputRow[]> {
  const rows: ThroughputRow[] = [];
  for (const sessions of [1, 8, 64]) {
    progress(`throughput: ${sessions} session(s) running 4-Read turns back to back for ${THROUGHPUT_SECONDS} s`);
    const handles = await Promise.all(Array.from({ length: sessions }, (_, index) => client.startSession(`bench-load-${sessions}-${index}-${suffix}`, { cwd })));
    const latencies: number[] = [];
    let errors = 0;
    const deadline = performance.now() + THROUGHPUT_SECONDS * 1_000;
    const started = performance.now();
    await Promise.all(
      handles.map(async (session, sessionIndex) => {
        for (let turn = 0; performance.now() < deadline; turn++) {
          const turnStarted = performance.now();
          try {
            await session.executeTurn({ turnId: `load-${sessionIndex}-${turn}`, calls: reads(4) });
            latencies.push(performance.now() - turnStarted);
          } catch {
            errors++;
          }
        }
      }),
    );
    const elapsedSeconds = (performance.now() - started) / 1_000;
    const turnStats = stats(latencies);
    rows.push({ sessions, turns: latencies.length, calls: latencies.length * 4, errors, seconds: round(elapsedSeconds), callsPerSecond: round((latencies.length * 4) / elapsedSeconds), p50: turnStats.p50, p95: turnStats.p95 });
  }
  return rows;
}

const require = createRequire(import.meta.url);
const sdkVersion = (JSON.parse(await readFile(require.resolve('@temporalio/worker/package.json'), 'utf8')) as { version: string }).version;
const report: BenchReport = {
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? 'unknown', memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, platform: `${os.platform()} ${os.release()}` },
  versions: { temporalSdk: sdkVersion, server: process.env.TEMPORAL_ADDRESS ? `external (${address})` : 'embedded dev server (temporal CLI 1.5.1, server 1.29.1, SQLite in memory)' },
  rounds: ROUNDS,
  latency: [],
  switchyardOnly: [],
  history: [],
  throughput: [],
  durationSeconds: 0,
};
try {
  report.latency = await latencyByCalls();
  report.latency.push(...(await slowReads()));
  report.switchyardOnly = await switchyardOnly();
  report.history = await historyCost();
  report.throughput = await throughput();
} finally {
  worker.shutdown();
  rawWorker.shutdown();
  await workersDone;
  await connection.close();
  await nativeConnection.close();
  await server?.stop();
}
report.durationSeconds = round((performance.now() - startedAt) / 1_000);
const markdown = await writeReport({ report, resultsDir: path.join(here, 'results'), markdownPath: path.join(here, '..', 'BENCHMARKS.md') });
process.stdout.write(markdown);
