import { CancellationScope, condition, isCancellation, uuid4 } from '@temporalio/workflow';
import type { ApprovalRequest, ApprovalSignal } from '../contracts/approval.js';
import type { ReadyCallPlan } from '../contracts/call-plan.js';
import type { PermissionDecision } from '../contracts/decide-permission.js';
import type { PermissionRequestBehavior } from '../contracts/hook-decisions.js';
import { raceEvaluator, raceHooks, recordRuling } from './approval-deciders.js';
import { takeApprovalSignal } from './approval-signal-intake.js';
import { PendingApprovals, answered } from './pending-approvals.js';
import type { Ending, PendingApproval } from './pending-approvals.js';
import type { SessionState } from './session-state.js';

export type ApprovalOutcome =
  | { kind: 'decided'; signal: ApprovalSignal; waitMs: number }
  | { kind: 'hook'; behavior: PermissionRequestBehavior; message?: string; waitMs: number }
  | { kind: 'timeout'; waitMs: number }
  | { kind: 'cancelled'; waitMs: number }
  /** A `setPolicy` change (`by`) or the session's approval evaluator (`by: 'evaluator:<name>'`) decided. */
  | { kind: 'policy' | 'evaluator'; behavior: 'allow' | 'deny'; reason: string; by: string; waitMs: number };

/**
 * The approval broker (docs/SEMANTICS.md, Approvals): a call that must ask waits here for the `approval` signal
 * (`approval-signal-intake.ts`), racing the session's own deciders, its PermissionRequest hooks and its approval
 * evaluator (`approval-deciders.ts`); the first decision wins. The wait is workflow state, so it survives worker
 * crashes, server restarts and continue-as-new.
 */
export class ApprovalBroker {
  readonly #state: SessionState;
  readonly #onChange: () => void;
  readonly #approvals = new PendingApprovals();

  constructor(options: { state: SessionState; onChange: () => void }) {
    this.#state = options.state;
    this.#onChange = options.onChange;
  }

  pendingRequests(): ApprovalRequest[] {
    return this.#approvals.requests();
  }

  /** The `approval` signal handler. `runningTurnId` names the running turn for events about unknown requests. */
  onSignal(raw: unknown, runningTurnId: string | undefined): Promise<void> {
    return takeApprovalSignal({ state: this.#state, approvals: this.#approvals, raw, runningTurnId });
  }

  /**
   * After a policy change: decides every waiting call again under the new policy. A call now allowed is released, one
   * now denied is denied; one that still asks keeps waiting. Returns their call ids.
   */
  reconsider(decider: { by: string; verified: boolean }): { released: string[]; denied: string[] } {
    const released: string[] = [];
    const denied: string[] = [];
    for (const entry of this.#approvals.entries()) {
      if (answered(entry) || entry.redecide === undefined) continue;
      const decision = entry.redecide();
      if (decision.behavior === 'ask') continue;
      recordRuling(
        this.#state,
        entry,
        { kind: 'policy', behavior: decision.behavior, reason: decision.reason, by: decider.by },
        decider.verified,
      );
      (decision.behavior === 'allow' ? released : denied).push(entry.request.callId);
    }
    return { released, denied };
  }

  /** Waits for a decision on one call (or the approval timeout, or an interrupt of the turn's scope). */
  async request(options: {
    turnId: string;
    cwd: string;
    plan: ReadyCallPlan;
    reason: string;
    redecide?: () => PermissionDecision;
  }): Promise<ApprovalOutcome> {
    const { turnId, cwd, plan, reason } = options;
    const requestId = uuid4();
    const request: ApprovalRequest = {
      requestId,
      turnId,
      callId: plan.callId,
      toolName: plan.toolName,
      input: plan.input,
      inputDigest: plan.inputDigest,
      reason,
      rememberRule: plan.rememberRule,
      requestedAt: new Date().toISOString(),
      cwd,
    };
    if (this.#state.options.approvers !== undefined) request.approvers = [...this.#state.options.approvers];
    if (plan.approval?.preview !== undefined) request.preview = plan.approval.preview;
    const entry: PendingApproval = {
      request,
      ...(options.redecide === undefined ? {} : { redecide: options.redecide }),
    };
    this.#approvals.add(entry);
    this.#state.emit({
      type: 'PermissionRequested',
      turnId,
      callId: plan.callId,
      requestId,
      toolName: plan.toolName,
      reason,
      policyVersion: this.#state.policy.version,
    });
    this.#onChange();
    const startedAt = Date.now();
    const waitMs = (): number => Date.now() - startedAt;
    const hookScope = new CancellationScope();
    // A strong ask (a protected path, a loopback address) is for a human only: PermissionRequest hooks do not race it.
    const hooksMayAnswer = plan.hasPermissionRequestHooks && plan.permission?.strongAsk === undefined;
    if (hooksMayAnswer) raceHooks({ state: this.#state, entry, scope: hookScope, cwd, plan, reason });
    // Like a PermissionRequest hook, an evaluator never answers a strong ask (a protected path): that is for humans.
    const evaluatorName = plan.permission?.strongAsk === undefined ? this.#state.options.approvalEvaluator : undefined;
    const evaluatorScope = new CancellationScope();
    if (evaluatorName !== undefined)
      raceEvaluator({ state: this.#state, entry, scope: evaluatorScope, name: evaluatorName, cwd });
    let how: Ending = 'cancelled';
    try {
      const timeoutMs = this.#state.options.approvalTimeoutMs;
      if (timeoutMs === undefined) await condition(() => answered(entry));
      else if (!(await condition(() => answered(entry), timeoutMs))) {
        how = 'timeout';
        return { kind: 'timeout', waitMs: waitMs() };
      }
      how = entry.hookDecision !== undefined ? 'hook' : (entry.ruling?.kind ?? 'signal');
      return outcomeOf(entry, waitMs());
    } catch (error) {
      if (isCancellation(error)) return { kind: 'cancelled', waitMs: waitMs() };
      throw error;
    } finally {
      if (hooksMayAnswer) hookScope.cancel();
      if (evaluatorName !== undefined) evaluatorScope.cancel();
      this.#approvals.end(request, how);
      this.#state.recordDecided(requestId);
      this.#onChange();
    }
  }
}

/** The outcome of an answered call: a ruling, a hook's answer, or a person's signal. */
function outcomeOf(entry: PendingApproval, waitMs: number): ApprovalOutcome {
  if (entry.ruling !== undefined) return { ...entry.ruling, waitMs };
  if (entry.hookDecision !== undefined) {
    const { behavior, message } = entry.hookDecision;
    return message === undefined ? { kind: 'hook', behavior, waitMs } : { kind: 'hook', behavior, message, waitMs };
  }
  const signal = entry.decision;
  if (signal === undefined) throw new Error('unreachable: approval without decision');
  return { kind: 'decided', signal, waitMs };
}
