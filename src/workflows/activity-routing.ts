import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../contracts/pipeline.js';
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

/** Plan's limit per attempt unless the session sets `planTimeoutMs`: lookup, parse and grouping only. */
const DEFAULT_PLAN_TIMEOUT_MS = 60_000;
/** PreToolUse command hooks may take a minute each; a retry would run them again, so one retry only. */
const PREPARE_OPTIONS = { startToCloseTimeout: '10 minutes', retry: { maximumAttempts: 2 } } as const;

/**
 * Plan and Prepare: local activities on the workflow's worker, or regular ones on the session's tool queue. A Plan that
 * also prepares the first group runs that group's PreToolUse hooks, so it gets Prepare's limit, not Plan's: slow hooks
 * must not make a whole turn fail as "could not plan".
 */
export function pipelineActivities(options: Pick<SessionOptions, 'toolTaskQueue' | 'planTimeoutMs'>): Pick<Activities, 'planCalls' | 'prepareCalls'> {
  const planOptions = { startToCloseTimeout: options.planTimeoutMs ?? DEFAULT_PLAN_TIMEOUT_MS, retry: { maximumAttempts: 3 } };
  if (options.toolTaskQueue === undefined) {
    const { planCalls: localPlanCalls } = proxyLocalActivities<Activities>(planOptions);
    const { planCalls: localPlanAndPrepare, prepareCalls: localPrepareCalls } = proxyLocalActivities<Activities>(PREPARE_OPTIONS);
    return {
      planCalls: (input) => afterLocalActivities(() => (input.prepareFirstGroup === undefined ? localPlanCalls(input) : localPlanAndPrepare(input))),
      prepareCalls: (input) => afterLocalActivities(() => localPrepareCalls(input)),
    };
  }
  const remote = toolQueue(options);
  const { planCalls } = proxyActivities<Activities>({ ...remote, ...planOptions, summary: 'Plan' });
  const { planCalls: planAndPrepare } = proxyActivities<Activities>({ ...remote, ...PREPARE_OPTIONS, summary: 'Plan' });
  const { prepareCalls } = proxyActivities<Activities>({ ...remote, ...PREPARE_OPTIONS, summary: 'Prepare' });
  return {
    planCalls: async (input) => (input.prepareFirstGroup === undefined ? planCalls(input) : planAndPrepare(input)),
    prepareCalls,
  };
}
