import { describe, expect, it } from 'vitest';
import { runsLocally } from '../../src/workflows/run-call.js';

const flags = { readOnly: true, declaredReadOnly: true, idempotent: true, concurrentSafe: true, destructive: false, sideEffectScope: 'none' as const };
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
