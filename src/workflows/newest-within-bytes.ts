import { utf8Length } from '../contracts/utf8-length.js';

/** The newest items whose JSON fits in `maxBytes` together, in their original order (a single item over it: none). */
export function newestWithinBytes<T>(items: readonly T[], maxBytes: number): T[] {
  let used = 0;
  let first = items.length;
  while (first > 0) {
    const size = utf8Length(JSON.stringify(items[first - 1]));
    if (used + size > maxBytes) break;
    used += size;
    first -= 1;
  }
  return items.slice(first);
}
