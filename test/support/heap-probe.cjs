// Loaded with `--require` into a spawned worker process (see heapSnapshotOfWorkflowThreads in heap-snapshot.ts) when
// SWITCHYARD_HEAP_PROBE_DIR is set. On SIGUSR2 it writes a heap snapshot of every worker thread of the process (the
// workflow thread holds the sessions' workflow state) to that dir, then a `done-<n>` file naming them.
// CommonJS because `--require` preloads also run in worker threads, where this file does nothing.
'use strict';
const { isMainThread } = require('node:worker_threads');
const fs = require('node:fs');
const path = require('node:path');
const { pipeline } = require('node:stream/promises');

const dir = process.env.SWITCHYARD_HEAP_PROBE_DIR;
if (dir && isMainThread) {
  const workerThreads = require('node:worker_threads');
  const threads = new Set();
  const Original = workerThreads.Worker;
  // The SDK looks `Worker` up on the module object when it starts its workflow thread, so a subclass put there sees it.
  workerThreads.Worker = class TrackedWorker extends Original {
    constructor(...args) {
      super(...args);
      threads.add(this);
      this.once('exit', () => threads.delete(this));
    }
  };
  let taken = 0;
  process.on('SIGUSR2', () => {
    taken += 1;
    const n = taken;
    (async () => {
      const files = [];
      let index = 0;
      for (const thread of threads) {
        const file = path.join(dir, `thread-${index}-${n}.heapsnapshot`);
        await pipeline(await thread.getHeapSnapshot(), fs.createWriteStream(file));
        files.push(file);
        index += 1;
      }
      fs.writeFileSync(path.join(dir, `done-${n}`), JSON.stringify(files));
    })().catch((error) => fs.writeFileSync(path.join(dir, `done-${n}`), JSON.stringify({ error: String(error) })));
  });
}
