import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, inputDigest } from '../../src/activities/digest.js';

describe('inputDigest', () => {
  it('ignores key order at every level', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: 2 } })).toBe('{"a":{"c":2,"d":[1,{"y":2,"z":1}]},"b":1}');
    expect(inputDigest({ b: 1, a: 2 })).toBe(inputDigest({ a: 2, b: 1 }));
  });
  it('is the sha256 hex of the canonical JSON', () => {
    expect(inputDigest({ command: 'ls' })).toBe(createHash('sha256').update('{"command":"ls"}').digest('hex'));
  });
  it('changes when a value changes', () => {
    expect(inputDigest({ command: 'ls' })).not.toBe(inputDigest({ command: 'ls -a' }));
  });
});
