// `npm run bench:profile`: where the worker's CPU goes per call. Starts a dev server and one Switchyard worker (as
// shipped), runs SESSIONS sessions of 4-Read turns back to back for PROFILE_SECONDS, and prints the process CPU per
// call. Run it under `node --cpu-prof` (the script does, see package.json) to get one .cpuprofile per thread (the main
// thread and the workflow threads); bench/profile-summary.ts folds them into a table. Not a test.
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { SwitchyardClient } from '../src/client/switchyard-client.js';
import { startDevServer } from '../src/server/dev-server.js';
import { builtinTools } from '../src/tools/builtin.js';
import { createSwitchyardWorker } from '../src/worker/create-worker.js';
import { createLogger } from '../src/worker/logger.js';
import { installTemporalRuntime } from '../src/worker/runtime.js';

const SECONDS = Number(process.env.PROFILE_SECONDS ?? 20);
const SESSIONS = Number(process.env.PROFILE_SESSIONS ?? 8);
const progress = (line: string): void => {
  process.stderr.write(`[profile] ${line}\n`);
};

installTemporalRuntime(createLogger({ env: { SWITCHYARD_LOG_LEVEL: 'warn', SWITCHYARD_LOG_FORMAT: 'json' } }));
const server = process.env.TEMPORAL_ADDRESS ? undefined : await startDevServer({ onProgress: progress });
const address = process.env.TEMPORAL_ADDRESS ?? server?.address ?? 'localhost:7233';
const cwd = await mkdtemp(path.join(os.tmpdir(), 'switchyard-profile-'));
await writeFile(path.join(cwd, 'file.txt'), `${'x'.repeat(79)}\n`.repeat(25));
const taskQueue = `profile-${Date.now().toString(36)}`;
const nativeConnection = await NativeConnection.connect({ address });
// PROFILE_WORKFLOW_THREADS: the worker's workflow thread pool (the SDK's default is 1 with a reused V8 context).
const threads =
  process.env.PROFILE_WORKFLOW_THREADS === undefined ? undefined : Number(process.env.PROFILE_WORKFLOW_THREADS);
const worker = await createSwitchyardWorker({
  connection: nativeConnection,
  taskQueue,
  tools: builtinTools(),
  defaultCwd: cwd,
  userSettingsDir: false,
  dataDir: cwd,
  ...(threads === undefined ? {} : { tuning: { workflowThreadPoolSize: threads } }),
});
const running = worker.run();
const connection = await Connection.connect({ address });
const client = new SwitchyardClient({ client: new Client({ connection }), taskQueue });
const reads = (count: number) =>
  Array.from({ length: count }, (_, index) => ({ id: `r${index}`, name: 'Read', input: { file_path: 'file.txt' } }));

const sessions = await Promise.all(
  Array.from({ length: SESSIONS }, (_, index) => client.startSession(`profile-${index}-${taskQueue}`, { cwd })),
);
// Warm-up: bundles are loaded and workflows cached before the measured window.
await Promise.all(sessions.map((session) => session.executeTurn({ turnId: 'warm', calls: reads(4) })));
progress(`${SESSIONS} sessions, 4-Read turns, ${SECONDS} s`);
// The main thread is profiled over the measured window only (start-up, bundling included, would dwarf it); the
// workflow thread, under `--cpu-prof`, from its start (its start-up is the bundle's load, small).
const inspector = new Session();
inspector.connect();
await inspector.post('Profiler.enable');
await inspector.post('Profiler.start');
let calls = 0;
const cpuBefore = process.cpuUsage();
const started = performance.now();
const deadline = started + SECONDS * 1_000;
await Promise.all(
  sessions.map(async (session) => {
    for (let turn = 0; performance.now() < deadline; turn++) {
      await session.executeTurn({ turnId: `t${turn}`, calls: reads(4) });
      calls += 4;
    }
  }),
);
const seconds = (performance.now() - started) / 1_000;
const cpu = process.cpuUsage(cpuBefore);
const { profile } = await inspector.post('Profiler.stop');
const profileDir = process.env.PROFILE_DIR ?? '.cpu-profile';
await mkdir(profileDir, { recursive: true });
await writeFile(path.join(profileDir, 'main-thread-window.cpuprofile'), JSON.stringify(profile));
inspector.disconnect();
const cpuMs = (cpu.user + cpu.system) / 1_000;
process.stdout.write(
  `${JSON.stringify({ sessions: SESSIONS, seconds: Math.round(seconds * 10) / 10, calls, callsPerSecond: Math.round((calls / seconds) * 10) / 10, processCpuMsPerCall: Math.round((cpuMs / calls) * 100) / 100 })}\n`,
);
worker.shutdown();
await running;
await connection.close();
await nativeConnection.close();
await server?.stop();
