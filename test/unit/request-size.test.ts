import type { Client } from '@temporalio/client';
import { describe, expect, it, vi } from 'vitest';
import { SwitchyardClient } from '../../src/client/switchyard-client.js';
import type { ArtifactStore } from '../../src/contracts/artifact-store.js';
import { MAX_TURN_REQUEST_BYTES, PAYLOAD_LIMITS } from '../../src/contracts/defaults.js';
import { oversizeRequestReason } from '../../src/contracts/tool-call.js';
import { utf8Length } from '../../src/contracts/utf8-length.js';

describe('request size limit (pure, used by the update validators and the client)', () => {
  it('counts UTF-8 bytes like Buffer.byteLength, surrogate pairs included', () => {
    const ascii = Array.from({ length: 128 }, (_, code) => String.fromCharCode(code)).join('');
    for (const text of [
      '',
      'abc',
      'é',
      '€',
      '𝔘𝔫𝔦',
      'a\u0000b',
      'x'.repeat(1000) + '😀',
      '\ud800',
      ascii,
      ascii + '\u0080',
      '\udfff' + ascii,
      'x'.repeat(5000) + '\uffff',
    ]) {
      expect(utf8Length(text), JSON.stringify(text)).toBe(Buffer.byteLength(text, 'utf8'));
    }
  });

  it('accepts calls up to the limit and names the limit above it', () => {
    const calls = (label: string) => [{ id: 'a', name: 'Sleep', input: { label } }];
    const overhead = utf8Length(JSON.stringify(calls('')));
    // The request limit alone (one call's own limit lifted).
    const requestOnly = { ...PAYLOAD_LIMITS, callInputBytes: Number.POSITIVE_INFINITY };
    expect(
      oversizeRequestReason(calls('x'.repeat(MAX_TURN_REQUEST_BYTES - overhead)), MAX_TURN_REQUEST_BYTES, requestOnly),
    ).toBeUndefined();
    expect(
      oversizeRequestReason(
        calls('x'.repeat(MAX_TURN_REQUEST_BYTES - overhead + 1)),
        MAX_TURN_REQUEST_BYTES,
        requestOnly,
      ),
    ).toMatch(/over the 1048576-byte limit per request/);
    // Multi-byte characters count as their bytes, not as UTF-16 units.
    expect(oversizeRequestReason(calls('é'.repeat(600_000)), MAX_TURN_REQUEST_BYTES)).toMatch(/1200\d{3} bytes/);
    // Under the request limit, over one call's.
    expect(oversizeRequestReason(calls('é'.repeat(140_000)), MAX_TURN_REQUEST_BYTES)).toMatch(
      /over the 262144-byte limit per call/,
    );
  });

  it('reports calls that cannot be serialized instead of throwing', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(oversizeRequestReason([{ id: 'a', name: 'Sleep', input: cyclic }], MAX_TURN_REQUEST_BYTES)).toMatch(
      /cannot be serialized/,
    );
  });
});

describe('the client refuses an oversized turn before sending it', () => {
  /** A client whose Temporal side records what would be sent, and sends nothing. */
  function recordingClient() {
    const executeUpdate = vi.fn(() => Promise.resolve({ results: [] }));
    const executeUpdateWithStart = vi.fn(() => Promise.resolve({ results: [] }));
    const client = {
      workflow: { executeUpdateWithStart, getHandle: (workflowId: string) => ({ workflowId, executeUpdate }) },
    } as unknown as Client;
    return {
      switchyard: new SwitchyardClient({ client, artifacts: {} as ArtifactStore }),
      executeUpdate,
      executeUpdateWithStart,
    };
  }
  const oversized = {
    turnId: 't-big',
    calls: [{ id: 'a', name: 'Sleep', input: { label: 'x'.repeat(MAX_TURN_REQUEST_BYTES) } }],
  };
  const reason = oversizeRequestReason(oversized.calls, MAX_TURN_REQUEST_BYTES);

  it('executeTurnWithStart, with the same reason as executeTurn', async () => {
    const { switchyard, executeUpdate, executeUpdateWithStart } = recordingClient();
    expect(reason).toMatch(/over the .*-byte limit per/);
    await expect(switchyard.executeTurnWithStart('s', oversized)).rejects.toThrow(
      `executeTurnWithStart "t-big" was not sent: ${reason}`,
    );
    await expect(switchyard.session('s').executeTurn(oversized)).rejects.toThrow(
      `executeTurn "t-big" was not sent: ${reason}`,
    );
    expect(executeUpdateWithStart).not.toHaveBeenCalled();
    expect(executeUpdate).not.toHaveBeenCalled();
  });

  it('sends a turn within the limit', async () => {
    const { switchyard, executeUpdateWithStart } = recordingClient();
    await switchyard.executeTurnWithStart('s', { turnId: 't', calls: [{ id: 'a', name: 'Sleep', input: { ms: 1 } }] });
    expect(executeUpdateWithStart).toHaveBeenCalledTimes(1);
  });
});
