// The main thread's watch over a workflow thread's activations (src/worker/activation-watch.ts), with stand-in
// threads: the marks a thread leaves are made by the same source text the thread entry runs.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { StartedThread, ThreadClient } from '../../src/worker/activation-watch.js';
import { WatchedThreadClient, threadWatchSource } from '../../src/worker/activation-watch.js';

interface Watch {
  begin(runId: string): void;
  end(): void;
}

/** A stand-in workflow thread: answers what it is sent unless told to hold an activation, and records what came. */
class StandInThread {
  readonly received: Array<Record<string, unknown>> = [];
  readonly watch: Watch;
  terminated = false;
  #held: Array<(error: Error) => void> = [];

  constructor(state: SharedArrayBuffer) {
    this.watch = new Function('watchState', `${threadWatchSource('watchState')}\nreturn watch;`)(state) as Watch;
  }

  readonly client: ThreadClient = {
    send: (input) => {
      this.received.push(input);
      if (input.type === 'activate-workflow' && input.hold === true) {
        // Stuck: marked busy, never answered; terminating the thread fails the request as the SDK's client does.
        this.watch.begin(String(input.runId));
        return new Promise((_resolve, reject) => this.#held.push(reject));
      }
      if (input.type === 'activate-workflow')
        return Promise.resolve({ type: 'activation-completion', completion: { runId: input.runId, successful: {} } });
      return Promise.resolve(undefined);
    },
    destroy: () => Promise.resolve(),
    workerThread: {
      terminate: () => {
        this.terminated = true;
        for (const reject of this.#held) reject(new Error('Workflow Worker Thread exited prematurely'));
        return Promise.resolve(1);
      },
    },
  };
}

function watched(timeoutMs: number): { client: WatchedThreadClient; threads: StandInThread[] } {
  const threads: StandInThread[] = [];
  const start = (state: SharedArrayBuffer): StartedThread => {
    const thread = new StandInThread(state);
    threads.push(thread);
    return { client: thread.client, ready: Promise.resolve() };
  };
  const logger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
  return { client: new WatchedThreadClient({ start, timeoutMs, logger }), threads };
}

const create = (runId: string) => ({ type: 'create-workflow', options: { info: { runId } } });
const activate = (runId: string, hold = false) => ({ type: 'activate-workflow', runId, ...(hold ? { hold } : {}) });

describe('the watch over a workflow thread', () => {
  it('passes requests through and counts the workflows its thread holds', async () => {
    const { client, threads } = watched(1_000);
    try {
      await client.send(create('a'));
      await client.send(create('b'));
      expect(client.getActiveWorkflowCount()).toBe(2);
      expect(await client.send(activate('a'))).toMatchObject({ completion: { runId: 'a', successful: {} } });
      await client.send({ type: 'dispose-workflow', runId: 'a' });
      expect(client.getActiveWorkflowCount()).toBe(1);
      expect(threads).toHaveLength(1);
      expect(threads[0]?.received.map((request) => request.type)).toEqual([
        'create-workflow',
        'create-workflow',
        'activate-workflow',
        'dispose-workflow',
      ]);
    } finally {
      await client.destroy();
    }
  });

  it('fails an activation still running after the timeout, replaces its thread, and fails the runs it held once', async () => {
    const { client, threads } = watched(50);
    try {
      await client.send(create('stuck'));
      await client.send(create('waiting'));
      const stuck = client.send(activate('stuck', true));
      const answer = (await stuck) as { completion: { runId: string; failed: { failure: { message: string } } } };
      expect(answer.completion.runId).toBe('stuck');
      expect(answer.completion.failed.failure.message).toBe('Script execution timed out after 50ms');
      expect(threads).toHaveLength(2);
      expect(threads[0]?.terminated).toBe(true);
      expect(client.getActiveWorkflowCount()).toBe(0);
      // The run that waited in the old thread: its next activation fails (so Temporal replays it), its eviction is
      // answered here, and it is created afresh in the new thread.
      const next = (await client.send(activate('waiting'))) as {
        completion: { failed: { failure: { message: string } } };
      };
      expect(next.completion.failed.failure.message).toMatch(/workflow thread that held this run was replaced/);
      await client.send({ type: 'dispose-workflow', runId: 'waiting' });
      await client.send(create('waiting'));
      expect(await client.send(activate('waiting'))).toMatchObject({ completion: { successful: {} } });
      expect(threads[1]?.received.map((request) => request.type)).toEqual(['create-workflow', 'activate-workflow']);
      expect(client.getActiveWorkflowCount()).toBe(1);
    } finally {
      await client.destroy();
    }
  });

  it('leaves alone a thread whose activations each end within the timeout, however long they run in all', async () => {
    const { client, threads } = watched(60);
    try {
      const watch = threads[0]?.watch;
      for (let index = 0; index < 8; index++) {
        watch?.begin(`run-${index}`);
        await sleep(25);
        watch?.end();
      }
      expect(threads).toHaveLength(1);
      expect(threads[0]?.terminated).toBe(false);
    } finally {
      await client.destroy();
    }
  });
});
