import {
  ActivityCancellationType,
  ActivityFailure,
  CancellationScope,
  TimeoutFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  log,
  proxyActivities,
  proxyLocalActivities,
  proxySinks,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { ActivityOptions } from '@temporalio/workflow';
import type { Activities, PreparedTurn } from '../activities/index.js';
import type { CallOutcome } from '../activities/execute-call.js';
import type { ApprovalRequest, ApprovalSignal } from '../contracts/approval.js';
import { approvalSignalSchema } from '../contracts/approval.js';
import type { ReadyCallPlan, RejectedCallPlan } from '../contracts/call-plan.js';
import { DEFAULT_AGGREGATE_BUDGET_CHARS, DEFAULT_CONTINUE_AS_NEW_EVENTS } from '../contracts/defaults.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import type { NewSessionEvent, SessionEvent } from '../contracts/events.js';
import {
  approvalSignal,
  eventsQuery,
  executeTurnUpdate,
  interruptSignal,
  pendingApprovalsQuery,
  pendingApprovalsSearchAttributeKey,
  sessionStateQuery,
} from '../contracts/messages.js';
import type { SessionOptions } from '../contracts/session.js';
import type { SwitchyardSinks, ToolCallTelemetryEndRecord } from '../contracts/sinks.js';
import { texts } from '../contracts/texts.js';
import { executeTurnRequestSchema, formatZodError } from '../contracts/tool-call.js';
import type { ExecuteTurnRequest } from '../contracts/tool-call.js';
import { errorCodes } from '../contracts/tool-result.js';
import type { ToolResult, ToolResultStatus, TurnResult } from '../contracts/tool-result.js';
import { applyAggregateBudget } from './aggregate-budget.js';
import { decidePermission } from './decide-permission.js';
import { EventLog } from './event-log.js';
import { groupCalls } from './group-calls.js';
import { parseRule } from './permission-rules.js';
import type { ParsedRule } from './permission-rules.js';

/** Completed turns remembered for re-attachment by turnId. */
const COMPLETED_TURNS_RETAINED = 50;
/** Answered approval ids remembered, so a second answer is reported as `already_decided`. */
const DECIDED_REQUESTS_RETAINED = 500;
/** A lost worker is noticed within this long, unless the session sets `heartbeatTimeoutMs`. */
const DEFAULT_HEARTBEAT_TIMEOUT_MS = 10_000;
/** Replaced-result keys kept (a key is `<turnId>/<callId>`). */
const REPLACED_RESULTS_RETAINED = 5_000;
/** Temporal's safety net on top of the tool's own deadline, which the activity enforces. */
const START_TO_CLOSE_MARGIN_MS = 60_000;
const NO_DEADLINE_START_TO_CLOSE = '7 days';

/** State carried across continue-as-new. */
export interface CarriedSessionState {
  events: { events: SessionEvent[]; next: number };
  completedTurns: TurnResult[];
  rememberedRules: string[];
  sessionState: Record<string, unknown>;
  decidedRequestIds: string[];
  /** `<turnId>/<callId>` of results the aggregate budget replaced: they stay replaced. */
  replacedResults: string[];
}

/** What a session returns when it ends (it only ends by continue-as-new today). */
export interface SessionSummary {
  turns: number;
}

const { prepareTurn } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 3 },
});

// A hook that fails or hangs is no decision: the human still decides. Abandoned once the race is decided.
const { runPermissionRequestHooks } = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  retry: { maximumAttempts: 1 },
  cancellationType: ActivityCancellationType.TRY_CANCEL,
  summary: 'PermissionRequest hooks',
});

const { switchyardTelemetry } = proxySinks<SwitchyardSinks>();

function executeCallOptions(plan: ReadyCallPlan, heartbeatTimeoutMs: number): ActivityOptions {
  return {
    startToCloseTimeout: plan.timeoutMs === undefined ? NO_DEADLINE_START_TO_CLOSE : plan.timeoutMs + START_TO_CLOSE_MARGIN_MS,
    heartbeatTimeout: heartbeatTimeoutMs,
    // At most once for side effects: only idempotent tools are retried after a lost worker.
    retry: plan.flags.idempotent ? { maximumAttempts: 3, initialInterval: '1 second' } : { maximumAttempts: 1 },
    // Wait for the handler to stop, so a cancelled call's result is the tool's own and no process outlives it.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    summary: plan.summary,
  };
}

/** The durable tool session: one workflow per agent session, one update per model reply. */
export async function toolSession(options: SessionOptions = {}, carried?: CarriedSessionState): Promise<SessionSummary> {
  const session = new Session(options, carried);
  session.install();
  const eventThreshold = options.continueAsNewAfterEvents ?? DEFAULT_CONTINUE_AS_NEW_EVENTS;
  await condition(
    () => session.idle && (workflowInfo().continueAsNewSuggested || session.events.appendedThisRun >= eventThreshold),
  );
  // Signals and updates that arrived meanwhile finish first; none is lost across continue-as-new.
  await condition(allHandlersFinished);
  return await continueAsNew<typeof toolSession>(options, session.carry());
}

interface PendingApproval {
  request: ApprovalRequest;
  decision?: ApprovalSignal;
  hookDecision?: { behavior: 'allow' | 'deny'; message?: string };
}

interface RunningTurn {
  turnId: string;
  scope: CancellationScope;
  interrupted?: { reason?: string };
}

/** A call's result plus the session changes it asks for (its context modifier). */
interface CallCompletion {
  result: ToolResult;
  /** An envelope that may replace the content under the aggregate budget. */
  replacement?: { envelope: string; artifact: string };
  stateChanges?: Record<string, unknown>;
  rememberRule?: string;
}

type ApprovalOutcome =
  | { kind: 'decided'; signal: ApprovalSignal; waitMs: number }
  | { kind: 'hook'; behavior: 'allow' | 'deny'; message?: string; waitMs: number }
  | { kind: 'timeout'; waitMs: number }
  | { kind: 'cancelled'; waitMs: number };

class Session {
  readonly events: EventLog;
  readonly #options: SessionOptions;
  readonly #sessionId: string;
  readonly #rules: { allow: ParsedRule[]; ask: ParsedRule[]; deny: ParsedRule[] };
  readonly #ruleError: string | undefined;
  readonly #remembered: ParsedRule[];
  #sessionState: Record<string, unknown>;
  /** Turn ids in the order their updates were accepted; the head is running. */
  readonly #turnQueue: string[] = [];
  readonly #completedTurns: Map<string, TurnResult>;
  readonly #running = new Map<string, Promise<TurnResult>>();
  readonly #pending = new Map<string, PendingApproval>();
  readonly #decidedRequestIds: string[];
  readonly #replacedResults: Set<string>;
  #current: RunningTurn | undefined;
  #searchAttributeAvailable = false;
  #searchAttributeValue = 0;

  constructor(options: SessionOptions, carried?: CarriedSessionState) {
    this.#options = options;
    this.#sessionId = options.sessionId ?? workflowInfo().workflowId;
    this.events = new EventLog(carried?.events);
    this.#completedTurns = new Map((carried?.completedTurns ?? []).map((turn) => [turn.turnId, turn]));
    this.#sessionState = { ...(carried?.sessionState ?? {}) };
    this.#decidedRequestIds = [...(carried?.decidedRequestIds ?? [])];
    this.#replacedResults = new Set(carried?.replacedResults ?? []);
    // Start input is user input: a bad rule must not fail the workflow task; it makes every call an error instead.
    let ruleError: string | undefined;
    const parse = (list: readonly string[] | undefined): ParsedRule[] =>
      (list ?? []).flatMap((rule) => {
        try {
          return [parseRule(rule)];
        } catch (error) {
          ruleError ??= projectErrorMessage(error);
          return [];
        }
      });
    this.#rules = { allow: parse(options.rules?.allow), ask: parse(options.rules?.ask), deny: parse(options.rules?.deny) };
    this.#remembered = parse(carried?.rememberedRules);
    this.#ruleError = ruleError;
  }

  get idle(): boolean {
    return this.#turnQueue.length === 0;
  }

  install(): void {
    setHandler(executeTurnUpdate, (request) => this.#executeTurn(request), {
      validator: (request) => {
        const parsed = executeTurnRequestSchema.safeParse(request);
        if (!parsed.success) throw new Error(`Invalid executeTurn request: ${formatZodError(parsed.error)}`);
      },
    });
    setHandler(approvalSignal, (signal) => this.#onApproval(signal));
    setHandler(interruptSignal, (signal) => this.#onInterrupt(signal?.reason));
    setHandler(eventsQuery, (query) => this.events.read(query?.since ?? 0));
    setHandler(pendingApprovalsQuery, () => [...this.#pending.values()].map((entry) => entry.request));
    setHandler(sessionStateQuery, () => ({ state: { ...this.#sessionState }, rememberedRules: this.#remembered.map((rule) => rule.source) }));
    this.#updateDetails();
  }

  carry(): CarriedSessionState {
    return {
      events: this.events.carry(),
      completedTurns: [...this.#completedTurns.values()].slice(-COMPLETED_TURNS_RETAINED),
      rememberedRules: this.#remembered.map((rule) => rule.source),
      sessionState: { ...this.#sessionState },
      decidedRequestIds: this.#decidedRequestIds.slice(-DECIDED_REQUESTS_RETAINED),
      replacedResults: [...this.#replacedResults].slice(-REPLACED_RESULTS_RETAINED),
    };
  }

  #emit(event: NewSessionEvent): void {
    this.events.append(event, new Date());
  }

  /** Telemetry through a sink: spans and `tool.call.*` logs on the worker, nothing in history. */
  #reportEnded(turnId: string, result: ToolResult, startedAt: number, permission: ToolCallTelemetryEndRecord['permission']): void {
    switchyardTelemetry.toolCallEnded({
      sessionId: this.#sessionId,
      turnId,
      callId: result.callId,
      toolName: result.toolName,
      known: result.errorCode !== errorCodes.toolNotFound,
      startedAt,
      status: result.status,
      ...(result.errorCode === undefined ? {} : { errorCode: result.errorCode }),
      permission,
      outputBytes: result.budget?.originalBytes ?? byteLength(result.modelContent),
      truncated: result.budget?.truncated === true,
      durationMs: Date.now() - startedAt,
    });
  }

  /** Current details for the Web UI and the pending-approvals search attribute, kept in step with state. */
  #updateDetails(): void {
    const running = this.#turnQueue[0];
    const waiting = this.#turnQueue.length - 1;
    const lines: string[] = [];
    if (running === undefined) lines.push(`**Idle.** ${this.#completedTurns.size} turn(s) completed.`);
    else lines.push(`**Running turn \`${running}\`**${waiting > 0 ? `; ${waiting} turn(s) queued` : ''}.`);
    if (this.#pending.size > 0) {
      lines.push('', `Waiting for ${this.#pending.size} approval(s):`);
      for (const { request } of this.#pending.values()) {
        lines.push(`- \`${request.requestId}\` ${request.toolName} (call \`${request.callId}\`): ${request.reason ?? ''}`);
      }
    }
    setCurrentDetails(lines.join('\n'));
    if (this.#searchAttributeAvailable && this.#searchAttributeValue !== this.#pending.size) {
      this.#searchAttributeValue = this.#pending.size;
      upsertSearchAttributes([{ key: pendingApprovalsSearchAttributeKey, value: this.#pending.size }]);
    }
  }

  #onInterrupt(reason: string | undefined): void {
    const current = this.#current;
    if (current === undefined || current.interrupted !== undefined) return;
    current.interrupted = reason === undefined ? {} : { reason };
    current.scope.cancel();
  }

  #onApproval(raw: unknown): void {
    const turnId = this.#current?.turnId ?? '';
    const parsed = approvalSignalSchema.safeParse(raw);
    if (!parsed.success) {
      const requestId = typeof (raw as { requestId?: unknown })?.requestId === 'string' ? (raw as { requestId: string }).requestId : '';
      this.#emit({ type: 'ApprovalIgnored', turnId, requestId, reason: 'invalid', detail: formatZodError(parsed.error) });
      return;
    }
    const signal = parsed.data;
    const entry = this.#pending.get(signal.requestId);
    if (entry === undefined || entry.decision !== undefined || entry.hookDecision !== undefined) {
      const known = entry !== undefined || this.#decidedRequestIds.includes(signal.requestId);
      this.#emit({ type: 'ApprovalIgnored', turnId, requestId: signal.requestId, reason: known ? 'already_decided' : 'unknown' });
      return;
    }
    if (signal.inputDigest !== entry.request.inputDigest) {
      this.#emit({
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

  async #executeTurn(request: ExecuteTurnRequest): Promise<TurnResult> {
    const done = this.#completedTurns.get(request.turnId);
    if (done !== undefined) return done;
    const running = this.#running.get(request.turnId);
    if (running !== undefined) return running;
    const promise = this.#runQueuedTurn(request);
    this.#running.set(request.turnId, promise);
    return promise;
  }

  async #runQueuedTurn(request: ExecuteTurnRequest): Promise<TurnResult> {
    this.#turnQueue.push(request.turnId);
    this.#updateDetails();
    try {
      await condition(() => this.#turnQueue[0] === request.turnId);
      this.#updateDetails();
      const scope = new CancellationScope();
      const current: RunningTurn = { turnId: request.turnId, scope };
      this.#current = current;
      let result: TurnResult;
      try {
        result = await scope.run(() => this.#runTurn(request, current));
      } finally {
        this.#current = undefined;
      }
      this.#completedTurns.set(request.turnId, result);
      if (this.#completedTurns.size > COMPLETED_TURNS_RETAINED) {
        const oldest = this.#completedTurns.keys().next().value;
        if (oldest !== undefined) this.#completedTurns.delete(oldest);
      }
      return result;
    } finally {
      this.#turnQueue.shift();
      this.#running.delete(request.turnId);
      this.#updateDetails();
    }
  }

  async #runTurn(request: ExecuteTurnRequest, current: RunningTurn): Promise<TurnResult> {
    const { turnId, calls } = request;
    const turnStartedAt = Date.now();
    this.#emit({ type: 'TurnStarted', turnId, callIds: calls.map((call) => call.id), streaming: false });

    const failAll = (message: string, errorCode: string, status: ToolResultStatus = 'error'): TurnResult => {
      const results = calls.map((call) =>
        this.#finishRejected(turnId, { kind: 'rejected', callId: call.id, toolName: call.name, status, modelContent: message, errorCode, stage: 'lookup' }, turnStartedAt),
      );
      return this.#completeTurn(turnId, results, current);
    };
    if (this.#ruleError !== undefined) return failAll(texts.invalidSessionRules(this.#ruleError), errorCodes.permissionDenied);

    let prepared: PreparedTurn;
    try {
      prepared = await prepareTurn({ sessionId: this.#sessionId, cwd: this.#options.cwd, calls });
    } catch (error) {
      if (isCancellation(error)) return failAll(texts.turnInterrupted(current.interrupted?.reason), errorCodes.cancelled, 'cancelled');
      // The worker could not plan the turn: every call gets an error result instead of a failed workflow task.
      return failAll(`Switchyard could not prepare the tool calls: ${projectErrorMessage(error)}`, errorCodes.prepareFailed);
    }
    this.#searchAttributeAvailable = prepared.pendingApprovalsSearchAttribute;

    const maxConcurrency = this.#options.maxConcurrency ?? prepared.defaultMaxConcurrency;
    const groups = groupCalls(
      prepared.plans.map((plan) => ({ id: plan.callId, concurrentSafe: plan.kind === 'ready' && plan.flags.concurrentSafe })),
      maxConcurrency,
    );
    const planById = new Map(prepared.plans.map((plan) => [plan.callId, plan]));
    groups.forEach((group, groupIndex) => {
      for (const callId of group) {
        const plan = planById.get(callId);
        if (plan !== undefined) this.#emit({ type: 'ToolCallScheduled', turnId, callId, toolName: plan.toolName, groupIndex, groups });
      }
    });

    const resultById = new Map<string, ToolResult>();
    const replacementById = new Map<string, { envelope: string; artifact: string }>();
    let stopReason: string | undefined;
    for (const [groupIndex, group] of groups.entries()) {
      const siblings = new SiblingGroup();
      const completions = await Promise.all(
        group.map(async (callId): Promise<CallCompletion> => {
          const plan = planById.get(callId);
          if (plan === undefined) throw new Error(`unreachable: no plan for call ${callId}`);
          if (current.interrupted !== undefined) {
            return { result: this.#finishSynthetic(turnId, plan, texts.turnInterrupted(current.interrupted.reason), errorCodes.cancelled, turnStartedAt) };
          }
          if (stopReason !== undefined) return { result: this.#finishSynthetic(turnId, plan, texts.turnStopCancelled, errorCodes.turnStopped, turnStartedAt) };
          if (plan.kind === 'rejected') return { result: this.#finishRejected(turnId, plan, turnStartedAt) };
          return this.#runCall(turnId, prepared.cwd, plan, turnStartedAt, current, siblings);
        }),
      );
      // Context modifiers: after the whole group, in call order (for an exclusive call that is at once).
      for (const completion of completions) {
        resultById.set(completion.result.callId, completion.result);
        if (completion.replacement !== undefined) replacementById.set(completion.result.callId, completion.replacement);
        if (completion.stateChanges !== undefined) this.#sessionState = { ...this.#sessionState, ...completion.stateChanges };
        if (completion.rememberRule !== undefined && !this.#remembered.some((rule) => rule.source === completion.rememberRule)) {
          try {
            this.#remembered.push(parseRule(completion.rememberRule));
          } catch (error) {
            log.warn('could not remember rule', { rule: completion.rememberRule, error: projectErrorMessage(error) });
          }
        }
      }
      const results = completions.map((completion) => completion.result);
      const failed = results.filter((result) => result.isError).length;
      this.#emit({ type: 'ToolBatchComplete', turnId, groupIndex, succeeded: results.length - failed, failed });
      const stopper = results.find((result) => result.turnControl?.stopTurn === true);
      if (stopReason === undefined && stopper !== undefined) {
        stopReason = stopper.turnControl?.reason ?? `${stopper.toolName} requested a turn stop`;
      }
    }

    const results = this.#applyAggregateBudget(
      turnId,
      calls.map((call) => {
        const result = resultById.get(call.id);
        if (result === undefined) throw new Error(`unreachable: no result for call ${call.id}`);
        return result;
      }),
      replacementById,
    );
    return this.#completeTurn(turnId, results, current, stopReason);
  }

  /** Replaces the largest results by their envelopes until the turn fits `aggregateBudgetChars`; replaced stays replaced. */
  #applyAggregateBudget(turnId: string, results: ToolResult[], replacements: ReadonlyMap<string, { envelope: string; artifact: string }>): ToolResult[] {
    const keyOf = (callId: string): string => `${turnId}/${callId}`;
    const outcome = applyAggregateBudget({
      results: results.map((result) => {
        const replacement = replacements.get(result.callId);
        return { key: keyOf(result.callId), modelContent: result.modelContent, ...(replacement === undefined ? {} : { replacement }) };
      }),
      budgetChars: this.#options.aggregateBudgetChars ?? DEFAULT_AGGREGATE_BUDGET_CHARS,
      alreadyReplaced: this.#replacedResults,
    });
    for (const key of outcome.replaced) this.#replacedResults.add(key);
    return results.map((result) => {
      const replacement = replacements.get(result.callId);
      if (replacement === undefined || !outcome.replaced.has(keyOf(result.callId))) return result;
      const originalBytes = result.budget?.originalBytes ?? byteLength(result.modelContent);
      return {
        ...result,
        modelContent: replacement.envelope,
        budget: { truncated: true, originalBytes, modelBytes: byteLength(replacement.envelope), policy: 'artifact', artifact: replacement.artifact },
      };
    });
  }

  #completeTurn(turnId: string, results: ToolResult[], current: RunningTurn, stopReason?: string): TurnResult {
    const reason = current.interrupted !== undefined ? `interrupted${current.interrupted.reason ? `: ${current.interrupted.reason}` : ''}` : stopReason;
    const stopped = reason !== undefined;
    this.#emit({ type: 'TurnCompleted', turnId, stopped, ...(stopped ? { stopReason: reason } : {}), resultCount: results.length });
    return stopped ? { turnId, results, stopped, stopReason: reason } : { turnId, results, stopped };
  }

  #finishRejected(turnId: string, plan: RejectedCallPlan, turnStartedAt: number): ToolResult {
    this.#emit({ type: 'ToolCallError', turnId, callId: plan.callId, toolName: plan.toolName, status: plan.status, errorCode: plan.errorCode, message: plan.modelContent });
    const result: ToolResult = {
      callId: plan.callId,
      toolName: plan.toolName,
      status: plan.status,
      modelContent: plan.modelContent,
      isError: true,
      errorCode: plan.errorCode,
      timings: { totalMs: Date.now() - turnStartedAt, permissionWaitMs: 0, queuedMs: 0 },
    };
    this.#reportEnded(turnId, result, turnStartedAt, 'none_needed');
    return result;
  }

  /** A cancelled result for a call that never ran (turn stop or interrupt). */
  #finishSynthetic(turnId: string, plan: ReadyCallPlan | RejectedCallPlan, message: string, errorCode: string, turnStartedAt: number): ToolResult {
    this.#emit({ type: 'ToolCallError', turnId, callId: plan.callId, toolName: plan.toolName, status: 'cancelled', errorCode, message });
    const result: ToolResult = {
      callId: plan.callId,
      toolName: plan.toolName,
      status: 'cancelled',
      modelContent: message,
      isError: true,
      errorCode,
      timings: { totalMs: Date.now() - turnStartedAt, permissionWaitMs: 0, queuedMs: 0 },
    };
    this.#reportEnded(turnId, result, turnStartedAt, 'none_needed');
    return result;
  }

  async #runCall(turnId: string, cwd: string, plan: ReadyCallPlan, turnStartedAt: number, current: RunningTurn, siblings: SiblingGroup): Promise<CallCompletion> {
    const hookContext = plan.hook?.additionalContext ?? [];
    let permission: ToolCallTelemetryEndRecord['permission'] = 'none_needed';
    const finish = (result: Omit<ToolResult, 'timings'> & { timings?: Partial<ToolResult['timings']> }): ToolResult => {
      const full: ToolResult = {
        ...result,
        modelContent: withHookContext(result.modelContent, hookContext),
        timings: { totalMs: Date.now() - turnStartedAt, permissionWaitMs: result.timings?.permissionWaitMs ?? 0, queuedMs: result.timings?.queuedMs ?? 0 },
      };
      if (full.status === 'success') {
        this.#emit({ type: 'ToolCallResult', turnId, callId: plan.callId, toolName: plan.toolName, status: full.status, totalMs: full.timings.totalMs });
      } else {
        this.#emit({ type: 'ToolCallError', turnId, callId: plan.callId, toolName: plan.toolName, status: full.status, message: full.modelContent, ...(full.errorCode === undefined ? {} : { errorCode: full.errorCode }) });
      }
      this.#reportEnded(turnId, full, turnStartedAt, full.status === 'denied' ? 'denied' : permission);
      return full;
    };
    const denied = (reason: string, source: string, permissionWaitMs: number, requestId?: string): CallCompletion => {
      this.#emit({ type: 'PermissionDenied', turnId, callId: plan.callId, reason, source, ...(requestId === undefined ? {} : { requestId }) });
      return {
        result: finish({
          callId: plan.callId,
          toolName: plan.toolName,
          status: 'denied',
          modelContent: reason,
          isError: true,
          errorCode: source === 'hook' ? errorCodes.hookBlocked : errorCodes.permissionDenied,
          timings: { permissionWaitMs },
        }),
      };
    };

    const decision = decidePermission({
      subject: { toolName: plan.toolName, contentKind: plan.ruleKind, cwd, ...(plan.ruleContent === undefined ? {} : { content: plan.ruleContent }) },
      mode: this.#options.permissionMode ?? 'default',
      rules: this.#rules,
      remembered: this.#remembered,
      readOnly: plan.flags.declaredReadOnly,
      editsInsideCwd: plan.editsInsideCwd,
      alwaysAsk: plan.alwaysAsk,
      ...(plan.hook?.decision === undefined ? {} : { hook: { decision: plan.hook.decision, ...(plan.hook.reason === undefined ? {} : { reason: plan.hook.reason }) } }),
      ...(plan.approval?.narrowToAllow === true ? { toolNarrowedToAllow: true } : {}),
    });

    let permissionWaitMs = 0;
    let rememberRule: string | undefined;
    if (decision.behavior === 'deny') return denied(decision.reason, decision.source, 0);
    if (decision.behavior === 'ask') {
      const outcome = await this.#awaitApproval(turnId, cwd, plan, decision.reason);
      permissionWaitMs = outcome.waitMs;
      switch (outcome.kind) {
        case 'cancelled':
          return {
            result: finish({
              callId: plan.callId,
              toolName: plan.toolName,
              status: 'cancelled',
              modelContent: texts.turnInterrupted(current.interrupted?.reason),
              isError: true,
              errorCode: errorCodes.cancelled,
              timings: { permissionWaitMs },
            }),
          };
        case 'hook':
          if (outcome.behavior === 'deny') {
            return denied(outcome.message ?? `A PermissionRequest hook denied permission to use ${plan.toolName}.`, 'hook', permissionWaitMs);
          }
          this.#emit({ type: 'PermissionResolved', turnId, callId: plan.callId, decision: 'allow', source: 'hook' });
          permission = 'approved';
          break;
        case 'timeout':
          return denied(texts.approvalTimedOut(plan.toolName, this.#options.approvalTimeoutMs ?? 0), 'timeout', permissionWaitMs);
        case 'decided': {
          const { signal } = outcome;
          const by = signal.by === undefined ? {} : { by: signal.by };
          if (signal.decision === 'deny') return denied(texts.approvalDenied(plan.toolName, signal.reason), 'user', permissionWaitMs, signal.requestId);
          this.#emit({ type: 'PermissionResolved', turnId, callId: plan.callId, requestId: signal.requestId, decision: signal.decision, source: 'user', ...by });
          permission = 'approved';
          if (signal.decision === 'allow_always') rememberRule = plan.rememberRule;
          break;
        }
        default: {
          const exhaustive: never = outcome;
          return exhaustive;
        }
      }
    }
    if (current.interrupted !== undefined) {
      return { result: this.#finishSynthetic(turnId, plan, texts.turnInterrupted(current.interrupted.reason), errorCodes.cancelled, turnStartedAt) };
    }

    this.#emit({ type: 'ToolCallStarted', turnId, callId: plan.callId, toolName: plan.toolName, readOnly: plan.flags.readOnly, sideEffectScope: plan.flags.sideEffectScope });
    switchyardTelemetry.toolCallStarted({ sessionId: this.#sessionId, turnId, callId: plan.callId, toolName: plan.toolName, known: true, startedAt: turnStartedAt });
    const outcome = await this.#execute(turnId, cwd, plan, siblings);
    const hookStop = plan.hook?.stopTurn;
    const turnControl = outcome.turnControl ?? (hookStop === undefined ? undefined : { stopTurn: true, reason: hookStop.reason });
    const result = finish({
      callId: plan.callId,
      toolName: plan.toolName,
      status: outcome.status,
      modelContent: outcome.modelContent,
      isError: outcome.isError,
      ...(outcome.errorCode === undefined ? {} : { errorCode: outcome.errorCode }),
      ...(outcome.display === undefined ? {} : { display: outcome.display }),
      ...(outcome.budget === undefined ? {} : { budget: outcome.budget }),
      ...(turnControl === undefined ? {} : { turnControl }),
      timings: { permissionWaitMs, queuedMs: outcome.queuedMs },
    });
    return {
      result,
      ...(outcome.aggregateReplacement === undefined ? {} : { replacement: outcome.aggregateReplacement }),
      ...(outcome.sessionState === undefined ? {} : { stateChanges: outcome.sessionState }),
      ...(rememberRule === undefined ? {} : { rememberRule }),
    };
  }

  /** Waits for the `approval` signal (or the approval timeout, or an interrupt); the wait survives anything. */
  async #awaitApproval(turnId: string, cwd: string, plan: ReadyCallPlan, reason: string): Promise<ApprovalOutcome> {
    const requestId = uuid4();
    const request: ApprovalRequest = {
      requestId,
      turnId,
      callId: plan.callId,
      toolName: plan.toolName,
      input: plan.input,
      inputDigest: plan.inputDigest,
      reason,
      requestedAt: new Date().toISOString(),
      ...(plan.approval?.preview === undefined ? {} : { preview: plan.approval.preview }),
    };
    const entry: PendingApproval = { request };
    this.#pending.set(requestId, entry);
    this.#emit({ type: 'PermissionRequested', turnId, callId: plan.callId, requestId, toolName: plan.toolName, reason });
    this.#updateDetails();
    const startedAt = Date.now();
    const waitMs = (): number => Date.now() - startedAt;
    // The approval broker races the PermissionRequest hooks: whichever decides first wins (seed 000).
    const hookScope = new CancellationScope();
    if (plan.hasPermissionRequestHooks) {
      hookScope
        .run(() =>
          runPermissionRequestHooks({
            sessionId: this.#sessionId,
            cwd,
            toolName: plan.toolName,
            toolInput: plan.input,
            toolUseId: plan.callId,
            requestId,
            reason,
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
      const timeoutMs = this.#options.approvalTimeoutMs;
      if (timeoutMs === undefined) {
        await condition(decided);
      } else if (!(await condition(decided, timeoutMs))) {
        return { kind: 'timeout', waitMs: waitMs() };
      }
      if (entry.hookDecision !== undefined) {
        const { behavior, message } = entry.hookDecision;
        return { kind: 'hook', behavior, ...(message === undefined ? {} : { message }), waitMs: waitMs() };
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
      this.#decidedRequestIds.push(requestId);
      if (this.#decidedRequestIds.length > DECIDED_REQUESTS_RETAINED) this.#decidedRequestIds.shift();
      this.#updateDetails();
    }
  }

  /** Runs the call's activity; infrastructure failures become results, never a failed workflow task. */
  async #execute(turnId: string, cwd: string, plan: ReadyCallPlan, siblings: SiblingGroup): Promise<CallOutcome> {
    const { executeCall } = proxyActivities<Activities>(executeCallOptions(plan, this.#options.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS));
    const run = (): Promise<CallOutcome> => executeCall({ sessionId: this.#sessionId, cwd, turnId, plan, sessionState: this.#sessionState });
    // Its own scope, so a failing sibling of the same tool can cancel it without cancelling the turn.
    const scope = plan.interruptBehavior === 'block' ? undefined : new CancellationScope();
    if (scope !== undefined) siblings.add(plan, scope);
    try {
      // `block` tools run to completion through an interrupt.
      const outcome = scope === undefined ? await CancellationScope.nonCancellable(run) : await scope.run(run);
      const cancelledBy = siblings.cancelledBy(plan.callId);
      if (outcome.status === 'cancelled' && cancelledBy !== undefined) return { ...outcome, modelContent: texts.siblingErrored(cancelledBy), errorCode: errorCodes.siblingError };
      if (outcome.isError && outcome.status === 'error' && plan.cancelSiblingsOnError) siblings.cancelOthers(plan);
      return outcome;
    } catch (error) {
      if (isCancellation(error)) {
        const cancelledBy = siblings.cancelledBy(plan.callId);
        if (cancelledBy !== undefined) {
          return { status: 'cancelled', modelContent: texts.siblingErrored(cancelledBy), isError: true, errorCode: errorCodes.siblingError, activeMs: 0, queuedMs: 0 };
        }
        return { status: 'cancelled', modelContent: texts.turnInterrupted(this.#current?.interrupted?.reason), isError: true, errorCode: errorCodes.cancelled, activeMs: 0, queuedMs: 0 };
      }
      if (error instanceof ActivityFailure && error.cause instanceof TimeoutFailure && !plan.flags.idempotent) {
        return { status: 'error', modelContent: texts.interruptedMayHavePartlyRun(plan.toolName), isError: true, errorCode: errorCodes.interrupted, activeMs: 0, queuedMs: 0 };
      }
      return { status: 'error', modelContent: projectErrorMessage(error), isError: true, errorCode: errorCodes.handlerError, activeMs: 0, queuedMs: 0 };
    } finally {
      siblings.remove(plan.callId);
    }
  }
}

/**
 * The running calls of one group, for `cancelSiblingsOnError` (seed 001 §4.5.3): a failing Bash cancels the Bash
 * calls still running beside it — not other tools, not the turn.
 */
class SiblingGroup {
  readonly #running = new Map<string, { toolName: string; scope: CancellationScope }>();
  readonly #cancelledBy = new Map<string, string>();

  add(plan: ReadyCallPlan, scope: CancellationScope): void {
    this.#running.set(plan.callId, { toolName: plan.toolName, scope });
  }

  remove(callId: string): void {
    this.#running.delete(callId);
  }

  cancelOthers(failed: ReadyCallPlan): void {
    for (const [callId, sibling] of this.#running) {
      if (callId === failed.callId || sibling.toolName !== failed.toolName || this.#cancelledBy.has(callId)) continue;
      this.#cancelledBy.set(callId, `${failed.toolName}(${failed.summary.replace(/^[^:]*: /, '')})`);
      sibling.scope.cancel();
    }
  }

  cancelledBy(callId: string): string | undefined {
    return this.#cancelledBy.get(callId);
  }
}

/** UTF-8 length without Node's Buffer (workflow sandbox). */
function byteLength(text: string): number {
  let bytes = 0;
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return bytes;
}

/** Hook context reaches the model under `[Hook additional context]`, numbered (seed 000 hook-flow). */
export function withHookContext(content: string, context: readonly string[]): string {
  if (context.length === 0) return content;
  const lines = context.map((text, index) => `${index + 1}. ${text}`);
  return `${content}\n\n${texts.hookContextHeader}\n${lines.join('\n')}`;
}
