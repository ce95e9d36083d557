import { ApplicationFailure, patched } from '@temporalio/workflow';
import type { ApprovalIgnoredReason } from '../contracts/approval.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import { policyChangeOf } from '../contracts/policy.js';
import type { SetPolicyRequest } from '../contracts/policy.js';
import { verifyApproval } from './activity-routing.js';
import { afterLocalActivities } from './local-activity-barrier.js';
import type { NewApprovalDecision } from './approval-decision-log.js';
import type { SessionState } from './session-state.js';

/**
 * Marks histories in which a session with approvers refuses an unsigned `setPolicy`: a session that started before
 * took it, and replays so.
 */
export const SIGNED_SET_POLICY_PATCH = 'signed-set-policy';

/** Why a `setPolicy` was refused: the reasons an approval is ignored for. */
export type PolicyRefusalReason = Extract<
  ApprovalIgnoredReason,
  | 'unsigned'
  | 'bad_signature'
  | 'unknown_approver'
  | 'not_an_approver'
  | 'expired'
  | 'verification_failed'
  | 'already_decided'
>;

/** Whether a `setPolicy` may apply: taken (verified when a signature checked out), or refused with the reason. */
export type PolicyAuthority =
  | { kind: 'taken'; verified: boolean; policyDigest?: string }
  | { kind: 'refused'; reason: PolicyRefusalReason; detail: string };

/**
 * A signed change (`setPolicy`, `resolveInDoubt`) refused for want of authority: an `ApprovalIgnored` event and an
 * `ignored` record in the decision log (`audit` says who asked for what), then the update's failure, which says that
 * nothing changed.
 */
export function refusedSignedChange(options: {
  state: SessionState;
  turnId: string;
  refusal: { reason: PolicyRefusalReason; detail: string };
  audit: Omit<NewApprovalDecision, 'outcome' | 'ignoredBecause' | 'detail'>;
  failureType: string;
}): ApplicationFailure {
  const { state, refusal, audit } = options;
  const requestId = audit.requestId;
  state.emit({
    type: 'ApprovalIgnored',
    turnId: options.turnId,
    requestId,
    reason: refusal.reason,
    detail: refusal.detail,
  });
  state.recordApprovalDecision({
    ...audit,
    outcome: 'ignored',
    ignoredBecause: refusal.reason,
    detail: refusal.detail,
  });
  return ApplicationFailure.create({
    message: `${requestId} refused (${refusal.reason}): ${refusal.detail}; nothing changed`,
    type: options.failureType,
    nonRetryable: true,
  });
}

/**
 * What can be said of a `setPolicy` without checking a signature (no await: decided in the activation it arrived
 * in). A session without approvers takes an unsigned change, unverified; in a session with approvers only a change
 * signed by one of them applies (docs/APPROVALS.md, Signed policy changes). A signature, when there is one, must
 * check out either way. Expiry is judged against workflow time. Undefined: the signature must be checked.
 */
export function judgePolicyChangeWithoutSignature(
  state: SessionState,
  request: SetPolicyRequest,
): PolicyAuthority | undefined {
  const approvers = state.options.approvers;
  if (request.signature === undefined) {
    if (approvers === undefined || !patched(SIGNED_SET_POLICY_PATCH)) return { kind: 'taken', verified: false };
    return {
      kind: 'refused',
      reason: 'unsigned',
      detail: `this session takes only policy changes signed by its approvers (${approvers.join(', ') || 'none'})`,
    };
  }
  if (request.expiresAt !== undefined && Date.parse(request.expiresAt) <= Date.now()) {
    return {
      kind: 'refused',
      reason: 'expired',
      detail: `the signed change expired at ${request.expiresAt} (session time ${new Date().toISOString()})`,
    };
  }
  return spent(state, request.signature);
}

/**
 * Checks a signed `setPolicy` with the `verifyApproval` local activity (which computes the change's `policyDigest`:
 * workflow code cannot hash); its recorded verdict is what replay reuses.
 */
export async function verifyPolicyChange(state: SessionState, request: SetPolicyRequest): Promise<PolicyAuthority> {
  const signature = request.signature ?? '';
  const approvers = state.options.approvers;
  try {
    const verdict = await afterLocalActivities(() =>
      verifyApproval({
        policyChange: {
          sessionId: state.sessionId,
          change: policyChangeOf(request),
          by: request.by ?? '',
          ...(request.expiresAt === undefined ? {} : { expiresAt: request.expiresAt }),
        },
        signature,
        ...(approvers === undefined ? {} : { sessionApprovers: approvers }),
      }),
    );
    if (!verdict.verified) return { kind: 'refused', reason: verdict.reason, detail: verdict.detail };
    // Another update with the same signature may have applied while this one was checked.
    return (
      spent(state, signature) ?? {
        kind: 'taken',
        verified: true,
        ...(verdict.policyDigest === undefined ? {} : { policyDigest: verdict.policyDigest }),
      }
    );
  } catch (error) {
    return {
      kind: 'refused',
      reason: 'verification_failed',
      detail: `the signature could not be checked: ${projectErrorMessage(error)}`,
    };
  }
}

/** A signed change applies once: the same signature again is refused (sign again, with a new expiry, to repeat it). */
function spent(state: SessionState, signature: string): PolicyAuthority | undefined {
  return state.policy.applied(signature)
    ? {
        kind: 'refused',
        reason: 'already_decided',
        detail: 'this signed change was applied already; a signed change applies once',
      }
    : undefined;
}
