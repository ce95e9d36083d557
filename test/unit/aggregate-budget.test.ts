import { describe, expect, it } from 'vitest';
import { applyAggregateBudget } from '../../src/workflows/aggregate-budget.js';
import type { BudgetedResult } from '../../src/workflows/aggregate-budget.js';

const result = (key: string, size: number, withEnvelope = true): BudgetedResult => ({
  key,
  modelContent: 'x'.repeat(size),
  ...(withEnvelope
    ? {
        replacement: {
          envelope: `<persisted-output>${key}</persisted-output>`,
          artifact: `switchyard-artifact://s/${key}`,
        },
      }
    : {}),
});

describe('applyAggregateBudget', () => {
  it('replaces nothing when the turn fits', () => {
    const outcome = applyAggregateBudget({
      results: [result('a', 100), result('b', 100)],
      budgetChars: 200,
      alreadyReplaced: new Set(),
    });
    expect([...outcome.replaced]).toEqual([]);
    expect(outcome.totalChars).toBe(200);
  });

  it('replaces the largest results first until the total fits', () => {
    const outcome = applyAggregateBudget({
      results: [result('small', 50_000), result('largest', 90_000), result('large', 80_000), result('mid', 60_000)],
      budgetChars: 200_000,
      alreadyReplaced: new Set(),
    });
    expect(outcome.newlyReplaced).toEqual(['largest']);
    expect(outcome.totalChars).toBeLessThanOrEqual(200_000);
    const tighter = applyAggregateBudget({
      results: [result('small', 50_000), result('largest', 90_000), result('large', 80_000)],
      budgetChars: 60_000,
      alreadyReplaced: new Set(),
    });
    expect(tighter.newlyReplaced).toEqual(['largest', 'large']);
  });

  it('keeps a result replaced once replaced in later evaluations, even when the total fits', () => {
    const outcome = applyAggregateBudget({
      results: [result('a', 10), result('b', 10)],
      budgetChars: 1_000,
      alreadyReplaced: new Set(['a']),
    });
    expect([...outcome.replaced]).toEqual(['a']);
    expect(outcome.newlyReplaced).toEqual([]);
  });

  it('counts an already-replaced result that comes back with others at its envelope size, and replaces no other for it', () => {
    const envelope = result('a', 0).replacement?.envelope.length ?? 0;
    const outcome = applyAggregateBudget({
      results: [result('b', 80_000), result('a', 90_000), result('c', 60_000)],
      budgetChars: 200_000,
      alreadyReplaced: new Set(['a', 'gone']),
    });
    expect([...outcome.replaced]).toEqual(['a']);
    expect(outcome.newlyReplaced).toEqual([]);
    expect(outcome.totalChars).toBe(80_000 + envelope + 60_000);
    // Over budget even so: the next largest is replaced, and the replaced one is not counted twice.
    const tight = applyAggregateBudget({
      results: [result('b', 80_000), result('a', 90_000), result('c', 60_000)],
      budgetChars: 100_000,
      alreadyReplaced: new Set(['a']),
    });
    expect(tight.newlyReplaced).toEqual(['b']);
    expect([...tight.replaced].sort()).toEqual(['a', 'b']);
    expect(tight.totalChars).toBe(2 * envelope + 60_000);
  });

  it('cannot replace results without an envelope, and stops when nothing is left to replace', () => {
    const outcome = applyAggregateBudget({
      results: [result('a', 500, false), result('b', 400)],
      budgetChars: 100,
      alreadyReplaced: new Set(),
    });
    expect(outcome.newlyReplaced).toEqual(['b']);
    expect(outcome.totalChars).toBeGreaterThan(100);
  });

  it('counts what earlier hand-outs of the turn added, which can no longer change (streaming turns)', () => {
    const first = applyAggregateBudget({ results: [result('a', 150)], budgetChars: 200, alreadyReplaced: new Set() });
    expect(first.newlyReplaced).toEqual([]);
    // `a` was handed out whole; the next result alone fits, but not on top of `a`, so it is the one replaced.
    const second = applyAggregateBudget({
      results: [result('b', 100)],
      budgetChars: 200,
      alreadyReplaced: new Set(),
      charsAlreadyHandedOut: first.totalChars,
    });
    expect(second.newlyReplaced).toEqual(['b']);
    // A whole turn sees both at once and replaces the larger one instead.
    const whole = applyAggregateBudget({
      results: [result('a', 150), result('b', 100)],
      budgetChars: 200,
      alreadyReplaced: new Set(),
    });
    expect(whole.newlyReplaced).toEqual(['a']);
  });
});
