import { proxySinks } from '@temporalio/workflow';
import { utf8Length } from '../contracts/utf8-length.js';
import type { ToolCallTelemetryEndRecord, SwitchyardSinks } from '../contracts/sinks.js';
import { eventDisplay, resultPreview } from '../contracts/event-display.js';
import { texts } from '../contracts/texts.js';
import { errorCodes } from '../contracts/tool-result.js';
import type { ContentBlock, ToolResult, ToolResultStatus } from '../contracts/tool-result.js';
import type { SessionChanges, SessionState } from './session-state.js';

const { switchyardTelemetry } = proxySinks<SwitchyardSinks>();

/** A call's result before the turn hands it out, plus what it asks of the session and of the aggregate budget. */
export interface CallCompletion extends SessionChanges {
  result: ToolResult;
  /** An envelope that may replace the content under the aggregate budget. */
  replacement?: { envelope: string; artifact?: string };
  /** Hook context for the model; joined to the content when the result is handed out, after the aggregate budget. */
  hookContext?: string[];
}

/** Where a result was measured from: the call's own start (Prepare), not the turn's. */
export interface CallClock {
  sessionId: string;
  turnId: string;
  /** Workflow time (epoch ms) when the call's pipeline began; undefined for a call that never started. */
  startedAt: number | undefined;
}

/** A result as its stage produced it, before timings are measured. */
export type UntimedResult = Omit<ToolResult, 'timings'> & { timings?: Partial<ToolResult['timings']> };

/**
 * Ends a call: measures its timings from its own start, records `ToolCallResult` / `ToolCallError`, and reports it to
 * telemetry (a sink: spans and logs on the worker, nothing in history).
 */
export function finishResult(options: {
  state: SessionState;
  clock: CallClock;
  result: UntimedResult;
  permission: ToolCallTelemetryEndRecord['permission'];
}): ToolResult {
  const { state, clock, result } = options;
  const now = Date.now();
  const totalMs = clock.startedAt === undefined ? 0 : now - clock.startedAt;
  const full: ToolResult = {
    ...result,
    timings: {
      totalMs,
      permissionWaitMs: result.timings?.permissionWaitMs ?? 0,
      queuedMs: result.timings?.queuedMs ?? 0,
    },
  };
  if (full.status === 'success') {
    const modelBytes = full.budget?.modelBytes ?? utf8Length(full.modelContent);
    state.emit({
      type: 'ToolCallResult',
      turnId: clock.turnId,
      callId: full.callId,
      toolName: full.toolName,
      status: full.status,
      totalMs,
      permissionWaitMs: full.timings.permissionWaitMs,
      originalBytes: full.budget?.originalBytes ?? modelBytes,
      modelBytes,
      truncated: full.budget?.truncated === true,
      ...(full.budget === undefined ? {} : { policy: full.budget.policy }),
      ...(full.budget?.artifact === undefined ? {} : { artifact: full.budget.artifact }),
      // v1.3: what a UI draws the row from, without the result (events live in workflow state, not in history).
      ...(full.display === undefined ? {} : { display: eventDisplay(full.display) }),
      queuedMs: full.timings.queuedMs,
      ...resultPreview(full.modelContent),
    });
  } else {
    const errorCode = full.errorCode === undefined ? {} : { errorCode: full.errorCode };
    state.emit({
      type: 'ToolCallError',
      turnId: clock.turnId,
      callId: full.callId,
      toolName: full.toolName,
      status: full.status,
      message: full.modelContent,
      ...errorCode,
    });
  }
  switchyardTelemetry.toolCallEnded({
    sessionId: clock.sessionId,
    turnId: clock.turnId,
    callId: full.callId,
    toolName: full.toolName,
    known: full.errorCode !== errorCodes.toolNotFound,
    startedAt: clock.startedAt ?? now,
    status: full.status,
    ...(full.errorCode === undefined ? {} : { errorCode: full.errorCode }),
    permission: full.status === 'denied' ? 'denied' : options.permission,
    outputBytes: full.budget?.originalBytes ?? utf8Length(full.modelContent),
    truncated: full.budget?.truncated === true,
    durationMs: totalMs,
    permissionWaitMs: full.timings.permissionWaitMs,
    ...(full.sandboxed === undefined ? {} : { sandboxed: full.sandboxed }),
  });
  return full;
}

/** A result for a call that ends without running: rejected at Plan or Prepare, cancelled by a turn stop or interrupt. */
export function endedResult(options: {
  state: SessionState;
  clock: CallClock;
  call: { callId: string; toolName: string };
  status: ToolResultStatus;
  modelContent: string;
  errorCode: string;
}): ToolResult {
  const { call } = options;
  return finishResult({
    state: options.state,
    clock: options.clock,
    permission: 'none_needed',
    result: {
      callId: call.callId,
      toolName: call.toolName,
      status: options.status,
      modelContent: options.modelContent,
      isError: true,
      errorCode: options.errorCode,
    },
  });
}

/** Why queued calls of a turn will not run: the turn was interrupted, or a result asked to stop it. */
export function skippedReason(options: {
  interrupted: { reason?: string } | undefined;
  stopReason: string | undefined;
}): { modelContent: string; errorCode: string } | undefined {
  if (options.interrupted !== undefined) return { modelContent: texts.rejectMessage, errorCode: errorCodes.cancelled };
  if (options.stopReason !== undefined)
    return { modelContent: texts.turnStopCancelled, errorCode: errorCodes.turnStopped };
  return undefined;
}

/**
 * A result's rich content as handed out: its final text form (after the aggregate budget and hook context) first,
 * then its media blocks, so `content` never disagrees with `modelContent`.
 */
export function withTextForm(content: readonly ContentBlock[], modelContent: string): ContentBlock[] {
  return [{ type: 'text', text: modelContent }, ...content.filter((block) => block.type !== 'text')];
}
