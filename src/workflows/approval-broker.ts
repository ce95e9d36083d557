import { ActivityCancellationType, CancellationScope, condition, isCancellation, proxyActivities, uuid4 } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { ApprovalRequest, ApprovalSignal } from '../contracts/approval.js';
import { approvalSignalSchema } from '../contracts/approval.js';
import type { ReadyCallPlan } from '../contracts/call-plan.js';
import { formatZodError } from '../contracts/tool-call.js';
import type { SessionState } from './session-state.js';

/** How soon a lost worker, or a cancellation, reaches the hooks' activity when the session sets no `heartbeatTimeoutMs`. */
const DEFAULT_HOOK_HEARTBEAT_TIMEOUT_MS = 10_000;

/**
 * A hook that fails or hangs is no decision: the human still decides. Once the race is decided or the turn is
 * interrupted the activity is cancelled without waiting (TRY_CANCEL); the cancellation reaches it with its next
 * heartbeat's answer and kills the hook processes.
 */
function permissionRequestHooks(heartbeatTimeoutMs: number): Activities['runPermissionRequestHooks'] {
  return proxyActivities<Activities>({
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: heartbeatTimeoutMs,
    retry: { maximumAttempts: 1 },
    cancellationType: ActivityCancellationType.TRY_CANCEL,
    summary: 'PermissionRequest hooks',
  }).runPermissionRequestHooks;
}

export type ApprovalOutcome =
  | { kind: 'decided'; signal: ApprovalSignal; waitMs: number }
  | { kind: 'hook'; behavior: 'allow' | 'deny'; message?: string; waitMs: number }
  | { kind: 'timeout'; waitMs: number }
  | { kind: 'cancelled'; waitMs: number };

interface PendingApproval {
  request: ApprovalRequest;
  decision?: ApprovalSignal;
  hookDecision?: { behavior: 'allow' | 'deny'; message?: string };
}

/**
 * The approval broker (seed 000): a call that must ask waits here for the `approval` signal, racing the
 * PermissionRequest hooks; the first decision wins. The wait is workflow state, so it survives worker crashes,
 * server restarts and continue-as-new. A signal must name a pending request and carry its input digest ("approve A,
 * run A"); anything else is ignored and an `ApprovalIgnored` event says why.
 */
export class ApprovalBroker {
  readonly #state: SessionState;
  readonly #onChange: () => void;
  readonly #pending = new Map<string, PendingApproval>();

  constructor(options: { state: SessionState; onChange: () => void }) {
    this.#state = options.state;
    this.#onChange = options.onChange;
  }

  pendingRequests(): ApprovalRequest[] {
    return [...this.#pending.values()].map((entry) => entry.request);
  }

  /** The `approval` signal handler. `turnId` names the running turn for events about unknown requests. */
  onSignal(raw: unknown, runningTurnId: string | undefined): void {
    const turnId = runningTurnId ?? '';
    const parsed = approvalSignalSchema.safeParse(raw);
    if (!parsed.success) {
      const requestId = typeof (raw as { requestId?: unknown } | null)?.requestId === 'string' ? (raw as { requestId: string }).requestId : '';
      this.#state.emit({ type: 'ApprovalIgnored', turnId, requestId, reason: 'invalid', detail: formatZodError(parsed.error) });
      return;
    }
    const signal = parsed.data;
    const entry = this.#pending.get(signal.requestId);
    if (entry === undefined || entry.decision !== undefined || entry.hookDecision !== undefined) {
      const known = entry !== undefined || this.#state.decidedRequestIds.includes(signal.requestId);
      this.#state.emit({ type: 'ApprovalIgnored', turnId, requestId: signal.requestId, reason: known ? 'already_decided' : 'unknown' });
      return;
    }
    if (signal.inputDigest !== entry.request.inputDigest) {
      this.#state.emit({
        type: 'ApprovalIgnored',
        turnId: entry.request.turnId,
        requestId: signal.requestId,
        reason: 'digest_mismatch',
        detail: `expected ${entry.request.inputDigest}, got ${signal.inputDigest}`,
      });
      return;
    }
    entry.decision = signal;
  }

  /** Waits for a decision on one call (or the approval timeout, or an interrupt of the turn's scope). */
  async request(options: { turnId: string; cwd: string; plan: ReadyCallPlan; reason: string }): Promise<ApprovalOutcome> {
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
    };
    if (plan.approval?.preview !== undefined) request.preview = plan.approval.preview;
    const entry: PendingApproval = { request };
    this.#pending.set(requestId, entry);
    this.#state.emit({ type: 'PermissionRequested', turnId, callId: plan.callId, requestId, toolName: plan.toolName, reason });
    this.#onChange();
    const startedAt = Date.now();
    const waitMs = (): number => Date.now() - startedAt;
    const hookScope = new CancellationScope();
    if (plan.hasPermissionRequestHooks) {
      const session = this.#state.context();
      const runPermissionRequestHooks = permissionRequestHooks(this.#state.options.heartbeatTimeoutMs ?? DEFAULT_HOOK_HEARTBEAT_TIMEOUT_MS);
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
            if (hookResult !== null && entry.decision === undefined) entry.hookDecision = hookResult;
          },
          () => undefined,
        );
    }
    const decided = (): boolean => entry.decision !== undefined || entry.hookDecision !== undefined;
    try {
      const timeoutMs = this.#state.options.approvalTimeoutMs;
      if (timeoutMs === undefined) await condition(decided);
      else if (!(await condition(decided, timeoutMs))) return { kind: 'timeout', waitMs: waitMs() };
      if (entry.hookDecision !== undefined) {
        const { behavior, message } = entry.hookDecision;
        return message === undefined ? { kind: 'hook', behavior, waitMs: waitMs() } : { kind: 'hook', behavior, message, waitMs: waitMs() };
      }
      const signal = entry.decision;
      if (signal === undefined) throw new Error('unreachable: approval without decision');
      return { kind: 'decided', signal, waitMs: waitMs() };
    } catch (error) {
      if (isCancellation(error)) return { kind: 'cancelled', waitMs: waitMs() };
      throw error;
    } finally {
      if (plan.hasPermissionRequestHooks) hookScope.cancel();
      this.#pending.delete(requestId);
      this.#state.recordDecided(requestId);
      this.#onChange();
    }
  }
}
