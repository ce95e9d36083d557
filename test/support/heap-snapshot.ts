import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { waitFor } from './wait-for.js';

/** Environment for spawnWorkerProcess that loads heap-probe.cjs into the worker process, writing snapshots to `dir`. */
export function heapProbeEnv(dir: string): Record<string, string> {
  const probe = path.resolve('test/support/heap-probe.cjs');
  return {
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${probe}`.trim(),
    SWITCHYARD_HEAP_PROBE_DIR: dir,
  };
}

let taken = 0;

/** Heap snapshots of the workflow thread(s) of a worker process started with heapProbeEnv(dir); returns their files. */
export async function snapshotWorkflowThreads(worker: ChildProcess, dir: string): Promise<string[]> {
  taken += 1;
  const done = path.join(dir, `done-${taken}`);
  worker.kill('SIGUSR2');
  await waitFor(
    async () => existsSync(done),
    (exists) => exists,
    { what: 'the heap snapshot of the workflow thread', timeoutMs: 60_000 },
  );
  const files = JSON.parse(await readFile(done, 'utf8')) as string[] | { error: string };
  if (!Array.isArray(files)) throw new Error(`heap probe failed: ${files.error}`);
  return files;
}

interface HeapSnapshotFile {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/**
 * Reads a `.heapsnapshot` file and counts, for each name in `names`, the live objects whose constructor has that
 * name, and for each marker in `markers`, the strings that contain it.
 */
export async function countInHeapSnapshot(
  file: string,
  query: { names?: readonly string[]; markers?: readonly string[] },
): Promise<{ objects: Record<string, number>; strings: Record<string, number> }> {
  const snapshot = JSON.parse(await readFile(file, 'utf8')) as HeapSnapshotFile;
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const objects = Object.fromEntries((query.names ?? []).map((name) => [name, 0]));
  const strings = Object.fromEntries((query.markers ?? []).map((marker) => [marker, 0]));
  const { nodes } = snapshot;
  for (let at = 0; at < nodes.length; at += width) {
    const type = types[nodes[at + typeAt] as number];
    const name = snapshot.strings[nodes[at + nameAt] as number] as string;
    if (type === 'object' && name in objects) objects[name] = (objects[name] as number) + 1;
    else if (type === 'string' || type === 'concatenated string' || type === 'sliced string') {
      for (const marker of query.markers ?? [])
        if (name.includes(marker)) strings[marker] = (strings[marker] as number) + 1;
    }
  }
  return { objects, strings };
}
