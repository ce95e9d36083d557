import { describe, expect, it } from 'vitest';
import { cutUtf8, serializeOutput } from '../../src/activities/serialize-output.js';

describe('serializeOutput', () => {
  it('replaces an empty output with the seed placeholder', () => {
    expect(serializeOutput({ toolName: 'Bash', content: '' }).modelContent).toBe('(Bash completed with no output)');
    expect(serializeOutput({ toolName: 'Read', content: '  \n' }).modelContent).toBe('(Read completed with no output)');
  });
  it('passes content within min(maxModelBytes, maxInlineBytes) unchanged', () => {
    const result = serializeOutput({ toolName: 'X', content: 'abcd', budget: { maxModelBytes: 10, maxInlineBytes: 4, policy: 'truncate', keep: 'head' } });
    expect(result).toEqual({ modelContent: 'abcd' });
  });
  it('truncates the head with the resultBudget notice and reports the budget', () => {
    const result = serializeOutput({ toolName: 'X', content: 'abcdefghij', budget: { maxModelBytes: 10, maxInlineBytes: 4, policy: 'truncate', keep: 'head' } });
    expect(result.modelContent).toBe('abcd\n[Tool output truncated by resultBudget: 10 bytes, limit 4 bytes]');
    expect(result.budget).toMatchObject({ truncated: true, originalBytes: 10, policy: 'truncate' });
  });
  it('keeps the tail when the budget says so', () => {
    const result = serializeOutput({ toolName: 'X', content: 'abcdefghij', budget: { maxModelBytes: 3, policy: 'truncate', keep: 'tail' } });
    expect(result.modelContent).toBe('[Tool output truncated by resultBudget: 10 bytes, limit 3 bytes]\nhij');
  });
  it('never splits a multi-byte character', () => {
    expect(cutUtf8('ééé', 3, 'head')).toBe('é');
    expect(cutUtf8('ééé', 3, 'tail')).toBe('é');
  });
});
