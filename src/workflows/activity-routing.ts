import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { SessionOptions } from '../contracts/session.js';
import { afterLocalActivities } from './local-activity-barrier.js';

/**
 * Where a session's activities run. Without `toolTaskQueue` (the default single-worker set-up) everything runs on
 * the session's own task queue and Plan/Prepare are local activities on the workflow's worker. With it, every
 * activity of the session — Plan, Prepare (validation, PreToolUse hooks), tool calls, PermissionRequest hooks,
 * background-task clean-up — goes to that queue, served by the workers that own the session's workspace, and
 * nothing of the session runs locally on a workflow worker.
 */
export function toolQueue(options: Pick<SessionOptions, 'toolTaskQueue'>): { taskQueue?: string } {
  return options.toolTaskQueue === undefined ? {} : { taskQueue: options.toolTaskQueue };
}

/** Plan and Prepare: local activities on the workflow's worker, or regular ones on the session's tool queue. */
export function pipelineActivities(options: Pick<SessionOptions, 'toolTaskQueue'>): Pick<Activities, 'planCalls' | 'prepareCalls'> {
  if (options.toolTaskQueue === undefined) {
    return {
      planCalls: (input) => afterLocalActivities(() => localPlanCalls(input)),
      prepareCalls: (input) => afterLocalActivities(() => localPrepareCalls(input)),
    };
  }
  const remote = toolQueue(options);
  return {
    planCalls: proxyActivities<Activities>({ ...remote, startToCloseTimeout: '1 minute', retry: { maximumAttempts: 3 }, summary: 'Plan' }).planCalls,
    // PreToolUse command hooks may take a minute each; a retry would run them again, so one retry only.
    prepareCalls: proxyActivities<Activities>({ ...remote, startToCloseTimeout: '10 minutes', retry: { maximumAttempts: 2 }, summary: 'Prepare' }).prepareCalls,
  };
}

// Plan and Prepare run tool code (schemas, validateInput, hooks) on the workflow's own worker: no task round trip.
const { planCalls: localPlanCalls } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
});
// PreToolUse command hooks may take a minute each; a retry would run them again, so one retry only.
const { prepareCalls: localPrepareCalls } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  retry: { maximumAttempts: 2 },
});
