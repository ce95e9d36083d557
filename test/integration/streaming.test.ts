import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolResult } from '../../src/contracts/tool-result.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { testTools } from '../support/test-tools.js';
import { waitFor } from '../support/wait-for.js';

const ms = (iso: string | undefined): number => Date.parse(iso ?? 'NaN');

async function collect(iterable: AsyncIterable<ToolResult>): Promise<ToolResult[]> {
  const results: ToolResult[] = [];
  for await (const result of iterable) results.push(result);
  return results;
}

describe('streaming turns on a real server', () => {
  let harness: Harness;
  let cwd: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    harness = await createHarness({ tools: testTools(), defaultCwd: cwd });
  });
  afterAll(async () => harness.close());

  it('starts calls while the model is still talking; an exclusive call waits for the reads before it and blocks those after', async () => {
    const results = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
      const turn = session.streamTurn('s1');
      const collected = collect(turn);
      await turn.add({ id: 'r1', name: 'Sleep', input: { ms: 800 } });
      // The model keeps talking: gaps between the calls (the model's pace, not a wait for Switchyard).
      await sleep(300);
      await turn.add({ id: 'r2', name: 'Sleep', input: { ms: 800 } });
      await turn.add({ id: 'edit', name: 'Edit', input: { file_path: 'streamed.txt' } });
      await sleep(300);
      await turn.add({ id: 'r3', name: 'Sleep', input: { ms: 200 } }, { id: 'r4', name: 'Sleep', input: { ms: 200 } });
      await turn.end();
      return collected;
    });
    expect(results.map((r) => r.callId)).toEqual(['r1', 'r2', 'edit', 'r3', 'r4']);
    expect(results.every((r) => r.status === 'success')).toBe(true);
    const [r1, r2, edit, r3, r4] = results.map((r) => r.timeline);
    // r1 started before r3 was even added.
    expect(ms(r1?.startedAt)).toBeLessThan(ms(r3?.addedAt));
    // r2 ran beside r1; the Edit started only after both reads finished, and before the reads after it.
    expect(ms(r2?.startedAt)).toBeLessThan(ms(r1?.finishedAt));
    expect(ms(edit?.startedAt)).toBeGreaterThanOrEqual(Math.max(ms(r1?.finishedAt), ms(r2?.finishedAt)));
    expect(ms(r3?.startedAt)).toBeGreaterThanOrEqual(ms(edit?.finishedAt));
    expect(ms(r4?.startedAt)).toBeGreaterThanOrEqual(ms(edit?.finishedAt));
  });

  it('hands out results in call order even when a later call finishes first', async () => {
    const results = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      const turn = session.streamTurn('s2');
      await turn.add({ id: 'slow', name: 'Sleep', input: { ms: 1_200, label: 'slow' } }, { id: 'fast', name: 'Sleep', input: { ms: 50, label: 'fast' } });
      await turn.end();
      return collect(turn);
    });
    expect(results.map((r) => r.modelContent)).toEqual(['slow', 'fast']);
    expect(ms(results[1]?.timeline?.finishedAt)).toBeLessThan(ms(results[0]?.timeline?.finishedAt));
  });

  it('gives the same results as a whole turn for the same calls', async () => {
    const calls = [
      { id: 'a', name: 'Sleep', input: { ms: 10, label: 'a' } },
      { id: 'b', name: 'Nope', input: {} },
      { id: 'c', name: 'Bash', input: { command: 'fail' } },
      { id: 'd', name: 'submit_result', input: { result: 'r' } },
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
      await blocking.add({ id: 'block', name: 'BlockingSleep', input: { ms: 800 } });
      const whileBlocking = await waitFor(() => session.activeTurn(), (view) => (view?.executing.length ?? 0) === 1);
      await blocking.end();
      await collect(blocking);

      const turn = session.streamTurn('i');
      await turn.add({ id: 'long', name: 'Sleep', input: { ms: 60_000 } });
      const whileSleeping = await waitFor(() => session.activeTurn(), (view) => (view?.executing.length ?? 0) === 1);
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
