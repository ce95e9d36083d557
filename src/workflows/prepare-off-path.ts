import { ActivityCancellationType, patched, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../contracts/pipeline.js';
import type { SessionOptions } from '../contracts/session.js';

/**
 * PreToolUse hooks off the workflow's path. A local activity holds its workflow task open while it runs, and the
 * server answers no query and delivers no signal to a workflow whose task is open: a Prepare that ran a slow hook as
 * a local activity left queries waiting for seconds and interrupts for about eight (until the SDK's workflow task
 * heartbeat). So the local Prepare is asked (`hooksOffPath`) to run no hook; when one matches a call it says so
 * (`hooksDeferred`) at once, and the calls are prepared by a regular activity on the session's own task queue, during
 * which the workflow task is closed and queries and signals are answered at once. Histories recorded before this
 * patch replay as they ran.
 */
export const HOOKS_OFF_PATH_PATCH = 'prepare-hooks-off-path';

/**
 * PostToolUse hooks off the workflow's path too. A read-only call runs as a local activity, and its PostToolUse hooks
 * ran inside it, holding the workflow task (and every query) open for as long as they took. Prepare now marks a call
 * that such a command hook matches (`postHooksOffPath`, `ReadyCallPlan.postToolUseHooks`), and a marked call runs as
 * a regular activity (`runsLocally`), never inside a local one or a Plan's first group. Histories recorded before this
 * patch replay as they ran: their Prepare answers carry no mark.
 */
export const POST_HOOKS_OFF_PATH_PATCH = 'post-hooks-off-path';

/** Whether this session's Prepare marks the calls that PostToolUse hooks match, so they run as regular activities. */
export function postHooksOffPath(options: Pick<SessionOptions, 'toolTaskQueue'>): boolean {
  return options.toolTaskQueue === undefined && patched(POST_HOOKS_OFF_PATH_PATCH);
}

/** A lost worker is noticed within this long, unless the session sets `heartbeatTimeoutMs` (as for other hooks). */
const DEFAULT_HEARTBEAT_TIMEOUT_MS = 10_000;

/** Whether this session's local Prepare leaves PreToolUse hooks to a regular one. */
export function hooksOffPath(options: Pick<SessionOptions, 'toolTaskQueue'>): boolean {
  return options.toolTaskQueue === undefined && patched(HOOKS_OFF_PATH_PATCH);
}

/**
 * The Prepare that runs PreToolUse hooks as a regular activity: Prepare's limits (hooks may take minutes, one retry
 * only, as a retry runs them again), a heartbeat timeout so a lost worker and an interrupt reach it, and TRY_CANCEL
 * so an interrupted turn ends at once while the cancellation stops the hooks.
 */
/**
 * Plan again, as a regular activity, a whole turn whose first group a local Plan found PreToolUse hooks for: it
 * prepares that group (running the hooks) and, when the workflow asked, runs it in the same activity, so the calls'
 * post hooks come from the settings their Prepare looked at, as with a local Plan (docs/SEMANTICS.md, Hooks).
 */
export function regularPlanCalls(options: Pick<SessionOptions, 'heartbeatTimeoutMs'>): Activities['planCalls'] {
  return proxyActivities<Activities>({
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: options.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS,
    retry: { maximumAttempts: 2 },
    cancellationType: ActivityCancellationType.TRY_CANCEL,
    summary: 'Plan (PreToolUse hooks)',
  }).planCalls;
}

export function regularPrepareCalls(options: Pick<SessionOptions, 'heartbeatTimeoutMs'>): Activities['prepareCalls'] {
  return proxyActivities<Activities>({
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: options.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS,
    retry: { maximumAttempts: 2 },
    cancellationType: ActivityCancellationType.TRY_CANCEL,
    summary: 'Prepare (PreToolUse hooks)',
  }).prepareCalls;
}
