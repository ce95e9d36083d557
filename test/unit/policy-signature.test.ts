import { describe, expect, it } from 'vitest';
import {
  approvalSigningBytes,
  generateApproverKeyPair,
  policyDigest,
  policySigningPayload,
  signPolicyChange,
  verifyApprovalSignature,
} from '../../src/approvals/approval-signature.js';
import { sandboxFloorRefusal } from '../../src/tools/sandbox/sandbox-floor.js';
import { policyChangeOf, policyDecider } from '../../src/contracts/policy.js';
import type { ApproversFile } from '../../src/contracts/approvers-file.js';
import { PolicyState } from '../../src/workflows/session-policy.js';

// The policy test vector of docs/APPROVALS.md ("Signed policy changes"), with RFC 8032's first test key.
const VECTOR_PRIVATE_KEY = `-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g
-----END PRIVATE KEY-----
`;
const VECTOR_PUBLIC_KEY = `-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=
-----END PUBLIC KEY-----
`;
const VECTOR_DIGEST = '7efc4a938c1cedb5188de0c68052f5f7166c54371601c3959217da13122a0c74';
const VECTOR_SIGNATURE = '3lagRIJ5hFFus/ts0UoLJXVXJxcPbau4F1Eg+/QOJ8Gcb8pQPTs8OHEJkfx61GkB79LYgEOUx7IQmsLjjrX1Cg==';
const approvers: ApproversFile = { approvers: { alice: { publicKey: VECTOR_PUBLIC_KEY } } };

describe('signed policy changes', () => {
  it('digests and signs the fixed test vector as docs/APPROVALS.md prints it', () => {
    const request = {
      rules: { allow: ['Write(src/**)'] },
      permissionMode: 'acceptEdits' as const,
      reason: 'not signed',
      by: 'alice',
    };
    expect(policyDigest(policyChangeOf(request))).toBe(VECTOR_DIGEST);
    const signed = signPolicyChange({
      sessionId: 'session-42',
      request,
      by: 'alice',
      expiresAt: '2030-01-01T00:00:00Z',
      privateKeyPem: VECTOR_PRIVATE_KEY,
    });
    expect(signed).toEqual({ ...request, expiresAt: '2030-01-01T00:00:00Z', signature: VECTOR_SIGNATURE });
    const payload = policySigningPayload({
      sessionId: 'session-42',
      change: policyChangeOf(request),
      by: 'alice',
      expiresAt: '2030-01-01T00:00:00Z',
    });
    expect(approvalSigningBytes(payload).toString()).toBe(
      `{"by":"alice","expiresAt":"2030-01-01T00:00:00Z","policyDigest":"${VECTOR_DIGEST}","sessionId":"session-42"}`,
    );
    expect(
      verifyApprovalSignature({ payload, signature: VECTOR_SIGNATURE, approvers, sessionApprovers: ['alice'] }),
    ).toEqual({ verified: true, approver: 'alice' });
  });

  it('leaves absent fields out of the digest and the signed object, and covers every field that is there', () => {
    expect(policyChangeOf({ permissionMode: 'plan', reason: 'x' })).toEqual({ permissionMode: 'plan' });
    expect(policyDigest({})).toBe(policyDigest(policyChangeOf({ reason: 'only a reason' })));
    expect(policyDigest({ rules: {} })).not.toBe(policyDigest({}));
    expect(policySigningPayload({ sessionId: 's', change: {}, by: 'alice' })).toEqual({
      sessionId: 's',
      policyDigest: policyDigest({}),
      by: 'alice',
    });
    const keys = generateApproverKeyPair();
    const file: ApproversFile = { approvers: { alice: { publicKey: keys.publicKeyPem } } };
    const change = { rules: { allow: ['Bash(npm test)'] } };
    const signed = signPolicyChange({
      sessionId: 's',
      request: change,
      by: 'alice',
      privateKeyPem: keys.privateKeyPem,
    });
    const check = (changed: Partial<Parameters<typeof policySigningPayload>[0]>) =>
      verifyApprovalSignature({
        payload: policySigningPayload({ sessionId: 's', change, by: 'alice', ...changed }),
        signature: signed.signature ?? '',
        approvers: file,
        sessionApprovers: ['alice'],
      });
    expect(check({})).toEqual({ verified: true, approver: 'alice' });
    for (const changed of [
      { sessionId: 't' },
      { change: { rules: { allow: ['Bash'] } } },
      { change: { ...change, permissionMode: 'bypassPermissions' as const } },
      { expiresAt: '2030-01-01T00:00:00Z' },
    ])
      expect(check(changed)).toMatchObject({ verified: false, reason: 'bad_signature' });
  });

  it('remembers the signature of an applied change across continue-as-new, so a replayed one is known', () => {
    const policy = new PolicyState({}, undefined);
    expect(policy.applied('sig-1')).toBe(false);
    policy.update({ rules: { allow: ['Read'] }, by: 'alice', signature: 'sig-1' });
    policy.update({ permissionMode: 'plan', by: 'ops' });
    expect(policy.applied('sig-1')).toBe(true);
    const next = new PolicyState({}, policy.carry());
    expect(next.applied('sig-1')).toBe(true);
    expect(next.version).toBe(3);
    expect(new PolicyState({}, new PolicyState({}, undefined).carry()).applied('sig-1')).toBe(false);
  });

  it('records a policy change under policy:<by>, never a bare name', () => {
    expect(policyDecider('alice')).toBe('policy:alice');
    expect(policyDecider(undefined)).toBe('policy:unnamed');
  });
});

describe("the worker's sandbox floor", () => {
  it('refuses off and auto under SWITCHYARD_SANDBOX=required, naming both; admits required and an unset mode', () => {
    for (const sessionMode of ['off', 'auto'] as const) {
      const reason = sandboxFloorRefusal({ sessionMode, workerMode: 'required' });
      expect(reason).toContain('SWITCHYARD_SANDBOX=required');
      expect(reason).toContain(`sandbox.mode "${sessionMode}"`);
    }
    expect(sandboxFloorRefusal({ sessionMode: 'required', workerMode: 'required' })).toBeUndefined();
    expect(sandboxFloorRefusal({ sessionMode: undefined, workerMode: 'required' })).toBeUndefined();
    for (const workerMode of [undefined, 'auto', 'off'])
      expect(sandboxFloorRefusal({ sessionMode: 'off', workerMode })).toBeUndefined();
  });

  it('refuses a session naming a mode when the worker value is not a mode (fail closed)', () => {
    expect(sandboxFloorRefusal({ sessionMode: 'off', workerMode: 'requird' })).toContain('"requird"');
  });
});
