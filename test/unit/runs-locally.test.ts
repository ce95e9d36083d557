import { describe, expect, it } from 'vitest';
import { batchLocalCalls, runsLocally } from '../../src/contracts/local-calls.js';

const flags = {
  readOnly: true,
  declaredReadOnly: true,
  idempotent: true,
  concurrentSafe: true,
  destructive: false,
  sideEffectScope: 'none' as const,
};
const policy = { maxTimeoutMs: 30_000 };

describe('runsLocally', () => {
  it('runs a read-only, idempotent, concurrency-safe call with a short deadline locally', () => {
    expect(runsLocally({ flags, timeoutMs: 30_000 }, policy)).toBe(true);
  });

  it('keeps a call a regular activity when the worker does not host the tools (no policy)', () => {
    expect(runsLocally({ flags, timeoutMs: 1_000 }, undefined)).toBe(false);
  });

  it.each([
    ['not read-only', { ...flags, readOnly: false }, 1_000],
    ['not idempotent', { ...flags, idempotent: false }, 1_000],
    ['not concurrency-safe', { ...flags, concurrentSafe: false }, 1_000],
    ['a deadline over the limit', flags, 30_001],
    ['no deadline at all', flags, undefined],
  ])('keeps a call that is %s a regular activity', (_name, callFlags, timeoutMs) => {
    expect(runsLocally({ flags: callFlags, timeoutMs }, policy)).toBe(false);
  });
});

describe('batchLocalCalls', () => {
  const budgeted = { maxTimeoutMs: 30_000, budgetMs: 1_000 };
  const local = { flags, timeoutMs: 5_000 };
  const regular = { flags: { ...flags, readOnly: false }, timeoutMs: 5_000 };

  it('keeps the policy when every call that starts together runs locally', () => {
    expect(batchLocalCalls([local, local], budgeted)).toBe(budgeted);
  });

  it('drops it for a batch that mixes local and regular calls, so no regular call waits behind a local one', () => {
    expect(batchLocalCalls([local, regular, local], budgeted)).toBeUndefined();
  });

  it('has nothing to keep without a policy or without calls', () => {
    expect(batchLocalCalls([local], undefined)).toBeUndefined();
    expect(batchLocalCalls([], budgeted)).toBeUndefined();
  });

  it('leaves a policy recorded before the local budget existed to decide call by call, so old histories replay', () => {
    expect(batchLocalCalls([local, regular], policy)).toBe(policy);
  });
});
