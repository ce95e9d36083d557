import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { SessionEvent } from '../../src/contracts/events.js';
import type { ToolResult } from '../../src/contracts/tool-result.js';
import { conditionTools } from '../support/condition-tools.js';
import { createHarness, scratchDir, uniqueName } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { testTools } from '../support/test-tools.js';
import { waitFor } from '../support/wait-for.js';

const ms = (iso: string | undefined): number => Date.parse(iso ?? 'NaN');

async function collect(iterable: AsyncIterable<ToolResult>): Promise<ToolResult[]> {
  const results: ToolResult[] = [];
  for await (const result of iterable) results.push(result);
  return results;
}

/** Ids of the calls of `turnId` that have an event of `type` so far. */
async function callsWith(
  session: SessionHandle,
  turnId: string,
  type: 'ToolCallStarted' | 'ToolCallResult',
): Promise<string[]> {
  const { events } = await session.events();
  return events.flatMap((event: SessionEvent) =>
    event.type === type && event.turnId === turnId ? [event.callId] : [],
  );
}

describe('streaming turns on a real server', () => {
  let harness: Harness;
  let cwd: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    harness = await createHarness({ tools: [...testTools(), ...conditionTools()], defaultCwd: cwd });
  });
  afterAll(async () => harness.close());

  /** A file the test creates to let a WaitForFile call finish. */
  const releaseFile = (name: string): string => path.join(cwd, `${uniqueName(name)}.release`);
  const release = (file: string): Promise<void> => writeFile(file, '');

  it('starts calls while the model is still talking; an exclusive call waits for the reads before it and blocks those after', async () => {
    const [r1Release, r2Release] = [releaseFile('r1'), releaseFile('r2')];
    const outcome = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
      const turn = session.streamTurn('s1');
      const collected = collect(turn);
      const started = () => callsWith(session, 's1', 'ToolCallStarted');
      await turn.add({ id: 'r1', name: 'WaitForFile', input: { release_file: r1Release, label: 'r1' } });
      // The model is still talking: r1 runs before the next call arrives.
      await waitFor(started, (ids) => ids.includes('r1'), { what: 'r1 to start' });
      await turn.add({ id: 'r2', name: 'WaitForFile', input: { release_file: r2Release, label: 'r2' } });
      // r1 cannot finish until released, so r2 starting now means it runs beside r1.
      await waitFor(started, (ids) => ids.includes('r2'), { what: 'r2 to start beside r1' });
      await turn.add({ id: 'edit', name: 'FakeEdit', input: { file_path: 'streamed.txt' } });
      await turn.add(
        { id: 'r3', name: 'Sleep', input: { ms: 1, label: 'r3' } },
        { id: 'r4', name: 'Sleep', input: { ms: 1, label: 'r4' } },
      );
      await turn.end();
      // Everything after the reads waits for them: the FakeEdit is exclusive, and r3, r4 come after it.
      const whileReadsRun = { started: await started(), active: await session.activeTurn() };
      await release(r1Release);
      await release(r2Release);
      return { results: await collected, whileReadsRun };
    });
    const { results, whileReadsRun } = outcome;
    expect(whileReadsRun.started).toEqual(['r1', 'r2']);
    expect(whileReadsRun.active).toMatchObject({ turnId: 's1', executing: ['r1', 'r2'] });
    expect(results.map((r) => [r.callId, r.status])).toEqual([
      ['r1', 'success'],
      ['r2', 'success'],
      ['edit', 'success'],
      ['r3', 'success'],
      ['r4', 'success'],
    ]);
    const [r1, r2, edit, r3, r4] = results.map((r) => r.timeline);
    expect(ms(r1?.startedAt)).toBeLessThan(ms(r2?.addedAt));
    expect(ms(edit?.startedAt)).toBeGreaterThanOrEqual(Math.max(ms(r1?.finishedAt), ms(r2?.finishedAt)));
    expect(ms(r3?.startedAt)).toBeGreaterThanOrEqual(ms(edit?.finishedAt));
    expect(ms(r4?.startedAt)).toBeGreaterThanOrEqual(ms(edit?.finishedAt));
  });

  it('hands out results in call order even when a later call finishes first', async () => {
    const slowRelease = releaseFile('slow');
    const results = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      const turn = session.streamTurn('s2');
      await turn.add(
        { id: 'slow', name: 'WaitForFile', input: { release_file: slowRelease, label: 'slow' } },
        { id: 'fast', name: 'Sleep', input: { ms: 1, label: 'fast' } },
      );
      await turn.end();
      const collected = collect(turn);
      // `fast` has its result while `slow` still runs; only then does `slow` finish.
      await waitFor(
        () => callsWith(session, 's2', 'ToolCallResult'),
        (ids) => ids.includes('fast'),
        { what: 'the fast call to finish' },
      );
      await release(slowRelease);
      return collected;
    });
    expect(results.map((r) => r.modelContent)).toEqual(['slow', 'fast']);
    expect(ms(results[1]?.timeline?.finishedAt)).toBeLessThan(ms(results[0]?.timeline?.finishedAt));
  });

  it('gives the same results as a whole turn for the same calls', async () => {
    const calls = [
      { id: 'a', name: 'Sleep', input: { ms: 10, label: 'a' } },
      { id: 'b', name: 'Nope', input: {} },
      { id: 'c', name: 'FakeShell', input: { command: 'fail' } },
      { id: 'd', name: 'FakeSubmit', input: { result: 'r' } },
      { id: 'e', name: 'Sleep', input: { ms: 10 } },
    ];
    const { whole, streamed } = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
      const whole = await session.executeTurn({ turnId: 'whole', calls });
      const turn = session.streamTurn('streamed');
      for (const call of calls) await turn.add(call);
      await turn.end();
      return { whole, streamed: await collect(turn) };
    });
    const essence = (results: ToolResult[]) => results.map((r) => [r.callId, r.status, r.modelContent, r.errorCode]);
    expect(essence(streamed)).toEqual(essence(whole.results));
  });

  it('interrupt cancels running calls and ends the turn; calls after done are rejected; the session says when it is interruptible', async () => {
    const outcome = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      const blocking = session.streamTurn('b');
      const blockRelease = releaseFile('block');
      await blocking.add({
        id: 'block',
        name: 'BlockingWaitForFile',
        input: { release_file: blockRelease, label: 'block' },
      });
      const whileBlocking = await waitFor(
        () => session.activeTurn(),
        (view) => (view?.executing.length ?? 0) === 1,
      );
      await release(blockRelease);
      await blocking.end();
      await collect(blocking);

      const turn = session.streamTurn('i');
      await turn.add({ id: 'long', name: 'Sleep', input: { ms: 60_000 } });
      const whileSleeping = await waitFor(
        () => session.activeTurn(),
        (view) => (view?.executing.length ?? 0) === 1,
      );
      const collected = collect(turn);
      await session.interrupt('enough');
      const results = await collected;
      const late = await turn.add({ id: 'late', name: 'Sleep', input: { ms: 1 } }).then(
        () => 'accepted',
        (error: Error) => String((error.cause as Error | undefined)?.message),
      );
      return { whileBlocking, whileSleeping, results, late };
    });
    expect(outcome.whileBlocking).toMatchObject({ turnId: 'b', streaming: true, interruptible: false });
    expect(outcome.whileSleeping).toMatchObject({ turnId: 'i', interruptible: true });
    expect(outcome.results).toHaveLength(1);
    expect(outcome.results[0]).toMatchObject({ callId: 'long', status: 'cancelled' });
    expect(outcome.late).toMatch(/no more calls can be added|has ended/);
  });
});
