import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import canonicalize from 'canonicalize';
import type { ApprovalSigningPayload, ApprovalVerdict } from '../contracts/approval.js';
import { inDoubtSigningPayload } from '../contracts/calls-in-doubt.js';
import type { InDoubtSigningPayload, ResolveInDoubtRequest } from '../contracts/calls-in-doubt.js';
import { approversFileSchema, isSessionApprover } from '../contracts/approvers-file.js';
import type { ApproversFile } from '../contracts/approvers-file.js';
import { policyChangeOf } from '../contracts/policy.js';
import type {
  PolicyChange,
  PolicyChangeToVerify,
  PolicySigningPayload,
  SetPolicyRequest,
} from '../contracts/policy.js';
import { formatZodError } from '../contracts/tool-call.js';

/**
 * The bytes an approval signature covers: the UTF-8 bytes of the RFC 8785 canonical JSON of the signing payload
 * (docs/APPROVALS.md has the form and a fixed test vector).
 */
export function approvalSigningBytes(
  payload: ApprovalSigningPayload | PolicySigningPayload | InDoubtSigningPayload,
): Buffer {
  const text = canonicalize(payload);
  if (text === undefined) throw new Error('the approval payload has no canonical form');
  return Buffer.from(text, 'utf8');
}

/** Signs a payload with an Ed25519 private key (PKCS#8 PEM); the base64 signature the `approval` signal carries. */
export function signApproval(
  payload: ApprovalSigningPayload | PolicySigningPayload | InDoubtSigningPayload,
  privateKeyPem: string,
): string {
  const key = createPrivateKey(privateKeyPem);
  if (key.asymmetricKeyType !== 'ed25519')
    throw new Error(`the signing key must be an Ed25519 key, not ${key.asymmetricKeyType ?? 'a symmetric key'}`);
  return sign(null, approvalSigningBytes(payload), key).toString('base64');
}

/** The hex SHA-256 of the canonical JSON (RFC 8785) of a policy change: what a signed `setPolicy` names. */
export function policyDigest(change: PolicyChange): string {
  const text = canonicalize(change);
  if (text === undefined) throw new Error('the policy change has no canonical form');
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The signed object of a `setPolicy` to `sessionId` (docs/APPROVALS.md, Signed policy changes). */
export function policySigningPayload(change: PolicyChangeToVerify): PolicySigningPayload {
  const payload: PolicySigningPayload = {
    sessionId: change.sessionId,
    policyDigest: policyDigest(change.change),
    by: change.by,
  };
  if (change.expiresAt !== undefined) payload.expiresAt = change.expiresAt;
  return payload;
}

/**
 * Signs a `setPolicy` request for `sessionId` with an Ed25519 private key (PKCS#8 PEM): the request as sent, with the
 * `by`, `expiresAt` and `signature` a session with approvers requires.
 */
export function signPolicyChange(options: {
  sessionId: string;
  request: SetPolicyRequest;
  by: string;
  expiresAt?: string;
  privateKeyPem: string;
}): SetPolicyRequest {
  const { sessionId, request, by, expiresAt, privateKeyPem } = options;
  const signature = signApproval(
    policySigningPayload({
      sessionId,
      change: policyChangeOf(request),
      by,
      ...(expiresAt === undefined ? {} : { expiresAt }),
    }),
    privateKeyPem,
  );
  return { ...request, by, ...(expiresAt === undefined ? {} : { expiresAt }), signature };
}

/**
 * Signs a `resolveInDoubt` request for `sessionId` with an Ed25519 private key (PKCS#8 PEM): the request as sent, with
 * its `expiresAt` and `signature` (a session with approvers requires it; docs/APPROVALS.md, Signed resolutions).
 */
export function signInDoubtResolution(options: {
  sessionId: string;
  request: ResolveInDoubtRequest;
  expiresAt?: string;
  privateKeyPem: string;
}): ResolveInDoubtRequest {
  const { sessionId, request, privateKeyPem } = options;
  const expiresAt = options.expiresAt ?? request.expiresAt;
  const signed = { ...request, ...(expiresAt === undefined ? {} : { expiresAt }) };
  return { ...signed, signature: signApproval(inDoubtSigningPayload(sessionId, signed), privateKeyPem) };
}

/** A fresh Ed25519 key pair in the PEM forms the approvers file (SPKI) and `--key` files (PKCS#8) use. */
export function generateApproverKeyPair(): { publicKeyPem: string; privateKeyPem: string } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return {
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/** Reads and checks an approvers file; a clear error names the file and what is wrong with it. */
export async function loadApproversFile(file: string): Promise<ApproversFile> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new Error(`approvers file ${file}: ${(error as Error).message}`, { cause: error });
  }
  const parsed = approversFileSchema.safeParse(raw);
  if (!parsed.success) throw new Error(`approvers file ${file}: ${formatZodError(parsed.error)}`);
  for (const [name, entry] of Object.entries(parsed.data.approvers)) {
    let key: KeyObject;
    try {
      key = createPublicKey(entry.publicKey);
    } catch (error) {
      throw new Error(
        `approvers file ${file}: approver "${name}": the publicKey does not parse (${(error as Error).message})`,
        { cause: error },
      );
    }
    if (key.asymmetricKeyType !== 'ed25519')
      throw new Error(
        `approvers file ${file}: approver "${name}": the publicKey must be Ed25519, not ${key.asymmetricKeyType ?? 'unknown'}`,
      );
  }
  return parsed.data;
}

/**
 * Checks one signed approval against the approvers: `by` must be in the file, be one of the session's approvers (when
 * the session names any) and have signed exactly this payload. Expiry is the workflow's to judge (workflow time).
 */
export function verifyApprovalSignature(options: {
  payload: ApprovalSigningPayload | PolicySigningPayload | InDoubtSigningPayload;
  signature: string;
  approvers: ApproversFile | undefined;
  sessionApprovers: readonly string[] | undefined;
}): ApprovalVerdict {
  const { payload, signature, approvers, sessionApprovers } = options;
  const by = payload.by;
  if (approvers === undefined)
    return {
      verified: false,
      reason: 'unknown_approver',
      detail: 'this worker has no approvers file (SWITCHYARD_APPROVERS_FILE)',
    };
  const entry = Object.hasOwn(approvers.approvers, by) ? approvers.approvers[by] : undefined;
  if (entry === undefined)
    return {
      verified: false,
      reason: 'unknown_approver',
      detail: by === '' ? 'the approval names no approver (by)' : `"${by}" is not in the approvers file`,
    };
  if (
    sessionApprovers !== undefined &&
    !isSessionApprover({ name: by, sessionApprovers, groups: entry.groups ?? [] })
  ) {
    return {
      verified: false,
      reason: 'not_an_approver',
      detail: `"${by}" is not one of this session's approvers (${sessionApprovers.join(', ') || 'none'})`,
    };
  }
  let good = false;
  try {
    good = verify(
      null,
      approvalSigningBytes(payload),
      createPublicKey(entry.publicKey),
      Buffer.from(signature, 'base64'),
    );
  } catch {
    good = false;
  }
  if (!good)
    return {
      verified: false,
      reason: 'bad_signature',
      detail:
        'policyDigest' in payload
          ? `the signature is not ${by}'s signature over this session, policy change and expiry`
          : 'outcome' in payload
            ? `the signature is not ${by}'s signature over this session, call, outcome and expiry`
            : `the signature is not ${by}'s signature over this request, digest, decision and expiry`,
    };
  return { verified: true, approver: by };
}
