import { access, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { SessionEvent } from '../../src/contracts/events.js';
import { awaitResultsUpdate } from '../../src/contracts/messages.js';
import type { ToolCall } from '../../src/contracts/tool-call.js';
import type { ToolResult } from '../../src/contracts/tool-result.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { createHarness, scratchDir } from '../support/harness.js';
import { historyText } from '../support/history-text.js';
import type { Harness } from '../support/harness.js';
import { allEvents, answer, eventsOfType, rejectionOf, waitForPendingApprovals } from '../support/session-probes.js';
import { sleepTool } from '../support/test-tools.js';
import { waitFor } from '../support/wait-for.js';

const exists = (file: string): Promise<boolean> =>
  access(file).then(
    () => true,
    () => false,
  );
const ms = (iso: string | undefined): number => Date.parse(iso ?? 'NaN');

async function collect(iterable: AsyncIterable<ToolResult>): Promise<ToolResult[]> {
  const results: ToolResult[] = [];
  for await (const result of iterable) results.push(result);
  return results;
}

/** A text file whose `Read` result is about `chars` characters (numbered lines of 50 characters). */
async function writeLines(file: string, chars: number): Promise<void> {
  const lines = Math.ceil(chars / 58);
  await writeFile(
    file,
    Array.from({ length: lines }, (_, index) => `line ${index} `.padEnd(50, '.')).join('\n') + '\n',
  );
}

/**
 * Claims of docs/CONCEPTS.md that no other test checked, each against a real session: turn order,
 * the events a UI follows, and streaming turns with approvals, the aggregate budget and rejected `addCalls`.
 */
describe('README claims (real server; real tools unless a comment says otherwise)', () => {
  let harness: Harness;
  let worker: { worker: Worker; done: Promise<void> };
  beforeAll(async () => {
    // The real built-ins, plus the stand-in Sleep (test/support/test-tools.ts): no real tool sleeps on command.
    harness = await createHarness({ tools: [...builtinTools(), sleepTool] });
    worker = await harness.startWorker();
  });
  afterAll(async () => {
    worker.worker.shutdown();
    await worker.done;
    await harness.close();
  });

  const ofTurn = (events: readonly SessionEvent[], turnId: string): SessionEvent[] =>
    events.filter((event) => event.turnId === turnId);

  it('runs turns sent at the same time one at a time, in the order they were accepted', async () => {
    const session = await harness.startSession({ cwd: await scratchDir() });
    // Stand-in Sleep: each turn takes a second, so turns that did not wait for each other would overlap.
    const turnIds = ['q1', 'q2', 'q3'];
    const results = await Promise.all(
      turnIds.map((turnId) =>
        session.executeTurn({
          turnId,
          calls: [{ id: `${turnId}-call`, name: 'Sleep', input: { ms: 1_000, label: `${turnId} done` } }],
        }),
      ),
    );
    expect(results.map((result) => result.results[0]?.modelContent)).toEqual(['q1 done', 'q2 done', 'q3 done']);

    // The order the session accepted the updates in (history), whatever order the client's requests raced in.
    const history = (await session.workflow.fetchHistory()).events ?? [];
    const accepted = history.flatMap(
      (event) => event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.meta?.updateId ?? [],
    );
    expect([...accepted].sort()).toEqual(turnIds);
    // The event log: each turn's events form one block, from TurnStarted to TurnCompleted, in acceptance order.
    const events = await allEvents(session);
    const blocks = events
      .map((event) => event.turnId)
      .filter((turnId, index, all) => index === 0 || all[index - 1] !== turnId);
    expect(blocks).toEqual(accepted);
    for (const turnId of turnIds) {
      const own = ofTurn(events, turnId);
      expect(own[0]?.type).toBe('TurnStarted');
      expect(own.at(-1)?.type).toBe('TurnCompleted');
    }
    // And by the tools' own clocks: a turn's call started after the call of the turn before it finished.
    const byId = new Map(results.map((result) => [result.turnId, result.results[0]]));
    for (let index = 1; index < accepted.length; index += 1) {
      const before = byId.get(accepted[index - 1] ?? '');
      const after = byId.get(accepted[index] ?? '');
      expect(ms(after?.timeline?.startedAt)).toBeGreaterThanOrEqual(ms(before?.timeline?.finishedAt));
    }
  });

  it('records ToolCallError, ToolBatchComplete and TurnCompleted alike for whole and streaming turns', async () => {
    const cwd = await scratchDir();
    await writeFile(path.join(cwd, 'notes.txt'), 'alpha\n');
    const session = await harness.startSession({ cwd });
    const calls: ToolCall[] = [
      { id: 'ok', name: 'Read', input: { file_path: 'notes.txt' } },
      { id: 'missing', name: 'Read', input: { file_path: 'nope.txt' } },
      { id: 'unknown', name: 'Nope', input: {} },
      { id: 'exit', name: 'Bash', input: { command: 'cat nope.txt' } },
    ];
    const whole = (await session.executeTurn({ turnId: 'whole', calls })).results;
    const stream = session.streamTurn('streamed');
    await stream.add(...calls.slice(0, 2));
    await stream.add(...calls.slice(2));
    await stream.end();
    const streamed = await collect(stream);

    const events = await allEvents(session);
    for (const [turnId, results] of [
      ['whole', whole],
      ['streamed', streamed],
    ] as const) {
      const own = ofTurn(events, turnId);
      expect(results.map((result) => result.status)).toEqual(['success', 'error', 'error', 'error']);
      // One ToolCallError per failed call, carrying the message the model got; ToolCallResult for the success.
      const errors = eventsOfType(own, 'ToolCallError');
      expect(errors.map((event) => event.callId).sort()).toEqual(['exit', 'missing', 'unknown']);
      for (const event of errors) {
        const result = results.find((entry) => entry.callId === event.callId);
        expect(event).toMatchObject({ status: 'error', message: result?.modelContent, errorCode: result?.errorCode });
      }
      expect(errors.find((event) => event.callId === 'unknown')?.message).toBe('Tool not found: Nope');
      expect(errors.find((event) => event.callId === 'exit')?.message).toMatch(/Exit code 1$/);
      expect(eventsOfType(own, 'ToolCallResult').map((event) => event.callId)).toEqual(['ok']);
      // One ToolBatchComplete per group: the two Reads, the unknown tool alone (fail closed), the Bash after it.
      expect(
        eventsOfType(own, 'ToolBatchComplete').map(({ groupIndex, succeeded, failed }) => ({
          groupIndex,
          succeeded,
          failed,
        })),
      ).toEqual([
        { groupIndex: 0, succeeded: 1, failed: 1 },
        { groupIndex: 1, succeeded: 0, failed: 1 },
        { groupIndex: 2, succeeded: 0, failed: 1 },
      ]);
      // TurnCompleted closes the turn's events.
      expect(own.at(-1)).toMatchObject({ type: 'TurnCompleted', stopped: false, resultCount: 4 });
    }
  });

  it("ToolCallResult carries the output's bytes, the budget policy and the artifact, as the result does", async () => {
    const cwd = await scratchDir();
    await writeFile(path.join(cwd, 'small.txt'), 'alpha\n');
    const session = await harness.startSession({ cwd });
    const { results } = await session.executeTurn({
      turnId: 'sizes',
      calls: [
        { id: 'small', name: 'Read', input: { file_path: 'small.txt' } },
        // 80,000 bytes of output: over the Bash budget of 30,000, so the whole output goes to an artifact.
        { id: 'big', name: 'Bash', input: { command: "printf '%080000d' 0" } },
      ],
    });
    const events = eventsOfType(ofTurn(await allEvents(session), 'sizes'), 'ToolCallResult');
    const small = events.find((event) => event.callId === 'small');
    const big = events.find((event) => event.callId === 'big');
    const smallBytes = Buffer.byteLength(results[0]?.modelContent ?? '', 'utf8');
    expect(small).toMatchObject({
      originalBytes: smallBytes,
      modelBytes: smallBytes,
      truncated: false,
      permissionWaitMs: 0,
    });
    expect(small).not.toHaveProperty('policy');
    expect(results[1]?.budget).toMatchObject({ truncated: true, originalBytes: 80_000, policy: 'artifact' });
    expect(big).toMatchObject({
      originalBytes: 80_000,
      modelBytes: results[1]?.budget?.modelBytes,
      truncated: true,
      policy: 'artifact',
      artifact: results[1]?.budget?.artifact,
    });
    expect(big?.artifact).toMatch(/^switchyard-artifact:\/\//);
  });

  it('streaming: a call waiting for approval does not hold back the calls before it, and approvals work as in whole turns', async () => {
    const cwd = await scratchDir();
    await writeFile(path.join(cwd, 'notes.txt'), 'alpha\n');
    const session = await harness.startSession({ cwd });
    const turn = session.streamTurn('s');
    // WebFetch of a loopback address asks every time; it is concurrency-safe, so it shares the Reads' group.
    await turn.add(
      { id: 'read', name: 'Read', input: { file_path: 'notes.txt' } },
      { id: 'fetch', name: 'WebFetch', input: { url: 'http://127.0.0.1:9/never' } },
      { id: 'grep', name: 'Grep', input: { pattern: 'alpha' } },
      { id: 'write', name: 'Write', input: { file_path: 'out.txt', content: 'approved\n' } },
    );
    await turn.end();
    const results = turn.results();
    // The Read before the waiting WebFetch is handed out with no answer given (were it held back, this would never
    // resolve and the test would time out).
    const first = await results.next();
    expect(first.value).toMatchObject({ callId: 'read', status: 'success' });
    const [fetchRequest] = await waitForPendingApprovals(session);
    expect(fetchRequest).toMatchObject({ callId: 'fetch', toolName: 'WebFetch' });
    // The Grep after it runs meanwhile (its result waits for its turn in call order).
    await waitFor(
      () => allEvents(session),
      (events) => eventsOfType(events, 'ToolCallResult').some((event) => event.callId === 'grep'),
      { what: 'the Grep to finish', timeoutMs: 60_000 },
    );
    if (fetchRequest === undefined) throw new Error('no pending approval');
    await answer(session, fetchRequest, 'deny');
    expect((await results.next()).value).toMatchObject({ callId: 'fetch', status: 'denied' });
    expect((await results.next()).value).toMatchObject({
      callId: 'grep',
      status: 'success',
      modelContent: path.join(cwd, 'notes.txt'),
    });
    // The Write (exclusive, after the group) asks next; nothing is written until it is approved.
    const [writeRequest] = await waitForPendingApprovals(session);
    expect(writeRequest).toMatchObject({ callId: 'write', toolName: 'Write' });
    expect(writeRequest?.preview).toContain('+approved');
    expect(await exists(path.join(cwd, 'out.txt'))).toBe(false);
    if (writeRequest === undefined) throw new Error('no pending approval');
    await answer(session, writeRequest, 'allow');
    expect((await results.next()).value).toMatchObject({ callId: 'write', status: 'success' });
    expect((await results.next()).done).toBe(true);
    expect(await exists(path.join(cwd, 'out.txt'))).toBe(true);
  });

  it('streaming: results taken together compete for the aggregate budget, and results handed out earlier never change', async () => {
    const cwd = await scratchDir();
    await writeLines(path.join(cwd, 'big.txt'), 8_000);
    await writeLines(path.join(cwd, 'small.txt'), 5_000);
    const session = await harness.startSession({ cwd, aggregateBudgetChars: 12_000 });
    const big: ToolCall = { id: 'big', name: 'Read', input: { file_path: 'big.txt' } };
    const small: ToolCall = { id: 'small', name: 'Read', input: { file_path: 'small.txt' } };
    const envelope = (result: ToolResult | undefined): boolean =>
      result?.modelContent.startsWith('<persisted-output>') === true;

    // Taken together (both finished before the first awaitResults, the turn still open): 13,000 characters over
    // 12,000, so the largest, the big Read, is replaced by its envelope.
    const together = session.streamTurn('together');
    await together.add(big, small);
    await waitFor(
      () => allEvents(session),
      (events) => eventsOfType(ofTurn(events, 'together'), 'ToolCallResult').length === 2,
      { what: 'both Reads to finish', timeoutMs: 60_000 },
    );
    const taken = together.results();
    const both = [(await taken.next()).value as ToolResult, (await taken.next()).value as ToolResult];
    expect(both.map((result) => result.callId)).toEqual(['big', 'small']);
    expect(both.map(envelope)).toEqual([true, false]);
    await together.end();
    expect((await taken.next()).done).toBe(true);

    // Taken one by one: the big Read fits alone and is handed out whole; once handed out it cannot change, so the
    // small Read that follows is the one replaced.
    const apart = session.streamTurn('apart');
    await apart.add(big);
    const results = apart.results();
    const firstBig = (await results.next()).value as ToolResult;
    expect(envelope(firstBig)).toBe(false);
    await apart.add(small);
    await apart.end();
    const thenSmall = (await results.next()).value as ToolResult;
    expect(envelope(thenSmall)).toBe(true);
    expect(thenSmall.budget).toMatchObject({ truncated: true, policy: 'artifact' });
    expect(await harness.client.readArtifact(thenSmall.budget?.artifact ?? '')).toBe(
      await readNumbered(cwd, 'small.txt', session),
    );
    // Read back after the turn ended, the first hand-out is exactly what the caller got then.
    const reread = await session.workflow.executeUpdate(awaitResultsUpdate, { args: [{ turnId: 'apart', since: 0 }] });
    expect(reread.results).toEqual([firstBig, thenSmall]);
  });

  it('rejects bad addCalls and oversized executeTurn requests in the validator, naming the reason, and the turn carries on', async () => {
    const cwd = await scratchDir();
    await writeFile(path.join(cwd, 'notes.txt'), 'alpha\n');
    const session = await harness.startSession({ cwd, maxCallsPerTurn: 3 });
    const read = (id: string): ToolCall => ({ id, name: 'Read', input: { file_path: 'notes.txt' } });

    expect(
      await rejectionOf(
        session.executeTurn({
          turnId: 'whole-too-many',
          calls: ['rejected-w1', 'rejected-w2', 'rejected-w3', 'rejected-w4'].map(read),
        }),
      ),
    ).toMatch(/"whole-too-many" has 4 calls, over this session's limit of 3 calls per turn \(maxCallsPerTurn\)/);
    const tooManyAtOnce = session.streamTurn('stream-too-many');
    expect(
      await rejectionOf(tooManyAtOnce.add(...['rejected-s1', 'rejected-s2', 'rejected-s3', 'rejected-s4'].map(read))),
    ).toMatch(/has 4 calls, over this session's limit of 3/);

    const turn = session.streamTurn('s');
    expect(await rejectionOf(turn.add(read('a'), read('a')))).toMatch(/duplicate call id "a"/);
    // A Write that waits for approval keeps the turn open while the rejections below arrive.
    const accepted = { file_path: 'out.txt', content: 'accepted-content\n' };
    await turn.add(read('a'), { id: 'b', name: 'Write', input: accepted });
    await waitForPendingApprovals(session);
    expect(await rejectionOf(turn.add(read('a')))).toBe('duplicate call id "a" in turn "s"');
    expect(await rejectionOf(turn.add(read('rejected-c'), read('rejected-d')))).toMatch(
      /"s" has 4 calls, over this session's limit of 3 calls per turn/,
    );
    expect(await rejectionOf(session.executeTurn({ turnId: 's', calls: [read('rejected-x')] }))).toMatch(
      /"s" is a streaming turn: use addCalls and awaitResults/,
    );
    await turn.end();
    expect(await rejectionOf(turn.add(read('rejected-e')))).toBe('Turn "s" is done: no more calls can be added');

    const [request] = await session.pendingApprovals();
    if (request === undefined) throw new Error('no pending approval');
    await answer(session, request, 'allow');
    const results = await collect(turn);
    // Only the accepted calls ran; the rejected requests never entered the session's history.
    expect(results.map((result) => [result.callId, result.status])).toEqual([
      ['a', 'success'],
      ['b', 'success'],
    ]);
    // (Payloads decoded: the accepted Write's content is found, so the search would see a rejected call's id.)
    const history = historyText(await session.workflow.fetchHistory());
    expect(history).toContain('accepted-content');
    expect(history).not.toContain('rejected-');

    await session.executeTurn({ turnId: 'whole', calls: [read('w')] });
    expect(await rejectionOf(session.streamTurn('whole').add(read('late')))).toBe(
      'Turn "whole" is a whole turn (executeTurn) or has ended; a streaming turn needs a new turnId',
    );
  });
});

/** The file as `Read` numbers it: what the artifact of a replaced Read holds. */
async function readNumbered(cwd: string, file: string, session: SessionHandle): Promise<string> {
  const fresh = await session.executeTurn({
    turnId: `reference-${file}`,
    calls: [{ id: 'reference', name: 'Read', input: { file_path: path.join(cwd, file) } }],
  });
  return fresh.results[0]?.modelContent ?? '';
}
