import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { texts } from '../../src/contracts/texts.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { localExecuteCallMarkers, planMarkerResults } from '../support/history-text.js';

type HistoryEvents = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>;

/** The activity type of each local-activity marker in a history, in order. */
function localActivityTypes(events: HistoryEvents): string[] {
  return events.flatMap((event) => {
    const attributes = event.markerRecordedEventAttributes;
    const metadata = attributes?.details?.data?.payloads?.[0]?.data;
    if (attributes?.markerName !== 'core_local_activity' || metadata === undefined || metadata === null) return [];
    const { activity_type: type } = JSON.parse(Buffer.from(metadata).toString()) as { activity_type?: string };
    return [type ?? ''];
  });
}

/** Ids of the calls a whole turn's Plan ran itself, first group and the following ones, from its marker's result. */
function callsRunInPlan(events: HistoryEvents): string[] {
  return planMarkerResults(events).flatMap((text) => {
    const planned = JSON.parse(text) as {
      ranFirstGroup?: Record<string, unknown>;
      ranGroups?: Array<{ outcomes: Record<string, unknown> }>;
    };
    return [
      ...Object.keys(planned.ranFirstGroup ?? {}),
      ...(planned.ranGroups ?? []).flatMap((group) => Object.keys(group.outcomes)),
    ];
  });
}

const READS = 16;
const name = (index: number): string => `f${String(index).padStart(2, '0')}.txt`;
/** A real Read of `file_path`, the turn's call number `index`. */
const readCall = (index: number, file_path: string) => ({ id: `r${index}`, name: 'Read', input: { file_path } });

/**
 * A whole turn of allowed read-only calls in more than one group (groups hold at most ten calls): Plan runs every
 * group itself, one after another in model order, so the turn costs one local activity. A group whose result stops
 * the turn is the last one Plan runs.
 */
describe('Plan runs the following groups of allowed reads too (real server, real Read)', () => {
  let harness: Harness;
  let cwd: string;
  /** Files a worker PostToolUse hook saw: what actually ran, wherever it ran. */
  const seen: string[] = [];
  beforeAll(async () => {
    cwd = await scratchDir();
    for (let index = 0; index < READS; index += 1) await writeFile(path.join(cwd, name(index)), `line of ${index}\n`);
    await writeFile(path.join(cwd, 'stop.txt'), 'stop here\n');
    harness = await createHarness({
      tools: builtinTools(),
      defaultCwd: cwd,
      hooks: {
        postToolUse: [
          {
            matcher: 'Read',
            run: (input) => {
              const file = String((input.toolInput as { file_path?: string }).file_path);
              seen.push(path.basename(file));
              return path.basename(file) === 'stop.txt'
                ? { continue: false, stopReason: 'the hook read enough' }
                : undefined;
            },
          },
        ],
      },
    });
  });
  afterAll(async () => harness.close());

  it('runs a 16-Read turn in default mode in one Plan marker covering both groups, results in call order', async () => {
    seen.length = 0;
    const calls = Array.from({ length: READS }, (_, index) => readCall(index, name(index)));
    const { results, events } = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      const turn = await session.executeTurn({ turnId: 't', calls });
      return { results: turn.results, events: (await session.workflow.fetchHistory()).events ?? [] };
    });
    expect(results.map((result) => result.callId)).toEqual(calls.map((call) => call.id));
    expect(results.map((result) => result.status)).toEqual(calls.map(() => 'success'));
    results.forEach((result, index) => expect(result.modelContent).toMatch(new RegExp(`\\tline of ${index}\\s*$`)));
    expect(localActivityTypes(events)).toEqual(['planCalls']);
    expect(localExecuteCallMarkers(events)).toBe(0);
    expect(callsRunInPlan(events).sort()).toEqual(calls.map((call) => call.id).sort());
    expect(events.filter((event) => event.activityTaskScheduledEventAttributes != null)).toEqual([]);
    expect([...seen].sort()).toEqual(calls.map((call) => call.input.file_path).sort());
  });

  it('leaves a following group with a denied Read to the workflow: nothing reads the secret, the results in order', async () => {
    seen.length = 0;
    await writeFile(path.join(cwd, 'secret.txt'), 'the secret\n');
    const calls = Array.from({ length: READS }, (_, index) =>
      readCall(index, index === 12 ? 'secret.txt' : name(index)),
    );
    const { results, events } = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, rules: { deny: ['Read(secret.txt)'] } });
      const turn = await session.executeTurn({ turnId: 't', calls });
      return { results: turn.results, events: (await session.workflow.fetchHistory()).events ?? [] };
    });
    expect(results.map((result) => result.status)).toEqual(
      calls.map((_, index) => (index === 12 ? 'denied' : 'success')),
    );
    expect(results[12]?.modelContent).not.toContain('the secret');
    expect(seen).not.toContain('secret.txt');
    expect(callsRunInPlan(events).sort()).toEqual(
      calls
        .slice(0, 10)
        .map((call) => call.id)
        .sort(),
    );
  });

  it('never runs the second group when a result of the first stops the turn', async () => {
    seen.length = 0;
    const calls = Array.from({ length: READS }, (_, index) => readCall(index, index === 3 ? 'stop.txt' : name(index)));
    const { result, events } = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      const turn = await session.executeTurn({ turnId: 't', calls });
      return { result: turn, events: (await session.workflow.fetchHistory()).events ?? [] };
    });
    expect(result.stopped).toBe(true);
    expect(result.results[3]?.turnControl).toEqual({ stopTurn: true, reason: 'the hook read enough' });
    expect(result.results.slice(0, 10).map((entry) => entry.status)).toEqual(Array(10).fill('success'));
    for (const later of result.results.slice(10))
      expect(later).toMatchObject({
        status: 'cancelled',
        modelContent: texts.turnStopCancelled,
        errorCode: 'turn_stopped',
      });
    // The hook saw the first group's ten files, and none of the second group's.
    expect([...seen].sort()).toEqual(
      calls
        .slice(0, 10)
        .map((call) => call.input.file_path)
        .sort(),
    );
    expect(callsRunInPlan(events).sort()).toEqual(
      calls
        .slice(0, 10)
        .map((call) => call.id)
        .sort(),
    );
  });
});
