import { describe, expect, it } from 'vitest';
import { maxConcurrencyFromEnv } from '../../src/config/environment.js';
import { DEFAULT_MAX_CONCURRENCY } from '../../src/contracts/defaults.js';

describe('maxConcurrencyFromEnv', () => {
  it('defaults to 10 when no variable is set', () => {
    expect(maxConcurrencyFromEnv({})).toBe(DEFAULT_MAX_CONCURRENCY);
    expect(maxConcurrencyFromEnv({ SWITCHYARD_MAX_TOOL_CONCURRENCY: '' })).toBe(DEFAULT_MAX_CONCURRENCY);
  });

  it("honours the reference executors' names as aliases", () => {
    expect(maxConcurrencyFromEnv({ CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY: '3' })).toBe(3);
    expect(maxConcurrencyFromEnv({ ZCODE_MAX_TOOL_CONCURRENCY: '4' })).toBe(4);
  });

  it("lets Switchyard's own variable win over the aliases, and Claude Code's over ZCode's", () => {
    expect(
      maxConcurrencyFromEnv({
        SWITCHYARD_MAX_TOOL_CONCURRENCY: '2',
        CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY: '3',
        ZCODE_MAX_TOOL_CONCURRENCY: '4',
      }),
    ).toBe(2);
    expect(maxConcurrencyFromEnv({ CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY: '3', ZCODE_MAX_TOOL_CONCURRENCY: '4' })).toBe(
      3,
    );
  });

  it('names the variable that holds a bad value', () => {
    expect(() => maxConcurrencyFromEnv({ ZCODE_MAX_TOOL_CONCURRENCY: 'many' })).toThrow(
      'ZCODE_MAX_TOOL_CONCURRENCY must be a positive integer, got "many"',
    );
    expect(() => maxConcurrencyFromEnv({ CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY: '0' })).toThrow(
      'CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY must be a positive integer',
    );
  });
});
