/**
 * A session's policy as it changes while the session runs: the `setPolicy` update, the operator's rules from the
 * worker's policy file, history-aware limits and approval evaluators (docs/SEMANTICS.md, Policy). Pure, so the
 * workflow, the worker and the client share one definition.
 */
// The schemas here sit behind `policySchemas()` instead of being exported: see src/contracts/schemas.ts.
import { z } from 'zod';
import { parseRule } from './permission-rules.js';
import { permissionModes, sessionSchemas } from './session.js';
import type { CallLimit, PermissionMode, PermissionRules } from './session.js';

export type { CallLimit };

export type { PermissionRules };

/** The first rule of a rule set that does not parse, as a message; undefined when all parse. */
export function invalidRule(rules: PermissionRules | undefined): string | undefined {
  for (const list of [rules?.allow, rules?.ask, rules?.deny]) {
    for (const rule of list ?? []) {
      try {
        parseRule(rule);
      } catch (error) {
        return (error as Error).message;
      }
    }
  }
  return undefined;
}

/** Payload of the `setPolicy` update. */
const setPolicyRequestSchema = z.strictObject({
  /** Each list given replaces the session's list of that kind; a list left out is kept. */
  rules: sessionSchemas().permissionRules.optional(),
  permissionMode: z.enum(permissionModes).optional(),
  reason: z.string().max(2_000).optional(),
  by: z.string().max(200).optional(),
  /** ISO time after which a signed change no longer applies (judged against workflow time when it arrives). */
  expiresAt: z.iso.datetime({ offset: true }).optional(),
  /** Base64 Ed25519 signature over `policySigningPayload` (docs/APPROVALS.md); required in a session with approvers. */
  signature: z.string().min(1).max(1_000).optional(),
});
export type SetPolicyRequest = z.infer<typeof setPolicyRequestSchema>;

/** The part of a `setPolicy` request its `policyDigest` covers: the rules and the mode as sent, absent ones left out. */
export interface PolicyChange {
  rules?: PermissionRules;
  permissionMode?: PermissionMode;
}

/** The change a `setPolicy` request makes, in the shape whose canonical JSON (RFC 8785) is hashed into `policyDigest`. */
export function policyChangeOf(request: SetPolicyRequest): PolicyChange {
  return {
    ...(request.rules === undefined ? {} : { rules: request.rules }),
    ...(request.permissionMode === undefined ? {} : { permissionMode: request.permissionMode }),
  };
}

/**
 * The fields a signed `setPolicy` covers, canonicalised (RFC 8785) and signed like an approval: `policyDigest` is the
 * hex SHA-256 of the canonical JSON of {@link policyChangeOf} the request.
 */
export interface PolicySigningPayload {
  sessionId: string;
  policyDigest: string;
  by: string;
  /** Left out of the signed object when the change does not expire. */
  expiresAt?: string;
}

/**
 * What the `verifyApproval` activity checks for a signed `setPolicy`: the workflow cannot hash, so it sends the change
 * and the activity computes `policyDigest` before it checks the signature.
 */
export interface PolicyChangeToVerify {
  sessionId: string;
  change: PolicyChange;
  by: string;
  expiresAt?: string;
}

/** The `by` a decision made by a `setPolicy` change is recorded under: never a bare name, so never taken for a person. */
export function policyDecider(by: string | undefined): string {
  return `policy:${by ?? 'unnamed'}`;
}

/** What `setPolicy` did: the new version, and the waiting calls it released or denied (call ids). */
export interface SetPolicyResult {
  policyVersion: number;
  released: string[];
  denied: string[];
}

/** The session's own policy tier as it stands (carried across continue-as-new). */
export interface SessionPolicy {
  version: number;
  rules: PermissionRules;
  permissionMode?: PermissionMode;
}

/** The operator's policy file (`SWITCHYARD_POLICY_FILE`): rules no session can loosen. */
const operatorPolicyFileSchema = z.strictObject({ rules: sessionSchemas().permissionRules });

/** What an approval evaluator is asked about one waiting call. */
export interface EvaluationRequest {
  sessionId: string;
  turnId: string;
  callId: string;
  toolName: string;
  input: unknown;
  /** Why the call needs approval (the rule that asked, or the mode). */
  reason: string;
  cwd: string;
  /** The session's recent calls, oldest first: tool, status, and the start of the error when it failed. */
  recentHistory: Array<{ toolName: string; callId: string; status: string; message?: string }>;
}

export const evaluatorDecisions = ['allow', 'deny', 'escalate'] as const;
export type EvaluatorDecision = (typeof evaluatorDecisions)[number];

export interface EvaluationResult {
  decision: EvaluatorDecision;
  reason: string;
}

/** An approval evaluator: registered on the worker, picked by `SessionOptions.approvalEvaluator`. */
export interface ApprovalEvaluator {
  name: string;
  /** `signal` aborts once the call no longer waits (the human answered first, the turn was interrupted). */
  evaluate(request: EvaluationRequest, options: { signal: AbortSignal }): Promise<EvaluationResult>;
}

const evaluationResultSchema = z.object({ decision: z.enum(evaluatorDecisions), reason: z.string() });

const schemas = {
  setPolicy: setPolicyRequestSchema,
  operatorPolicyFile: operatorPolicyFileSchema,
  evaluationResult: evaluationResultSchema,
};

/** This module's schemas: the `setPolicy` update's payload, the operator's policy file, an evaluator's answer. */
export function policySchemas(): typeof schemas {
  return schemas;
}
