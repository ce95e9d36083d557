// The isolate timeout of Switchyard's workflow threads, kept from the main thread. Node enforces a `runInContext`
// timeout by starting a watchdog thread on every call and joining it at the end; on this project's 2-core machines
// that start and join cost 0.2 to 0.3 ms of the workflow thread per activation, two activations in every one-Read
// turn (BENCHMARKS.md, "Where a one-Read turn's time goes"). Here each workflow thread marks, in memory it shares with
// the main thread, when an activation's synchronous part begins and ends, and which run it belongs to; the main thread
// looks at the marks a few times per timeout. An activation still running after the isolate timeout is what the
// watchdog would have stopped: its workflow task fails with the same "Script execution timed out" message, and since
// nothing can stop JavaScript running in another thread short of terminating that thread, the thread is replaced by a
// fresh one. The runs it held are evicted as a worker's cache evicts them: their next activation fails its workflow
// task, and Temporal replays them on the new thread from their history.
import { DefaultFailureConverter, defaultPayloadConverter } from '@temporalio/common';
import type { Logger } from '@temporalio/common';

/** Int32 slots of the shared state: 1 while an activation's synchronous part runs, and how many have begun. */
const BUSY = 0;
const BEGUN = 1;
/** Where the run id of the running activation starts (Uint16: its length, then its characters). */
const RUN_ID_OFFSET_BYTES = 8;
/** Characters of a run id the state holds (a Temporal run id is a 36-character UUID). */
const RUN_ID_CHARS = 64;
/** Bytes of one workflow thread's shared state. */
export const WATCH_STATE_BYTES = RUN_ID_OFFSET_BYTES + 2 * (RUN_ID_CHARS + 1);

/**
 * The thread side of the watch, as source text for the thread entry (src/worker/workflow-threads.ts): `begin(runId)`
 * before an activation's synchronous part, `end()` after it, on the state the main thread handed over.
 */
export function threadWatchSource(stateExpression: string): string {
  return [
    `const watchSlots = new Int32Array(${stateExpression}, 0, 2);`,
    `const watchRunId = new Uint16Array(${stateExpression}, ${RUN_ID_OFFSET_BYTES}, ${RUN_ID_CHARS + 1});`,
    'const watch = {',
    '  begin(runId) {',
    `    const length = Math.min(runId.length, ${RUN_ID_CHARS});`,
    '    watchRunId[0] = length;',
    '    for (let index = 0; index < length; index += 1) watchRunId[index + 1] = runId.charCodeAt(index);',
    `    Atomics.add(watchSlots, ${BEGUN}, 1);`,
    `    Atomics.store(watchSlots, ${BUSY}, 1);`,
    '  },',
    `  end() { Atomics.store(watchSlots, ${BUSY}, 0); },`,
    '};',
  ].join('\n');
}

/** The SDK's client of one workflow thread (`WorkerThreadClient`), as this module uses it. */
export interface ThreadClient {
  send(input: Record<string, unknown>): Promise<unknown>;
  destroy(): Promise<void>;
  workerThread: { terminate(): Promise<number> };
}

/** A started workflow thread: its client, and the SDK's `init` request to it (the thread is usable once answered). */
export interface StartedThread {
  client: ThreadClient;
  ready: Promise<unknown>;
}

/**
 * One workflow thread of the pool, as the SDK's `ThreadedVMWorkflowCreator` and its per-run proxies use it (`send`,
 * `destroy`, `getActiveWorkflowCount`), with its activations watched (see above) and the thread replaced when one
 * outlives the isolate timeout.
 */
export class WatchedThreadClient {
  readonly #start: (state: SharedArrayBuffer) => StartedThread;
  readonly #timeoutMs: number;
  readonly #logger: Logger;
  #state: SharedArrayBuffer;
  #client: ThreadClient;
  #starting: Promise<unknown> | undefined;
  /** Bumped at each replacement: a request answered by an older thread's end is not a failure of this worker. */
  #generation = 0;
  /** The thread generation each cached run was created in. */
  readonly #runs = new Map<string, number>();
  #active = 0;
  /** Runs whose activation outlived the timeout, until their activation is answered with it. */
  readonly #timedOut = new Set<string>();
  /** The begun-count the last look saw busy, and when. */
  #seen = { begun: -1, at: 0 };
  readonly #timer: ReturnType<typeof setInterval>;

  constructor(options: { start: (state: SharedArrayBuffer) => StartedThread; timeoutMs: number; logger: Logger }) {
    this.#start = options.start;
    this.#timeoutMs = options.timeoutMs;
    this.#logger = options.logger;
    this.#state = new SharedArrayBuffer(WATCH_STATE_BYTES);
    const started = this.#start(this.#state);
    this.#client = started.client;
    this.#starting = started.ready;
    this.#timer = setInterval(() => this.#look(), Math.max(10, Math.min(500, this.#timeoutMs / 10)));
    this.#timer.unref();
  }

  /** Resolves once the first thread has its bundle. */
  async ready(): Promise<void> {
    await this.#starting;
  }

  getActiveWorkflowCount(): number {
    return this.#active;
  }

  async send(input: Record<string, unknown>): Promise<unknown> {
    if (this.#starting !== undefined) {
      const starting = this.#starting;
      await starting;
      if (this.#starting === starting) this.#starting = undefined;
    }
    const generation = this.#generation;
    const { type } = input;
    const runId = runIdOf(input);
    const createdIn = runId === undefined ? undefined : this.#runs.get(runId);
    if (type === 'create-workflow' && runId !== undefined) {
      this.#runs.set(runId, generation);
      this.#active += 1;
    } else if (runId !== undefined && createdIn !== undefined && createdIn !== generation) {
      // A run the replaced thread held: answered here until the worker evicts it (its dispose).
      if (type === 'dispose-workflow') this.#runs.delete(runId);
      return this.#answerForLostRun(input, runId);
    } else if (type === 'dispose-workflow' && runId !== undefined && this.#runs.delete(runId)) {
      this.#active -= 1;
    }
    try {
      return await this.#client.send(input);
    } catch (error) {
      if (generation === this.#generation || runId === undefined) throw error;
      // The thread was replaced while this request waited for it.
      if (type === 'create-workflow') return await this.send(input);
      return this.#answerForLostRun(input, runId);
    }
  }

  async destroy(): Promise<void> {
    clearInterval(this.#timer);
    await this.#starting;
    await this.#client.destroy();
  }

  /** A look at the thread's marks: an activation seen busy for the whole timeout has its thread replaced. */
  #look(): void {
    const slots = new Int32Array(this.#state, 0, 2);
    if (Atomics.load(slots, BUSY) !== 1) {
      this.#seen = { begun: -1, at: 0 };
      return;
    }
    const begun = Atomics.load(slots, BEGUN);
    const now = Date.now();
    if (begun !== this.#seen.begun) {
      this.#seen = { begun, at: now };
      return;
    }
    if (now - this.#seen.at < this.#timeoutMs) return;
    const chars = new Uint16Array(this.#state, RUN_ID_OFFSET_BYTES, RUN_ID_CHARS + 1);
    this.#replace(String.fromCharCode(...chars.subarray(1, 1 + (chars[0] ?? 0))));
  }

  #replace(stuckRunId: string): void {
    const old = this.#client;
    this.#generation += 1;
    this.#active = 0;
    this.#timedOut.add(stuckRunId);
    this.#seen = { begun: -1, at: 0 };
    this.#logger.warn(
      `Workflow run ${stuckRunId} ran over the isolate timeout (${this.#timeoutMs} ms) in one activation: its workflow ` +
        'task fails, and its workflow thread is replaced (the other runs it held are replayed from their history)',
      { runId: stuckRunId },
    );
    this.#state = new SharedArrayBuffer(WATCH_STATE_BYTES);
    const started = this.#start(this.#state);
    this.#client = started.client;
    this.#starting = started.ready;
    old.workerThread.terminate().catch(() => undefined);
  }

  /** The answer to a request for a run the replaced thread held: its task fails, so the run is replayed afresh. */
  #answerForLostRun(input: Record<string, unknown>, runId: string): unknown {
    switch (input.type) {
      case 'activate-workflow': {
        const message = this.#timedOut.delete(runId)
          ? `Script execution timed out after ${this.#timeoutMs}ms`
          : 'The workflow thread that held this run was replaced after another run ran over the isolate timeout';
        // The worker's frames would say nothing of the workflow: the message alone.
        const error = Object.assign(new Error(message), { stack: `Error: ${message}` });
        const failure = new DefaultFailureConverter().errorToFailure(error, defaultPayloadConverter);
        return { type: 'activation-completion', completion: { runId, failed: { failure } } };
      }
      case 'extract-sink-calls':
        return { type: 'sink-calls', calls: [] };
      default:
        return undefined;
    }
  }
}

function runIdOf(input: Record<string, unknown>): string | undefined {
  if (typeof input.runId === 'string') return input.runId;
  const options = input.options as { info?: { runId?: unknown } } | undefined;
  return typeof options?.info?.runId === 'string' ? options.info.runId : undefined;
}
