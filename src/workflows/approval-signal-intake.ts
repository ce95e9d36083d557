import type { ApprovalDecisionRecord, ApprovalIgnoredReason, ApprovalSignal } from '../contracts/approval.js';
import { approvalInputSummary, approvalSchemas, approvalSigningPayload } from '../contracts/approval.js';
import type { ApprovalRequest } from '../contracts/approval.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import { formatZodError } from '../contracts/tool-call.js';
import { verifyApproval } from './activity-routing.js';
import { afterLocalActivities } from './local-activity-barrier.js';
import { ENDINGS } from './pending-approvals.js';
import type { PendingApprovals } from './pending-approvals.js';
import type { SessionState } from './session-state.js';

/** What the signature check said about a signal that named a pending request with the right digest. */
type SignatureCheck =
  | { kind: 'taken'; verified: boolean }
  | {
      kind: 'ignored';
      reason: Extract<
        ApprovalIgnoredReason,
        'unsigned' | 'bad_signature' | 'unknown_approver' | 'not_an_approver' | 'expired' | 'verification_failed'
      >;
      detail: string;
    };

/** A signal's own fields, as the decision log keeps them. */
type LoggedSignal = Omit<ApprovalDecisionRecord, 'seq' | 'at' | 'verified' | 'policyVersion' | 'outcome'>;

/**
 * The `approval` signal (docs/SEMANTICS.md, Approvals). `runningTurnId` names the running turn for events about
 * unknown requests. A signal must name a waiting request and carry its input digest ("approve A, run A"); a signal
 * with a signature, and every signal to a session with `approvers`, is checked (`judgeWithoutSignature`,
 * `verifySignature`) before it counts. Every signal, taken or not, enters the decision log (query
 * `approvalDecisions`), so whoever sent it can see what it did; one not taken is also an `ApprovalIgnored` event
 * saying why.
 */
export async function takeApprovalSignal(options: {
  state: SessionState;
  approvals: PendingApprovals;
  raw: unknown;
  runningTurnId: string | undefined;
}): Promise<void> {
  const { state, approvals, raw } = options;
  const turnId = options.runningTurnId ?? '';
  const parsed = approvalSchemas().signal.safeParse(raw);
  if (!parsed.success) {
    const requestId =
      typeof (raw as { requestId?: unknown } | null)?.requestId === 'string'
        ? (raw as { requestId: string }).requestId
        : '';
    const detail = formatZodError(parsed.error);
    state.emit({ type: 'ApprovalIgnored', turnId, requestId, reason: 'invalid', detail });
    const by = (raw as { by?: unknown } | null)?.by;
    state.recordApprovalDecision({
      requestId,
      outcome: 'ignored',
      ignoredBecause: 'invalid',
      detail,
      ...(typeof by === 'string' ? { by: by.slice(0, 200) } : {}),
    });
    return;
  }
  const signal = parsed.data;
  const logged: LoggedSignal = {
    requestId: signal.requestId,
    inputDigest: signal.inputDigest,
    decision: signal.decision,
    by: signal.by,
    reason: signal.reason,
    ...(signal.expiresAt === undefined ? {} : { expiresAt: signal.expiresAt }),
  };
  const ignore = (
    request: ApprovalRequest,
    reason: Extract<SignatureCheck, { kind: 'ignored' }>['reason'] | 'digest_mismatch',
    detail: string,
  ): void => {
    state.emit({ type: 'ApprovalIgnored', turnId: request.turnId, requestId: signal.requestId, reason, detail });
    state.recordApprovalDecision({
      ...logged,
      ...callFields(request),
      outcome: 'ignored',
      ignoredBecause: reason,
      detail,
    });
  };
  const entry = approvals.waiting(signal.requestId);
  if (entry === undefined) return ignoreDecided({ state, approvals, signal, turnId, logged });
  if (signal.inputDigest !== entry.request.inputDigest) {
    ignore(entry.request, 'digest_mismatch', `expected ${entry.request.inputDigest}, got ${signal.inputDigest}`);
    return;
  }
  // Unsigned and expired signals are judged at once (no await: the handler decides in the activation it ran in).
  const check = judgeWithoutSignature(state, signal) ?? (await verifySignature(state, signal));
  if (check.kind === 'ignored') {
    ignore(entry.request, check.reason, check.detail);
    return;
  }
  // The check may have taken a while: another answer, a hook, the timeout or an interrupt may have ended the wait.
  if (approvals.waiting(signal.requestId) !== entry) return ignoreDecided({ state, approvals, signal, turnId, logged });
  entry.decision = signal;
  state.recordApprovalDecision({
    ...logged,
    ...callFields(entry.request),
    outcome: 'accepted',
    verified: check.verified,
    // A signal is a person's answer whatever its `by` says (`evaluator:` and `hook:` are the session's own).
    source: 'person',
  });
}

/** The call a signal's decision log entry is about. */
function callFields(
  request: ApprovalRequest,
): Pick<ApprovalDecisionRecord, 'callId' | 'toolName' | 'turnId' | 'inputSummary'> {
  return {
    callId: request.callId,
    toolName: request.toolName,
    turnId: request.turnId,
    inputSummary: approvalInputSummary(request.toolName, request.input),
  };
}

/** A signal for a request that is not waiting (any more, or never was): ignored, saying how the request ended. */
function ignoreDecided(options: {
  state: SessionState;
  approvals: PendingApprovals;
  signal: ApprovalSignal;
  turnId: string;
  logged: LoggedSignal;
}): void {
  const { state, approvals, signal, turnId, logged } = options;
  const entry = approvals.get(signal.requestId);
  const ended = approvals.ended(signal.requestId);
  const hookFirst = entry?.hookDecision !== undefined || ended?.how === 'hook';
  const known = entry !== undefined || ended !== undefined || state.decidedRequestIds.includes(signal.requestId);
  const ruling = entry?.ruling === undefined ? undefined : ENDINGS[entry.ruling.kind];
  const detail = hookFirst
    ? 'a PermissionRequest hook answered first'
    : (ruling ?? (ended === undefined ? undefined : ENDINGS[ended.how]));
  const request = entry?.request ?? ended?.request;
  state.emit({
    type: 'ApprovalIgnored',
    turnId,
    requestId: signal.requestId,
    reason: known ? 'already_decided' : 'unknown',
    ...(detail === undefined ? {} : { detail }),
  });
  state.recordApprovalDecision({
    ...logged,
    ...(request === undefined ? {} : { callId: request.callId, toolName: request.toolName, turnId: request.turnId }),
    outcome: 'ignored',
    ignoredBecause: hookFirst ? 'hook_answered_first' : known ? 'already_decided' : 'unknown',
    ...(detail === undefined ? {} : { detail }),
  });
}

/**
 * What can be said of a signal without checking a signature. A session without `approvers` takes unsigned signals
 * (unverified); a signature, when there is one, must check out either way. Expiry is judged against workflow time
 * when the signal is handled, so replay judges it the same. Undefined: the signature must be checked.
 */
function judgeWithoutSignature(state: SessionState, signal: ApprovalSignal): SignatureCheck | undefined {
  const approvers = state.options.approvers;
  if (signal.signature === undefined) {
    if (approvers === undefined) return { kind: 'taken', verified: false };
    return {
      kind: 'ignored',
      reason: 'unsigned',
      detail: `this session takes only approvals signed by its approvers (${approvers.join(', ') || 'none'})`,
    };
  }
  if (signal.expiresAt !== undefined && Date.parse(signal.expiresAt) <= Date.now()) {
    return {
      kind: 'ignored',
      reason: 'expired',
      detail: `the grant expired at ${signal.expiresAt} (session time ${new Date().toISOString()})`,
    };
  }
  return undefined;
}

/** Checks the signature with the `verifyApproval` local activity, whose recorded verdict replay reuses. */
async function verifySignature(state: SessionState, signal: ApprovalSignal): Promise<SignatureCheck> {
  const approvers = state.options.approvers;
  try {
    const verdict = await afterLocalActivities(() =>
      verifyApproval({
        payload: approvalSigningPayload(state.sessionId, signal),
        signature: signal.signature ?? '',
        ...(approvers === undefined ? {} : { sessionApprovers: approvers }),
      }),
    );
    return verdict.verified
      ? { kind: 'taken', verified: true }
      : { kind: 'ignored', reason: verdict.reason, detail: verdict.detail };
  } catch (error) {
    return {
      kind: 'ignored',
      reason: 'verification_failed',
      detail: `the signature could not be checked: ${projectErrorMessage(error)}`,
    };
  }
}
