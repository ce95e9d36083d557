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
  /**
   * What the call would run, readable (`approvalInputSummary`): the Bash command, the file path, the URL, else
   * compact JSON; at most `INPUT_SUMMARY_MAX_CHARS`. Absent in entries recorded before it was kept, and when the
   * session does not know the call.
   */
  inputSummary?: string;
  /**
   * Who decided: a person's `approval` signal, the session's approval evaluator (`by: 'evaluator:<name>'`), a
   * PermissionRequest hook (`by: 'hook:<command>'`) or a policy change that decided a waiting call again. Absent in
   * entries recorded before it was kept.
   */
  source?: ApprovalDecisionSource;
}

export const approvalDecisionSources = ['person', 'evaluator', 'hook', 'policy'] as const;
export type ApprovalDecisionSource = (typeof approvalDecisionSources)[number];

/**
 * How many `approval` signals a session took and ignored (query `approvalDecisionCounts`). Accepted decisions are all
 * listed by `approvalDecisions` (up to a generous bound, see `src/workflows/approval-decision-log.ts`); ignored ones
 * are counted here and only the newest of them listed.
 */
export interface ApprovalDecisionCounts {
  /** Accepted decisions listed by `approvalDecisions`. */
  accepted: number;
  /** Accepted decisions no longer listed: past the bound a session keeps (oldest first). 0 in practice. */
  acceptedDropped: number;
  /** Ignored signals since the session started (across continue-as-new; from older runs, those still listed then). */
  ignored: number;
  /** Ignored signals still listed by `approvalDecisions` (the newest). */
  ignoredRetained: number;
}

/** At most this many characters of an input summary in the decision log. */
export const INPUT_SUMMARY_MAX_CHARS = 200;

/** The input field that says what a built-in tool's call does, by tool name. */
const SUMMARY_FIELDS: Readonly<Record<string, readonly string[]>> = {
  Bash: ['command'],
  Read: ['file_path'],
  Write: ['file_path'],
  Edit: ['file_path'],
  MultiEdit: ['file_path'],
  NotebookEdit: ['notebook_path'],
  WebFetch: ['url'],
  Glob: ['pattern', 'path'],
  Grep: ['pattern', 'path'],
};

/**
 * A readable, bounded summary of a call's input for the decision log: the Bash command, the file path, the URL (the
 * fields in `SUMMARY_FIELDS`), else the input's compact JSON. Control characters are written as escapes (`\n`), so a
 * second line of a command shows instead of hiding; longer than `INPUT_SUMMARY_MAX_CHARS`, it is cut and ends in `…`.
 */
export function approvalInputSummary(toolName: string, input: unknown): string {
  const fields = SUMMARY_FIELDS[toolName];
  const record = input !== null && typeof input === 'object' ? (input as Record<string, unknown>) : undefined;
  const values = (fields ?? []).flatMap((field) => {
    const value = record?.[field];
    return typeof value === 'string' && value !== '' ? [value] : [];
  });
  let text: string;
  if (values.length > 0) text = values.join(' in ');
  else {
    try {
      text = typeof input === 'string' ? input : (JSON.stringify(input) ?? '');
    } catch {
      text = '';
    }
  }
  const escaped = text.slice(0, INPUT_SUMMARY_MAX_CHARS * 2).replace(/[\u0000-\u001f\u007f]/g, (char) => {
    if (char === '\n') return '\\n';
    if (char === '\t') return '\\t';
    if (char === '\r') return '\\r';
    return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
  if (escaped.length <= INPUT_SUMMARY_MAX_CHARS) return escaped;
  let end = INPUT_SUMMARY_MAX_CHARS - 1;
  const last = escaped.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${escaped.slice(0, end)}…`;
}

/** Who decided, from how the decision log names them: `evaluator:<name>`, `hook:<command>`, `policy:<by>`, else a person. */
export function approvalDecisionSource(by: string | undefined): ApprovalDecisionSource {
  if (by?.startsWith('evaluator:') === true) return 'evaluator';
  if (by?.startsWith('hook:') === true) return 'hook';
  if (by?.startsWith('policy:') === true) return 'policy';
  return 'person';
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
