import type { Context } from '@temporalio/activity';
import { EVENT_LIMITS } from '../contracts/defaults.js';
import { toolCallProgressSignal } from '../contracts/messages.js';
import type { ToolCallProgressSignal } from '../contracts/messages.js';
import type { ProgressHeartbeat } from '../contracts/progress.js';

/**
 * Live output for the session's event stream (v1.3 `ToolCallProgress`). The workflow cannot see heartbeats, so a
 * regular `executeCall` activity signals its own session with the tool's latest progress report — coalesced: at most
 * one signal a second (`EVENT_LIMITS.progressIntervalMs`), only when the report changed, none in the call's first
 * second (a short call costs no history), at most `EVENT_LIMITS.progressEventsPerCall` per call, the output cut to its
 * last `EVENT_LIMITS.progressOutputChars` characters. Each signal is history (a signal event and a workflow task), so
 * these bounds are what a long call adds. A signal that fails (the session closed, the server busy) is dropped: live
 * output is best effort. Local activities send none (they are bounded by about a second and hold the workflow task).
 */
export function startProgressSignals(options: {
  activity: Context;
  turnId: string;
  callId: string;
  toolName: string;
  latest: () => ProgressHeartbeat | undefined;
}): { stop(): void } {
  const { activity } = options;
  const startedAt = Date.now();
  let sent = 0;
  let lastReportedAt: string | undefined;
  let inFlight = false;
  let stopped = false;
  const tick = (): void => {
    if (stopped || inFlight || sent >= EVENT_LIMITS.progressEventsPerCall) return;
    const progress = options.latest();
    if (progress === undefined || progress.reportedAt === lastReportedAt) return;
    if (progress.outputTail === undefined && progress.message === undefined) return;
    lastReportedAt = progress.reportedAt;
    const signal: ToolCallProgressSignal = {
      turnId: options.turnId,
      callId: options.callId,
      toolName: options.toolName,
      elapsedMs: Date.now() - startedAt,
    };
    if (progress.outputTail !== undefined) signal.output = progress.outputTail.slice(-EVENT_LIMITS.progressOutputChars);
    if (progress.message !== undefined) signal.message = progress.message.slice(0, EVENT_LIMITS.progressOutputChars);
    const execution = activity.info.workflowExecution;
    if (execution === undefined) return;
    let client;
    try {
      client = activity.client;
    } catch {
      // A worker without a client (an embedding that built its own) sends no live output.
      stopped = true;
      return;
    }
    sent += 1;
    inFlight = true;
    const { workflowId, runId } = execution;
    client.workflow
      .getHandle(workflowId, runId)
      .signal(toolCallProgressSignal, signal)
      .catch(() => undefined)
      .finally(() => {
        inFlight = false;
      });
  };
  const timer = setInterval(tick, EVENT_LIMITS.progressIntervalMs);
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
