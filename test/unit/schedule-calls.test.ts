import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { groupCalls } from '../../src/contracts/group-calls.js';
import type { PlannedCall } from '../../src/contracts/pipeline.js';
import type { ToolResult } from '../../src/contracts/tool-result.js';
import { completedPrefix, startableCalls } from '../../src/workflows/schedule-calls.js';
import type { CallState, OpenGroup, TurnCall } from '../../src/workflows/schedule-calls.js';

type Spec = boolean | 'rejected' | 'unplanned';

function planned(safe: Exclude<Spec, 'unplanned'>, index: number): PlannedCall {
  if (safe === 'rejected')
    return {
      kind: 'rejected',
      callId: `c${index}`,
      toolName: 'X',
      status: 'error',
      modelContent: 'no',
      errorCode: 'e',
      stage: 'lookup',
    };
  return { kind: 'planned', callId: `c${index}`, toolName: 'X', concurrentSafe: safe };
}

function calls(spec: Array<[Spec, CallState]>): TurnCall[] {
  return spec.map(([safe, state], index) => ({
    index,
    call: { id: `c${index}`, name: 'X', input: {} },
    addedAt: 0,
    state,
    ...(safe === 'unplanned' ? {} : { planned: planned(safe, index) }),
  }));
}

const ids = (outcome: { start: TurnCall[] }) => outcome.start.map((call) => call.call.id);
const running = (size: number, allSafe = true): OpenGroup => ({ index: 0, size, allSafe });

describe('startableCalls (one rule for whole and streaming turns)', () => {
  it('starts a new group when nothing executes, with every safe call behind the first', () => {
    const outcome = startableCalls({
      calls: calls([
        [true, 'queued'],
        [true, 'queued'],
        [true, 'queued'],
      ]),
      group: undefined,
      maxConcurrency: 10,
    });
    expect(ids(outcome)).toEqual(['c0', 'c1', 'c2']);
    expect(outcome.newGroup).toBe(true);
  });

  it('lets a safe call join the running safe group', () => {
    const outcome = startableCalls({
      calls: calls([
        [true, 'executing'],
        [true, 'queued'],
      ]),
      group: running(1),
      maxConcurrency: 10,
    });
    expect(ids(outcome)).toEqual(['c1']);
    expect(outcome.newGroup).toBe(false);
  });

  it('makes an exclusive call wait for the running ones and block those behind it', () => {
    expect(
      ids(
        startableCalls({
          calls: calls([
            [true, 'executing'],
            [false, 'queued'],
            [true, 'queued'],
          ]),
          group: running(1),
          maxConcurrency: 10,
        }),
      ),
    ).toEqual([]);
    expect(
      ids(
        startableCalls({
          calls: calls([
            [true, 'completed'],
            [false, 'queued'],
            [true, 'queued'],
          ]),
          group: running(1),
          maxConcurrency: 10,
        }),
      ),
    ).toEqual(['c1']);
    expect(
      ids(
        startableCalls({
          calls: calls([
            [false, 'executing'],
            [true, 'queued'],
          ]),
          group: running(1, false),
          maxConcurrency: 10,
        }),
      ),
    ).toEqual([]);
  });

  it('treats rejected and unplanned calls as blocking (fail closed)', () => {
    expect(
      ids(
        startableCalls({
          calls: calls([
            [true, 'executing'],
            ['rejected', 'queued'],
          ]),
          group: running(1),
          maxConcurrency: 10,
        }),
      ),
    ).toEqual([]);
    expect(
      ids(
        startableCalls({
          calls: calls([
            ['unplanned', 'queued'],
            [true, 'queued'],
          ]),
          group: undefined,
          maxConcurrency: 10,
        }),
      ),
    ).toEqual([]);
  });

  it('caps a group at maxConcurrency members, finished members included (chunks, not a sliding window)', () => {
    const list = calls([
      [true, 'completed'],
      [true, 'executing'],
      [true, 'queued'],
    ]);
    expect(ids(startableCalls({ calls: list, group: running(2), maxConcurrency: 2 }))).toEqual([]);
    expect(ids(startableCalls({ calls: list, group: running(1), maxConcurrency: 2 }))).toEqual(['c2']);
  });

  it('reproduces groupCalls for a whole turn, whatever the mix of calls and the cap', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom<Spec>(true, false, 'rejected'), { maxLength: 30 }),
        fc.integer({ min: 1, max: 12 }),
        (spec, cap) => {
          const list = calls(spec.map((safe) => [safe, 'queued']));
          const groups: string[][] = [];
          let group: OpenGroup | undefined;
          // Run the schedule: start what may start, then finish every executing call (a group ends when none runs).
          for (let guard = 0; list.some((call) => call.state === 'queued') && guard < 100; guard++) {
            const { start, newGroup } = startableCalls({ calls: list, group, maxConcurrency: cap });
            if (newGroup || group === undefined) {
              group = { index: groups.length, size: 0, allSafe: true };
              groups.push([]);
            }
            for (const call of start) {
              call.state = 'executing';
              group.size += 1;
              group.allSafe = group.allSafe && call.planned?.kind === 'planned' && call.planned.concurrentSafe;
              groups.at(-1)?.push(call.call.id);
            }
            for (const call of list) if (call.state === 'executing') call.state = 'completed';
          }
          const expected = groupCalls(
            list.map((call) => ({
              id: call.call.id,
              concurrentSafe: call.planned?.kind === 'planned' && call.planned.concurrentSafe,
            })),
            cap,
          );
          expect(groups).toEqual(expected);
        },
      ),
    );
  });
});

describe('completedPrefix', () => {
  it('counts results from the start of the turn, stopping at the first unfinished call', () => {
    const list = calls([
      [true, 'completed'],
      [true, 'executing'],
      [true, 'completed'],
    ]);
    const completion = (id: string) => ({ result: { callId: id } as ToolResult });
    list[0] = { ...list[0]!, completion: completion('c0') };
    list[2] = { ...list[2]!, completion: completion('c2') };
    expect(completedPrefix(list)).toBe(1);
    list[1] = { ...list[1]!, completion: completion('c1') };
    expect(completedPrefix(list)).toBe(3);
  });
});
