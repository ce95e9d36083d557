import type { CallPlan } from '../contracts/call-plan.js';
import type { ToolCall } from '../contracts/tool-call.js';
import type { ToolResult } from '../contracts/tool-result.js';

/** queued → executing → completed → yielded (seed 001 §4.5.1). */
export type StreamingCallState = 'queued' | 'executing' | 'completed' | 'yielded';

export interface StreamingCall {
  index: number;
  call: ToolCall;
  /** Workflow time (epoch ms). */
  addedAt: number;
  startedAt?: number;
  finishedAt?: number;
  /** Set once the batch that brought the call has been prepared. */
  plan?: CallPlan;
  state: StreamingCallState;
  result?: ToolResult;
}

/** Whether a call may share the executing set: ready and concurrency-safe. Rejected calls are exclusive (fail closed). */
export function isConcurrentSafe(plan: CallPlan): boolean {
  return plan.kind === 'ready' && plan.flags.concurrentSafe;
}

/**
 * The calls that may start now, in order (seed 001 `canExecuteTool`): a queued call starts when nothing is
 * executing, or when it and every executing call are concurrency-safe (and fewer than `maxConcurrency` run). The
 * first call that cannot start blocks every call behind it, so an exclusive call keeps its place in model order.
 * A call whose batch is not prepared yet also blocks (its safety is not known).
 */
export function startableCalls(calls: readonly StreamingCall[], maxConcurrency: number): StreamingCall[] {
  const executing = calls.filter((call) => call.state === 'executing');
  let executingCount = executing.length;
  let allExecutingSafe = executing.every((call) => call.plan !== undefined && isConcurrentSafe(call.plan));
  const startable: StreamingCall[] = [];
  for (const call of calls) {
    if (call.state !== 'queued') continue;
    if (call.plan === undefined) break;
    const safe = isConcurrentSafe(call.plan);
    const fits = executingCount === 0 || (safe && allExecutingSafe && executingCount < maxConcurrency);
    if (!fits) break;
    startable.push(call);
    executingCount += 1;
    allExecutingSafe = allExecutingSafe && safe;
    if (!safe) break; // an exclusive call runs alone
  }
  return startable;
}

/** The completed results from `since` on that can be handed out in call order (stops at the first unfinished call). */
export function resultsInOrder(calls: readonly StreamingCall[], since: number): ToolResult[] {
  const results: ToolResult[] = [];
  for (let index = since; index < calls.length; index++) {
    const result = calls[index]?.result;
    if (result === undefined) break;
    results.push(result);
  }
  return results;
}
