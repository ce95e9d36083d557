// `npm run bench`: Switchyard side by side with a hand-written Temporal session and with plain `Promise.all`, on one
// dev server. Writes bench/results/<scenario>.json, bench/results/latency.svg and BENCHMARKS.md.
// Not a test: nothing here asserts a timing. `BENCH_ROUNDS` (default 30) and `BENCH_THROUGHPUT_SECONDS` (default 15)
// size the run. Switchyard runs twice: as shipped (short read-only calls as local activities) and with
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
import { switchyardDataConverter } from '../src/config/data-converter.js';
import { startConsole } from '../src/console/console-server.js';
import { grpcCompressionFor } from '../src/config/grpc-compression.js';
import { startDevServer } from '../src/server/dev-server.js';
import { createLogger } from '../src/worker/logger.js';
import { installTemporalRuntime } from '../src/worker/runtime.js';
import { gitState, recordRun } from './ledger.js';
import { rawActivities } from './raw/activities.js';
import { runCallsUpdate, stopSignal } from './raw/messages.js';
import { writeReport } from './report.js';
import type {
  BenchReport,
  ContenderRow,
  HistoryBreakdownRow,
  HistoryRow,
  ThroughputRow,
  WaitingMemory,
} from './report.js';
import { round, stats } from './stats.js';
import { benchWorker, slowReadTool, stampStarts, stampTool } from './tools.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const THROUGHPUT_SECONDS = Number(process.env.BENCH_THROUGHPUT_SECONDS ?? 15);
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
const suffix = Date.now().toString(36);
const taskQueue = `bench-switchyard-${suffix}`;
const regularTaskQueue = `bench-switchyard-regular-${suffix}`;
const rawTaskQueue = `bench-raw-${suffix}`;
const nativeConnection = await NativeConnection.connect({ address, ...grpcCompressionFor(address) });
const switchyardWorker = async (options: { taskQueue: string; localReadOnlyCalls: boolean }): Promise<Worker> =>
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
const RAW_LOCAL = 'raw Temporal, local activities';

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

const reads = (count: number): Array<{ id: string; name: string; input: { file_path: string } }> =>
  Array.from({ length: count }, (_, index) => ({ id: `r${index}`, name: 'Read', input: { file_path: 'file.txt' } }));

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
    progress(`latency: ${calls} Read call(s) per turn, ${ROUNDS} rounds`);
    const samples = await alternate({
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
    });
    for (const [contender, values] of Object.entries(samples))
      rows.push({ scenario: `${calls} call${calls === 1 ? '' : 's'} per turn`, calls, contender, ...stats(values) });
  }
  await Promise.all([raw.signal(stopSignal), rawLocal.signal(stopSignal)]);
  return rows;
}

async function slowReads(): Promise<ContenderRow[]> {
  progress('ten 200 ms read-only calls in one turn');
  const session = await client.startSession(`bench-slow-${suffix}`, { cwd });
  const regularSession = await regularClient.startSession(`bench-slow-regular-${suffix}`, { cwd });
  const calls = Array.from({ length: 10 }, (_, index) => ({ id: `s${index}`, name: 'SlowRead', input: { ms: 200 } }));
  const samples = await alternate(
    {
      Switchyard: async (index) => void (await session.executeTurn({ turnId: `slow-${index}`, calls })),
      [REGULAR]: async (index) => void (await regularSession.executeTurn({ turnId: `slow-${index}`, calls })),
    },
    Math.min(ROUNDS, 15),
  );
  return Object.entries(samples).map(([contender, values]) => ({
    scenario: 'ten 200 ms read-only calls',
    calls: 10,
    contender,
    ...stats(values),
  }));
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

async function throughput(): Promise<ThroughputRow[]> {
  const rows: ThroughputRow[] = [];
  const pid = await serverPid();
  for (const sessions of [1, 8, 64]) {
    progress(`throughput: ${sessions} session(s) running 4-Read turns back to back for ${THROUGHPUT_SECONDS} s`);
    const handles = await Promise.all(
      Array.from({ length: sessions }, (_, index) =>
        client.startSession(`bench-load-${sessions}-${index}-${suffix}`, { cwd }),
      ),
    );
    const latencies: number[] = [];
    let errors = 0;
    const deadline = performance.now() + THROUGHPUT_SECONDS * 1_000;
    const started = performance.now();
    const ownCpuBefore = process.cpuUsage();
    const serverCpuBefore = await processCpuSeconds(pid);
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
    const ownCpu = process.cpuUsage(ownCpuBefore);
    const serverCpuAfter = await processCpuSeconds(pid);
    const turnStats = stats(latencies);
    // Share of one core over the window: the client and both workers (this process), and the dev server.
    const percent = (cpuSeconds: number): number => Math.round((100 * cpuSeconds) / elapsedSeconds);
    rows.push({
      sessions,
      turns: latencies.length,
      calls: latencies.length * 4,
      errors,
      seconds: round(elapsedSeconds),
      callsPerSecond: round((latencies.length * 4) / elapsedSeconds),
      p50: turnStats.p50,
      p95: turnStats.p95,
      benchCpuPercent: percent((ownCpu.user + ownCpu.system) / 1e6),
      ...(serverCpuBefore === undefined || serverCpuAfter === undefined
        ? {}
        : { serverCpuPercent: percent(serverCpuAfter - serverCpuBefore) }),
    });
  }
  return rows;
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
  latency: [],
  switchyardOnly: [],
  history: [],
  historyBreakdown: [],
  tenReadsModelTextBytes: 0,
  throughput: [],
  durationSeconds: 0,
};
try {
  // First, while the worker holds only this scenario's sessions (the other scenarios do not end theirs).
  report.memory = await waitingMemory();
  report.latency = await latencyByCalls();
  report.latency.push(...(await slowReads()));
  report.switchyardOnly = await switchyardOnly();
  const history = await historyCost();
  report.history = history.rows;
  report.historyBreakdown = history.breakdown;
  report.tenReadsModelTextBytes = history.modelTextBytes;
  report.throughput = await throughput();
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
process.stdout.write(markdown);
