/**
 * Calls in doubt (docs/SEMANTICS.md, Calls in doubt): a call whose tool is not idempotent and whose worker was lost
 * while it ran ends `interrupted` for the model, at most once, and is listed here until a person says what happened:
 * it `ran` (with the output it made), it did `not-ran`, or `retry` it. Pure, so the workflow, the worker, the client
 * and the CLI share one definition.
 */
// The schemas here sit behind `callsInDoubtSchemas()` instead of being exported: see src/contracts/schemas.ts.
import { z } from 'zod';

/** A call whose worker died while it ran: it may have partly run (query `callsInDoubt`). */
export interface CallInDoubt {
  callId: string;
  /** The turn the call ran in. */
  turnId: string;
  toolName: string;
  /** What the call ran, readable and bounded (`approvalInputSummary`): the command, the path, the URL. */
  inputSummary: string;
  /** sha256 of the canonical JSON of the call's input (as approvals name it). */
  inputDigest: string;
  /**
   * The key the execution in doubt ran with (`<sessionId>:<callId>:<attempt>`); a `retry` runs with this same key, so
   * a tool that honours it can tell the retry from a new call.
   */
  idempotencyKey: string;
  /** ISO time (workflow time) the call started. */
  startedAt: string;
}

export const inDoubtOutcomes = ['ran', 'not-ran', 'retry'] as const;
export type InDoubtOutcome = (typeof inDoubtOutcomes)[number];

/** Longest `output` a `ran` resolution may carry (characters): it is what the next turn reports for the call. */
export const IN_DOUBT_OUTPUT_MAX_CHARS = 100_000;

/** Payload of the `resolveInDoubt` update. */
const resolveInDoubtRequestSchema = z
  .strictObject({
    callId: z.string().min(1).max(200),
    outcome: z.enum(inDoubtOutcomes),
    /** With `ran`: what the call produced, reported to the model by the session's next turn. */
    output: z.string().max(IN_DOUBT_OUTPUT_MAX_CHARS).optional(),
    /** Who settled it: an approver's name in a session with approvers. */
    by: z.string().min(1).max(200),
    /** ISO time after which a signed resolution no longer applies (judged against workflow time). */
    expiresAt: z.iso.datetime({ offset: true }).optional(),
    /** Base64 Ed25519 signature over `inDoubtSigningPayload` (docs/APPROVALS.md); required with approvers. */
    signature: z.string().min(1).max(1_000).optional(),
  })
  .refine((request) => request.output === undefined || request.outcome === 'ran', {
    message: 'output is only taken with outcome "ran"',
    path: ['output'],
  });
export type ResolveInDoubtRequest = z.infer<typeof resolveInDoubtRequestSchema>;

/** What `resolveInDoubt` did. */
export interface ResolveInDoubtResult {
  callId: string;
  outcome: InDoubtOutcome;
  /** Whether the resolution was signed by `by` and the signature checked out. */
  verified: boolean;
  /** `ran` and `retry`: the session's next turn reports the call (the output given, or the retry's result). */
  reportedInNextTurn: boolean;
}

/** The fields a signed resolution covers, canonicalised (RFC 8785) and signed like an approval. */
export interface InDoubtSigningPayload {
  sessionId: string;
  callId: string;
  outcome: InDoubtOutcome;
  by: string;
  /** Left out of the signed object when the resolution does not expire. */
  expiresAt?: string;
}

/** The signed object of a `resolveInDoubt` sent to `sessionId`. */
export function inDoubtSigningPayload(
  sessionId: string,
  request: Pick<ResolveInDoubtRequest, 'callId' | 'outcome' | 'by' | 'expiresAt'>,
): InDoubtSigningPayload {
  const payload: InDoubtSigningPayload = {
    sessionId,
    callId: request.callId,
    outcome: request.outcome,
    by: request.by,
  };
  if (request.expiresAt !== undefined) payload.expiresAt = request.expiresAt;
  return payload;
}

/**
 * The idempotency key of one execution: `<sessionId>:<callId>:<attempt>`, `attempt` being the execution's activity
 * attempt (1, higher only when an idempotent call is retried after a lost worker). A `retry` resolution runs a new
 * activity whose attempt is 1 again, so it carries the key of the execution in doubt (docs/SEMANTICS.md).
 */
export function idempotencyKeyOf(sessionId: string, callId: string, attempt: number): string {
  return `${sessionId}:${callId}:${attempt}`;
}

/** The text the model gets for a call in doubt a person settled as `ran`: the output they gave, as a tool's own. */
export function ranInDoubtText(toolName: string, output: string | undefined): string {
  return output === undefined || output === '' ? `(${toolName} completed with no output)` : output;
}

const schemas = { resolveInDoubt: resolveInDoubtRequestSchema };

/** This module's schemas: the `resolveInDoubt` update's payload. */
export function callsInDoubtSchemas(): typeof schemas {
  return schemas;
}
