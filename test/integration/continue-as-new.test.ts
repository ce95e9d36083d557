import { access, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { FileArtifactStore } from '../../src/artifacts/file-artifact-store.js';
import { SwitchyardClient } from '../../src/client/switchyard-client.js';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { ToolCall } from '../../src/contracts/tool-call.js';
import type { ToolResult, TurnResult } from '../../src/contracts/tool-result.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { createSwitchyardWorker } from '../../src/worker/create-worker.js';
import { createHarness, scratchDir, uniqueName } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { startPrivateDevServer } from '../support/private-dev-server.js';
import {
  allEvents,
  answer,
  currentRunId,
  eventsOfType,
  sessionStateOf,
  waitForPendingApprovals,
} from '../support/session-probes.js';
import { waitFor } from '../support/wait-for.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const exists = (file: string): Promise<boolean> =>
  access(file).then(
    () => true,
    () => false,
  );

/** A text file whose `Read` result is about `chars` characters (numbered lines of 50 characters). */
async function writeLines(file: string, chars: number): Promise<void> {
  const lines = Math.ceil(chars / 58);
  await writeFile(
    file,
    Array.from({ length: lines }, (_, index) => `line ${index} `.padEnd(50, '.')).join('\n') + '\n',
  );
}

async function collectResults(iterable: AsyncIterable<ToolResult>): Promise<ToolResult[]> {
  const results: ToolResult[] = [];
  for await (const result of iterable) results.push(result);
  return results;
}

/** Whether a run's history shows the turn's update completed inside that run, and the run ended by continuing as new. */
function turnCompletedThenContinued(
  events: readonly HistoryEvent[],
  turnId: string,
): { completedInRun: boolean; endedByContinueAsNew: boolean } {
  const completedAt = events.findIndex(
    (event) => event.workflowExecutionUpdateCompletedEventAttributes?.meta?.updateId === turnId,
  );
  const last = events.at(-1);
  return {
    completedInRun: completedAt !== -1,
    endedByContinueAsNew: last?.workflowExecutionContinuedAsNewEventAttributes != null,
  };
}

/**
 * Continue-as-new with real tools: the next run keeps what the session learnt, and a new turn sent after it uses
 * that (remembered approvals, the todo list, the event cursor, stored turns, the aggregate budget's replaced keys);
 * and the run changes only between turns, whether the trigger is `continueAsNewAfterEvents` or Temporal's own
 * `continueAsNewSuggested`.
 */
describe('continue-as-new carries session state, and a new turn uses it (real tools, real server)', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await createHarness({ tools: builtinTools() });
  });
  afterAll(async () => harness.close());

  const historyOfRun = async (session: SessionHandle, runId: string): Promise<HistoryEvent[]> =>
    (await harness.client.client.workflow.getHandle(session.sessionId, runId).fetchHistory()).events ?? [];

  it('uses the remembered approval, the todo list, the event cursor and the stored turns of the run before', async () => {
    const cwd = await scratchDir();
    await writeLines(path.join(cwd, 'big.txt'), 8_000);
    await writeLines(path.join(cwd, 'small.txt'), 5_000);
    const threshold = 10;
    const todos = [{ content: 'Carry the plan across runs', status: 'in_progress', activeForm: 'Carrying the plan' }];
    const t1: { turnId: string; calls: ToolCall[] } = {
      turnId: 't1',
      calls: [
        { id: 'big', name: 'Read', input: { file_path: 'big.txt' } },
        { id: 'small', name: 'Read', input: { file_path: 'small.txt' } },
        { id: 'todo', name: 'TodoWrite', input: { todos } },
        { id: 'touch', name: 'Bash', input: { command: 'touch first.txt' } },
      ],
    };
    await harness.withWorker(async () => {
      const session = await harness.startSession({
        cwd,
        aggregateBudgetChars: 12_000,
        continueAsNewAfterEvents: threshold,
      });
      const firstRun = await currentRunId(session);
      const pending = session.executeTurn(t1);
      const [request] = await waitForPendingApprovals(session);
      // Mid-turn the run is already past its event threshold, yet it does not continue as new under a waiting turn.
      expect((await session.events()).next).toBeGreaterThan(threshold);
      expect(await currentRunId(session)).toBe(firstRun);
      if (request === undefined) throw new Error('no pending approval');
      await answer(session, request, 'allow_always');
      const first = await pending;
      expect(first.results.map((result) => result.status)).toEqual(['success', 'success', 'success', 'success']);
      // The aggregate budget replaced the larger Read (8,000 + 5,000 characters over a 12,000 budget).
      expect(first.results[0]?.modelContent.startsWith('<persisted-output>')).toBe(true);
      expect(first.results[1]?.modelContent).toContain('line 0 ');
      const cursorAfterT1 = (await session.events()).next;

      // Between turns it continues as new: run 1 completed the turn's update, then ended by continuing as new.
      const secondRun = await waitFor(
        () => currentRunId(session),
        (runId) => runId !== firstRun,
        { what: 'continue-as-new', timeoutMs: 60_000 },
      );
      expect(turnCompletedThenContinued(await historyOfRun(session, firstRun), 't1')).toEqual({
        completedInRun: true,
        endedByContinueAsNew: true,
      });

      // A new turn in the new run: `touch` was approved "always" in run 1, so it runs without asking (had the rule been
      // lost, the turn would wait for an approval nobody gives and the test would time out).
      const second = await session.executeTurn({
        turnId: 't2',
        calls: [{ id: 'touch2', name: 'Bash', input: { command: 'touch second.txt' } }],
      });
      expect(second.results[0]?.status).toBe('success');
      expect(await exists(path.join(cwd, 'second.txt'))).toBe(true);
      const sinceT1 = await allEvents(session, cursorAfterT1);
      expect(eventsOfType(sinceT1, 'PermissionRequested')).toEqual([]);
      // The event log and its cursor continue: t2's first event takes the next position, none is lost or repeated.
      expect(sinceT1[0]).toMatchObject({ seq: cursorAfterT1, type: 'TurnStarted', turnId: 't2' });
      const all = await allEvents(session);
      expect(all.map((event) => event.seq)).toEqual(all.map((_, index) => index));
      expect(all.length).toBeGreaterThan(cursorAfterT1);
      // The todo list written in run 1 is the session's state in run 2, beside the remembered rule.
      expect(await sessionStateOf(session)).toEqual({ state: { todos }, rememberedRules: ['Bash(touch:*)'] });

      // What is and is not observable of the replaced-results set here: replacement keys are `<turnId>/<callId>`, and
      // sending t1 again re-attaches to the stored turn, so it returns t1's result as handed out (the envelope
      // included) without consulting the set. This shows the stored turns crossed continue-as-new and that t1 did not
      // run again; the next test shows the set itself is carried and used.
      const reattached = await session.executeTurn(t1);
      expect(reattached).toEqual(first);
      expect(eventsOfType(await allEvents(session), 'TurnStarted').map((event) => event.turnId)).toEqual(['t1', 't2']);
      // Answered by run 2, which had never seen update t1: the stored turn came from run 1's carried state.
      expect(await currentRunId(session)).toBe(secondRun);
    });
  });

  it('keeps a streaming turn in its run while it waits with no update in flight, and hands out its results after the run changes', async () => {
    const cwd = await scratchDir();
    await writeFile(path.join(cwd, 'notes.txt'), 'alpha\n');
    const threshold = 3;
    await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, continueAsNewAfterEvents: threshold });
      const firstRun = await currentRunId(session);
      const turn = session.streamTurn('s1');
      await turn.add(
        { id: 'read', name: 'Read', input: { file_path: 'notes.txt' } },
        { id: 'touch', name: 'Bash', input: { command: 'touch streamed.txt' } },
      );
      await turn.end();
      // No awaitResults is in flight and addCalls has returned: only the running turn holds the run back.
      const [request] = await waitForPendingApprovals(session);
      expect((await session.events()).next).toBeGreaterThan(threshold);
      expect(await currentRunId(session)).toBe(firstRun);
      if (request === undefined) throw new Error('no pending approval');
      await answer(session, request, 'allow');
      await waitFor(
        () => currentRunId(session),
        (runId) => runId !== firstRun,
        { what: 'continue-as-new', timeoutMs: 60_000 },
      );
      // The caller reads the results only now, from the next run.
      const results = await collectResults(turn);
      expect(results.map((result) => [result.callId, result.status])).toEqual([
        ['read', 'success'],
        ['touch', 'success'],
      ]);
      expect(await exists(path.join(cwd, 'streamed.txt'))).toBe(true);
    });
  });

  it('keeps a replaced result replaced in a later run: the same turnId and callId get the envelope even under budget', async () => {
    const cwd = await scratchDir();
    await writeLines(path.join(cwd, 'big.txt'), 8_000);
    await writeLines(path.join(cwd, 'small.txt'), 5_000);
    const threshold = 12;
    await harness.withWorker(async () => {
      const session = await harness.startSession({
        cwd,
        aggregateBudgetChars: 12_000,
        continueAsNewAfterEvents: threshold,
      });
      const runs = [await currentRunId(session)];
      let cursor = 0;
      let runStart = 0;
      /** Runs a turn; when it takes this run's events to the threshold, waits for the continue-as-new it owes. */
      const send = async (turnId: string, calls: ToolCall[]): Promise<TurnResult> => {
        const result = await session.executeTurn({ turnId, calls });
        cursor = (await session.events(cursor)).next;
        if (cursor - runStart >= threshold) {
          const previous = runs.at(-1);
          runs.push(
            await waitFor(
              () => currentRunId(session),
              (runId) => runId !== previous,
              { what: 'continue-as-new', timeoutMs: 60_000 },
            ),
          );
          runStart = cursor;
        }
        return result;
      };
      const bigRead: ToolCall = { id: 'big', name: 'Read', input: { file_path: 'big.txt' } };
      const first = await send('t1', [bigRead, { id: 'small', name: 'Read', input: { file_path: 'small.txt' } }]);
      expect(first.results[0]?.modelContent.startsWith('<persisted-output>')).toBe(true);
      const runOfT1 = runs.at(-1);

      // The replaced-results set is read only when a turn with the same id runs again, which happens once the stored
      // turn has been forgotten (a session keeps its last 50): 50 more turns (without calls, the cheapest a client
      // can send) push t1 out, across several continue-as-new.
      for (let index = 0; index < 50; index += 1) await send(`filler-${index}`, []);
      expect(runs.length).toBeGreaterThan(2);
      expect(runs.at(-1)).not.toBe(runOfT1);

      // t1 runs again, in a later run, with only the big Read: alone it is well under the 12,000 budget...
      const again = await send('t1', [bigRead]);
      expect(eventsOfType(await allEvents(session, runStart), 'TurnStarted').map((event) => event.turnId)).toContain(
        't1',
      );
      // ...yet it is the envelope, because this key was replaced before: a replaced result stays replaced.
      expect(again.results[0]?.status).toBe('success');
      expect(again.results[0]?.modelContent.startsWith('<persisted-output>')).toBe(true);
      // The same Read under a new turnId is not replaced: the envelope above came from the carried key alone.
      const fresh = await send('fresh', [bigRead]);
      expect(fresh.results[0]?.modelContent.startsWith('     1\tline 0 ')).toBe(true);
    });
  });

  describe('when Temporal suggests continue-as-new (a private server with limit.historyCount.suggestContinueAsNew=8)', () => {
    let server: Awaited<ReturnType<typeof startPrivateDevServer>>;
    beforeAll(async () => {
      server = await startPrivateDevServer({ dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 8 } });
    });
    afterAll(async () => server.stop());

    it('continues as new only once the turn has ended, and the next run uses what the turn remembered', async () => {
      const cwd = await scratchDir();
      const dataDir = await scratchDir('switchyard-data-');
      const taskQueue = uniqueName('tq');
      const connection = await Connection.connect({ address: server.address });
      const nativeConnection = await NativeConnection.connect({ address: server.address });
      const client = new SwitchyardClient({
        client: new Client({ connection, namespace: server.namespace }),
        taskQueue,
        artifacts: new FileArtifactStore(dataDir),
      });
      const worker = await createSwitchyardWorker({
        connection: nativeConnection,
        namespace: server.namespace,
        taskQueue,
        tools: builtinTools(),
        userSettingsDir: await scratchDir('switchyard-user-'),
        dataDir,
        workflowBundle: { codePath: inject('workflowBundlePath') },
      });
      const running = worker.run();
      try {
        // The event threshold stays at its default (2,000): only Temporal's suggestion can trigger continue-as-new.
        const session = await client.startSession(uniqueName('session'), { cwd });
        const firstRun = await currentRunId(session);
        const pending = session.executeTurn({
          turnId: 't1',
          calls: [{ id: 'touch', name: 'Bash', input: { command: 'touch first.txt' } }],
        });
        const [request] = await waitForPendingApprovals(session);
        // Temporal suggests continue-as-new while the turn waits for its approval (history says so), and the run stays.
        // How many workflow tasks ran before the wait varies with load; an ignored signal (unknown request) makes one
        // more task, whose start carries Temporal's suggestion once history is past the limit.
        await session.approve({ requestId: 'nudge-unknown-request', decision: 'deny', inputDigest: 'none' });
        await waitFor(
          async () => (await session.workflow.fetchHistory()).events ?? [],
          (events) => events.some((event) => event.workflowTaskStartedEventAttributes?.suggestContinueAsNew === true),
          { what: 'a workflow task started with suggestContinueAsNew' },
        );
        expect(await currentRunId(session)).toBe(firstRun);
        expect(await session.pendingApprovals()).toHaveLength(1);
        if (request === undefined) throw new Error('no pending approval');
        await answer(session, request, 'allow_always');
        expect((await pending).results[0]?.status).toBe('success');

        await waitFor(
          () => currentRunId(session),
          (runId) => runId !== firstRun,
          { what: 'continue-as-new', timeoutMs: 60_000 },
        );
        const runOne =
          (await client.client.workflow.getHandle(session.sessionId, firstRun).fetchHistory()).events ?? [];
        expect(turnCompletedThenContinued(runOne, 't1')).toEqual({ completedInRun: true, endedByContinueAsNew: true });
        // Far below the 2,000-event threshold: the suggestion was the trigger.
        expect((await session.events()).next).toBeLessThan(50);

        const cursor = (await session.events()).next;
        const second = await session.executeTurn({
          turnId: 't2',
          calls: [{ id: 'touch2', name: 'Bash', input: { command: 'touch second.txt' } }],
        });
        expect(second.results[0]?.status).toBe('success');
        expect(await exists(path.join(cwd, 'second.txt'))).toBe(true);
        expect(eventsOfType(await allEvents(session, cursor), 'PermissionRequested')).toEqual([]);
      } finally {
        worker.shutdown();
        await running;
        await connection.close();
        await nativeConnection.close();
      }
    });
  });
});
