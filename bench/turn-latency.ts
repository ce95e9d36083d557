// `npm run bench`: turn latency on a local dev server. Writes bench/results.json and bench/RESULTS.md.
// Not a test: nothing here asserts a timing.
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { SwitchyardClient } from '../src/client/switchyard-client.js';
import { startDevServer } from '../src/server/dev-server.js';
import { scratchDir } from '../test/support/scratch.js';
import { testTools } from '../test/support/test-tools.js';
import { createSwitchyardWorker } from '../src/worker/create-worker.js';
import { createLogger } from '../src/worker/logger.js';
import { installTemporalRuntime } from '../src/worker/runtime.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const here = path.dirname(fileURLToPath(import.meta.url));

function stats(samples: number[]): { p50: number; p95: number; mean: number; n: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  const round = (value: number): number => Math.round(value * 10) / 10;
  return { p50: round(at(0.5)), p95: round(at(0.95)), mean: round(sorted.reduce((a, b) => a + b, 0) / sorted.length), n: sorted.length };
}

async function measure(label: string, run: (round: number) => Promise<void>): Promise<[string, ReturnType<typeof stats>]> {
  await run(-1); // warm-up
  const samples: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now();
    await run(round);
    samples.push(performance.now() - started);
  }
  process.stderr.write(`${label}: ${JSON.stringify(stats(samples))}\n`);
  return [label, stats(samples)];
}

installTemporalRuntime(createLogger({ env: { SWITCHYARD_LOG_LEVEL: 'warn', SWITCHYARD_LOG_FORMAT: 'json' } }));
const server = process.env.TEMPORAL_ADDRESS ? undefined : await startDevServer({ onProgress: (m) => process.stderr.write(`${m}\n`) });
const address = process.env.TEMPORAL_ADDRESS ?? server?.address ?? 'localhost:7233';
const cwd = await scratchDir('switchyard-bench-');
await writeFile(path.join(cwd, 'file.txt'), 'x'.repeat(2_000));
const taskQueue = `bench-${Date.now()}`;
const nativeConnection = await NativeConnection.connect({ address });
const worker = await createSwitchyardWorker({ connection: nativeConnection, taskQueue, tools: testTools(), defaultCwd: cwd, userSettingsDir: false, dataDir: cwd });
const connection = await Connection.connect({ address });
const client = new SwitchyardClient({ client: new Client({ connection }), taskQueue });

const results = await worker.runUntil(async () => {
  const session = await client.startSession(`bench-${Date.now()}`, { cwd, permissionMode: 'default' });
  const rows: Array<[string, ReturnType<typeof stats>]> = [];
  rows.push(await measure('1 Read, whole turn (ms)', (round) => session.executeTurn({ turnId: `one-${round}`, calls: [{ id: 'r', name: 'Read', input: { file_path: 'file.txt' } }] }).then(() => undefined)));
  rows.push(
    await measure('10 Reads in one concurrent group (ms)', (round) =>
      session.executeTurn({ turnId: `ten-${round}`, calls: Array.from({ length: 10 }, (_, i) => ({ id: `r${i}`, name: 'Read', input: { file_path: 'file.txt' } })) }).then(() => undefined),
    ),
  );
  rows.push(
    await measure('5 exclusive calls in a row (ms)', (round) =>
      session.executeTurn({ turnId: `five-${round}`, calls: Array.from({ length: 5 }, (_, i) => ({ id: `t${i}`, name: 'submit_result', input: { result: i } })) }).then(() => undefined),
    ),
  );
  rows.push(
    await measure('approval round trip: ask → signal → result (ms)', async (round) => {
      const turn = session.executeTurn({ turnId: `ask-${round}`, calls: [{ id: 'e', name: 'Edit', input: { file_path: `bench-${round}.txt` } }] });
      let pending = await session.pendingApprovals();
      while (pending.length === 0) pending = await session.pendingApprovals();
      const [request] = pending;
      if (request === undefined) throw new Error('no pending approval');
      await session.approve({ requestId: request.requestId, decision: 'allow', inputDigest: request.inputDigest });
      await turn;
    }),
  );
  rows.push(
    await measure('streaming: add 1 call → first result (ms)', async (round) => {
      const turn = session.streamTurn(`stream-${round}`);
      await turn.add({ id: 'r', name: 'Read', input: { file_path: 'file.txt' } });
      const iterator = turn.results();
      await iterator.next();
      await turn.end();
      for (;;) if ((await iterator.next()).done === true) break;
    }),
  );
  return rows;
});

const report = {
  date: new Date().toISOString(),
  machine: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
  server: process.env.TEMPORAL_ADDRESS ? 'external' : 'embedded dev server (temporal CLI 1.5.1, SQLite in memory)',
  rounds: ROUNDS,
  results: Object.fromEntries(results),
};
await writeFile(path.join(here, 'results.json'), `${JSON.stringify(report, null, 2)}\n`);
const table = [
  `Measured ${report.date} on ${report.machine}; ${report.server}; ${ROUNDS} rounds after one warm-up; client, worker and server on one machine.`,
  '',
  '| scenario | p50 | p95 | mean |',
  '| --- | --- | --- | --- |',
  ...results.map(([label, s]) => `| ${label} | ${s.p50} | ${s.p95} | ${s.mean} |`),
  '',
].join('\n');
await writeFile(path.join(here, 'RESULTS.md'), table);
process.stdout.write(table);
await connection.close();
await nativeConnection.close();
await server?.stop();
