import { describe, expect, it } from 'vitest';
import { resolveTimeoutMs } from '../../src/activities/resolve-timeout.js';

describe('resolveTimeoutMs (docs/SEMANTICS.md, Timeouts and the deadline)', () => {
  it('has no deadline for kind none', () => {
    expect(resolveTimeoutMs({ timeout: { kind: 'none', defaultMs: 5 } }, {})).toBeUndefined();
  });
  it('falls back to the executor default of 300000 ms', () => {
    expect(resolveTimeoutMs({}, {})).toBe(300_000);
  });
  it('uses the tool default, and ignores the input when the tool does not allow overrides', () => {
    expect(resolveTimeoutMs({ timeout: { defaultMs: 30_000 } }, { timeout: 5 })).toBe(30_000);
  });
  it('takes timeout_ms before timeout when overrides are allowed, capped at maxMs, plus cleanup grace', () => {
    const bash = { timeout: { defaultMs: 120_000, maxMs: 600_000, allowCallOverride: true, cleanupGraceMs: 6_000 } };
    expect(resolveTimeoutMs(bash, {})).toBe(126_000);
    expect(resolveTimeoutMs(bash, { timeout: 1_000 })).toBe(7_000);
    expect(resolveTimeoutMs(bash, { timeout_ms: 2_000, timeout: 1_000 })).toBe(8_000);
    expect(resolveTimeoutMs(bash, { timeout: 10_000_000 })).toBe(606_000);
  });
  it('never goes below 1 ms', () => {
    const tool = { timeout: { defaultMs: 10, allowCallOverride: true } };
    expect(resolveTimeoutMs(tool, { timeout: 0.4 })).toBe(1);
  });
});
