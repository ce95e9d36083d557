import { CancellationScope, patched } from '@temporalio/workflow';
import type { ApprovalDecisionRecord, ApprovalRequest } from '../contracts/approval.js';
import { approvalInputSummary } from '../contracts/approval.js';
import type { ReadyCallPlan } from '../contracts/call-plan.js';
import { clipText } from '../contracts/clip-fields.js';
import type { PermissionRequestHookResult } from '../contracts/hook-decisions.js';
import { permissionRequestHooksActivity } from './activity-routing.js';
import { consultEvaluator } from './evaluator-consultation.js';
import { answered } from './pending-approvals.js';
import type { PendingApproval } from './pending-approvals.js';
import type { SessionState } from './session-state.js';

/** Characters of an evaluator's name or a hook's command kept in the `by` of its decisions. */
const DECIDER_NAME_MAX_CHARS = 120;
/**
 * Marks histories in which a session with approvers sets aside an evaluator's or a hook's allow (only its approvers'
 * signed approvals allow there); a session that started before took it, and replays so.
 */
const APPROVERS_ONLY_ALLOW_PATCH = 'approvers-only-allow';

/** The `by` of an evaluator's decisions: `evaluator:<name>`, never a bare name taken for a person. */
export function evaluatorDecider(name: string): string {
  return `evaluator:${clipText(name, DECIDER_NAME_MAX_CHARS)}`;
}

/** The `by` of a PermissionRequest hook's decisions: `hook:<command>` (a hook given as a function: its name or index). */
export function hookDecider(hook: string | undefined): string {
  return `hook:${clipText(hook ?? 'unnamed', DECIDER_NAME_MAX_CHARS)}`;
}

/**
 * Starts the PermissionRequest hooks on a waiting call in `scope` (the broker cancels it once the call is answered);
 * their answer counts unless another came first (`takeHookAnswer`).
 */
export function raceHooks(options: {
  state: SessionState;
  entry: PendingApproval;
  scope: CancellationScope;
  cwd: string;
  plan: ReadyCallPlan;
  reason: string;
}): void {
  const { state, entry, scope, cwd, plan, reason } = options;
  const { requestId } = entry.request;
  const session = state.context();
  const runPermissionRequestHooks = permissionRequestHooksActivity(state.options);
  scope
    .run(() =>
      runPermissionRequestHooks({
        sessionId: session.sessionId,
        cwd,
        toolName: plan.toolName,
        toolInput: plan.input,
        toolUseId: plan.callId,
        requestId,
        reason,
        ...(session.sessionHooks === undefined ? {} : { sessionHooks: session.sessionHooks }),
        ...(session.trustWorkspaceSettings === true ? { trustWorkspaceSettings: true } : {}),
      }),
    )
    .then(
      (hookResult) => {
        if (hookResult !== null) takeHookAnswer(state, entry, hookResult);
      },
      () => undefined,
    );
}

/**
 * Consults the session's approval evaluator `name` on a waiting call in `scope` (the broker cancels it once the call
 * is answered); its allow or deny counts unless another answer came first or the session sets its allow aside.
 */
export function raceEvaluator(options: {
  state: SessionState;
  entry: PendingApproval;
  scope: CancellationScope;
  name: string;
  cwd: string;
}): void {
  const { state, entry, scope, name, cwd } = options;
  scope
    .run(() => consultEvaluator({ state, name, request: entry.request, cwd }))
    .then(
      (answer) => {
        if (answer === undefined || answered(entry)) return;
        const by = evaluatorDecider(name);
        if (setAsideAllow(state, entry, answer.decision, by)) return;
        recordRuling(state, entry, { kind: 'evaluator', behavior: answer.decision, reason: answer.reason, by });
      },
      () => undefined,
    );
}

/**
 * A policy change's or the evaluator's decision on a waiting call, entered in the decision log; `verified` only for
 * a signed policy change whose signature checked out.
 */
export function recordRuling(
  state: SessionState,
  entry: PendingApproval,
  ruling: NonNullable<PendingApproval['ruling']>,
  verified = false,
): void {
  entry.ruling = ruling;
  const { request } = entry;
  state.recordApprovalDecision({
    requestId: request.requestId,
    decision: ruling.behavior,
    by: ruling.by,
    reason: ruling.reason,
    outcome: 'accepted',
    ...requestFields(request),
    source: ruling.kind === 'policy' ? 'policy' : 'evaluator',
    verified,
  });
}

/**
 * In a session with approvers only their signed approvals allow a call (docs/APPROVALS.md, Who decides): an
 * evaluator's or a hook's allow is set aside, the call keeps waiting for them, and the log says so. Their deny
 * counts. True when `behavior` is set aside.
 */
function setAsideAllow(state: SessionState, entry: PendingApproval, behavior: 'allow' | 'deny', by: string): boolean {
  const approvers = state.options.approvers;
  if (behavior !== 'allow' || approvers === undefined || !patched(APPROVERS_ONLY_ALLOW_PATCH)) return false;
  const { request } = entry;
  const detail = `${by} allowed, but in this session only a signed approval from its approvers (${approvers.join(', ') || 'none'}) allows a call; it keeps waiting`;
  state.emit({
    type: 'ApprovalIgnored',
    turnId: request.turnId,
    requestId: request.requestId,
    reason: 'unsigned',
    detail,
  });
  state.recordApprovalDecision({
    requestId: request.requestId,
    decision: 'allow',
    by,
    outcome: 'ignored',
    ignoredBecause: 'unsigned',
    detail,
    ...requestFields(request),
  });
  return true;
}

/** A PermissionRequest hook's answer, unless another answer came first or the session sets its allow aside. */
function takeHookAnswer(state: SessionState, entry: PendingApproval, answer: PermissionRequestHookResult): void {
  if (answered(entry)) return;
  const by = hookDecider(answer.hook);
  if (setAsideAllow(state, entry, answer.behavior, by)) return;
  entry.hookDecision =
    answer.message === undefined
      ? { behavior: answer.behavior }
      : { behavior: answer.behavior, message: answer.message };
  const { request } = entry;
  state.recordApprovalDecision({
    requestId: request.requestId,
    decision: answer.behavior,
    by,
    ...(answer.message === undefined ? {} : { reason: answer.message }),
    outcome: 'accepted',
    ...requestFields(request),
    source: 'hook',
    verified: false,
  });
}

/** The call a decision log entry is about. */
function requestFields(
  request: ApprovalRequest,
): Pick<ApprovalDecisionRecord, 'callId' | 'toolName' | 'turnId' | 'inputDigest' | 'inputSummary'> {
  return {
    callId: request.callId,
    toolName: request.toolName,
    turnId: request.turnId,
    inputDigest: request.inputDigest,
    inputSummary: approvalInputSummary(request.toolName, request.input),
  };
}
