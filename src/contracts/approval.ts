import { z } from 'zod';

export const approvalDecisions = ['allow', 'allow_always', 'deny'] as const;
export type ApprovalDecision = (typeof approvalDecisions)[number];

/** Payload of the `approval` signal. */
export const approvalSignalSchema = z.object({
  requestId: z.string().min(1),
  decision: z.enum(approvalDecisions),
  inputDigest: z.string().min(1),
  by: z.string().optional(),
  reason: z.string().optional(),
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
}

/** Why a session ignored an `approval` signal. */
export const approvalIgnoredReasons = ['unknown', 'already_decided', 'digest_mismatch', 'invalid', 'hook_answered_first'] as const;
export type ApprovalIgnoredReason = (typeof approvalIgnoredReasons)[number];

/**
 * What a session did with one `approval` signal (query `approvalDecisions`, wire contract v1.1): `accepted` when it
 * decided a pending request, `ignored` with the reason otherwise. A console shows it as feedback and as a log.
 */
export interface ApprovalDecisionRecord {
  /** Position in the session's decision log (survives continue-as-new). */
  seq: number;
  /** ISO timestamp (workflow time) of the signal. */
  at: string;
  requestId: string;
  /** The decision the signal carried; absent when the signal did not parse. */
  decision?: ApprovalDecision;
  by?: string;
  reason?: string;
  outcome: 'accepted' | 'ignored';
  /** Why it was ignored (only for `ignored`). */
  ignoredBecause?: ApprovalIgnoredReason;
  detail?: string;
  /** The call the request was for, when the session knows it. */
  callId?: string;
  toolName?: string;
  turnId?: string;
  /** The session policy's version when the signal (or evaluator, or policy change) decided. */
  policyVersion?: number;
}
