import type { ReadyCallPlan } from './call-plan.js';
import type { LocalCallsPolicy } from './pipeline.js';

/**
 * Whether a call runs as a local activity: read-only, idempotent (a replayed workflow task may run it again),
 * concurrency-safe, with a deadline short enough to hold a workflow task open (the SDK heartbeats the task meanwhile),
 * and no PostToolUse hook to run (a hook may take seconds, and no query is answered while the task is open).
 */
export function runsLocally(
  plan: Pick<ReadyCallPlan, 'flags' | 'timeoutMs' | 'postToolUseHooks'>,
  policy: LocalCallsPolicy | undefined,
): boolean {
  if (policy === undefined || plan.postToolUseHooks === true) return false;
  const { readOnly, idempotent, concurrentSafe } = plan.flags;
  return (
    readOnly && idempotent && concurrentSafe && plan.timeoutMs !== undefined && plan.timeoutMs <= policy.maxTimeoutMs
  );
}

/**
 * The local-call policy for calls that start together: kept only when every one of them runs locally. A group that
 * mixes local and regular calls runs them all as regular activities, because the commands that schedule regular
 * activities leave with the workflow task, which stays open while its local activities run: the regular calls would
 * wait behind the local ones.
 */
export function batchLocalCalls(
  plans: ReadonlyArray<Pick<ReadyCallPlan, 'flags' | 'timeoutMs' | 'postToolUseHooks'>>,
  policy: LocalCallsPolicy | undefined,
): LocalCallsPolicy | undefined {
  if (policy === undefined) return undefined;
  // A policy recorded before the budget existed decides call by call, as it did then, so its histories replay.
  if (policy.budgetMs === undefined) return policy;
  return plans.length > 0 && plans.every((plan) => runsLocally(plan, policy)) ? policy : undefined;
}
