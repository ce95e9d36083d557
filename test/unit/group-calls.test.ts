import { describe, expect, it } from 'vitest';
import { groupCalls } from '../../src/contracts/group-calls.js';

const call = (id: string, concurrentSafe: boolean) => ({ id, concurrentSafe });

describe('groupCalls', () => {
  it('groups consecutive safe calls and isolates unsafe ones (the ZCode example)', () => {
    // Read a, Read b, Edit c, WebFetch d (exclusive in ZCode's example), Bash e, Read f
    const calls = [
      call('a', true),
      call('b', true),
      call('c', false),
      call('d', false),
      call('e', false),
      call('f', true),
    ];
    expect(groupCalls(calls, 10)).toEqual([['a', 'b'], ['c'], ['d'], ['e'], ['f']]);
  });

  it('matches the Claude Code partition example', () => {
    const calls = [
      call('A', true),
      call('B', true),
      call('C', true),
      call('D', false),
      call('E', true),
      call('F', false),
    ];
    expect(groupCalls(calls, 10)).toEqual([['A', 'B', 'C'], ['D'], ['E'], ['F']]);
  });

  it('caps a group at maxConcurrency: 11 reads become 10 and 1', () => {
    const calls = Array.from({ length: 11 }, (_, index) => call(`r${index}`, true));
    const groups = groupCalls(calls, 10);
    expect(groups.map((group) => group.length)).toEqual([10, 1]);
    expect(groups.flat()).toEqual(calls.map((c) => c.id));
  });

  it('keeps model order and returns nothing for no calls', () => {
    expect(groupCalls([], 10)).toEqual([]);
    expect(groupCalls([call('x', false), call('y', false)], 10)).toEqual([['x'], ['y']]);
  });

  it('treats a cap below one as one', () => {
    expect(groupCalls([call('a', true), call('b', true)], 0)).toEqual([['a'], ['b']]);
  });
});
