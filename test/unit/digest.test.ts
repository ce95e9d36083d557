import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, inputDigest } from '../../src/activities/digest.js';

describe('inputDigest', () => {
  it('ignores key order at every level', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: 2 } })).toBe(
      '{"a":{"c":2,"d":[1,{"y":2,"z":1}]},"b":1}',
    );
    expect(inputDigest({ b: 1, a: 2 })).toBe(inputDigest({ a: 2, b: 1 }));
  });
  it('is the sha256 hex of the canonical JSON', () => {
    expect(inputDigest({ command: 'ls' })).toBe(createHash('sha256').update('{"command":"ls"}').digest('hex'));
  });
  it('changes when a value changes', () => {
    expect(inputDigest({ command: 'ls' })).not.toBe(inputDigest({ command: 'ls -a' }));
  });
  it('keeps a "__proto__" key, so an input holding one has its own digest', () => {
    const withProto = JSON.parse('{"__proto__":{"command":"rm -rf /"},"a":1}') as unknown;
    expect(canonicalJson(withProto)).toBe('{"__proto__":{"command":"rm -rf /"},"a":1}');
    expect(inputDigest(withProto)).not.toBe(inputDigest({ a: 1 }));
  });
  it('serialises numbers and strings as RFC 8785 does', () => {
    expect(canonicalJson({ n: 1e21, m: 1.0, s: '\u20ac\n', u: undefined })).toBe('{"m":1,"n":1e+21,"s":"€\\n"}');
    expect(canonicalJson({ '\u20ac': 1, a: 2, '\u00e9': 3 })).toBe('{"a":2,"é":3,"€":1}');
  });
  it('gives strings with a lone surrogate their own digests instead of failing', () => {
    expect(inputDigest({ s: '\ud800' })).not.toBe(inputDigest({ s: '\ud801' }));
    expect(inputDigest({ s: '\ud800' })).not.toBe(inputDigest({ s: '\ufffd' }));
  });
});
