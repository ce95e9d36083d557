// The schemas here sit behind `approvalSchemas()` instead of being exported: see src/contracts/schemas.ts.
import { z } from 'zod';

export const approvalDecisions = ['allow', 'allow_always', 'deny'] as const;
export type ApprovalDecision = (typeof approvalDecisions)[number];

/** Payload of the `approval` signal. */
const approvalSignalSchema = z.object({
  requestId: z.string().min(1),
  decision: z.enum(approvalDecisions),
  inputDigest: z.string().min(1),
  by: z.string().optional(),
  reason: z.string().optional(),
  /** ISO time after which a signed grant no longer counts (judged against workflow time when the signal arrives). */
  expiresAt: z.iso.datetime({ offset: true }).optional(),
  /** Base64 Ed25519 signature over the canonical signed fields (`approvalSigningPayload`, docs/APPROVALS.md). */
  signature: z.string().min(1).max(1_000).optional(),
});
export type ApprovalSignal = z.infer<typeof approvalSignalSchema>;

/** A call waiting for a human (query `pendingApprovals`). */
export interface ApprovalRequest {
  requestId: string;
  turnId: string;
  callId: string;
  toolName: string;
  input: unknown;
  inputDigest: string;
  preview?: string;
  reason?: string;
  /** The rule an `allow_always` answer would remember, e.g. `Bash(npm test)`. */
  rememberRule?: string;
  /** ISO timestamp (workflow time). */
  requestedAt: string;
  /** The directory the call runs in (the turn's or the session's cwd), so a person sees where a command would run. */
  cwd?: string;
  /** The session's approvers (names, `group:<g>`) when it restricts who may decide: only their signed approvals count. */
  approvers?: string[];
}

/** Why a session ignored an `approval` signal. */
export const approvalIgnoredReasons = [
  'unknown',
  'already_decided',
  'digest_mismatch',
  'invalid',
  'hook_answered_first',
  // Signed approvals (sessions with `approvers`, or any signal that carries a signature):
  'unsigned',
  'bad_signature',
  'unknown_approver',
  'not_an_approver',
  'expired',
  'verification_failed',
] as const;
export type ApprovalIgnoredReason = (typeof approvalIgnoredReasons)[number];

/**
 * The decision log's policy version until sessions can change their policy while they run: every decision so far was
 * made under the start options' rules.
 */
export const INITIAL_POLICY_VERSION = 1;

/**
 * What a session did with one `approval` signal (query `approvalDecisions`): `accepted` when it decided a pending
 * request, `ignored` with the reason otherwise. A console shows it as feedback and as a log; `switchyard audit`
 * exports it.
 */
export interface ApprovalDecisionRecord {
  /** Position in the session's decision log (survives continue-as-new). */
  seq: number;
  /** ISO timestamp (workflow time) of the signal. */
  at: string;
  requestId: string;
  /** The input digest the signal carried (for an accepted one: the digest of the input that runs). */
  inputDigest?: string;
  /** The decision the signal carried; absent when the signal did not parse. */
  decision?: ApprovalDecision;
  by?: string;
  /** True only when a signature from `by` checked out against the worker's approvers file. */
  verified: boolean;
  /** The signed grant's expiry, when it had one. */
  expiresAt?: string;
  reason?: string;
  outcome: 'accepted' | 'ignored';
  /** Version of the session's permission policy the decision was made under (1 until a `setPolicy` changes it). */
  policyVersion: number;
  /** Why it was ignored (only for `ignored`). */
  ignoredBecause?: ApprovalIgnoredReason;
  detail?: string;
  /** The call the request was for, when the session knows it. */
  callId?: string;
  toolName?: string;
  turnId?: string;
}

/** The fields an approval signature covers, in the shape that is canonicalised (RFC 8785) and signed. */
export interface ApprovalSigningPayload {
  sessionId: string;
  requestId: string;
  inputDigest: string;
  decision: ApprovalDecision;
  by: string;
  /** Left out of the signed object when the grant does not expire. */
  expiresAt?: string;
}

/** The signed object for a signal sent to `sessionId` (`by` and `expiresAt` as the signal carries them). */
export function approvalSigningPayload(
  sessionId: string,
  signal: Pick<ApprovalSignal, 'requestId' | 'inputDigest' | 'decision' | 'by' | 'expiresAt'>,
): ApprovalSigningPayload {
  const payload: ApprovalSigningPayload = {
    sessionId,
    requestId: signal.requestId,
    inputDigest: signal.inputDigest,
    decision: signal.decision,
    by: signal.by ?? '',
  };
  if (signal.expiresAt !== undefined) payload.expiresAt = signal.expiresAt;
  return payload;
}

/** Why a signature did not check out, as the verifying activity found it. */
export type ApprovalVerdict =
  | { verified: true; approver: string }
  | { verified: false; reason: 'unknown_approver' | 'not_an_approver' | 'bad_signature'; detail: string };

const schemas = { signal: approvalSignalSchema };

/** This module's schemas: the `approval` signal's payload. */
export function approvalSchemas(): typeof schemas {
  return schemas;
}
