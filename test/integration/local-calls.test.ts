import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { PostToolUseFailureHookInput } from '../../src/hooks/types.js';
import { texts } from '../../src/contracts/texts.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { callsRunByPlan, localExecuteCallMarkers } from '../support/history-text.js';
import { abortableSleep } from '../support/test-tools.js';
import { waitFor } from '../support/wait-for.js';

type HistoryEvents = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>;

/** Activity types scheduled as regular activities, and how many local-activity markers, in a history. */
function executions(events: HistoryEvents): { scheduled: string[]; markers: number } {
  const scheduled = events.flatMap((event) => {
    const name = event.activityTaskScheduledEventAttributes?.activityType?.name;
    return name === undefined || name === null ? [] : [name];
  });
  const markers = events.filter(
    (event) => event.markerRecordedEventAttributes?.markerName === 'core_local_activity',
  ).length;
  return { scheduled, markers };
}

/** When each `Wait` call's handler last started, and how often it started, by label (the worker runs in this process). */
const waitStarts = new Map<string, number>();
const waitRuns = new Map<string, number>();

/** A read-only call that waits `ms` or until cancelled (its 20 s deadline is under the local limit). */
const waitTool = defineTool({
  name: 'Wait',
  description: 'Waits, or stops when cancelled.',
  inputSchema: z.object({ ms: z.number().int(), label: z.string() }),
  readOnly: true,
  concurrentSafe: true,
  timeout: { defaultMs: 20_000 },
  async execute(input, context) {
    waitStarts.set(input.label, performance.now());
    waitRuns.set(input.label, (waitRuns.get(input.label) ?? 0) + 1);
    await abortableSleep(input.ms, context.signal);
    return `waited ${input.ms} ms`;
  },
});

/**
 * Short read-only calls run as local activities on the workflow's worker: no activity task round trip,
 * one history event each. Everything else stays a regular activity, and so does a group that mixes both kinds.
 */
describe('local read-only calls (real server, real tools)', () => {
  let harness: Harness;
  let cwd: string;
  const failures: PostToolUseFailureHookInput[] = [];
  beforeAll(async () => {
    cwd = await scratchDir();
    await writeFile(path.join(cwd, 'a.txt'), 'alpha\n');
    // No `localReadOnlyCalls` option: local calls are the default.
    harness = await createHarness({
      tools: [...builtinTools(), waitTool],
      defaultCwd: cwd,
      hooks: { postToolUseFailure: [{ run: (input) => void failures.push(input) }] },
    });
  });
  afterAll(async () => harness.close());

  const local = [
    { id: 'read', name: 'Read', input: { file_path: 'a.txt' } },
    { id: 'glob', name: 'Glob', input: { pattern: '*.txt' } },
    { id: 'grep', name: 'Grep', input: { pattern: 'alpha', output_mode: 'content' } },
    // Read-only with a short deadline: local.
    { id: 'ls-short', name: 'Bash', input: { command: 'ls', timeout: 5_000 } },
  ];
  // Not read-only: a regular activity, as always.
  const write = { id: 'write', name: 'Write', input: { file_path: 'b.txt', content: 'beta\n' } };
  // Read-only, but its deadline (120 s by default) is over the local limit.
  const ls = { id: 'ls', name: 'Bash', input: { command: 'ls' } };

  it('runs Read, Glob, Grep and a short read-only Bash as local activities by default, the rest as activities, with the same results', async () => {
    const calls = [...local, write, ls];
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
    // planCalls, the patch marker, prepareCalls for the later groups, and the four local calls.
    expect(markers).toBeGreaterThanOrEqual(6);
  });

  it('keeps each session its own count of local calls in flight while sessions on one worker overlap', async () => {
    // The workflow modules are shared by every session of the worker; a count kept in a module variable would make
    // one session wait for another's local calls, and the first to finish would wait forever.
    const sessions = 6;
    // Four Reads of a.txt (the `local` Read under other ids) and the Glob.
    const [read, glob] = local;
    if (read === undefined || glob === undefined) throw new Error('the local calls changed');
    const calls = [...Array.from({ length: 4 }, (_, index) => ({ ...read, id: `r${index}` })), glob];
    const turns = await harness.withWorker(async () =>
      Promise.all(
        Array.from({ length: sessions }, async () => {
          const session = await harness.startSession({ cwd });
          return await session.executeTurn({ turnId: 't', calls });
        }),
      ),
    );
    expect(turns).toHaveLength(sessions);
    for (const turn of turns) expect(turn.results.map((result) => result.status)).toEqual(Array(5).fill('success'));
  }, 60_000);

  it('runs a group that mixes local and regular calls all as regular activities, so none waits behind the others', async () => {
    const calls = [local[0], ls, local[1]].filter((call) => call !== undefined);
    const history = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      const turn = await session.executeTurn({ turnId: 't', calls });
      expect(turn.results.map((result) => result.status)).toEqual(['success', 'success', 'success']);
      return (await session.workflow.fetchHistory()).events ?? [];
    });
    expect(executions(history).scheduled).toEqual(['executeCall', 'executeCall', 'executeCall']);
  });

  it('interrupts a running local call within seconds: the reject message, and PostToolUseFailure once, with isInterrupt', async () => {
    failures.length = 0;
    const { result, waitedMs } = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      const turn = session.executeTurn({
        turnId: 't',
        calls: [{ id: 'wait', name: 'Wait', input: { ms: 15_000, label: 'interrupted' } }],
      });
      // The session's queries wait while a local call holds its workflow task: watch the handler start in-process.
      await waitFor(
        async () => waitStarts.get('interrupted'),
        (started) => started !== undefined,
        { what: 'the Wait handler to start' },
      );
      const interrupted = performance.now();
      await session.interrupt('esc');
      const outcome = await turn;
      return { result: outcome.results[0], waitedMs: performance.now() - interrupted };
    });
    expect(result).toMatchObject({ callId: 'wait', status: 'cancelled' });
    expect(result?.modelContent.startsWith(texts.rejectMessage)).toBe(true);
    expect(failures.map((failure) => [failure.toolUseId, failure.isInterrupt])).toEqual([['wait', true]]);
    // Bounded by the local budget (1 s) and one heartbeat, not by the workflow task's 8 s heartbeat.
    expect(waitedMs).toBeLessThan(6_000);
  });

  it('moves a local call still running after its budget to a regular activity, which runs it afresh to its result', async () => {
    failures.length = 0;
    const { result, history } = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      const turn = await session.executeTurn({
        turnId: 't',
        calls: [{ id: 'wait', name: 'Wait', input: { ms: 2_500, label: 'moved' } }],
      });
      return { result: turn.results[0], history: (await session.workflow.fetchHistory()).events ?? [] };
    });
    expect(result).toMatchObject({ callId: 'wait', status: 'success', modelContent: 'waited 2500 ms' });
    // The abandoned local attempt (inside the turn's Plan, which ran the allowed read-only group) ran no hooks and
    // answered `relocate`; the regular activity ran the handler afresh and did the work.
    expect(failures).toEqual([]);
    expect(waitRuns.get('moved')).toBe(2);
    expect(executions(history).scheduled).toEqual(['executeCall']);
    expect(localExecuteCallMarkers(history)).toBe(0);
    expect(callsRunByPlan(history)).toEqual(['wait']);
  });

  it('runs every call as a regular activity on a worker started with localReadOnlyCalls: false', async () => {
    const { results, history } = await harness.withWorker(
      async () => {
        const session = await harness.startSession({ cwd, permissionMode: 'acceptEdits' });
        const turn = await session.executeTurn({ turnId: 't', calls: local.slice(0, 3) });
        return { results: turn.results, history: (await session.workflow.fetchHistory()).events ?? [] };
      },
      { localReadOnlyCalls: false },
    );
    expect(results.map((result) => result.status)).toEqual(['success', 'success', 'success']);
    expect(executions(history).scheduled).toEqual(['executeCall', 'executeCall', 'executeCall']);
  });
});

/**
 * A whole turn's Plan runs its first group itself when every call of it runs locally and the permission chain allows
 * each without asking: one local activity for the turn. Anything else (a deny or ask rule, a limit) leaves the calls
 * to the workflow's own decision, so Plan never runs a call that is not allowed.
 */
describe('Plan runs an allowed read-only first group (real server, real Read)', () => {
  let harness: Harness;
  let cwd: string;
  /** Files whose contents a PostToolUse hook saw: what actually ran, wherever it ran. */
  const seen: string[] = [];
  beforeAll(async () => {
    cwd = await scratchDir();
    await writeFile(path.join(cwd, 'a.txt'), 'alpha\n');
    await writeFile(path.join(cwd, 'secret.txt'), 'the secret\n');
    harness = await createHarness({
      tools: builtinTools(),
      defaultCwd: cwd,
      hooks: {
        postToolUse: [
          { run: (input) => void seen.push(String((input.toolInput as { file_path?: string }).file_path)) },
        ],
      },
    });
  });
  afterAll(async () => harness.close());

  async function turnHistory(
    options: Parameters<Harness['startSession']>[0],
    calls: Array<{ id: string; name: string; input: unknown }>,
  ): Promise<{ statuses: string[]; contents: string[]; events: HistoryEvents }> {
    return harness.withWorker(async () => {
      const session = await harness.startSession(options);
      const turn = await session.executeTurn({ turnId: 't', calls });
      const events = (await session.workflow.fetchHistory()).events ?? [];
      return {
        statuses: turn.results.map((result) => result.status),
        contents: turn.results.map((result) => result.modelContent),
        events,
      };
    });
  }

  it('runs a one-Read turn inside Plan: one local-activity marker for the whole turn, the same result', async () => {
    seen.length = 0;
    const { statuses, contents, events } = await turnHistory({ cwd }, [
      { id: 'r', name: 'Read', input: { file_path: 'a.txt' } },
    ]);
    expect(statuses).toEqual(['success']);
    expect(contents[0]).toContain('alpha');
    expect(callsRunByPlan(events)).toEqual(['r']);
    expect(localExecuteCallMarkers(events)).toBe(0);
    expect(executions(events)).toEqual({ scheduled: [], markers: 1 });
    expect(seen).toEqual([path.join(cwd, 'a.txt')]);
  });

  it('never runs a Read a deny rule denies, even beside an allowed one: the workflow decides and nothing reads the secret', async () => {
    seen.length = 0;
    const { statuses, contents, events } = await turnHistory({ cwd, rules: { deny: ['Read(secret.txt)'] } }, [
      { id: 'a', name: 'Read', input: { file_path: 'a.txt' } },
      { id: 's', name: 'Read', input: { file_path: 'secret.txt' } },
    ]);
    expect(statuses).toEqual(['success', 'denied']);
    expect(contents[1]).not.toContain('the secret');
    expect(callsRunByPlan(events)).toEqual([]);
    expect(seen).toEqual([path.join(cwd, 'a.txt')]);
  });

  it("leaves a Read an ask rule names to the approval, and a session with limits to the workflow's count", async () => {
    seen.length = 0;
    const asked = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, rules: { ask: ['Read(a.txt)'] } });
      const turn = session.executeTurn({
        turnId: 't',
        calls: [{ id: 'r', name: 'Read', input: { file_path: 'a.txt' } }],
      });
      const [request] = await waitFor(
        () => session.pendingApprovals(),
        (pending) => pending.length === 1,
        { what: 'the approval request' },
      );
      expect(seen).toEqual([]);
      await session.approve({
        requestId: request?.requestId ?? '',
        decision: 'allow',
        inputDigest: request?.inputDigest ?? '',
      });
      const result = await turn;
      return { status: result.results[0]?.status, events: (await session.workflow.fetchHistory()).events ?? [] };
    });
    expect(asked.status).toBe('success');
    expect(callsRunByPlan(asked.events)).toEqual([]);
    expect(localExecuteCallMarkers(asked.events)).toBe(1);
    const limited = await turnHistory({ cwd, limits: [{ rule: 'Read', max: 1, per: 'turn' }] }, [
      { id: 'r1', name: 'Read', input: { file_path: 'a.txt' } },
      { id: 'r2', name: 'Read', input: { file_path: 'a.txt' } },
    ]);
    expect(limited.statuses).toEqual(['success', 'denied']);
    expect(callsRunByPlan(limited.events)).toEqual([]);
  });
});
