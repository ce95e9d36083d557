import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, scratchDir, uniqueName } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { callsRunByPlan, historyText, isLocalExecuteCall } from '../support/history-text.js';

describe('a one-call turn on a real Temporal server', () => {
  let harness: Harness;
  let cwd: string;

  beforeAll(async () => {
    cwd = await scratchDir();
    await writeFile(path.join(cwd, 'notes.txt'), 'first line\nsecond line\nthird line\n');
    harness = await createHarness({ defaultCwd: cwd });
  });
  afterAll(async () => harness.close());

  it('reads a file under the session cwd and returns the numbered lines', async () => {
    const { result, elapsedMs } = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      const sent = Date.now();
      const result = await session.executeTurn({
        turnId: 't1',
        calls: [{ id: 'c1', name: 'Read', input: { file_path: 'notes.txt', offset: 2 } }],
      });
      return { result, elapsedMs: Date.now() - sent };
    });
    expect(result.turnId).toBe('t1');
    expect(result.stopped).toBe(false);
    expect(result.results).toHaveLength(1);
    const [read] = result.results;
    expect(read).toMatchObject({ callId: 'c1', toolName: 'Read', status: 'success', isError: false });
    expect(read?.modelContent).toBe('     2\tsecond line\n     3\tthird line');
    // The call took real time (an activity round trip), and no more than the client waited for the turn.
    expect(read?.timings.totalMs).toBeGreaterThan(0);
    expect(read?.timings.totalMs).toBeLessThanOrEqual(elapsedMs);
  });

  it('starts the session on first use with update-with-start and re-attaches to a repeated turnId', async () => {
    const sessionId = uniqueName('uws');
    const request = {
      turnId: 'same',
      calls: [{ id: 'c1', name: 'Read', input: '{"file_path":"notes.txt","limit":1}' }],
    };
    const [first, again, events] = await harness.withWorker(async () => {
      const first = await harness.client.executeTurnWithStart(sessionId, request, { cwd });
      const again = await harness.client.session(sessionId).executeTurn(request);
      const events = await harness.client.session(sessionId).events();
      return [first, again, events] as const;
    });
    expect(first.results[0]?.modelContent).toBe('     1\tfirst line');
    expect(again).toEqual(first);
    // Ran once: one TurnStarted, one ToolCallStarted.
    expect(events.events.filter((event) => event.type === 'ToolCallStarted')).toHaveLength(1);
    expect(events.events.filter((event) => event.type === 'TurnStarted')).toHaveLength(1);
  });

  it('rejects a malformed request in the update validator, before it enters history', async () => {
    const outcome = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      const rejected = await session
        .executeTurn({
          turnId: 'malformed-turn',
          calls: [
            { id: 'x', name: 'Read', input: {} },
            { id: 'x', name: 'Read', input: {} },
          ],
        })
        .then(
          () => 'accepted',
          (error: Error) => `${error.message}: ${(error.cause as Error | undefined)?.message}`,
        );
      const history = await session.workflow.fetchHistory();
      return { rejected, history: historyText(history) };
    });
    expect(outcome.rejected).toMatch(/duplicate call id "x"/);
    // History holds the session's start input (payloads decoded, so the search can see them), not the rejected turn.
    expect(outcome.history).toContain(cwd);
    expect(outcome.history).not.toContain('malformed-turn');
  });

  it("labels each tool call with a summary the Web UI shows: a Read Plan ran on Plan's marker, a later Read on its own", async () => {
    const history = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'acceptEdits' });
      await session.executeTurn({
        turnId: 't1',
        calls: [{ id: 'c1', name: 'Read', input: { file_path: 'notes.txt' } }],
      });
      // A Write (not read-only) is a group of its own and a regular activity; the Read after it runs locally, alone.
      await session.executeTurn({
        turnId: 't2',
        calls: [
          { id: 'w', name: 'Write', input: { file_path: 'written.txt', content: 'x\n' } },
          { id: 'c2', name: 'Read', input: { file_path: 'notes.txt' } },
        ],
      });
      return session.workflow.fetchHistory();
    });
    const events = history.events ?? [];
    const summaryOf = (event: (typeof events)[number] | undefined): unknown => {
      const data = event?.userMetadata?.summary?.data;
      return data === undefined || data === null ? undefined : JSON.parse(Buffer.from(data).toString());
    };
    // The first turn's Read ran inside its Plan (one local activity for the whole turn), which names it.
    expect(callsRunByPlan(events)).toEqual(['c1']);
    const plan = events.find((event) => summaryOf(event) === 'Plan: Read');
    expect(plan?.markerRecordedEventAttributes).toBeTruthy();
    // The second turn's Read ran as a local activity of its own: its marker carries its summary.
    expect(summaryOf(events.find(isLocalExecuteCall))).toBe(`Read: ${path.join(cwd, 'notes.txt')}`);
    const scheduled = events.find(
      (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'executeCall',
    );
    expect(summaryOf(scheduled)).toBe(`Write: ${path.join(cwd, 'written.txt')}`);
  });

  it('replays the recorded history of a session deterministically', async () => {
    const session = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      await session.executeTurn({
        turnId: 't1',
        calls: [
          { id: 'a', name: 'Read', input: { file_path: 'notes.txt' } },
          { id: 'b', name: 'Missing', input: {} },
        ],
      });
      return session;
    });
    const history = await session.workflow.fetchHistory();
    await expect(
      Worker.runReplayHistory(
        { workflowBundle: { codePath: inject('workflowBundlePath') } },
        history,
        session.sessionId,
      ),
    ).resolves.toBeUndefined();
  });
});
