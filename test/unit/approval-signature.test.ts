import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  approvalSigningBytes,
  generateApproverKeyPair,
  loadApproversFile,
  signApproval,
  verifyApprovalSignature,
} from '../../src/approvals/approval-signature.js';
import { approvalSigningPayload } from '../../src/contracts/approval.js';
import type { ApprovalSigningPayload } from '../../src/contracts/approval.js';
import type { ApproversFile } from '../../src/contracts/approvers-file.js';
import { scratchDir } from '../support/scratch.js';

// The fixed test vector of docs/APPROVALS.md: the private key is RFC 8032's first Ed25519 test key (its 32-byte seed
// 9d61b19d…7f60 in PKCS#8), so any Ed25519 library can load it. Go's crypto/ed25519 and
// `openssl pkeyutl -sign -rawin` produce the same signature from the same canonical text.
const VECTOR_PRIVATE_KEY = `-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g
-----END PRIVATE KEY-----
`;
const VECTOR_PUBLIC_KEY = `-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=
-----END PUBLIC KEY-----
`;
const VECTOR_PAYLOAD: ApprovalSigningPayload = {
  sessionId: 'session-42',
  requestId: '6f1c2a9e-3b7d-4c1a-9e52-0d8f4b7a1c3e',
  inputDigest: '5b2d3f0e8a4c6b1d9e7f2a3c4b5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f',
  decision: 'allow',
  by: 'alice',
  expiresAt: '2030-01-01T00:00:00Z',
};
const VECTOR_CANONICAL =
  '{"by":"alice","decision":"allow","expiresAt":"2030-01-01T00:00:00Z","inputDigest":"5b2d3f0e8a4c6b1d9e7f2a3c4b5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f","requestId":"6f1c2a9e-3b7d-4c1a-9e52-0d8f4b7a1c3e","sessionId":"session-42"}';
const VECTOR_SIGNATURE = 'i1FKJUWauQNyRvrrIdmG6rEBjyI9kJ7FRTtRJAtY82hYINJcy+Ir968Vo+owWiaPYe8h3b/XwaEfQrRT8yj6Aw==';

const approvers: ApproversFile = {
  approvers: {
    alice: { publicKey: VECTOR_PUBLIC_KEY, groups: ['ops'] },
    bob: { publicKey: generateApproverKeyPair().publicKeyPem },
  },
};

describe('approval signatures', () => {
  it('signs the fixed test vector: canonical form and signature as docs/APPROVALS.md prints them', () => {
    expect(approvalSigningBytes(VECTOR_PAYLOAD).toString('utf8')).toBe(VECTOR_CANONICAL);
    expect(signApproval(VECTOR_PAYLOAD, VECTOR_PRIVATE_KEY)).toBe(VECTOR_SIGNATURE);
    expect(
      verifyApprovalSignature({
        payload: VECTOR_PAYLOAD,
        signature: VECTOR_SIGNATURE,
        approvers,
        sessionApprovers: ['alice'],
      }),
    ).toEqual({ verified: true, approver: 'alice' });
  });

  it('builds the signed object from a signal, leaving out an absent expiry', () => {
    const signal = { requestId: 'r', inputDigest: 'd', decision: 'deny' as const, by: 'alice' };
    expect(approvalSigningPayload('s', signal)).toEqual({
      sessionId: 's',
      requestId: 'r',
      inputDigest: 'd',
      decision: 'deny',
      by: 'alice',
    });
    expect(approvalSigningBytes(approvalSigningPayload('s', signal)).toString()).toBe(
      '{"by":"alice","decision":"deny","inputDigest":"d","requestId":"r","sessionId":"s"}',
    );
  });

  it('refuses a signature over any other field value: session, request, digest, decision, signer or expiry', () => {
    const changed: Array<Partial<ApprovalSigningPayload>> = [
      { sessionId: 'session-43' },
      { requestId: 'another' },
      { inputDigest: '0'.repeat(64) },
      { decision: 'allow_always' },
      { expiresAt: '2031-01-01T00:00:00Z' },
      { expiresAt: undefined },
    ];
    for (const change of changed) {
      const payload = { ...VECTOR_PAYLOAD, ...change };
      if (change.expiresAt === undefined && 'expiresAt' in change) delete payload.expiresAt;
      expect(
        verifyApprovalSignature({ payload, signature: VECTOR_SIGNATURE, approvers, sessionApprovers: undefined }),
      ).toMatchObject({ verified: false, reason: 'bad_signature' });
    }
    expect(
      verifyApprovalSignature({
        payload: VECTOR_PAYLOAD,
        signature: 'not base64 at all',
        approvers,
        sessionApprovers: undefined,
      }),
    ).toMatchObject({ reason: 'bad_signature' });
    // alice's key in bob's name: bob did not sign it.
    expect(
      verifyApprovalSignature({
        payload: { ...VECTOR_PAYLOAD, by: 'bob' },
        signature: signApproval({ ...VECTOR_PAYLOAD, by: 'bob' }, VECTOR_PRIVATE_KEY),
        approvers,
        sessionApprovers: undefined,
      }),
    ).toMatchObject({ reason: 'bad_signature' });
  });

  it('knows approvers by name and by group, and tells an unknown signer from an outsider', () => {
    const signedBy = (by: string): { payload: ApprovalSigningPayload; signature: string } => ({
      payload: { ...VECTOR_PAYLOAD, by },
      signature: VECTOR_SIGNATURE,
    });
    expect(verifyApprovalSignature({ ...signedBy('alice'), approvers, sessionApprovers: ['group:ops'] })).toMatchObject(
      { verified: true },
    );
    expect(
      verifyApprovalSignature({ ...signedBy('alice'), approvers, sessionApprovers: ['group:finance', 'carol'] }),
    ).toMatchObject({ reason: 'not_an_approver' });
    expect(verifyApprovalSignature({ ...signedBy('alice'), approvers, sessionApprovers: [] })).toMatchObject({
      reason: 'not_an_approver',
    });
    expect(verifyApprovalSignature({ ...signedBy('mallory'), approvers, sessionApprovers: ['alice'] })).toMatchObject({
      reason: 'unknown_approver',
    });
    expect(verifyApprovalSignature({ ...signedBy('__proto__'), approvers, sessionApprovers: ['alice'] })).toMatchObject(
      { reason: 'unknown_approver' },
    );
    expect(
      verifyApprovalSignature({ ...signedBy('alice'), approvers: undefined, sessionApprovers: ['alice'] }),
    ).toMatchObject({ reason: 'unknown_approver', detail: expect.stringContaining('SWITCHYARD_APPROVERS_FILE') });
  });

  it('loads an approvers file, and names the file and the approver when a key is wrong', async () => {
    const dir = await scratchDir('switchyard-approvers-');
    const good = path.join(dir, 'good.json');
    await writeFile(good, JSON.stringify(approvers));
    expect(Object.keys((await loadApproversFile(good)).approvers)).toEqual(['alice', 'bob']);
    const broken = path.join(dir, 'broken.json');
    await writeFile(
      broken,
      JSON.stringify({
        approvers: { carol: { publicKey: '-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----\n' } },
      }),
    );
    await expect(loadApproversFile(broken)).rejects.toThrow(/broken\.json: approver "carol"/);
    const shape = path.join(dir, 'shape.json');
    await writeFile(shape, JSON.stringify({ alice: { publicKey: VECTOR_PUBLIC_KEY } }));
    await expect(loadApproversFile(shape)).rejects.toThrow(/shape\.json/);
    await expect(loadApproversFile(path.join(dir, 'missing.json'))).rejects.toThrow(/missing\.json/);
  });
});
