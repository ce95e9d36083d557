import { describe, expect, it } from 'vitest';
import { findRequest } from '../../src/cli/session-commands.js';

const requests = [
  { requestId: '5f0c2a77-1111-4222-8333-444455556666', sessionId: 'walk' },
  { requestId: '9b1e0000-aaaa-4bbb-8ccc-dddd00001111', sessionId: 'walk' },
  { requestId: '9b1e7777-aaaa-4bbb-8ccc-dddd00002222', sessionId: 'other' },
];

describe('approve/deny REQUEST: the whole id or its first characters, as `pending` and `run` show them', () => {
  it('takes the whole id, or a unique prefix of 4+ characters, with or without the ellipsis the README shows', () => {
    expect(findRequest(requests, '5f0c2a77-1111-4222-8333-444455556666')?.requestId).toBe(
      '5f0c2a77-1111-4222-8333-444455556666',
    );
    for (const given of ['5f0c', '5f0c…', '5f0c...', '5f0c2a77'])
      expect(findRequest(requests, given)?.requestId, given).toBe('5f0c2a77-1111-4222-8333-444455556666');
  });

  it('finds nothing for an unknown id or a prefix under 4 characters', () => {
    expect(findRequest(requests, 'ffff')).toBeUndefined();
    expect(findRequest(requests, '5f0')).toBeUndefined();
    expect(findRequest(requests, '5f0…')).toBeUndefined();
  });

  it('an ambiguous prefix is a usage error naming the candidates', () => {
    expect(() => findRequest(requests, '9b1e…', 'deny')).toThrow(
      /9b1e… matches 2 pending requests \(9b1e0000-.* in walk, 9b1e7777-.* in other\): give more of the id/,
    );
    expect(findRequest(requests, '9b1e7')?.sessionId).toBe('other');
  });
});
