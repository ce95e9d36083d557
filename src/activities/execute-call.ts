import { Context } from '@temporalio/activity';
import type { ReadyCallPlan } from '../contracts/call-plan.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import { texts } from '../contracts/texts.js';
import type { ResultBudgetInfo, ToolDisplay, ToolResultStatus, TurnControl } from '../contracts/tool-result.js';
import { errorCodes } from '../contracts/tool-result.js';
import { ToolUseError } from '../tools/define-tool.js';
import type { ToolOutputObject } from '../tools/define-tool.js';
import type { ToolRegistry } from '../tools/registry.js';
import { serializeOutput } from './serialize-output.js';

const HEARTBEAT_INTERVAL_MS = 1_000;

export interface ExecuteCallInput {
  sessionId: string;
  cwd: string;
  turnId: string;
  plan: ReadyCallPlan;
  sessionState: Record<string, unknown>;
}

/** What one execution produced; the workflow adds the timings it measured and the permission wait. */
export interface CallOutcome {
  status: ToolResultStatus;
  modelContent: string;
  isError: boolean;
  errorCode?: string;
  display?: ToolDisplay;
  budget?: ResultBudgetInfo;
  turnControl?: TurnControl;
  /** Session-state keys the call sets (its context modifier). */
  sessionState?: Record<string, unknown>;
  /** Time the handler was working (deadline time). */
  activeMs: number;
  /** Time the handler waited at an admission gate (not deadline time). */
  queuedMs: number;
}

/** Heartbeat details: what a retry resumes from. */
export interface ExecutionHeartbeat {
  activeMs: number;
  queuedMs: number;
  progress?: string;
}

type HandlerEnd =
  | { kind: 'output'; output: ToolOutputObject }
  | { kind: 'error'; error: unknown }
  | { kind: 'timeout' }
  | { kind: 'cancelled' };

/** Runs one allowed call: the handler under its deadline, heartbeating, then serialisation of its output. */
export async function executeCall(options: { registry: ToolRegistry; request: ExecuteCallInput }): Promise<CallOutcome> {
  const { registry, request } = options;
  const { plan } = request;
  const activity = Context.current();
  const tool = registry.lookup(plan.toolName);
  if (tool === undefined) {
    return { status: 'error', modelContent: texts.toolNotFound(plan.toolName), isError: true, errorCode: errorCodes.toolNotFound, activeMs: 0, queuedMs: 0 };
  }

  const resumed = activity.info.heartbeatDetails as ExecutionHeartbeat | undefined;
  const startedAt = Date.now() - (resumed?.activeMs ?? 0);
  const queuedMs = resumed?.queuedMs ?? 0;
  let progress: string | undefined;
  const heartbeat = (): void => {
    const details: ExecutionHeartbeat = { activeMs: Date.now() - startedAt, queuedMs };
    if (progress !== undefined) details.progress = progress;
    activity.heartbeat(details);
  };
  heartbeat();
  const heartbeatTimer = setInterval(heartbeat, HEARTBEAT_INTERVAL_MS);

  const abort = new AbortController();
  const onCancel = (): void => abort.abort(new Error('cancelled'));
  activity.cancellationSignal.addEventListener('abort', onCancel, { once: true });

  let deadlineTimer: NodeJS.Timeout | undefined;
  const ended = new Promise<HandlerEnd>((resolve) => {
    if (plan.timeoutMs !== undefined) {
      const remaining = Math.max(0, plan.timeoutMs - (Date.now() - startedAt));
      deadlineTimer = setTimeout(() => {
        // Settle as a timeout first: aborting the handler's signal would otherwise settle it as a cancellation.
        resolve({ kind: 'timeout' });
        abort.abort(new Error(texts.timedOut(plan.timeoutMs ?? 0)));
      }, remaining);
    }
    abort.signal.addEventListener('abort', () => resolve({ kind: 'cancelled' }), { once: true });
    if (activity.cancellationSignal.aborted) onCancel();
    tool
      .execute(plan.input, {
        sessionId: request.sessionId,
        cwd: request.cwd,
        callId: plan.callId,
        turnId: request.turnId,
        signal: abort.signal,
        reportProgress: (text) => {
          progress = text;
        },
        sessionState: request.sessionState,
      })
      .then(
        (output) => resolve({ kind: 'output', output: typeof output === 'string' ? { content: output } : output }),
        (error: unknown) => resolve({ kind: 'error', error }),
      );
  });

  let end: HandlerEnd;
  try {
    end = await ended;
  } finally {
    clearInterval(heartbeatTimer);
    clearTimeout(deadlineTimer);
    activity.cancellationSignal.removeEventListener('abort', onCancel);
  }
  const activeMs = Date.now() - startedAt;

  switch (end.kind) {
    case 'timeout':
      return { status: 'error', modelContent: texts.timedOut(plan.timeoutMs ?? 0), isError: true, errorCode: errorCodes.timeout, activeMs, queuedMs };
    case 'cancelled':
      return {
        status: 'cancelled',
        modelContent: tool.cancelledMessage ?? texts.defaultCancelled,
        isError: true,
        errorCode: errorCodes.cancelled,
        activeMs,
        queuedMs,
      };
    case 'error': {
      const business = end.error instanceof ToolUseError;
      const message = projectErrorMessage(end.error);
      return {
        status: 'error',
        modelContent: business ? texts.toolUseError(message) : message,
        isError: true,
        errorCode: business ? (end.error as ToolUseError).code : errorCodes.handlerError,
        activeMs,
        queuedMs,
      };
    }
    case 'output': {
      const { output } = end;
      const serialized = serializeOutput({ toolName: tool.name, content: output.content, budget: tool.resultBudget });
      const outcome: CallOutcome = {
        status: output.isError ? 'error' : 'success',
        modelContent: serialized.modelContent,
        isError: output.isError === true,
        activeMs,
        queuedMs,
      };
      if (output.errorCode !== undefined) outcome.errorCode = output.errorCode;
      if (serialized.budget !== undefined) outcome.budget = serialized.budget;
      if (output.display !== undefined) outcome.display = output.display;
      if (output.sessionState !== undefined && !output.isError) outcome.sessionState = output.sessionState;
      const stopTurn = output.turnControl ?? (plan.stopTurnOnSuccess && !output.isError ? { stopTurn: true, reason: `${tool.name} requested a turn stop` } : undefined);
      if (stopTurn !== undefined) outcome.turnControl = stopTurn;
      return outcome;
    }
    default: {
      const exhaustive: never = end;
      return exhaustive;
    }
  }
}
