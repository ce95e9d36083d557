import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_CALLS_PER_TURN } from '../../src/contracts/defaults.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';

/** What a turn puts in history and in the events page stays bounded (issue: unbounded work). */
describe('bounded history and events (real built-in tools)', () => {
  let harness: Harness;
  let cwd: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    await writeFile(path.join(cwd, 'a.txt'), 'a\n');
    harness = await createHarness({ tools: builtinTools(), defaultCwd: cwd });
  });
  afterAll(async () => harness.close());

  it('refuses a turn with more calls than the limit, naming the limit, before it enters history', async () => {
    const read = (id: string) => ({ id, name: 'Read', input: { file_path: 'a.txt' } });
    const calls = Array.from({ length: DEFAULT_MAX_CALLS_PER_TURN + 1 }, (_, index) => read(`c${index}`));
    const outcome = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      const rejected = await session.executeTurn({ turnId: 'huge', calls }).then(
        () => 'accepted',
        (error: Error) => `${error.message}: ${(error.cause as Error | undefined)?.message}`,
      );
      const small = await session.executeTurn({ turnId: 'small', calls: calls.slice(0, 3) });
      return { rejected, small, history: JSON.stringify(await session.workflow.fetchHistory()) };
    });
    expect(outcome.rejected).toContain(`limit of ${DEFAULT_MAX_CALLS_PER_TURN} calls per turn`);
    expect(outcome.history).not.toContain('"huge"');
    expect(outcome.small.results.map((result) => result.status)).toEqual(['success', 'success', 'success']);
  });

  it('carries the grouping once per turn, not once per call', async () => {
    const calls = Array.from({ length: 40 }, (_, i) => ({ id: `r${i}`, name: 'Read', input: { file_path: 'a.txt' } }));
    const events = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      await session.executeTurn({ turnId: 't', calls });
      return (await session.events()).events;
    });
    const scheduled = events.filter((event) => event.type === 'ToolCallScheduled');
    expect(scheduled).toHaveLength(40);
    const withGrouping = scheduled.filter((event) => event.type === 'ToolCallScheduled' && event.groups !== undefined);
    expect(withGrouping).toHaveLength(1);
    expect(
      withGrouping[0]?.type === 'ToolCallScheduled' ? withGrouping[0].groups?.map((group) => group.length) : [],
    ).toEqual([10, 10, 10, 10]);
  });

  it('does not send the todo list along with later calls (only tools that read session state get it)', async () => {
    const secretTodo = 'todo-text-that-must-not-ride-along';
    const history = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      await session.executeTurn({
        turnId: 't1',
        calls: [{ id: 'todo', name: 'TodoWrite', input: { todos: [{ content: secretTodo, status: 'pending' }] } }],
      });
      // A Bash call with its default deadline is a regular activity (a Read would run locally: no activity input).
      await session.executeTurn({
        turnId: 't2',
        calls: [{ id: 'read', name: 'Bash', input: { command: 'cat a.txt' } }],
      });
      return session.workflow.fetchHistory();
    });
    const readInput = history.events
      ?.filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'executeCall')
      .map((event) =>
        Buffer.from(event.activityTaskScheduledEventAttributes?.input?.payloads?.[0]?.data ?? []).toString(),
      )
      .find((input) => input.includes('"callId":"read"'));
    expect(readInput).toBeDefined();
    expect(readInput).not.toContain(secretTodo);
  });
});
