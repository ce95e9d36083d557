// `npx tsx bench/history-anatomy.ts`: what each event of a ten-Reads turn carries. Starts a dev server and one worker
// (as shipped), runs a warm-up turn and a turn of ten Reads of the bench's 2,000-byte file (`ANATOMY_LINES`: another
// size), then prints, for every event the turn added, its type and protobuf bytes, and for the JSON payloads in it the
// bytes under each field path (array items merged as `[]`), largest first: the history's cost per call, and what to
// cut (`ANATOMY_SAMPLE=1`: each payload too, shortened). Not a test.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { NativeConnection } from '@temporalio/worker';
import { SwitchyardClient } from '../src/client/switchyard-client.js';
import { switchyardDataConverter } from '../src/config/data-converter.js';
import { startDevServer } from '../src/server/dev-server.js';
import { createLogger } from '../src/worker/logger.js';
import { installTemporalRuntime } from '../src/worker/runtime.js';
import { benchWorker } from './tools.js';

const CALLS = Number(process.env.ANATOMY_CALLS ?? 10);
/** Lines of 80 bytes in the file each Read reads: 25 (2,000 bytes) by default; `ANATOMY_LINES=0` reads `one line`. */
const LINES = Number(process.env.ANATOMY_LINES ?? 25);
const DEPTH = Number(process.env.ANATOMY_DEPTH ?? 4);
/** `ANATOMY_SAMPLE=1`: also print each payload's JSON, arrays cut to their first item and long strings cut. */
const SAMPLE = process.env.ANATOMY_SAMPLE === '1';

function sampleOf(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (Array.isArray(item)) return item.slice(0, 1);
    if (typeof item === 'string' && item.length > 80) return `${item.slice(0, 40)}…(${item.length} chars)`;
    if (item !== null && typeof item === 'object' && !Array.isArray(item)) {
      const entries = Object.entries(item as Record<string, unknown>);
      // Outcomes by call id: the first only.
      if (entries.length > 2 && entries.every(([key]) => /^r\d+$/.test(key)))
        return Object.fromEntries(entries.slice(0, 1));
    }
    return item;
  });
}

/** Bytes of each value's JSON under its path, down to DEPTH levels (deeper values count at their ancestor). */
function fieldBytes(value: unknown, at: string, depth: number, into: Map<string, number>): void {
  const bytes = Buffer.byteLength(JSON.stringify(value) ?? '');
  if (depth === 0 || value === null || typeof value !== 'object') {
    into.set(at, (into.get(at) ?? 0) + bytes);
    return;
  }
  // The punctuation of this level (braces, keys, commas) counts at the level itself.
  let children = 0;
  const entries: Array<[string, unknown]> = Array.isArray(value)
    ? value.map((item) => ['[]', item])
    : Object.entries(value as Record<string, unknown>);
  for (const [key, child] of entries) {
    const childBytes = Buffer.byteLength(JSON.stringify(child) ?? '');
    children += childBytes;
    fieldBytes(child, `${at}.${key}`, depth - 1, into);
  }
  into.set(`${at} (keys, punctuation)`, (into.get(`${at} (keys, punctuation)`) ?? 0) + bytes - children);
}

/** The JSON payloads anywhere in a decoded history event, with a name for where each was found. */
function payloadsOf(value: unknown, at: string, out: Array<{ at: string; json: unknown; bytes: number }>): void {
  if (value === null || typeof value !== 'object') return;
  const record = value as Record<string, unknown>;
  if (record.data instanceof Uint8Array && record.metadata !== undefined) {
    const text = Buffer.from(record.data).toString('utf8');
    try {
      out.push({ at, json: JSON.parse(text) as unknown, bytes: record.data.length });
    } catch {
      out.push({ at: `${at} (not JSON)`, json: text, bytes: record.data.length });
    }
    return;
  }
  for (const [key, child] of Object.entries(record)) payloadsOf(child, `${at}.${key}`, out);
}

installTemporalRuntime(createLogger({ env: { SWITCHYARD_LOG_LEVEL: 'warn', SWITCHYARD_LOG_FORMAT: 'json' } }));
const server = await startDevServer({});
const cwd = await mkdtemp(path.join(os.tmpdir(), 'switchyard-anatomy-'));
await writeFile(path.join(cwd, 'file.txt'), LINES === 0 ? 'one line\n' : `${'x'.repeat(79)}\n`.repeat(LINES));
const taskQueue = `anatomy-${Date.now().toString(36)}`;
const native = await NativeConnection.connect({ address: server.address });
const worker = await benchWorker({ connection: native, taskQueue, cwd });
const running = worker.run();
const connection = await Connection.connect({ address: server.address });
try {
  const client = new SwitchyardClient({
    client: new Client({ connection, dataConverter: switchyardDataConverter }),
    taskQueue,
  });
  const reads = (count: number) =>
    Array.from({ length: count }, (_, index) => ({ id: `r${index}`, name: 'Read', input: { file_path: 'file.txt' } }));
  const session = await client.startSession(`anatomy-${taskQueue}`, { cwd });
  await session.executeTurn({ turnId: 'warm', calls: reads(1) });
  const before = (await session.workflow.fetchHistory()).events?.length ?? 0;
  const turn = await session.executeTurn({ turnId: 'measured', calls: reads(CALLS) });
  const events = (await session.workflow.fetchHistory()).events?.slice(before) ?? [];
  const modelText = turn.results.reduce((sum, result) => sum + Buffer.byteLength(result.modelContent), 0);
  let total = 0;
  const lines: string[] = [];
  for (const event of events) {
    const type = (proto.temporal.api.enums.v1.EventType[event.eventType ?? 0] ?? '?').replace(/^EVENT_TYPE_/, '');
    const bytes = proto.temporal.api.history.v1.HistoryEvent.encode(event).finish().length;
    total += bytes;
    lines.push(`\n## ${type}: ${bytes} bytes`);
    const payloads: Array<{ at: string; json: unknown; bytes: number }> = [];
    payloadsOf(event, 'event', payloads);
    for (const payload of payloads) {
      lines.push(`  payload ${payload.at}: ${payload.bytes} bytes`);
      if (SAMPLE) lines.push(`    sample: ${sampleOf(payload.json)}`);
      const fields = new Map<string, number>();
      fieldBytes(payload.json, '$', DEPTH, fields);
      for (const [field, fieldTotal] of [...fields].sort((a, b) => b[1] - a[1]).slice(0, 40))
        if (fieldTotal >= 20) lines.push(`    ${String(fieldTotal).padStart(7)}  ${field}`);
    }
  }
  process.stdout.write(
    `# A ${CALLS}-Read turn: ${events.length} events, ${total} bytes, ${Math.round(total / CALLS)} per call; model text ${modelText} bytes (${Math.round(modelText / CALLS)} per call)\n${lines.join('\n')}\n`,
  );
  await session.end();
} finally {
  worker.shutdown();
  await running;
  await connection.close();
  await native.close();
  await server.stop();
  await rm(cwd, { recursive: true, force: true });
}
