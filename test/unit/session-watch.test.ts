import { describe, expect, it } from 'vitest';
import { SessionWatches } from '../../src/console/session-watch.js';

/** A session whose mark is its version: `looks` and `reads` count what the watches asked of it. */
function fakeSession(readMs = 1) {
  const counts = { looks: 0, reads: 0, inFlight: 0 };
  let version = 0;
  const watches = new SessionWatches<{ sessionId: string; version: number }>({
    checkMs: 2,
    refreshMs: 3_600_000,
    look: (sessionId) => {
      counts.looks++;
      const seen = version;
      return {
        mark: Promise.resolve(`${sessionId}:${seen}`),
        read: async () => {
          counts.reads++;
          counts.inFlight++;
          await new Promise((resolve) => setTimeout(resolve, readMs));
          counts.inFlight--;
          return { sessionId, version: seen };
        },
      };
    },
  });
  return {
    watches,
    counts,
    bump: () => {
      version++;
    },
  };
}

async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 2) {
    if (waited > 5_000) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

describe('SessionWatches (the console session pages its viewers share)', () => {
  it('reads a session once per change however many viewers have its page open', async () => {
    const { watches, counts, bump } = fakeSession();
    const seen: number[][] = [[], [], []];
    const stops = seen.map((versions) => watches.subscribe('s', undefined, (data) => versions.push(data.version)));
    await until(() => seen.every((versions) => versions.includes(0)));
    bump();
    await until(() => seen.every((versions) => versions.includes(1)));
    bump();
    await until(() => seen.every((versions) => versions.includes(2)));
    // One read per version, not one per viewer and version (nine).
    expect(counts.reads).toBe(3);
    expect(seen).toEqual([
      [0, 1, 2],
      [0, 1, 2],
      [0, 1, 2],
    ]);
    expect(watches.size).toBe(1);
    for (const stop of stops) stop();
  });

  it('gives a viewer who arrives later the data at once, and ends the watch with its last viewer', async () => {
    const { watches, counts } = fakeSession();
    const first: number[] = [];
    const stopFirst = watches.subscribe('s', undefined, (data) => first.push(data.version));
    await until(() => first.length === 1);
    const later: number[] = [];
    const stopLater = watches.subscribe('s', undefined, (data) => later.push(data.version));
    await until(() => later.length === 1);
    expect(counts.reads).toBe(1);
    stopFirst();
    stopLater();
    await until(() => watches.size === 0);
    const looks = counts.looks;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(counts.looks).toBe(looks);
  });

  it('watches the pages of different sessions and turns apart', async () => {
    const { watches } = fakeSession();
    const got: string[] = [];
    const stops = [
      watches.subscribe('a', undefined, (data) => got.push(`a:${data.sessionId}`)),
      watches.subscribe('a', 't1', (data) => got.push(`a/t1:${data.sessionId}`)),
      watches.subscribe('b', undefined, (data) => got.push(`b:${data.sessionId}`)),
    ];
    expect(watches.size).toBe(3);
    await until(() => got.length === 3);
    expect(got.sort()).toEqual(['a/t1:a', 'a:a', 'b:b']);
    for (const stop of stops) stop();
  });

  it('close() ends every watch and returns only once no read of theirs is in flight', async () => {
    const { watches, counts } = fakeSession(200);
    watches.subscribe('s', undefined, () => undefined);
    await until(() => counts.inFlight === 1);
    await watches.close();
    expect(counts.inFlight).toBe(0);
    expect(watches.size).toBe(0);
  });

  it('keeps a viewer that throws from stopping the others', async () => {
    const { watches, bump } = fakeSession();
    const good: number[] = [];
    watches.subscribe('s', undefined, () => {
      throw new Error('cannot render');
    });
    const stop = watches.subscribe('s', undefined, (data) => good.push(data.version));
    await until(() => good.length === 1);
    bump();
    await until(() => good.length === 2);
    stop();
    await watches.close();
  });
});
