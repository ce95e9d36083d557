import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverSentEvents } from '../../src/client/model-formats/server-sent-events.js';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import { startConsole } from '../../src/console/console-server.js';
import type { RunningConsole } from '../../src/console/console-server.js';
import { pendingApprovalsQuery } from '../../src/contracts/messages.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';

// A session page's live channel: server-sent events that carry the page's sections when the session changes. The
// console here never refreshes on a timer (streamRefreshMs of ten minutes), so every message after the first is there
// because the stream saw the session change.

const TOKEN = 'stream-token-0123456789abcdef';

/** A server-sent event stream's messages as parsed JSON, one at a time. */
function messages(body: ReadableStream<Uint8Array>) {
  const events = serverSentEvents(body);
  return {
    async next(): Promise<Record<string, string>> {
      const { value, done } = await events.next();
      if (done === true) throw new Error('the stream ended');
      return JSON.parse(value.data) as Record<string, string>;
    },
    cancel: async () => {
      await events.return(undefined);
    },
  };
}

describe('console session stream', () => {
  let harness: Harness;
  let worker: Awaited<ReturnType<Harness['startWorker']>> | undefined;
  let console_: RunningConsole;
  let cwd: string;
  const sessions: SessionHandle[] = [];

  beforeAll(async () => {
    cwd = await scratchDir();
    harness = await createHarness({ defaultCwd: cwd });
    worker = await harness.startWorker();
    console_ = await startConsole({
      client: harness.client.client,
      port: 0,
      token: TOKEN,
      identity: 'stream-operator',
      streamRefreshMs: 600_000,
    });
  });

  afterAll(async () => {
    await Promise.allSettled(sessions.map((session) => session.workflow.terminate('stream test done')));
    await console_?.close();
    worker?.worker.shutdown();
    await worker?.done;
    await harness?.close();
  });

  const open = (sessionId: string, headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }) =>
    fetch(new URL(`/stream/session/${encodeURIComponent(sessionId)}`, console_.url), { headers });

  it('pushes a request that starts waiting, then its end, without a timed refresh', async () => {
    const session = await harness.startSession({ cwd });
    sessions.push(session);
    const response = await open(session.sessionId);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const stream = messages(response.body!);
    const first = await stream.next();
    expect(Object.keys(first).length).toBeGreaterThan(0);
    expect(JSON.stringify(first)).not.toContain('data-request=');

    const turn = session.executeTurn({
      turnId: 't1',
      calls: [{ id: 'b1', name: 'Bash', input: { command: 'echo pushed > pushed.txt', description: 'Write a file' } }],
    });
    turn.catch(() => undefined);
    let shown = first;
    while (!JSON.stringify(shown).includes('data-request=')) shown = await stream.next();
    const [request] = await session.workflow.query(pendingApprovalsQuery);
    expect(request).toBeDefined();
    expect(JSON.stringify(shown)).toContain(request!.requestId);
    expect(JSON.stringify(shown)).toContain('echo pushed &gt; pushed.txt');

    await session.interrupt('stream test over');
    expect((await turn).results[0]?.status).toBe('cancelled');
    while (JSON.stringify(shown).includes('data-request=')) shown = await stream.next();
    await stream.cancel();
  });

  // Each open page used to look at its session on its own: six viewers, six describes every check and six sets of
  // queries (each answered by the worker) per change. Viewers of one page now share one watch.
  it('reads a session once per change, not once per viewer, when several people have its page open', async () => {
    const session = await harness.startSession({ cwd });
    sessions.push(session);
    const service = harness.client.client.workflowService;
    const queryWorkflow = service.queryWorkflow;
    let pendingApprovalsReads = 0;
    service.queryWorkflow = function (this: unknown, ...args: Parameters<typeof queryWorkflow>) {
      if (args[0].query?.queryType === pendingApprovalsQuery.name) pendingApprovalsReads++;
      return queryWorkflow.apply(this, args);
    } as typeof queryWorkflow;
    const viewers = 6;
    const streams = [];
    try {
      for (let viewer = 0; viewer < viewers; viewer++) {
        const response = await open(session.sessionId);
        expect(response.status).toBe(200);
        streams.push(messages(response.body!));
      }
      const shown = await Promise.all(streams.map((stream) => stream.next()));
      pendingApprovalsReads = 0;
      const turn = session.executeTurn({
        turnId: 'shared',
        calls: [
          { id: 'b1', name: 'Bash', input: { command: 'echo shared > shared.txt', description: 'Write a file' } },
        ],
      });
      turn.catch(() => undefined);
      await Promise.all(
        streams.map(async (stream, index) => {
          while (!JSON.stringify(shown[index]).includes('data-request=')) shown[index] = await stream.next();
        }),
      );
      // Every viewer shows the request; the session was read once per change it went through on the way (a
      // handful), where one read per viewer would be six at least.
      expect(pendingApprovalsReads).toBeGreaterThan(0);
      expect(pendingApprovalsReads).toBeLessThan(viewers);
      await session.interrupt('shared stream test over');
      await turn;
    } finally {
      service.queryWorkflow = queryWorkflow;
      await Promise.all(streams.map((stream) => stream.cancel()));
    }
  });

  it('needs the token, like every page', async () => {
    const session = await harness.startSession({ cwd });
    sessions.push(session);
    const refused = await open(session.sessionId, {});
    expect(refused.status).toBe(401);
    await refused.body?.cancel();
    const wrong = await open(session.sessionId, { authorization: 'Bearer not-the-token-0123456789' });
    expect(wrong.status).toBe(401);
    await wrong.body?.cancel();
  });

  it('refuses a stream setting that is not a positive number of ms', async () => {
    await expect(
      startConsole({ client: harness.client.client, port: 0, token: TOKEN, identity: 'x', streamCheckMs: 0 }),
    ).rejects.toThrow(/streamCheckMs must be a positive number of ms/);
  });

  it('close() stops its streams and returns only once no call to Temporal is in flight', async () => {
    const session = await harness.startSession({ cwd });
    sessions.push(session);
    // A console of its own on the same client, whose describe calls are counted as they start and as they end.
    const service = harness.client.client.workflowService;
    const describe = service.describeWorkflowExecution;
    let started = 0;
    let ended = 0;
    service.describeWorkflowExecution = async function (this: unknown, ...args: Parameters<typeof describe>) {
      started++;
      try {
        return await describe.apply(this, args);
      } finally {
        ended++;
      }
    } as typeof describe;
    try {
      const closing = await startConsole({
        client: harness.client.client,
        port: 0,
        token: TOKEN,
        identity: 'stream-operator',
        streamCheckMs: 5,
      });
      const response = await fetch(new URL(`/stream/session/${encodeURIComponent(session.sessionId)}`, closing.url), {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      const stream = messages(response.body!);
      await stream.next();
      while (started < 5) await new Promise((resolve) => setTimeout(resolve, 5));
      await closing.close();
      expect(ended).toBe(started);
      const afterClose = started;
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(started).toBe(afterClose);
      await stream.cancel().catch(() => undefined);
    } finally {
      service.describeWorkflowExecution = describe;
    }
  });
});
