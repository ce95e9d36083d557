import { CancellationScope, condition, isCancellation, patched, uuid4 } from '@temporalio/workflow';
import type {
  ApprovalDecisionRecord,
  ApprovalIgnoredReason,
  ApprovalRequest,
  ApprovalSignal,
} from '../contracts/approval.js';
import { approvalInputSummary, approvalSchemas, approvalSigningPayload } from '../contracts/approval.js';
import { clipText } from '../contracts/clip-fields.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import { afterLocalActivities } from './local-activity-barrier.js';
import type { ReadyCallPlan } from '../contracts/call-plan.js';
import { formatZodError } from '../contracts/tool-call.js';
import { permissionRequestHooksActivity, verifyApproval } from './activity-routing.js';
import type { SessionState } from './session-state.js';
import type { PermissionRequestBehavior, PermissionRequestHookResult } from '../contracts/hook-decisions.js';
import type { PermissionDecision } from '../contracts/decide-permission.js';
import { runEvaluator } from './approval-evaluator.js';

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

export type ApprovalOutcome =
  | { kind: 'decided'; signal: ApprovalSignal; waitMs: number }
  | { kind: 'hook'; behavior: PermissionRequestBehavior; message?: string; waitMs: number }
  | { kind: 'timeout'; waitMs: number }
  | { kind: 'cancelled'; waitMs: number }
  /** A `setPolicy` change (`by`) or the session's approval evaluator (`by: 'evaluator:<name>'`) decided. */
  | { kind: 'policy' | 'evaluator'; behavior: 'allow' | 'deny'; reason: string; by: string; waitMs: number };

/** How a request that is no longer pending ended, for the decision log's detail. */
type Ending = 'signal' | 'hook' | 'timeout' | 'cancelled' | 'policy' | 'evaluator';
const ENDINGS: Record<Ending, string> = {
  signal: 'an earlier approval signal decided it',
  hook: 'a PermissionRequest hook answered first',
  timeout: 'the approval timed out',
  cancelled: 'the turn was interrupted',
  policy: 'a policy change decided it',
  evaluator: 'the approval evaluator decided first',
};
/** Ended requests remembered (this run only) to say how they ended. */
const ENDINGS_RETAINED = 200;
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

interface PendingApproval {
  request: ApprovalRequest;
  decision?: ApprovalSignal;
  hookDecision?: { behavior: PermissionRequestBehavior; message?: string };
  /** A policy change or the approval evaluator decided. */
  ruling?: { kind: 'policy' | 'evaluator'; behavior: 'allow' | 'deny'; reason: string; by: string };
  /** The permission decision again, under the session's current policy (after `setPolicy`). */
  redecide?: () => PermissionDecision;
}

/**
 * The approval broker (docs/SEMANTICS.md, Approvals): a call that must ask waits here for the `approval` signal, racing
 * the PermissionRequest hooks; the first decision wins. The wait is workflow state, so it survives worker crashes,
 * server restarts and continue-as-new. A signal must name a pending request and carry its input digest ("approve A, run
 * A"); anything else is ignored and an `ApprovalIgnored` event says why.
 */
export class ApprovalBroker {
  readonly #state: SessionState;
  readonly #onChange: () => void;
  readonly #pending = new Map<string, PendingApproval>();
  readonly #ended = new Map<string, { how: Ending; request: ApprovalRequest }>();

  constructor(options: { state: SessionState; onChange: () => void }) {
    this.#state = options.state;
    this.#onChange = options.onChange;
  }

  pendingRequests(): ApprovalRequest[] {
    return [...this.#pending.values()].map((entry) => entry.request);
  }

  /**
   * The `approval` signal handler. `turnId` names the running turn for events about unknown requests. Every signal,
   * taken or not, enters the decision log (query `approvalDecisions`), so whoever sent it can see what it did. A signal
   * with a signature, and every signal to a session with `approvers`, is checked (`#judgeWithoutSignature`, `#verifySignature`) before it counts.
   */
  async onSignal(raw: unknown, runningTurnId: string | undefined): Promise<void> {
    const turnId = runningTurnId ?? '';
    const parsed = approvalSchemas().signal.safeParse(raw);
    if (!parsed.success) {
      const requestId =
        typeof (raw as { requestId?: unknown } | null)?.requestId === 'string'
          ? (raw as { requestId: string }).requestId
          : '';
      const detail = formatZodError(parsed.error);
      this.#state.emit({ type: 'ApprovalIgnored', turnId, requestId, reason: 'invalid', detail });
      const by = (raw as { by?: unknown } | null)?.by;
      this.#state.recordApprovalDecision({
        requestId,
        outcome: 'ignored',
        ignoredBecause: 'invalid',
        detail,
        ...(typeof by === 'string' ? { by: by.slice(0, 200) } : {}),
      });
      return;
    }
    const signal = parsed.data;
    const logged = {
      requestId: signal.requestId,
      inputDigest: signal.inputDigest,
      decision: signal.decision,
      by: signal.by,
      reason: signal.reason,
      ...(signal.expiresAt === undefined ? {} : { expiresAt: signal.expiresAt }),
    };
    const call = (request: ApprovalRequest): Partial<ApprovalDecisionRecord> => ({
      callId: request.callId,
      toolName: request.toolName,
      turnId: request.turnId,
      inputSummary: approvalInputSummary(request.toolName, request.input),
    });
    const entry = this.#pendingEntry(signal.requestId);
    if (entry === undefined) return this.#ignoreDecided(signal, turnId, logged);
    if (signal.inputDigest !== entry.request.inputDigest) {
      const detail = `expected ${entry.request.inputDigest}, got ${signal.inputDigest}`;
      this.#state.emit({
        type: 'ApprovalIgnored',
        turnId: entry.request.turnId,
        requestId: signal.requestId,
        reason: 'digest_mismatch',
        detail,
      });
      this.#state.recordApprovalDecision({
        ...logged,
        ...call(entry.request),
        outcome: 'ignored',
        ignoredBecause: 'digest_mismatch',
        detail,
      });
      return;
    }
    // Unsigned and expired signals are judged at once (no await: the handler decides in the activation it ran in).
    const check = this.#judgeWithoutSignature(signal) ?? (await this.#verifySignature(signal));
    if (check.kind === 'ignored') {
      this.#state.emit({
        type: 'ApprovalIgnored',
        turnId: entry.request.turnId,
        requestId: signal.requestId,
        reason: check.reason,
        detail: check.detail,
      });
      this.#state.recordApprovalDecision({
        ...logged,
        ...call(entry.request),
        outcome: 'ignored',
        ignoredBecause: check.reason,
        detail: check.detail,
      });
      return;
    }
    // The check may have taken a while: another answer, a hook, the timeout or an interrupt may have ended the wait.
    if (this.#pendingEntry(signal.requestId) !== entry) return this.#ignoreDecided(signal, turnId, logged);
    entry.decision = signal;
    this.#state.recordApprovalDecision({
      ...logged,
      ...call(entry.request),
      outcome: 'accepted',
      verified: check.verified,
      // A signal is a person's answer whatever its `by` says (`evaluator:` and `hook:` are the session's own).
      source: 'person',
    });
  }

  /**
   * After a policy change: decides every waiting call again under the new policy. A call now allowed is released, one
   * now denied is denied; one that still asks keeps waiting. Returns their call ids.
   */
  reconsider(decider: { by: string; verified: boolean }): { released: string[]; denied: string[] } {
    const released: string[] = [];
    const denied: string[] = [];
    for (const entry of this.#pending.values()) {
      if (
        entry.decision !== undefined ||
        entry.hookDecision !== undefined ||
        entry.ruling !== undefined ||
        entry.redecide === undefined
      )
        continue;
      const decision = entry.redecide();
      if (decision.behavior === 'ask') continue;
      this.#rule(
        entry,
        { kind: 'policy', behavior: decision.behavior, reason: decision.reason, by: decider.by },
        decider.verified,
      );
      (decision.behavior === 'allow' ? released : denied).push(entry.request.callId);
    }
    return { released, denied };
  }

  /**
   * A policy change's or the evaluator's decision on a waiting call, entered in the decision log; `verified` only for
   * a signed policy change whose signature checked out.
   */
  #rule(entry: PendingApproval, ruling: NonNullable<PendingApproval['ruling']>, verified = false): void {
    entry.ruling = ruling;
    const { request } = entry;
    this.#state.recordApprovalDecision({
      requestId: request.requestId,
      decision: ruling.behavior,
      by: ruling.by,
      reason: ruling.reason,
      outcome: 'accepted',
      callId: request.callId,
      toolName: request.toolName,
      turnId: request.turnId,
      inputDigest: request.inputDigest,
      inputSummary: approvalInputSummary(request.toolName, request.input),
      source: ruling.kind === 'policy' ? 'policy' : 'evaluator',
      verified,
    });
  }

  /**
   * In a session with approvers only their signed approvals allow a call (docs/APPROVALS.md, Who decides): an
   * evaluator's or a hook's allow is set aside, the call keeps waiting for them, and the log says so. Their deny
   * counts. True when `behavior` is set aside.
   */
  #setAsideAllow(entry: PendingApproval, behavior: 'allow' | 'deny', by: string): boolean {
    const approvers = this.#state.options.approvers;
    if (behavior !== 'allow' || approvers === undefined || !patched(APPROVERS_ONLY_ALLOW_PATCH)) return false;
    const { request } = entry;
    const detail = `${by} allowed, but in this session only a signed approval from its approvers (${approvers.join(', ') || 'none'}) allows a call; it keeps waiting`;
    this.#state.emit({
      type: 'ApprovalIgnored',
      turnId: request.turnId,
      requestId: request.requestId,
      reason: 'unsigned',
      detail,
    });
    this.#state.recordApprovalDecision({
      requestId: request.requestId,
      decision: 'allow',
      by,
      outcome: 'ignored',
      ignoredBecause: 'unsigned',
      detail,
      callId: request.callId,
      toolName: request.toolName,
      turnId: request.turnId,
      inputDigest: request.inputDigest,
      inputSummary: approvalInputSummary(request.toolName, request.input),
    });
    return true;
  }

  /** A PermissionRequest hook's answer, unless another answer came first or the session sets its allow aside. */
  #takeHookAnswer(entry: PendingApproval, answer: PermissionRequestHookResult): void {
    if (entry.decision !== undefined || entry.hookDecision !== undefined || entry.ruling !== undefined) return;
    const by = hookDecider(answer.hook);
    if (this.#setAsideAllow(entry, answer.behavior, by)) return;
    entry.hookDecision =
      answer.message === undefined
        ? { behavior: answer.behavior }
        : { behavior: answer.behavior, message: answer.message };
    const { request } = entry;
    this.#state.recordApprovalDecision({
      requestId: request.requestId,
      decision: answer.behavior,
      by,
      ...(answer.message === undefined ? {} : { reason: answer.message }),
      outcome: 'accepted',
      callId: request.callId,
      toolName: request.toolName,
      turnId: request.turnId,
      inputDigest: request.inputDigest,
      inputSummary: approvalInputSummary(request.toolName, request.input),
      source: 'hook',
      verified: false,
    });
  }

  /** The request's entry while it still waits for an answer. */
  #pendingEntry(requestId: string): PendingApproval | undefined {
    const entry = this.#pending.get(requestId);
    return entry === undefined ||
      entry.decision !== undefined ||
      entry.hookDecision !== undefined ||
      entry.ruling !== undefined
      ? undefined
      : entry;
  }

  /** A signal for a request that is not waiting (any more, or never was): ignored, saying how the request ended. */
  #ignoreDecided(
    signal: ApprovalSignal,
    turnId: string,
    logged: Omit<ApprovalDecisionRecord, 'seq' | 'at' | 'verified' | 'policyVersion' | 'outcome'>,
  ): void {
    const entry = this.#pending.get(signal.requestId);
    const ended = this.#ended.get(signal.requestId);
    const hookFirst = entry?.hookDecision !== undefined || ended?.how === 'hook';
    const known =
      entry !== undefined || ended !== undefined || this.#state.decidedRequestIds.includes(signal.requestId);
    const ruling = entry?.ruling === undefined ? undefined : ENDINGS[entry.ruling.kind];
    const detail = hookFirst
      ? 'a PermissionRequest hook answered first'
      : (ruling ?? (ended === undefined ? undefined : ENDINGS[ended.how]));
    const request = entry?.request ?? ended?.request;
    this.#state.emit({
      type: 'ApprovalIgnored',
      turnId,
      requestId: signal.requestId,
      reason: known ? 'already_decided' : 'unknown',
      ...(detail === undefined ? {} : { detail }),
    });
    this.#state.recordApprovalDecision({
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
  #judgeWithoutSignature(signal: ApprovalSignal): SignatureCheck | undefined {
    const approvers = this.#state.options.approvers;
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
  async #verifySignature(signal: ApprovalSignal): Promise<SignatureCheck> {
    const approvers = this.#state.options.approvers;
    try {
      const verdict = await afterLocalActivities(() =>
        verifyApproval({
          payload: approvalSigningPayload(this.#state.sessionId, signal),
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
    this.#pending.set(requestId, entry);
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
    if (hooksMayAnswer) {
      const session = this.#state.context();
      const runPermissionRequestHooks = permissionRequestHooksActivity(this.#state.options);
      hookScope
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
            if (hookResult !== null) this.#takeHookAnswer(entry, hookResult);
          },
          () => undefined,
        );
    }
    // Like a PermissionRequest hook, an evaluator never answers a strong ask (a protected path): that is for humans.
    const evaluatorName = plan.permission?.strongAsk === undefined ? this.#state.options.approvalEvaluator : undefined;
    const evaluatorScope = new CancellationScope();
    if (evaluatorName !== undefined) {
      evaluatorScope
        .run(() => runEvaluator({ state: this.#state, name: evaluatorName, request, cwd }))
        .then(
          (answer) => {
            if (
              answer === undefined ||
              entry.decision !== undefined ||
              entry.hookDecision !== undefined ||
              entry.ruling !== undefined
            )
              return;
            const by = evaluatorDecider(evaluatorName);
            if (this.#setAsideAllow(entry, answer.decision, by)) return;
            this.#rule(entry, { kind: 'evaluator', behavior: answer.decision, reason: answer.reason, by });
          },
          () => undefined,
        );
    }
    const decided = (): boolean =>
      entry.decision !== undefined || entry.hookDecision !== undefined || entry.ruling !== undefined;
    let how: Ending = 'cancelled';
    try {
      const timeoutMs = this.#state.options.approvalTimeoutMs;
      if (timeoutMs === undefined) await condition(decided);
      else if (!(await condition(decided, timeoutMs))) {
        how = 'timeout';
        return { kind: 'timeout', waitMs: waitMs() };
      }
      how = entry.hookDecision !== undefined ? 'hook' : (entry.ruling?.kind ?? 'signal');
      if (entry.ruling !== undefined) return { ...entry.ruling, waitMs: waitMs() };
      if (entry.hookDecision !== undefined) {
        const { behavior, message } = entry.hookDecision;
        return message === undefined
          ? { kind: 'hook', behavior, waitMs: waitMs() }
          : { kind: 'hook', behavior, message, waitMs: waitMs() };
      }
      const signal = entry.decision;
      if (signal === undefined) throw new Error('unreachable: approval without decision');
      return { kind: 'decided', signal, waitMs: waitMs() };
    } catch (error) {
      if (isCancellation(error)) return { kind: 'cancelled', waitMs: waitMs() };
      throw error;
    } finally {
      if (hooksMayAnswer) hookScope.cancel();
      if (evaluatorName !== undefined) evaluatorScope.cancel();
      this.#pending.delete(requestId);
      this.#ended.set(requestId, { how, request });
      if (this.#ended.size > ENDINGS_RETAINED) this.#ended.delete(this.#ended.keys().next().value ?? '');
      this.#state.recordDecided(requestId);
      this.#onChange();
    }
  }
}
