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
import type { CallPlan, ReadyCallPlan, RejectedCallPlan } from '../contracts/call-plan.js';
import { DEFAULT_AGGREGATE_BUDGET_CHARS, DEFAULT_CONTINUE_AS_NEW_EVENTS } from '../contracts/defaults.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import type { NewSessionEvent, SessionEvent } from '../contracts/events.js';
import {
  activeTurnQuery,
  addCallsUpdate,
  approvalSignal,
  awaitResultsUpdate,
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
import { addCallsRequestSchema, awaitResultsRequestSchema, executeTurnRequestSchema, formatZodError } from '../contracts/tool-call.js';
import type { AddCallsRequest, AwaitResultsRequest, ExecuteTurnRequest } from '../contracts/tool-call.js';
import { errorCodes } from '../contracts/tool-result.js';
import type { ActiveTurnView, AddCallsResult, AwaitResultsResult, ToolResult, ToolResultStatus, TurnResult } from '../contracts/tool-result.js';
import { applyAggregateBudget } from './aggregate-budget.js';
import { decidePermission } from './decide-permission.js';
import { EventLog } from './event-log.js';
import { groupCalls } from './group-calls.js';
import { parseRule } from '../contracts/permission-rules.js';
import type { ParsedRule } from '../contracts/permission-rules.js';
import { resultsInOrder, startableCalls } from './streaming-turn.js';
import type { StreamingCall } from './streaming-turn.js';

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

/** A turn whose calls arrive while the model is still talking (`addCalls` / `awaitResults`). */
interface StreamingTurnState {
  turnId: string;
  calls: StreamingCall[];
  /** The model's reply is complete: no more calls. */
  done: boolean;
  /** Every call has a result; `awaitResults` reports done once they are handed out. */
  ended: boolean;
  cwd?: string;
  maxConcurrency?: number;
  stopReason?: string;
  /** Session changes of calls that finished while others still ran: applied, in call order, when none runs. */
  pendingChanges: Array<{ index: number; completion: CallCompletion }>;
  /** Results up to here passed the aggregate budget and may be handed out. */
  orderedUpTo: number;
  orderedChars: number;
  replacements: Map<number, { envelope: string; artifact: string }>;
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
  readonly #streaming = new Map<string, StreamingTurnState>();
  /** Calls between permission and result, with their interrupt behaviour (query `activeTurn`). */
  readonly #executing = new Map<string, 'cancel' | 'block'>();
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
        if (this.#streaming.has(request.turnId)) throw new Error(`Turn "${request.turnId}" is a streaming turn: use addCalls and awaitResults`);
      },
    });
    setHandler(addCallsUpdate, (request) => this.#addCalls(request), { validator: (request) => this.#validateAddCalls(request) });
    setHandler(awaitResultsUpdate, (request) => this.#awaitResults(request), {
      validator: (request) => {
        const parsed = awaitResultsRequestSchema.safeParse(request);
        if (!parsed.success) throw new Error(`Invalid awaitResults request: ${formatZodError(parsed.error)}`);
        if (!this.#streaming.has(request.turnId) && !this.#completedTurns.has(request.turnId)) {
          throw new Error(`Unknown turn "${request.turnId}": open a streaming turn with addCalls first`);
        }
      },
    });
    setHandler(activeTurnQuery, () => this.#activeTurn());
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

  #sessionHooksInput(): { sessionHooks?: Record<string, unknown> } {
    return this.#options.hooks === undefined ? {} : { sessionHooks: this.#options.hooks };
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
    const streaming = this.#streaming.get(current.turnId);
    if (streaming !== undefined) streaming.done = true;
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
    return this.#queueTurn(request.turnId, (current) => this.#runTurn(request, current));
  }

  /** Runs turns one at a time, in the order they were accepted, each in its own cancellation scope. */
  async #queueTurn(turnId: string, run: (current: RunningTurn) => Promise<TurnResult>): Promise<TurnResult> {
    this.#turnQueue.push(turnId);
    this.#updateDetails();
    try {
      await condition(() => this.#turnQueue[0] === turnId);
      this.#updateDetails();
      const scope = new CancellationScope();
      const current: RunningTurn = { turnId, scope };
      this.#current = current;
      let result: TurnResult;
      try {
        result = await scope.run(() => run(current));
      } finally {
        this.#current = undefined;
      }
      this.#completedTurns.set(turnId, result);
      if (this.#completedTurns.size > COMPLETED_TURNS_RETAINED) {
        const oldest = this.#completedTurns.keys().next().value;
        if (oldest !== undefined) this.#completedTurns.delete(oldest);
      }
      return result;
    } finally {
      this.#turnQueue.shift();
      this.#running.delete(turnId);
      this.#updateDetails();
    }
  }

  #activeTurn(): ActiveTurnView | null {
    const current = this.#current;
    if (current === undefined) return null;
    const executing = [...this.#executing.keys()];
    return {
      turnId: current.turnId,
      streaming: this.#streaming.has(current.turnId),
      executing,
      interruptible: [...this.#executing.values()].every((behavior) => behavior === 'cancel'),
    };
  }

  #validateAddCalls(request: AddCallsRequest): void {
    const parsed = addCallsRequestSchema.safeParse(request);
    if (!parsed.success) throw new Error(`Invalid addCalls request: ${formatZodError(parsed.error)}`);
    const turn = this.#streaming.get(request.turnId);
    if (turn === undefined) {
      if (this.#completedTurns.has(request.turnId) || this.#running.has(request.turnId)) {
        throw new Error(`Turn "${request.turnId}" is a whole turn (executeTurn) or has ended; a streaming turn needs a new turnId`);
      }
      return;
    }
    if (turn.done && request.calls.length > 0) throw new Error(`Turn "${request.turnId}" is done: no more calls can be added`);
    const known = new Set(turn.calls.map((entry) => entry.call.id));
    const duplicate = request.calls.find((call) => known.has(call.id));
    if (duplicate !== undefined) throw new Error(`duplicate call id "${duplicate.id}" in turn "${request.turnId}"`);
  }

  /** Opens a streaming turn on first use; returns as soon as the calls are accepted. */
  #addCalls(request: AddCallsRequest): AddCallsResult {
    let turn = this.#streaming.get(request.turnId);
    if (turn === undefined) {
      const created: StreamingTurnState = {
        turnId: request.turnId,
        calls: [],
        done: false,
        ended: false,
        pendingChanges: [],
        orderedUpTo: 0,
        orderedChars: 0,
        replacements: new Map(),
      };
      turn = created;
      this.#streaming.set(request.turnId, created);
      const promise = this.#queueTurn(request.turnId, (current) => this.#runStreamingTurn(created, current));
      this.#running.set(request.turnId, promise);
      promise.catch((error: unknown) => log.error('streaming turn failed', { turnId: request.turnId, error: projectErrorMessage(error) }));
    }
    const addedAt = Date.now();
    const added = request.calls.map((call, offset): StreamingCall => ({ index: turn.calls.length + offset, call, addedAt, state: 'queued' }));
    turn.calls.push(...added);
    if (request.done === true) turn.done = true;
    if (added.length > 0) {
      this.#prepareStreamingCalls(turn, added).catch((error: unknown) => log.error('prepare failed', { error: projectErrorMessage(error) }));
    }
    return { turnId: turn.turnId, total: turn.calls.length, done: turn.done };
  }

  /** Plans a batch of streaming calls in one round trip; a failure becomes error results, never a failed task. */
  async #prepareStreamingCalls(turn: StreamingTurnState, added: StreamingCall[]): Promise<void> {
    const reject = (entry: StreamingCall, modelContent: string, errorCode: string): void => {
      entry.plan = { kind: 'rejected', callId: entry.call.id, toolName: entry.call.name, status: 'error', modelContent, errorCode, stage: 'lookup' };
    };
    if (this.#ruleError !== undefined) {
      for (const entry of added) reject(entry, texts.invalidSessionRules(this.#ruleError), errorCodes.permissionDenied);
      return;
    }
    try {
      const prepared = await prepareTurn({ sessionId: this.#sessionId, cwd: this.#options.cwd, calls: added.map((entry) => entry.call), allowRules: this.#options.rules?.allow ?? [], denyRules: this.#options.rules?.deny ?? [], ...this.#sessionHooksInput() });
      turn.cwd ??= prepared.cwd;
      turn.maxConcurrency ??= this.#options.maxConcurrency ?? prepared.defaultMaxConcurrency;
      this.#searchAttributeAvailable = prepared.pendingApprovalsSearchAttribute;
      added.forEach((entry, offset) => {
        entry.plan = prepared.plans[offset];
      });
    } catch (error) {
      for (const entry of added) reject(entry, `Switchyard could not prepare the tool calls: ${projectErrorMessage(error)}`, errorCodes.prepareFailed);
    }
  }

  /**
   * The streaming executor (seed 001 §4.5): calls start as they arrive when the concurrency rule allows, results
   * are handed out strictly in call order, progress and events are not held back.
   */
  async #runStreamingTurn(turn: StreamingTurnState, current: RunningTurn): Promise<TurnResult> {
    const { turnId } = turn;
    this.#emit({ type: 'TurnStarted', turnId, callIds: turn.calls.map((entry) => entry.call.id), streaming: true });
    const siblings = new SiblingGroup();
    let wave = -1;
    let waveIds: string[] = [];
    const executingCount = (): number => turn.calls.filter((entry) => entry.state === 'executing').length;
    const finished = (): boolean => turn.done && turn.calls.every((entry) => entry.state === 'completed' || entry.state === 'yielded');
    const cancelQueued = (): boolean => {
      const reason = current.interrupted !== undefined ? texts.turnInterrupted(current.interrupted.reason) : turn.stopReason === undefined ? undefined : texts.turnStopCancelled;
      if (reason === undefined) return false;
      const errorCode = current.interrupted !== undefined ? errorCodes.cancelled : errorCodes.turnStopped;
      let any = false;
      for (const entry of turn.calls) {
        if (entry.state !== 'queued') continue;
        const plan: CallPlan = entry.plan ?? { kind: 'rejected', callId: entry.call.id, toolName: entry.call.name, status: 'cancelled', modelContent: reason, errorCode, stage: 'lookup' };
        this.#completeStreamingCall(turn, entry, { result: this.#finishSynthetic(turnId, plan, reason, errorCode, entry.addedAt) }, executingCount);
        any = true;
      }
      return any;
    };

    for (;;) {
      // Not cancellable: the loop handles an interrupt itself (it cancels what is queued and waits for the rest).
      await CancellationScope.nonCancellable(() =>
        condition(
          () =>
            finished() ||
            ((current.interrupted !== undefined || turn.stopReason !== undefined) && turn.calls.some((entry) => entry.state === 'queued')) ||
            startableCalls(turn.calls, turn.maxConcurrency ?? 10).length > 0,
        ),
      );
      if (cancelQueued()) continue;
      if (finished()) break;
      const startable = startableCalls(turn.calls, turn.maxConcurrency ?? 10);
      if (executingCount() === 0) {
        wave += 1;
        waveIds = [];
      }
      for (const entry of startable) {
        const plan = entry.plan;
        if (plan === undefined) continue;
        entry.state = 'executing';
        entry.startedAt = Date.now();
        waveIds.push(entry.call.id);
        this.#emit({ type: 'ToolCallScheduled', turnId, callId: entry.call.id, toolName: plan.toolName, groupIndex: wave, groups: [[...waveIds]] });
        const run = async (): Promise<CallCompletion> =>
          plan.kind === 'rejected'
            ? { result: this.#finishRejected(turnId, plan, entry.addedAt) }
            : this.#runCall(turnId, turn.cwd ?? this.#options.cwd ?? '', plan, entry.addedAt, current, siblings);
        run().then(
          (completion) => this.#completeStreamingCall(turn, entry, completion, executingCount),
          (error: unknown) => {
            const message = `Switchyard failed while running the call: ${projectErrorMessage(error)}`;
            this.#completeStreamingCall(turn, entry, { result: this.#finishSynthetic(turnId, plan, message, errorCodes.handlerError, entry.addedAt) }, executingCount);
          },
        );
      }
    }
    turn.ended = true;
    const results = turn.calls.map((entry) => {
      if (entry.result === undefined) throw new Error(`unreachable: no result for streaming call ${entry.call.id}`);
      return entry.result;
    });
    return this.#completeTurn(turnId, results, current, turn.stopReason);
  }

  #completeStreamingCall(turn: StreamingTurnState, entry: StreamingCall, completion: CallCompletion, executingCount: () => number): void {
    const finishedAt = Date.now();
    entry.state = 'completed';
    entry.finishedAt = finishedAt;
    entry.result = {
      ...completion.result,
      timeline: {
        addedAt: new Date(entry.addedAt).toISOString(),
        ...(entry.startedAt === undefined ? {} : { startedAt: new Date(entry.startedAt).toISOString() }),
        finishedAt: new Date(finishedAt).toISOString(),
      },
    };
    if (completion.replacement !== undefined) turn.replacements.set(entry.index, completion.replacement);
    if (completion.result.turnControl?.stopTurn === true && turn.stopReason === undefined) {
      turn.stopReason = completion.result.turnControl.reason ?? `${completion.result.toolName} requested a turn stop`;
    }
    turn.pendingChanges.push({ index: entry.index, completion });
    // Context modifiers of calls that ran side by side apply once none runs, in call order.
    if (executingCount() === 0) {
      const changes = turn.pendingChanges.sort((a, b) => a.index - b.index).map((change) => change.completion);
      turn.pendingChanges = [];
      this.#applySessionChanges(changes);
    }
    this.#advanceOrdered(turn);
  }

  /**
   * Moves the in-order frontier: each result joins the turn's total; one that would take the total over the
   * aggregate budget is replaced by its envelope (results already handed out never change).
   */
  #advanceOrdered(turn: StreamingTurnState): void {
    const budget = this.#options.aggregateBudgetChars ?? DEFAULT_AGGREGATE_BUDGET_CHARS;
    for (const result of resultsInOrder(turn.calls, turn.orderedUpTo)) {
      const entry = turn.calls[turn.orderedUpTo];
      const replacement = turn.replacements.get(turn.orderedUpTo);
      const key = `${turn.turnId}/${result.callId}`;
      if (entry !== undefined && replacement !== undefined && (this.#replacedResults.has(key) || turn.orderedChars + result.modelContent.length > budget)) {
        this.#replacedResults.add(key);
        entry.result = {
          ...result,
          modelContent: replacement.envelope,
          budget: { truncated: true, originalBytes: result.budget?.originalBytes ?? byteLength(result.modelContent), modelBytes: byteLength(replacement.envelope), policy: 'artifact', artifact: replacement.artifact },
        };
      }
      turn.orderedChars += entry?.result?.modelContent.length ?? result.modelContent.length;
      turn.orderedUpTo += 1;
    }
  }

  /** Long-polls the next results in call order (or the end of the turn). */
  async #awaitResults(request: AwaitResultsRequest): Promise<AwaitResultsResult> {
    const since = request.since ?? 0;
    const turn = this.#streaming.get(request.turnId);
    if (turn === undefined) {
      const completed = this.#completedTurns.get(request.turnId);
      const results = completed?.results.slice(since) ?? [];
      return { results, next: since + results.length, done: true };
    }
    await condition(() => turn.orderedUpTo > since || turn.ended);
    const ready = turn.calls.slice(since, turn.orderedUpTo);
    for (const entry of ready) entry.state = 'yielded';
    const results = ready.map((entry) => entry.result).filter((result): result is ToolResult => result !== undefined);
    const next = since + results.length;
    return { results, next, done: turn.ended && next >= turn.calls.length };
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
      prepared = await prepareTurn({ sessionId: this.#sessionId, cwd: this.#options.cwd, calls, allowRules: this.#options.rules?.allow ?? [], denyRules: this.#options.rules?.deny ?? [], ...this.#sessionHooksInput() });
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
      for (const completion of completions) {
        resultById.set(completion.result.callId, completion.result);
        if (completion.replacement !== undefined) replacementById.set(completion.result.callId, completion.replacement);
      }
      // Context modifiers: after the whole group, in call order (for an exclusive call that is at once).
      this.#applySessionChanges(completions);
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

  /** Applies calls' session changes (state keys, remembered rules) in the order given. */
  #applySessionChanges(completions: readonly CallCompletion[]): void {
    for (const completion of completions) {
      if (completion.stateChanges !== undefined) this.#sessionState = { ...this.#sessionState, ...completion.stateChanges };
      if (completion.rememberRule !== undefined && !this.#remembered.some((rule) => rule.source === completion.rememberRule)) {
        try {
          this.#remembered.push(parseRule(completion.rememberRule));
        } catch (error) {
          log.warn('could not remember rule', { rule: completion.rememberRule, error: projectErrorMessage(error) });
        }
      }
    }
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
    const hookContext = [...(plan.hook?.additionalContext ?? [])];
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
      ...(plan.permission === undefined ? {} : { facts: plan.permission }),
    });

    if (decision.behavior === 'deny') return denied(decision.reason, decision.source, 0);
    this.#executing.set(plan.callId, plan.interruptBehavior);
    const markApproved = (): void => {
      permission = 'approved';
    };
    try {
      return await this.#authorizeAndExecute({ turnId, cwd, plan, turnStartedAt, current, siblings, decision, finish, denied, markApproved, hookContext });
    } finally {
      this.#executing.delete(plan.callId);
    }
  }

  async #authorizeAndExecute(options: {
    turnId: string;
    cwd: string;
    plan: ReadyCallPlan;
    turnStartedAt: number;
    current: RunningTurn;
    siblings: SiblingGroup;
    decision: ReturnType<typeof decidePermission>;
    finish: (result: Omit<ToolResult, 'timings'> & { timings?: Partial<ToolResult['timings']> }) => ToolResult;
    denied: (reason: string, source: string, permissionWaitMs: number, requestId?: string) => CallCompletion;
    markApproved: () => void;
    /** Hook context for the model; PostToolUse hooks add to it. */
    hookContext: string[];
  }): Promise<CallCompletion> {
    const { turnId, cwd, plan, turnStartedAt, current, siblings, decision, finish, denied, markApproved, hookContext } = options;
    let permissionWaitMs = 0;
    let rememberRule: string | undefined;
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
          markApproved();
          break;
        case 'timeout':
          return denied(texts.approvalTimedOut(plan.toolName, this.#options.approvalTimeoutMs ?? 0), 'timeout', permissionWaitMs);
        case 'decided': {
          const { signal } = outcome;
          const by = signal.by === undefined ? {} : { by: signal.by };
          if (signal.decision === 'deny') return denied(texts.approvalDenied(plan.toolName, signal.reason), 'user', permissionWaitMs, signal.requestId);
          this.#emit({ type: 'PermissionResolved', turnId, callId: plan.callId, requestId: signal.requestId, decision: signal.decision, source: 'user', ...by });
          markApproved();
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
    hookContext.push(...(outcome.hookContext ?? []));
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
            ...this.#sessionHooksInput(),
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
    const run = (): Promise<CallOutcome> =>
      executeCall({ sessionId: this.#sessionId, cwd, turnId, plan, sessionState: this.#sessionState, denyRules: this.#options.rules?.deny ?? [], ...(this.#options.hooks === undefined ? {} : { sessionHooks: this.#options.hooks }) });
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
  return `${content.replace(/\n+$/, '')}\n\n${texts.hookContextHeader}\n${lines.join('\n')}`;
}
