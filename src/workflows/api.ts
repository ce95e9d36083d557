// Switchyard's executor inside a user's own workflow: import from workflow code (it is deterministic and imports no
// Node modules). Not a workflow type itself, so the bundle entry (`index.ts`) does not export it.
import { ApplicationFailure, condition, uuid4 } from '@temporalio/workflow';
import { DEFAULT_MAX_CALLS_PER_TURN } from '../contracts/defaults.js';
import { sessionSchemas } from '../contracts/session.js';
import type { SessionOptions } from '../contracts/session.js';
import { executeTurnRequestProblem, formatZodError } from '../contracts/tool-call.js';
import type { ToolCall } from '../contracts/tool-call.js';
import type { TurnResult } from '../contracts/tool-result.js';
import type { CarriedSessionState } from './session-state.js';
import { ToolExecutor, installExecutorHandlers } from './tool-executor.js';

export type { ApprovalRequest, ApprovalSignal } from '../contracts/approval.js';
export { approvalSignal, interruptSignal, pendingApprovalsQuery } from '../contracts/messages.js';
export type { SessionOptions } from '../contracts/session.js';
export type { ToolCall } from '../contracts/tool-call.js';
export type { ToolResult, TurnResult } from '../contracts/tool-result.js';
export type { CarriedSessionState } from './session-state.js';

/** Type of the `ApplicationFailure` {@link runToolTurn} throws for a request it cannot run (the caller's bug). */
export const invalidToolTurnFailureType = 'InvalidToolTurn';

/** Options of one {@link runToolTurn}: the session's options (as `toolSession`'s start input) and the turn's id. */
export interface ToolTurnOptions extends SessionOptions {
  /**
   * Id of this turn, unique in the workflow; default a fresh id. A turnId already run returns that turn's result
   * instead of running it again.
   */
  turnId?: string;
}

/** This workflow's executor: module state is per workflow execution in Temporal's sandbox. */
let executor: ToolExecutor | undefined;
/** The session options the executor was built with, as canonical text. */
let configuredOptions: string | undefined;
/** State handed over by {@link resumeToolTurns}, for the executor built at the next turn. */
let resumed: CarriedSessionState | undefined;

/**
 * Runs one turn of tool calls (one model reply's `tool_use` blocks) in the calling workflow, exactly as a
 * `toolSession` turn runs: grouped into concurrency-safe batches in model order, each call through the same pipeline
 * (Plan and Prepare local activities, permission, approval, an `executeCall` activity, result budget), one result
 * per call in call order, through the same aggregate budget.
 *
 * A call that must ask waits for the `approval` signal on this workflow; the first call registers Switchyard's
 * handlers here: signals `approval` and `interrupt`, queries `pendingApprovals`, `events`, `approvalDecisions`,
 * `turnResults`, `backgroundTasks`, `sessionState` and `activeTurn` (so `switchyard approve`, the console and a raw
 * Temporal client treat this workflow as a session), and it publishes the workflow's current details and the
 * `SwitchyardPendingApprovals` search attribute. Do not define handlers with those names yourself.
 *
 * Session options are read at each call; when they differ from the previous call's (a new permission mode, say), the
 * executor is rebuilt with them once no turn runs, keeping remembered approvals, events and budget state. Turns run
 * one at a time in call order. The workflow's worker must host Switchyard's activities (`createSwitchyardWorker`).
 *
 * Throws an `ApplicationFailure` of type {@link invalidToolTurnFailureType} (non-retryable) for a request no turn can
 * run: a call without an id, duplicate call ids, too many calls, invalid options. Everything a call itself can get
 * wrong (unknown tool, bad input, a throwing hook) becomes that call's error result, never a thrown error.
 */
export async function runToolTurn(calls: readonly ToolCall[], options: ToolTurnOptions = {}): Promise<TurnResult> {
  const { turnId = uuid4(), ...sessionOptions } = options;
  checkRequest({ turnId, calls, sessionOptions });
  const current = await executorFor(sessionOptions);
  return await current.runWholeTurn(turnId, calls);
}

/**
 * The executor's state to pass to the next run when this workflow continues as new (remembered approvals, events,
 * completed turns, budget state, background tasks); undefined before the first turn. Take it when no turn runs.
 */
export function toolTurnState(): CarriedSessionState | undefined {
  return executor?.state.carry() ?? resumed;
}

/** Resumes from {@link toolTurnState} of the previous run; call it before this run's first {@link runToolTurn}. */
export function resumeToolTurns(carried: CarriedSessionState): void {
  resumed = carried;
  if (executor !== undefined) executor = new ToolExecutor(executor.state.options, carried);
}

function invalid(message: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: invalidToolTurnFailureType,
    message: `Invalid runToolTurn request: ${message}`,
    nonRetryable: true,
  });
}

function checkRequest(request: { turnId: string; calls: readonly ToolCall[]; sessionOptions: SessionOptions }): void {
  const { turnId, calls, sessionOptions } = request;
  const options = sessionSchemas().options.safeParse(sessionOptions);
  if (!options.success) throw invalid(`options: ${formatZodError(options.error)}`);
  const problem = executeTurnRequestProblem({ turnId, calls });
  if (problem !== undefined) throw invalid(problem);
  const maxCalls = sessionOptions.maxCallsPerTurn ?? DEFAULT_MAX_CALLS_PER_TURN;
  if (calls.length > maxCalls && executor?.queue.knows(turnId) !== true) {
    throw invalid(
      `turn "${turnId}" has ${calls.length} calls, over the limit of ${maxCalls} calls per turn (maxCallsPerTurn); send fewer calls per turn`,
    );
  }
}

/** The executor for these options: built (and its handlers registered) at the first turn, rebuilt when they change. */
async function executorFor(options: SessionOptions): Promise<ToolExecutor> {
  const text = JSON.stringify(options);
  if (executor === undefined) {
    executor = new ToolExecutor(options, resumed);
    configuredOptions = text;
    installExecutorHandlers({ executor: () => currentExecutor(), isStreaming: () => false });
    executor.refresh();
    return executor;
  }
  while (configuredOptions !== text) {
    // Turns already accepted finish with the options they were accepted under.
    const previous = currentExecutor();
    await condition(() => previous.queue.idle);
    if (executor !== previous) continue; // another turn rebuilt it meanwhile: compare again
    // Nothing is uploaded within the run: the completed turns stay, up to CARRIED_TURNS_MAX_BYTES of them.
    executor = new ToolExecutor(options, previous.state.carry(0, Number.POSITIVE_INFINITY));
    configuredOptions = text;
    executor.refresh();
  }
  return currentExecutor();
}

function currentExecutor(): ToolExecutor {
  if (executor === undefined) throw new Error('unreachable: no executor before the first turn');
  return executor;
}
