import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinTools } from '../../src/tools/builtin.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';

type HistoryEvents = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>;

/** Activity types scheduled as regular activities, and how many local-activity markers, in a history. */
function executions(events: HistoryEvents): { scheduled: string[]; markers: number } {
  const scheduled = events.flatMap((event) => {
    const name = event.activityTaskScheduledEventAttributes?.activityType?.name;
    return name === undefined || name === null ? [] : [name];
  });
  const markers = events.filter((event) => event.markerRecordedEventAttributes?.markerName === 'core_local_activity').length;
  return { scheduled, markers };
}

/**
 * Short read-only calls run as local activities on the workflow's worker (issue 13): no activity task round trip,
 * one history event each. Everything else stays a regular activity.
 */
describe('local read-only calls (real server, real tools)', () => {
  let harness: Harness;
  let cwd: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    await writeFile(path.join(cwd, 'a.txt'), 'alpha\n');
    harness = await createHarness({ tools: builtinTools(), defaultCwd: cwd, localReadOnlyCalls: true });
  });
  afterAll(async () => harness.close());

  const calls = [
    { id: 'read', name: 'Read', input: { file_path: 'a.txt' } },
    { id: 'glob', name: 'Glob', input: { pattern: '*.txt' } },
    { id: 'grep', name: 'Grep', input: { pattern: 'alpha', output_mode: 'content' } },
    // Read-only, but its deadline (120 s by default) is over the local limit.
    { id: 'ls', name: 'Bash', input: { command: 'ls' } },
    // Read-only with a short deadline: local.
    { id: 'ls-short', name: 'Bash', input: { command: 'ls', timeout: 5_000 } },
    // Not read-only: a regular activity, as always.
    { id: 'write', name: 'Write', input: { file_path: 'b.txt', content: 'beta\n' } },
  ];

  it('runs Read, Glob, Grep and a short read-only Bash as local activities, the rest as activities, with the same results', async () => {
    const { results, history } = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'acceptEdits' });
      const turn = await session.executeTurn({ turnId: 't', calls });
      return { results: turn.results, history: (await session.workflow.fetchHistory()).events ?? [] };
    });
    expect(results.map((result) => [result.callId, result.status])).toEqual(calls.map((call) => [call.id, 'success']));
    expect(results[0]?.modelContent).toContain('alpha');
    expect(results[1]?.modelContent).toContain('a.txt');
    const { scheduled, markers } = executions(history);
    expect(scheduled).toEqual(['executeCall', 'executeCall']);
    // planCalls, prepareCalls for the later groups, and the four local calls.
    expect(markers).toBeGreaterThanOrEqual(5);
  });

  it('runs every call as a regular activity on a worker started with localReadOnlyCalls: false (the default)', async () => {
    const { results, history } = await harness.withWorker(
      async () => {
        const session = await harness.startSession({ cwd, permissionMode: 'acceptEdits' });
        const turn = await session.executeTurn({ turnId: 't', calls: calls.slice(0, 3) });
        return { results: turn.results, history: (await session.workflow.fetchHistory()).events ?? [] };
      },
      { localReadOnlyCalls: false },
    );
    expect(results.map((result) => result.status)).toEqual(['success', 'success', 'success']);
    expect(executions(history).scheduled).toEqual(['executeCall', 'executeCall', 'executeCall']);
  });
});
