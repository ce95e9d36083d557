import { describe, expect, it } from 'vitest';
import {
  CARRIED_STATE_TARGET_BYTES,
  CARRIED_TURNS_MAX_BYTES,
  SessionState,
  carriedTurns,
} from '../../src/workflows/session-state.js';
import { newestWithinBytes } from '../../src/workflows/newest-within-bytes.js';
import type { TurnResult } from '../../src/contracts/tool-result.js';
import { utf8Length } from '../../src/contracts/utf8-length.js';

describe('newestWithinBytes (completed turns carried across continue-as-new)', () => {
  const item = (id: number, chars: number) => ({ id, text: 'x'.repeat(chars) });

  it('keeps everything that fits, in order', () => {
    const items = [item(1, 10), item(2, 10), item(3, 10)];
    expect(newestWithinBytes(items, 1_000)).toEqual(items);
  });

  it('drops the oldest first once the newest fill the budget', () => {
    const items = [item(1, 400), item(2, 400), item(3, 400)];
    // Each is 400 chars plus its JSON frame (18 bytes): two fit in 900 bytes, three do not.
    expect(newestWithinBytes(items, 900).map((kept) => kept.id)).toEqual([2, 3]);
  });

  it('counts UTF-8 bytes, not characters', () => {
    const wide = { id: 1, text: 'é'.repeat(300) }; // 600 bytes of text
    expect(newestWithinBytes([wide], 500)).toEqual([]);
    expect(newestWithinBytes([wide], 700)).toEqual([wide]);
  });
});

describe('carriedTurns (what a continue-as-new carries of the completed turns)', () => {
  const turn = (id: number, chars: number) => ({ id, text: 'x'.repeat(chars) });

  it('carries the newest turns that fit in the room the rest of the state leaves', () => {
    const turns = [turn(1, 400), turn(2, 400), turn(3, 400)];
    expect(carriedTurns(turns, 900).map((kept) => kept.id)).toEqual([2, 3]);
    expect(carriedTurns(turns, 10_000)).toEqual(turns);
  });

  it('carries the newest turn when it alone is over the room, up to the 1 MiB ceiling', () => {
    const big = turn(2, 600_000);
    expect(carriedTurns([turn(1, 10), big], 1_000)).toEqual([big]);
    expect(carriedTurns([turn(1, 10), big], -5_000)).toEqual([big]);
    expect(carriedTurns([turn(1, 10), turn(2, CARRIED_TURNS_MAX_BYTES)], 1_000)).toEqual([]);
  });

  it('never carries more than the ceiling, however much room there is, nor more than 50 turns', () => {
    const turns = [turn(1, 600_000), turn(2, 600_000)];
    expect(carriedTurns(turns, 10 * CARRIED_TURNS_MAX_BYTES).map((kept) => kept.id)).toEqual([2]);
    const many = Array.from({ length: 60 }, (_, index) => turn(index, 1));
    expect(carriedTurns(many, 1_000_000).map((kept) => kept.id)).toEqual(many.slice(-50).map((kept) => kept.id));
  });

  it('leaves room for the rest below the 512 KiB at which Temporal warns', () => {
    expect(CARRIED_STATE_TARGET_BYTES).toBeLessThan(512 * 1_024);
  });
});

describe('SessionState.carry (the carried state as a whole)', () => {
  const turn = (index: number, chars: number): TurnResult => ({
    turnId: `t${index}`,
    results: [
      {
        callId: 'r',
        toolName: 'Read',
        status: 'success',
        modelContent: 'x'.repeat(chars),
        isError: false,
        timings: { totalMs: 1, permissionWaitMs: 0, queuedMs: 0 },
      },
    ],
    stopped: false,
  });
  const stateWithTurns = (count: number, chars: number): SessionState => {
    const state = new SessionState({ sessionId: 's' });
    for (let index = 0; index < count; index++) state.recordCompletedTurn(turn(index, chars));
    return state;
  };

  it('keeps the whole upload, options beside it, under the target', () => {
    const state = stateWithTurns(20, 60_000);
    const carried = state.carry(10_000);
    expect(utf8Length(JSON.stringify(carried)) + 10_000).toBeLessThanOrEqual(CARRIED_STATE_TARGET_BYTES);
    // Seven turns of about 60 KB fit in 448 KiB less the options' 10,000 bytes; an eighth would not.
    expect(carried.completedTurns.map((kept) => kept.turnId)).toEqual([
      't13',
      't14',
      't15',
      't16',
      't17',
      't18',
      't19',
    ]);
  });

  it('keeps up to the 1 MiB ceiling of turns when nothing is uploaded (an executor rebuilt within its run)', () => {
    const carried = stateWithTurns(20, 60_000).carry(0, Number.POSITIVE_INFINITY);
    expect(carried.completedTurns).toHaveLength(17);
    expect(carried.completedTurns.at(-1)?.turnId).toBe('t19');
  });
});
