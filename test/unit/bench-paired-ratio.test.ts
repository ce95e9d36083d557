import { describe, expect, it } from 'vitest';
import { formatPaired, pairedRatio } from '../../bench/stats.js';

// `npm run bench` reports only same-round ratios: each round's time of one contender over the other's in that same
// round, summarised by median and interquartile range. A ratio of medians, or of rounds taken apart, would let a
// slow minute of the machine land on one contender only.
describe('pairedRatio', () => {
  it('divides round by round, not median by median', () => {
    // Rounds: 1/3, 2/1, 3/2. The lists' medians are both 2 (a ratio of 1.00); the rounds' ratios have median 1.50.
    expect(pairedRatio([1, 2, 3], [3, 1, 2]).median).toBe(1.5);
    // A slow stretch of the machine that both contenders share cancels out: twice as slow in every round is 2.00.
    expect(pairedRatio([2, 40, 8, 160, 32], [1, 20, 4, 80, 16])).toEqual({ pairs: 5, median: 2, q1: 2, q3: 2 });
  });

  it('gives the quartiles of the ratios and counts only rounds both contenders ran', () => {
    const ratio = pairedRatio([1, 2, 3, 4, 5, 6], [1, 1, 1, 1, 1]);
    expect(ratio).toEqual({ pairs: 5, median: 3, q1: 2, q3: 4 });
    expect(formatPaired(ratio)).toBe('3.00 (2.00–4.00)');
    expect(formatPaired(pairedRatio([], []))).toBe('–');
  });
});
