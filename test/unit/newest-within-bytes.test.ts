import { describe, expect, it } from 'vitest';
import { newestWithinBytes } from '../../src/workflows/session-state.js';

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
