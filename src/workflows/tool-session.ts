import {
  CancellationScope,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  log,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import {
  DEFAULT_CONTINUE_AS_NEW_EVENTS,
  DEFAULT_MAX_CALLS_PER_TURN,
  MAX_TURN_REQUEST_BYTES,
} from '../contracts/defaults.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import { addCallsUpdate, awaitResultsUpdate, executeTurnUpdate, setPolicyUpdate } from '../contracts/messages.js';
import { invalidRule, policySchemas } from '../contracts/policy.js';
import type { SetPolicyRequest, SetPolicyResult } from '../contracts/policy.js';
import type { SessionOptions } from '../contracts/session.js';
import { formatZodError, oversizeRequestReason, toolCallSchemas } from '../contracts/tool-call.js';
import type { AddCallsRequest, AwaitResultsRequest, ExecuteTurnRequest } from '../contracts/tool-call.js';
import type { AddCallsResult, AwaitResultsResult, ToolResult, TurnResult } from '../contracts/tool-result.js';
import { utf8Length } from '../contracts/utf8-length.js';
import { stopBackgroundTasksActivity } from './activity-routing.js';
import { inReleasedScope } from './released-scope.js';
import type { Turn } from './scheduler.js';
import type { CarriedSessionState, SessionState } from './session-state.js';
import { ToolExecutor, installExecutorHandlers } from './tool-executor.js';

export type { CarriedSessionState } from './session-state.js';

/** What a session returns when it ends (it only ends by continue-as-new today). */
export interface SessionSummary {
  turns: number;
}

/**
 * The durable tool session: one workflow per agent session, one update per model reply. Its turns run on the
 * executor's core (`tool-executor.ts`: state, turn queue, scheduler, per-call run, approval broker, Web UI details),
 * the same core `runToolTurn` (`api.ts`) runs in a user's own workflow; this workflow adds the updates and continues
 * as new between turns when history grows.
 */
export async function toolSession(
  options: SessionOptions = {},
  carried?: CarriedSessionState,
): Promise<SessionSummary> {
  const executor = new ToolExecutor(options, carried);
  const { state, queue } = executor;
  installHandlers(executor);
  executor.refresh();

  const eventThreshold = options.continueAsNewAfterEvents ?? DEFAULT_CONTINUE_AS_NEW_EVENTS;
  try {
    await condition(
      () => queue.idle && (workflowInfo().continueAsNewSuggested || state.events.appendedThisRun >= eventThreshold),
    );
    // Signals and updates that arrived meanwhile finish first; none is lost across continue-as-new.
    await condition(allHandlersFinished);
  } catch (error) {
    // Cancelling the workflow ends the session: its background tasks end with it (continue-as-new keeps them).
    if (isCancellation(error)) await stopBackgroundTasksAtEnd(state);
    throw error;
  }
  return await continueAsNew<typeof toolSession>(options, state.carry(utf8Length(JSON.stringify(options))));
}

/**
 * The session's end (workflow cancellation: `SessionHandle.end()`, `temporal workflow cancel`): an activity stops the
 * background tasks the session still believes running, and `BackgroundTaskEnded` records each. Not cancellable
 * itself; a failure is logged and the session ends anyway. A terminated workflow runs no code, so termination leaves
 * its tasks running (README "Background tasks").
 */
async function stopBackgroundTasksAtEnd(state: SessionState): Promise<void> {
  if (!state.backgroundTasks.anyRunning) return;
  try {
    const stopped = await CancellationScope.nonCancellable(() =>
      stopBackgroundTasksActivity(state.options)({ sessionId: state.sessionId }),
    );
    state.backgroundTasks.sessionEnded({ tasks: stopped.tasks, emit: (event) => state.emit(event) });
  } catch (error) {
    log.error("could not stop the session's background tasks", { error: projectErrorMessage(error) });
  }
}

/** The wire contract's messages (docs/ARCHITECTURE.md, Wire contract), each to the part that owns it. */
function installHandlers(executor: ToolExecutor): void {
  const { state, queue, scheduler } = executor;
  /** Streaming turns by id, while they run (completed ones answer from `state.completedTurns`). */
  const streaming = new Map<string, Turn>();
  const maxCalls = state.options.maxCallsPerTurn ?? DEFAULT_MAX_CALLS_PER_TURN;
  const checkCallCount = (count: number, turnId: string): void => {
    if (count > maxCalls) {
      throw new Error(
        `Turn "${turnId}" has ${count} calls, over this session's limit of ${maxCalls} calls per turn (maxCallsPerTurn); send fewer calls per turn`,
      );
    }
  };

  // An update, not a signal, because the caller waits for the results; the update id is the turnId.
  setHandler(
    executeTurnUpdate,
    (request: ExecuteTurnRequest): Promise<TurnResult> | TurnResult =>
      executor.runWholeTurn(request.turnId, request.calls),
    {
      validator: (request) => {
        const parsed = toolCallSchemas().executeTurn.safeParse(request);
        if (!parsed.success) throw new Error(`Invalid executeTurn request: ${formatZodError(parsed.error)}`);
        const oversize = oversizeRequestReason(request.calls, MAX_TURN_REQUEST_BYTES);
        if (oversize !== undefined) throw new Error(`Invalid executeTurn request: ${oversize}`);
        if (streaming.has(request.turnId))
          throw new Error(`Turn "${request.turnId}" is a streaming turn: use addCalls and awaitResults`);
        if (!queue.knows(request.turnId)) checkCallCount(request.calls.length, request.turnId);
      },
    },
  );

  setHandler(
    addCallsUpdate,
    (request: AddCallsRequest): AddCallsResult => {
      let turn = streaming.get(request.turnId);
      if (turn === undefined) {
        const created = scheduler.createTurn({ turnId: request.turnId, kind: 'streaming' });
        turn = created;
        streaming.set(request.turnId, created);
        queue
          .enqueue(request.turnId, (current) => scheduler.run(created, current))
          .catch((error: unknown) =>
            log.error('streaming turn failed', { turnId: request.turnId, error: projectErrorMessage(error) }),
          )
          .finally(() => streaming.delete(request.turnId));
      }
      scheduler.addCalls({ turn, calls: request.calls, done: request.done === true });
      return { turnId: turn.turnId, total: turn.calls.length, done: turn.done };
    },
    {
      validator: (request) => {
        const parsed = toolCallSchemas().addCalls.safeParse(request);
        if (!parsed.success) throw new Error(`Invalid addCalls request: ${formatZodError(parsed.error)}`);
        const oversize = oversizeRequestReason(request.calls, MAX_TURN_REQUEST_BYTES);
        if (oversize !== undefined) throw new Error(`Invalid addCalls request: ${oversize}`);
        const turn = streaming.get(request.turnId);
        if (turn === undefined) {
          if (queue.knows(request.turnId))
            throw new Error(
              `Turn "${request.turnId}" is a whole turn (executeTurn) or has ended; a streaming turn needs a new turnId`,
            );
          checkCallCount(request.calls.length, request.turnId);
          return;
        }
        if (turn.done && request.calls.length > 0)
          throw new Error(`Turn "${request.turnId}" is done: no more calls can be added`);
        const known = new Set(turn.calls.map((entry) => entry.call.id));
        const duplicate = parsed.data.calls.find((call) => known.has(call.id));
        if (duplicate !== undefined) throw new Error(`duplicate call id "${duplicate.id}" in turn "${request.turnId}"`);
        checkCallCount(turn.calls.length + request.calls.length, request.turnId);
      },
    },
  );

  setHandler(
    awaitResultsUpdate,
    async (request: AwaitResultsRequest): Promise<AwaitResultsResult> => {
      const since = request.since ?? 0;
      const turn = streaming.get(request.turnId);
      if (turn === undefined) {
        const results = state.completedTurns.get(request.turnId)?.results.slice(since) ?? [];
        return { results, next: since + results.length, done: true };
      }
      await inReleasedScope(() => condition(() => scheduler.readyCount(turn) > since || turn.ended));
      const upTo = scheduler.readyCount(turn);
      scheduler.handOut(turn, upTo);
      const ready = turn.calls.slice(since, upTo);
      for (const entry of ready) entry.state = 'yielded';
      const results = ready.map((entry) => entry.result).filter((result): result is ToolResult => result !== undefined);
      const next = since + results.length;
      return { results, next, done: turn.ended && next >= turn.calls.length };
    },
    {
      validator: (request) => {
        const parsed = toolCallSchemas().awaitResults.safeParse(request);
        if (!parsed.success) throw new Error(`Invalid awaitResults request: ${formatZodError(parsed.error)}`);
        if (!streaming.has(request.turnId) && !state.completedTurns.has(request.turnId)) {
          throw new Error(`Unknown turn "${request.turnId}": open a streaming turn with addCalls first`);
        }
      },
    },
  );

  // An update, not a signal: the caller learns the new version and what it released; the validator keeps bad rules
  // out of history, so a rejected change applies nothing.
  setHandler(
    setPolicyUpdate,
    (request: SetPolicyRequest): SetPolicyResult => {
      const policyVersion = state.policy.update(request);
      const { released, denied } = executor.broker.reconsider(request.by ?? 'setPolicy');
      const by = request.by === undefined ? {} : { by: request.by };
      const reason = request.reason === undefined ? {} : { reason: request.reason };
      state.emit({
        type: 'PolicyChanged',
        turnId: queue.current?.turnId ?? '',
        policyVersion,
        ...by,
        ...reason,
        released,
        denied,
      });
      return { policyVersion, released, denied };
    },
    {
      validator: (request) => {
        const parsed = policySchemas().setPolicy.safeParse(request);
        if (!parsed.success) throw new Error(`Invalid setPolicy request: ${formatZodError(parsed.error)}`);
        const bad = invalidRule(parsed.data.rules);
        if (bad !== undefined) throw new Error(`Invalid setPolicy request: ${bad}`);
      },
    },
  );

  installExecutorHandlers({ executor: () => executor, isStreaming: (turnId) => streaming.has(turnId) });
}
