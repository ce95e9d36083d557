// `npm run bench:profile`: where the worker's CPU goes per call. Starts a dev server and one Switchyard worker (as
// shipped) in this process, and the client load in a child process (PROFILE_ROLE=client), so the CPU measured here
// is the worker's alone: SESSIONS sessions run PROFILE_CALLS-Read turns (default 16) back to back for PROFILE_SECONDS,
// after PROFILE_WARMUP_SECONDS (default 10) of the same load that is not measured (a worker's first seconds cost
// more per call while its code is compiled: with the warm-up, 8 and 19 % less in two alternating pairs). Run it under `node --cpu-prof` (the script does, see
// package.json) to get one .cpuprofile per thread (the main thread and the workflow threads; the workflow thread's
// covers the warm-up too); bench/profile-summary.ts folds them into a table. Without `--cpu-prof` nothing is
// profiled, so the CPU figures are the worker's and the client's own (a profiler costs the worker about a tenth
// more). The client connects as `SwitchyardClient.connect` does; PROFILE_CLIENT=native connects it with
// `native: true`. By default (PROFILE_COMPARE=0 turns it off) it runs the hand-written local-activity session (bench/raw/workflows.ts
// `rawLocalSession`, its own worker in this process) beside Switchyard: the client alternates PROFILE_PAIRS (default 2)
// windows of each, the main thread is profiled per window (main-thread-<contender>-<n>.cpuprofile), each worker has
// its own workflow thread, and the figures are per contender and pair. Not a test.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import type { WorkflowHandle } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { SwitchyardClient } from '../src/client/switchyard-client.js';
import { grpcCompressionFor } from '../src/config/grpc-compression.js';
import { startDevServer } from '../src/server/dev-server.js';
import type { WorkerTuning } from '../src/worker/create-worker.js';
import { createLogger } from '../src/worker/logger.js';
import { installTemporalRuntime } from '../src/worker/runtime.js';
import { rawActivities } from './raw/activities.js';
import { runCallsUpdate, stopSignal } from './raw/messages.js';
import { benchUserSettingsDir, benchWorker } from './tools.js';

const SECONDS = Number(process.env.PROFILE_SECONDS ?? 20);
const SESSIONS = Number(process.env.PROFILE_SESSIONS ?? 8);
const CALLS = Number(process.env.PROFILE_CALLS ?? 16);
const WARMUP_SECONDS = Number(process.env.PROFILE_WARMUP_SECONDS ?? 10);
const COMPARE = process.env.PROFILE_COMPARE !== '0';
const PAIRS = Number(process.env.PROFILE_PAIRS ?? 2);
const progress = (line: string): void => {
  process.stderr.write(`[profile] ${line}\n`);
};
const reads = (count: number) =>
  Array.from({ length: count }, (_, index) => ({ id: `r${index}`, name: 'Read', input: { file_path: 'file.txt' } }));

/** The client load: starts the sessions, warms them up, says `ready`, waits for `go`, runs, prints its count. */
async function runClient(): Promise<void> {
  const address = process.env.PROFILE_ADDRESS ?? 'localhost:7233';
  const taskQueue = process.env.PROFILE_TASK_QUEUE ?? 'profile';
  const cwd = process.env.PROFILE_CWD ?? process.cwd();
  const client = await SwitchyardClient.connect({
    address,
    namespace: 'default',
    taskQueue,
    native: process.env.PROFILE_CLIENT === 'native',
  });
  const sessions = await Promise.all(
    Array.from({ length: SESSIONS }, (_, index) => client.startSession(`profile-${index}-${taskQueue}`, { cwd })),
  );
  if (COMPARE) {
    await runCompareClient({ client, sessions, address, cwd });
    return;
  }
  // Warm-up: bundles are loaded and workflows cached before the measured window; then PROFILE_WARMUP_SECONDS of the
  // same load, so the code the window measures has been compiled as it will be in a worker that has run a while.
  await Promise.all(sessions.map((session) => session.executeTurn({ turnId: 'warm', calls: reads(CALLS) })));
  const warmUntil = performance.now() + WARMUP_SECONDS * 1_000;
  await Promise.all(
    sessions.map(async (session) => {
      for (let turn = 0; performance.now() < warmUntil; turn++)
        await session.executeTurn({ turnId: `warm-${turn}`, calls: reads(CALLS) });
    }),
  );
  process.stdout.write('ready\n');
  const input = createInterface({ input: process.stdin });
  await once(input, 'line');
  input.close();
  let calls = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + SECONDS * 1_000;
  await Promise.all(
    sessions.map(async (session) => {
      for (let turn = 0; performance.now() < deadline; turn++) {
        await session.executeTurn({ turnId: `t${turn}`, calls: reads(CALLS) });
        calls += CALLS;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1_000;
  const cpu = process.cpuUsage(cpuBefore);
  process.stdout.write(`${JSON.stringify({ calls, seconds, cpuMs: (cpu.user + cpu.system) / 1_000 })}\n`);
  await Promise.all(sessions.map((session) => session.end()));
  await client.client.connection.close();
  process.exit(0);
}

/**
 * PROFILE_COMPARE's client: Switchyard's sessions and as many hand-written local-activity sessions, warmed up, then a
 * window of one or the other for each `go <contender>` line, its figures printed as a JSON line; `end` ends it.
 */
async function runCompareClient(options: {
  client: SwitchyardClient;
  sessions: Awaited<ReturnType<SwitchyardClient['startSession']>>[];
  address: string;
  cwd: string;
}): Promise<void> {
  const { client, sessions } = options;
  const connection = await Connection.connect({ address: options.address });
  const temporal = new Client({ connection });
  const rawQueue = process.env.PROFILE_RAW_TASK_QUEUE ?? 'profile-raw';
  const raw: WorkflowHandle[] = await Promise.all(
    Array.from({ length: SESSIONS }, (_, index) =>
      temporal.workflow.start('rawLocalSession', {
        taskQueue: rawQueue,
        workflowId: `profile-raw-${index}-${rawQueue}`,
      }),
    ),
  );
  const rawCalls = Array.from({ length: CALLS }, (_, index) => ({
    id: `r${index}`,
    path: path.join(options.cwd, 'file.txt'),
  }));
  let turnNumber = 0;
  const turns: Record<string, Array<() => Promise<void>>> = {
    switchyard: sessions.map(
      (session) => async () => void (await session.executeTurn({ turnId: `t${turnNumber++}`, calls: reads(CALLS) })),
    ),
    raw: raw.map(
      (handle) => async () => void (await handle.executeUpdate(runCallsUpdate, { args: [{ calls: rawCalls }] })),
    ),
  };
  const window = async (
    contender: string,
    seconds: number,
  ): Promise<{ calls: number; seconds: number; cpuMs: number }> => {
    let calls = 0;
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const deadline = started + seconds * 1_000;
    await Promise.all(
      (turns[contender] ?? []).map(async (turn) => {
        while (performance.now() < deadline) {
          await turn();
          calls += CALLS;
        }
      }),
    );
    const cpu = process.cpuUsage(cpuBefore);
    return { calls, seconds: (performance.now() - started) / 1_000, cpuMs: (cpu.user + cpu.system) / 1_000 };
  };
  for (const contender of ['switchyard', 'raw', 'switchyard', 'raw']) await window(contender, WARMUP_SECONDS / 4);
  process.stdout.write('ready\n');
  for await (const line of createInterface({ input: process.stdin })) {
    const [command, contender] = line.split(' ');
    if (command !== 'go' || contender === undefined) break;
    process.stdout.write(`${JSON.stringify(await window(contender, SECONDS))}\n`);
  }
  await Promise.all([...sessions.map((session) => session.end()), ...raw.map((handle) => handle.signal(stopSignal))]);
  await connection.close();
  await client.client.connection.close();
  process.exit(0);
}

async function runWorker(): Promise<void> {
  installTemporalRuntime(createLogger({ env: { SWITCHYARD_LOG_LEVEL: 'warn', SWITCHYARD_LOG_FORMAT: 'json' } }));
  const server = process.env.TEMPORAL_ADDRESS ? undefined : await startDevServer({ onProgress: progress });
  const address = process.env.TEMPORAL_ADDRESS ?? server?.address ?? 'localhost:7233';
  const cwd = await mkdtemp(path.join(os.tmpdir(), 'switchyard-profile-'));
  await writeFile(path.join(cwd, 'file.txt'), `${'x'.repeat(79)}\n`.repeat(25));
  const taskQueue = `profile-${Date.now().toString(36)}`;
  const nativeConnection = await NativeConnection.connect({ address, ...grpcCompressionFor(address) });
  // PROFILE_TUNING: the worker's `tuning` as JSON (README, "Worker tuning"), to measure one setting against another;
  // PROFILE_WORKFLOW_THREADS is short for its `workflowThreadPoolSize`.
  const tuning: WorkerTuning = {
    ...(JSON.parse(process.env.PROFILE_TUNING ?? '{}') as WorkerTuning),
    ...(process.env.PROFILE_WORKFLOW_THREADS === undefined
      ? {}
      : { workflowThreadPoolSize: Number(process.env.PROFILE_WORKFLOW_THREADS) }),
  };
  // PROFILE_SETTINGS=file: the worker's user settings directory holds a settings file (with no hooks), as a user's
  // `~/.switchyard` may; PROFILE_SETTINGS=off: the worker reads no settings files at all (`userSettingsDir: false`).
  if (process.env.PROFILE_SETTINGS === 'file') {
    await mkdir(benchUserSettingsDir(cwd));
    await writeFile(path.join(benchUserSettingsDir(cwd), 'settings.json'), '{ "hooks": {} }\n');
  }
  const worker = await benchWorker({
    connection: nativeConnection,
    taskQueue,
    cwd,
    tuning,
    ...(process.env.PROFILE_SETTINGS === 'off' ? { userSettingsDir: false } : {}),
  });
  const rawQueue = `${taskQueue}-raw`;
  const rawWorker = COMPARE
    ? await Worker.create({
        connection: nativeConnection,
        taskQueue: rawQueue,
        workflowsPath: fileURLToPath(new URL('./raw/workflows.ts', import.meta.url)),
        activities: rawActivities,
      })
    : undefined;
  const running = Promise.all([worker.run(), rawWorker?.run()]);
  // The client runs without --cpu-prof and in its own process: its CPU is not the worker's.
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], {
    env: {
      ...process.env,
      PROFILE_ROLE: 'client',
      PROFILE_ADDRESS: address,
      PROFILE_TASK_QUEUE: taskQueue,
      PROFILE_CWD: cwd,
      PROFILE_RAW_TASK_QUEUE: rawQueue,
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const ready = await lines.next();
  if (ready.done === true || ready.value !== 'ready') throw new Error('the client process ended before it was ready');
  progress(`${SESSIONS} sessions, ${CALLS}-Read turns, ${SECONDS} s`);
  // Under `--cpu-prof`, the main thread is profiled over the measured window only (start-up, bundling included, would
  // dwarf it); the workflow thread from its start (its start-up is the bundle's load, small).
  const profiling = process.execArgv.some((argument) => argument.startsWith('--cpu-prof'));
  const inspector = profiling ? new Session() : undefined;
  inspector?.connect();
  await inspector?.post('Profiler.enable');
  const profileDir = process.env.PROFILE_DIR ?? '.cpu-profile';
  await mkdir(profileDir, { recursive: true });
  if (COMPARE) {
    const windows: Array<{
      contender: string;
      pair: number;
      calls: number;
      seconds: number;
      workerCpuMs: number;
      clientCpuMs: number;
    }> = [];
    for (let pair = 0; pair < PAIRS; pair++)
      for (const contender of ['switchyard', 'raw']) {
        await inspector?.post('Profiler.start');
        const before = process.cpuUsage();
        child.stdin.write(`go ${contender}\n`);
        const line = await lines.next();
        const used = process.cpuUsage(before);
        const stopped = await inspector?.post('Profiler.stop');
        if (line.done === true) throw new Error('the client process ended without its count');
        const result = JSON.parse(line.value) as { calls: number; seconds: number; cpuMs: number };
        if (stopped !== undefined)
          await writeFile(
            path.join(profileDir, `main-thread-${contender}-${pair}.cpuprofile`),
            JSON.stringify(stopped.profile),
          );
        windows.push({
          contender,
          pair,
          calls: result.calls,
          seconds: result.seconds,
          workerCpuMs: (used.user + used.system) / 1_000,
          clientCpuMs: result.cpuMs,
        });
        progress(
          `${contender} window ${pair}: ${result.calls} calls, ${((used.user + used.system) / 1_000 / result.calls).toFixed(3)} ms of worker CPU per call`,
        );
      }
    child.stdin.write('end\n');
    inspector?.disconnect();
    await exited;
    const perCall = (entry: (typeof windows)[number]) => entry.workerCpuMs / entry.calls;
    const ratios = Array.from({ length: PAIRS }, (_, pair) => {
      const [mine, theirs] = ['switchyard', 'raw'].map((name) =>
        windows.find((entry) => entry.contender === name && entry.pair === pair),
      );
      return mine === undefined || theirs === undefined
        ? undefined
        : {
            pair,
            callsPerSecond: Math.round((mine.calls / mine.seconds / (theirs.calls / theirs.seconds)) * 100) / 100,
            workerCpuPerCall: Math.round((perCall(mine) / perCall(theirs)) * 100) / 100,
          };
    });
    const figures = { sessions: SESSIONS, callsPerTurn: CALLS, profiled: profiling, compare: true, windows, ratios };
    await writeFile(path.join(profileDir, 'run.json'), JSON.stringify(figures));
    process.stdout.write(`${JSON.stringify(figures)}\n`);
    worker.shutdown();
    rawWorker?.shutdown();
    await running;
    await nativeConnection.close();
    await server?.stop();
    return;
  }
  await inspector?.post('Profiler.start');
  const cpuBefore = process.cpuUsage();
  child.stdin.write('go\n');
  const done = await lines.next();
  const cpu = process.cpuUsage(cpuBefore);
  const stopped = await inspector?.post('Profiler.stop');
  if (done.done === true) throw new Error('the client process ended without its count');
  const {
    calls,
    seconds,
    cpuMs: clientCpuMs,
  } = JSON.parse(done.value) as {
    calls: number;
    seconds: number;
    cpuMs: number;
  };
  if (stopped !== undefined)
    await writeFile(path.join(profileDir, 'main-thread-window.cpuprofile'), JSON.stringify(stopped.profile));
  inspector?.disconnect();
  await exited;
  const cpuMs = (cpu.user + cpu.system) / 1_000;
  const figures = {
    sessions: SESSIONS,
    callsPerTurn: CALLS,
    seconds: Math.round(seconds * 10) / 10,
    calls,
    callsPerSecond: Math.round((calls / seconds) * 10) / 10,
    workerCpuMsPerCall: Math.round((cpuMs / calls) * 100) / 100,
    workerCpuPercent: Math.round((cpuMs / 10 / seconds) * 10) / 10,
    clientConnection: process.env.PROFILE_CLIENT === 'native' ? 'native' : 'grpc-js',
    clientCpuMsPerCall: Math.round((clientCpuMs / calls) * 100) / 100,
    profiled: profiling,
  };
  // bench/profile-summary.ts puts these figures above its tables.
  await writeFile(path.join(profileDir, 'run.json'), JSON.stringify(figures));
  process.stdout.write(`${JSON.stringify(figures)}\n`);
  worker.shutdown();
  await running;
  await nativeConnection.close();
  await server?.stop();
}

await (process.env.PROFILE_ROLE === 'client' ? runClient() : runWorker());
