// The memory scenario of `npm run bench`, run by bench/run.ts in a process of its own (`--expose-gc`): a worker as
// shipped and a client, on the bench's dev server, and nothing else. WAITING_SESSIONS sessions each run one turn whose
// Write waits for an approval; the process's memory once all wait is set against the reading before they started. Its
// result is the last line on stdout (JSON, `WaitingMemory` of bench/report.ts). Alone in its process, the sessions
// cannot fill room that other scenarios' workflows left in the heaps, which would hide what they cost.
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { SwitchyardClient } from '../src/client/switchyard-client.js';
import type { SessionHandle } from '../src/client/switchyard-client.js';
import { switchyardDataConverter } from '../src/config/data-converter.js';
import { grpcCompressionFor } from '../src/config/grpc-compression.js';
import type { ApprovalRequest } from '../src/contracts/approval.js';
import { createLogger } from '../src/worker/logger.js';
import { installTemporalRuntime } from '../src/worker/runtime.js';
import type { WaitingMemory } from './report.js';
import { round } from './stats.js';
import { benchWorker } from './tools.js';

const address = process.env.BENCH_MEMORY_ADDRESS;
const cwd = process.env.BENCH_MEMORY_CWD;
if (address === undefined || cwd === undefined) {
  throw new Error('bench/memory.ts is run by bench/run.ts, with BENCH_MEMORY_ADDRESS and BENCH_MEMORY_CWD set');
}
const WAITING_SESSIONS = Number(process.env.BENCH_WAITING_SESSIONS ?? 200);
const suffix = Date.now().toString(36);
const progress = (line: string): void => {
  process.stderr.write(`[bench] ${line}\n`);
};

/** This process's rss and main-thread heapUsed in MiB, after a full GC of the main thread when `global.gc` exists. */
function memoryNow(): { rss: number; heapUsed: number } {
  if (global.gc !== undefined) {
    global.gc();
    global.gc(); // a second pass collects what the first one's finalizers released
  }
  const usage = process.memoryUsage();
  return { rss: usage.rss / 2 ** 20, heapUsed: usage.heapUsed / 2 ** 20 };
}

/** Runs `body` over `items`, `size` at a time. */
async function inBatches<T>(items: readonly T[], size: number, body: (item: T) => Promise<void>): Promise<void> {
  for (let start = 0; start < items.length; start += size)
    await Promise.all(items.slice(start, start + size).map(body));
}

/**
 * Starts `count` sessions, each with one turn whose `Write` of a new file asks for approval (in `default` mode, as
 * Write does: test/integration/builtin-tools.test.ts), and resolves once every session's request is pending.
 */
async function startWaiting(
  on: SwitchyardClient,
  label: string,
  count: number,
): Promise<Array<{ session: SessionHandle; turn: Promise<unknown>; request: ApprovalRequest }>> {
  const started = await Promise.all(
    Array.from({ length: count }, async (_, index) => {
      const id = `bench-waiting-${label}-${index}-${suffix}`;
      const session = await on.startSession(id, { cwd, permissionMode: 'default' });
      const turn = session.executeTurn({
        turnId: 'wait',
        calls: [{ id: 'w', name: 'Write', input: { file_path: `${id}.txt`, content: 'written once approved\n' } }],
      });
      void turn.catch(() => undefined); // awaited after the denial; not an unhandled rejection meanwhile
      return { session, turn };
    }),
  );
  // The requests, polled as the approval scenario does (`pendingApprovals`), 16 queries at a time rather than all at
  // once, to keep the polling's own load small.
  const requests = new Map<number, ApprovalRequest>();
  const deadline = performance.now() + 300_000;
  while (requests.size < count) {
    if (performance.now() > deadline) throw new Error(`only ${requests.size} of ${count} sessions asked within 300 s`);
    const missing = started.map((_, index) => index).filter((index) => !requests.has(index));
    await inBatches(missing, 16, async (index) => {
      const [request] = (await started[index]?.session.pendingApprovals()) ?? [];
      if (request !== undefined) requests.set(index, request);
    });
    if (requests.size < count) await sleep(100);
  }
  return started.map((entry, index) => {
    const request = requests.get(index);
    if (request === undefined) throw new Error(`session ${index} has no pending approval`);
    return { ...entry, request };
  });
}

/** Denies every waiting request, waits for the turns, ends the sessions; resolves to how many workflows closed. */
async function finishWaiting(
  waiting: ReadonlyArray<{ session: SessionHandle; turn: Promise<unknown>; request: ApprovalRequest }>,
): Promise<number> {
  await inBatches(waiting, 16, async ({ session, request }) => {
    await session.approve({
      requestId: request.requestId,
      decision: 'deny',
      inputDigest: request.inputDigest,
      reason: 'benchmark: memory measured',
    });
  });
  await Promise.all(waiting.map(({ turn }) => turn));
  await inBatches(waiting, 16, async ({ session }) => await session.end());
  // `end` only requests the cancellation: the workflow's result (a cancellation failure) comes once it has closed.
  await Promise.all(waiting.map(({ session }) => session.workflow.result().catch(() => undefined)));
  let ended = 0;
  await inBatches(waiting, 16, async ({ session }) => {
    if ((await session.workflow.describe()).status.name !== 'RUNNING') ended++;
  });
  return ended;
}

/**
 * This process's memory per session waiting for an approval: WAITING_SESSIONS sessions, each with one call waiting,
 * against the process before they started (after one warm-up session).
 */
async function measureWaiting(on: SwitchyardClient): Promise<WaitingMemory> {
  progress('memory: a process of its own; one warm-up session waiting for approval');
  const ended = await finishWaiting(await startWaiting(on, 'warm', 1));
  if (ended !== 1) throw new Error('the warm-up session did not end');
  const gcForced = global.gc !== undefined;
  if (!gcForced) progress('memory: no global.gc (run without --expose-gc): readings taken as they are, not after a GC');
  const before = memoryNow();
  progress(`memory: ${WAITING_SESSIONS} sessions, each with one Write waiting for approval`);
  const started = performance.now();
  const waiting = await startWaiting(on, 'n', WAITING_SESSIONS);
  const secondsUntilWaiting = (performance.now() - started) / 1_000;
  const after = memoryNow();
  progress(
    `memory: all ${WAITING_SESSIONS} waiting after ${secondsUntilWaiting.toFixed(1)} s; denying and ending them`,
  );
  const closed = await finishWaiting(waiting);
  const afterEnd = memoryNow();
  const mib = (value: number): number => Math.round(value * 10) / 10;
  const perSession = (value: number): number => Math.round((value / WAITING_SESSIONS) * 1_000) / 1_000;
  return {
    sessions: WAITING_SESSIONS,
    gcForced,
    secondsUntilWaiting: round(secondsUntilWaiting),
    rssBeforeMiB: mib(before.rss),
    rssAfterMiB: mib(after.rss),
    heapUsedBeforeMiB: mib(before.heapUsed),
    heapUsedAfterMiB: mib(after.heapUsed),
    rssMiBPerSession: perSession(after.rss - before.rss),
    heapUsedMiBPerSession: perSession(after.heapUsed - before.heapUsed),
    rssAfterEndMiB: mib(afterEnd.rss),
    heapUsedAfterEndMiB: mib(afterEnd.heapUsed),
    ended: closed,
  };
}

installTemporalRuntime(createLogger({ env: { SWITCHYARD_LOG_LEVEL: 'warn', SWITCHYARD_LOG_FORMAT: 'json' } }));
const taskQueue = `bench-switchyard-memory-${suffix}`;
const nativeConnection = await NativeConnection.connect({ address, ...grpcCompressionFor(address) });
const worker = await benchWorker({ connection: nativeConnection, taskQueue, cwd });
const workerDone = worker.run();
const connection = await Connection.connect({ address });
const client = new SwitchyardClient({
  client: new Client({ connection, dataConverter: switchyardDataConverter }),
  taskQueue,
});
const memory = await measureWaiting(client);
worker.shutdown();
await workerDone;
await connection.close();
await nativeConnection.close();
process.stdout.write(`${JSON.stringify(memory)}\n`);
