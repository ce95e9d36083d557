import {
  ActivityCancellationType,
  ActivityFailure,
  TimeoutFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { ActivityOptions } from '@temporalio/workflow';
import type { Activities, PreparedTurn } from '../activities/index.js';
import type { CallOutcome } from '../activities/execute-call.js';
import type { ReadyCallPlan, RejectedCallPlan } from '../contracts/call-plan.js';
import { DEFAULT_CONTINUE_AS_NEW_EVENTS } from '../contracts/defaults.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import type { SessionEvent } from '../contracts/events.js';
import { eventsQuery, executeTurnUpdate, pendingApprovalsQuery } from '../contracts/messages.js';
import type { SessionOptions } from '../contracts/session.js';
import { texts } from '../contracts/texts.js';
import { executeTurnRequestSchema, formatZodError } from '../contracts/tool-call.js';
import type { ExecuteTurnRequest } from '../contracts/tool-call.js';
import { errorCodes } from '../contracts/tool-result.js';
import type { ToolResult, TurnResult } from '../contracts/tool-result.js';
import { EventLog } from './event-log.js';
import { groupCalls } from './group-calls.js';

/** Completed turns remembered for re-attachment by turnId. */
const COMPLETED_TURNS_RETAINED = 50;
/** A lost worker is noticed within this long. */
const HEARTBEAT_TIMEOUT = '10 seconds';
/** Temporal's safety net on top of the tool's own deadline, which the activity enforces. */
const START_TO_CLOSE_MARGIN_MS = 60_000;
const NO_DEADLINE_START_TO_CLOSE = '7 days';

/** State carried across continue-as-new. */
export interface CarriedSessionState {
  events: { events: SessionEvent[]; next: number };
  completedTurns: TurnResult[];
}

/** What a session returns when it ends (it only ends by continue-as-new today). */
export interface SessionSummary {
  turns: number;
}

const { prepareTurn } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 3 },
});

function executeCallOptions(plan: ReadyCallPlan): ActivityOptions {
  return {
    startToCloseTimeout: plan.timeoutMs === undefined ? NO_DEADLINE_START_TO_CLOSE : plan.timeoutMs + START_TO_CLOSE_MARGIN_MS,
    heartbeatTimeout: HEARTBEAT_TIMEOUT,
    // At most once for side effects: only idempotent tools are retried after a lost worker.
    retry: plan.flags.idempotent ? { maximumAttempts: 3, initialInterval: '1 second' } : { maximumAttempts: 1 },
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
  await condition(allHandlersFinished);
  return await continueAsNew<typeof toolSession>(options, session.carry());
}

class Session {
  readonly events: EventLog;
  readonly #options: SessionOptions;
  readonly #sessionId: string;
  /** Turn ids in the order their updates were accepted; the head is running. */
  readonly #turnQueue: string[] = [];
  readonly #completedTurns: Map<string, TurnResult>;
  readonly #running = new Map<string, Promise<TurnResult>>();

  constructor(options: SessionOptions, carried?: CarriedSessionState) {
    this.#options = options;
    this.#sessionId = options.sessionId ?? workflowInfo().workflowId;
    this.events = new EventLog(carried?.events);
    this.#completedTurns = new Map((carried?.completedTurns ?? []).map((turn) => [turn.turnId, turn]));
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
    setHandler(eventsQuery, (query) => this.events.read(query?.since ?? 0));
    setHandler(pendingApprovalsQuery, () => []);
    this.#updateDetails();
  }

  carry(): CarriedSessionState {
    return { events: this.events.carry(), completedTurns: [...this.#completedTurns.values()].slice(-COMPLETED_TURNS_RETAINED) };
  }

  #emit(event: Parameters<EventLog['append']>[0]): void {
    this.events.append(event, new Date());
  }

  #updateDetails(): void {
    const running = this.#turnQueue[0];
    const waiting = this.#turnQueue.length - 1;
    setCurrentDetails(
      running === undefined
        ? `Idle. ${this.#completedTurns.size} turn(s) completed.`
        : `Running turn \`${running}\`${waiting > 0 ? `; ${waiting} turn(s) queued` : ''}.`,
    );
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
      const result = await this.#runTurn(request);
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

  async #runTurn(request: ExecuteTurnRequest): Promise<TurnResult> {
    const { turnId, calls } = request;
    const turnStartedAt = Date.now();
    this.#emit({ type: 'TurnStarted', turnId, callIds: calls.map((call) => call.id), streaming: false });

    let prepared: PreparedTurn;
    try {
      prepared = await prepareTurn({ sessionId: this.#sessionId, cwd: this.#options.cwd, calls });
    } catch (error) {
      // The worker could not plan the turn: every call gets an error result instead of a failed workflow task.
      const message = `Switchyard could not prepare the tool calls: ${projectErrorMessage(error)}`;
      const results = calls.map((call) =>
        this.#finishRejected(turnId, { kind: 'rejected', callId: call.id, toolName: call.name, status: 'error', modelContent: message, errorCode: errorCodes.prepareFailed, stage: 'lookup' }, turnStartedAt),
      );
      this.#emit({ type: 'TurnCompleted', turnId, stopped: false, resultCount: results.length });
      return { turnId, results, stopped: false };
    }

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
    let stopReason: string | undefined;
    for (const [groupIndex, group] of groups.entries()) {
      const groupResults = await Promise.all(
        group.map(async (callId) => {
          const plan = planById.get(callId);
          if (plan === undefined) throw new Error(`unreachable: no plan for call ${callId}`);
          if (stopReason !== undefined) return this.#finishStopped(turnId, plan, turnStartedAt);
          return plan.kind === 'rejected'
            ? this.#finishRejected(turnId, plan, turnStartedAt)
            : this.#runCall(turnId, prepared.cwd, plan, turnStartedAt);
        }),
      );
      for (const result of groupResults) resultById.set(result.callId, result);
      const failed = groupResults.filter((result) => result.isError).length;
      this.#emit({ type: 'ToolBatchComplete', turnId, groupIndex, succeeded: groupResults.length - failed, failed });
      const stopper = groupResults.find((result) => result.turnControl?.stopTurn === true);
      if (stopReason === undefined && stopper !== undefined) {
        stopReason = stopper.turnControl?.reason ?? `${stopper.toolName} requested a turn stop`;
      }
    }

    const results = calls.map((call) => {
      const result = resultById.get(call.id);
      if (result === undefined) throw new Error(`unreachable: no result for call ${call.id}`);
      return result;
    });
    const stopped = stopReason !== undefined;
    this.#emit({ type: 'TurnCompleted', turnId, stopped, ...(stopped ? { stopReason } : {}), resultCount: results.length });
    return stopped ? { turnId, results, stopped, stopReason } : { turnId, results, stopped };
  }

  #finishRejected(turnId: string, plan: RejectedCallPlan, turnStartedAt: number): ToolResult {
    this.#emit({ type: 'ToolCallError', turnId, callId: plan.callId, toolName: plan.toolName, status: plan.status, errorCode: plan.errorCode, message: plan.modelContent });
    return {
      callId: plan.callId,
      toolName: plan.toolName,
      status: plan.status,
      modelContent: plan.modelContent,
      isError: true,
      errorCode: plan.errorCode,
      timings: { totalMs: Date.now() - turnStartedAt, permissionWaitMs: 0, queuedMs: 0 },
    };
  }

  #finishStopped(turnId: string, plan: ReadyCallPlan | RejectedCallPlan, turnStartedAt: number): ToolResult {
    const result: ToolResult = {
      callId: plan.callId,
      toolName: plan.toolName,
      status: 'cancelled',
      modelContent: texts.turnStopCancelled,
      isError: true,
      errorCode: errorCodes.turnStopped,
      timings: { totalMs: Date.now() - turnStartedAt, permissionWaitMs: 0, queuedMs: 0 },
    };
    this.#emit({ type: 'ToolCallError', turnId, callId: plan.callId, toolName: plan.toolName, status: 'cancelled', errorCode: errorCodes.turnStopped, message: result.modelContent });
    return result;
  }

  async #runCall(turnId: string, cwd: string, plan: ReadyCallPlan, turnStartedAt: number): Promise<ToolResult> {
    this.#emit({
      type: 'ToolCallStarted',
      turnId,
      callId: plan.callId,
      toolName: plan.toolName,
      readOnly: plan.flags.readOnly,
      sideEffectScope: plan.flags.sideEffectScope,
    });
    const outcome = await this.#execute(turnId, cwd, plan);
    const result: ToolResult = {
      callId: plan.callId,
      toolName: plan.toolName,
      status: outcome.status,
      modelContent: outcome.modelContent,
      isError: outcome.isError,
      timings: { totalMs: Date.now() - turnStartedAt, permissionWaitMs: 0, queuedMs: outcome.queuedMs },
    };
    if (outcome.errorCode !== undefined) result.errorCode = outcome.errorCode;
    if (outcome.display !== undefined) result.display = outcome.display;
    if (outcome.budget !== undefined) result.budget = outcome.budget;
    if (outcome.turnControl !== undefined) result.turnControl = outcome.turnControl;
    if (result.status === 'success') {
      this.#emit({ type: 'ToolCallResult', turnId, callId: plan.callId, toolName: plan.toolName, status: result.status, totalMs: result.timings.totalMs });
    } else {
      this.#emit({ type: 'ToolCallError', turnId, callId: plan.callId, toolName: plan.toolName, status: result.status, message: result.modelContent, ...(result.errorCode === undefined ? {} : { errorCode: result.errorCode }) });
    }
    return result;
  }

  /** Runs the call's activity; infrastructure failures become results, never a failed workflow task. */
  async #execute(turnId: string, cwd: string, plan: ReadyCallPlan): Promise<CallOutcome> {
    const { executeCall } = proxyActivities<Activities>(executeCallOptions(plan));
    try {
      return await executeCall({ sessionId: this.#sessionId, cwd, turnId, plan });
    } catch (error) {
      if (isCancellation(error)) {
        return { status: 'cancelled', modelContent: texts.defaultCancelled, isError: true, errorCode: errorCodes.cancelled, activeMs: 0, queuedMs: 0 };
      }
      if (error instanceof ActivityFailure && error.cause instanceof TimeoutFailure && !plan.flags.idempotent) {
        return { status: 'error', modelContent: texts.interruptedMayHavePartlyRun(plan.toolName), isError: true, errorCode: errorCodes.interrupted, activeMs: 0, queuedMs: 0 };
      }
      return { status: 'error', modelContent: projectErrorMessage(error), isError: true, errorCode: errorCodes.handlerError, activeMs: 0, queuedMs: 0 };
    }
  }
}
