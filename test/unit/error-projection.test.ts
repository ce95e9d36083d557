import { describe, expect, it } from 'vitest';
import { projectErrorMessage } from '../../src/contracts/error-projection.js';

describe('projectErrorMessage', () => {
  it('skips wrapper messages down the cause chain', () => {
    const error = new Error('Activity task failed', {
      cause: new Error('', { cause: new Error('disk   full\n now') }),
    });
    expect(projectErrorMessage(error)).toBe('disk full now');
  });
  it('stops at 500 characters', () => {
    expect(projectErrorMessage(new Error('x'.repeat(900)))).toHaveLength(500);
  });
  it('follows at most 12 levels', () => {
    let error: Error = new Error('deep');
    for (let i = 0; i < 12; i++) error = new Error('', { cause: error });
    expect(projectErrorMessage(error)).toBe('Unknown error');
  });
  it("falls back to the outermost wrapper's own message when the chain has nothing better, 'Unknown error' only without one", () => {
    expect(
      projectErrorMessage(
        new Error('Activity task failed', { cause: new Error('', { cause: new Error('Workflow execution failed') }) }),
      ),
    ).toBe('Activity task failed');
    expect(projectErrorMessage(new Error('', { cause: new Error('Activity execution failed') }))).toBe('Unknown error');
  });
  it('accepts strings and non-errors', () => {
    expect(projectErrorMessage('plain')).toBe('plain');
    expect(projectErrorMessage(42)).toBe('Unknown error');
  });
});
