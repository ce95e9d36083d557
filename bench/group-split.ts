// `npx tsx bench/group-split.ts`: what a turn's split into groups costs. A turn runs in groups of at most
// `maxConcurrency` calls (default 10); Plan runs an allowed read-only first group inside its own local activity, and
// each later group costs a Prepare, an activation and its own local activities. Alternating rounds (ROUNDS, default
// 40) of CALLS Reads (default 16): Switchyard with the default groups, Switchyard with one group of CALLS
// (`maxConcurrency: CALLS`), and the hand-written local-activity session; printed as each one's median of same-round
// ratios to the hand-written session. Not a test.
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { SwitchyardClient } from '../src/client/switchyard-client.js';
import { switchyardDataConverter } from '../src/config/data-converter.js';
import { startDevServer } from '../src/server/dev-server.js';
import { createLogger } from '../src/worker/logger.js';
import { installTemporalRuntime } from '../src/worker/runtime.js';
import { benchWorker } from './tools.js';
import { rawActivities } from './raw/activities.js';
import { runCallsUpdate } from './raw/messages.js';
import { pairedRatio, stats } from './stats.js';

const ROUNDS = Number(process.env.ROUNDS ?? 40);
const CALLS = Number(process.env.CALLS ?? 16);
installTemporalRuntime(createLogger({ env: { SWITCHYARD_LOG_LEVEL: 'warn', SWITCHYARD_LOG_FORMAT: 'json' } }));
const server = await startDevServer({});
const cwd = await mkdtemp(path.join(os.tmpdir(), 'h7-groups-'));
const file = path.join(cwd, 'file.txt');
await writeFile(file, `${'x'.repeat(79)}\n`.repeat(25));
const q = `g-${Date.now().toString(36)}`;
const native = await NativeConnection.connect({ address: server.address });
const worker = await benchWorker({ connection: native, taskQueue: q, cwd });
const raw = await Worker.create({
  connection: native,
  taskQueue: `${q}-raw`,
  workflowsPath: fileURLToPath(new URL('./raw/workflows.ts', import.meta.url)),
  activities: rawActivities,
});
const running = Promise.all([worker.run(), raw.run()]);
const connection = await Connection.connect({ address: server.address });
const client = new SwitchyardClient({
  client: new Client({ connection, dataConverter: switchyardDataConverter }),
  taskQueue: q,
});
const temporal = new Client({ connection });
const reads = Array.from({ length: CALLS }, (_, i) => ({
  id: `r${i}`,
  name: 'Read',
  input: { file_path: 'file.txt' },
}));
const s10 = await client.startSession(`g10-${q}`, { cwd });
const s16 = await client.startSession(`g16-${q}`, { cwd, maxConcurrency: Math.max(CALLS, 1) });
const rl = await temporal.workflow.start('rawLocalSession', { taskQueue: `${q}-raw`, workflowId: `rl-${q}` });
const rawCalls = Array.from({ length: CALLS }, (_, i) => ({ id: `r${i}`, path: file }));
const contenders: Record<string, (i: number) => Promise<unknown>> = {
  'Switchyard (groups of 10)': (i) => s10.executeTurn({ turnId: `t${i}`, calls: reads }),
  [`Switchyard (one group of ${CALLS})`]: (i) => s16.executeTurn({ turnId: `t${i}`, calls: reads }),
  'hand-written local': () => rl.executeUpdate(runCallsUpdate, { args: [{ calls: rawCalls }] }),
};
const samples: Record<string, number[]> = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
for (let i = -3; i < ROUNDS; i++)
  for (const [name, run] of Object.entries(contenders)) {
    const t = performance.now();
    await run(i);
    if (i >= 0) samples[name]!.push(performance.now() - t);
  }
for (const [name, values] of Object.entries(samples))
  console.log(
    name,
    JSON.stringify(stats(values)),
    'vs local',
    JSON.stringify(pairedRatio(values, samples['hand-written local']!)),
  );
worker.shutdown();
raw.shutdown();
await running;
await connection.close();
await native.close();
await server.stop();
