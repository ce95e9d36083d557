import { describe, expect, it } from 'vitest';
import { MAX_TURN_REQUEST_BYTES, PAYLOAD_LIMITS } from '../../src/contracts/defaults.js';
import { oversizeRequestReason } from '../../src/contracts/tool-call.js';
import { utf8Length } from '../../src/contracts/utf8-length.js';

describe('request size limit (pure, used by the update validators and the client)', () => {
  it('counts UTF-8 bytes like Buffer.byteLength, surrogate pairs included', () => {
    for (const text of ['', 'abc', 'é', '€', '𝔘𝔫𝔦', 'a\u0000b', 'x'.repeat(1000) + '😀', '\ud800']) {
      expect(utf8Length(text), JSON.stringify(text)).toBe(Buffer.byteLength(text, 'utf8'));
    }
  });

  it('accepts calls up to the limit and names the limit above it', () => {
    const calls = (label: string) => [{ id: 'a', name: 'Sleep', input: { label } }];
    const overhead = utf8Length(JSON.stringify(calls('')));
    // The request limit alone (one call's own limit lifted).
    const requestOnly = { ...PAYLOAD_LIMITS, callInputBytes: Number.POSITIVE_INFINITY };
    expect(oversizeRequestReason(calls('x'.repeat(MAX_TURN_REQUEST_BYTES - overhead)), MAX_TURN_REQUEST_BYTES, requestOnly)).toBeUndefined();
    expect(oversizeRequestReason(calls('x'.repeat(MAX_TURN_REQUEST_BYTES - overhead + 1)), MAX_TURN_REQUEST_BYTES, requestOnly)).toMatch(/over the 1048576-byte limit per request/);
    // Multi-byte characters count as their bytes, not as UTF-16 units.
    expect(oversizeRequestReason(calls('é'.repeat(600_000)), MAX_TURN_REQUEST_BYTES)).toMatch(/1200\d{3} bytes/);
    // Under the request limit, over one call's.
    expect(oversizeRequestReason(calls('é'.repeat(140_000)), MAX_TURN_REQUEST_BYTES)).toMatch(/over the 262144-byte limit per call/);
  });

  it('reports calls that cannot be serialized instead of throwing', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(oversizeRequestReason([{ id: 'a', name: 'Sleep', input: cyclic }], MAX_TURN_REQUEST_BYTES)).toMatch(/cannot be serialized/);
  });
});
