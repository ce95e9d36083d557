import { ActivityCancellationType, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { ActivityOptions, LocalActivityOptions } from '@temporalio/workflow';
import type { ReadyCallPlan } from '../contracts/call-plan.js';
import type { Activities, LocalCallsPolicy, PlanCallsInput, PlannedCalls } from '../contracts/pipeline.js';
import type { ToolCall } from '../contracts/tool-call.js';
import type { SessionOptions } from '../contracts/session.js';
import { afterLocalActivities } from './local-activity-barrier.js';

/**
 * Where a session's activities run, and with which options: every option set is named once here. Histories record
 * these values, so they do not change. Without `toolTaskQueue` (the default single-worker set-up) everything runs on
 * the session's own task queue and Plan/Prepare are local activities on the workflow's worker. With it, every
 * activity of the session — Plan, Prepare (validation, PreToolUse hooks), tool calls, PermissionRequest hooks,
 * approval evaluators, background-task clean-up — goes to that queue, served by the workers that own the session's
 * workspace, and nothing of the session runs locally on a workflow worker (signature checks excepted: every role
 * registers `verifyApproval`).
 */
export function toolQueue(options: Pick<SessionOptions, 'toolTaskQueue'>): { taskQueue?: string } {
  return options.toolTaskQueue === undefined ? {} : { taskQueue: options.toolTaskQueue };
}

/** A lost worker (or a cancellation, for hooks and evaluators) is noticed within this long, unless the session sets `heartbeatTimeoutMs`. */
const DEFAULT_HEARTBEAT_TIMEOUT_MS = 10_000;
/** Plan's limit per attempt unless the session sets `planTimeoutMs`: lookup, parse and grouping only. */
const DEFAULT_PLAN_TIMEOUT_MS = 60_000;
/** How long an evaluator may take before the call is left to the human. */
const EVALUATOR_TIMEOUT = '2 minutes';
/**
 * Temporal's own bound on one execution. The tool's deadline is enforced inside the activity and pauses while the
 * tool waits at an admission gate, so no bound derived from it is safe: this one is only a backstop that a real
 * call does not reach. A lost worker is noticed by the heartbeat timeout instead.
 */
const EXECUTION_BACKSTOP = '30 days';
/** A local call's bound beyond its own deadline (cleanup grace, serialisation). */
const LOCAL_CALL_TIMEOUT_MARGIN_MS = 15_000;

type SessionRouting = Pick<SessionOptions, 'toolTaskQueue' | 'heartbeatTimeoutMs'>;

/** The option sets, one literal each; the local and the remote form of an activity are built from the same one. */
const OPTIONS = {
  /** Plan: lookup, parse and grouping only. */
  plan: (options: Pick<SessionOptions, 'planTimeoutMs'>) => ({
    startToCloseTimeout: options.planTimeoutMs ?? DEFAULT_PLAN_TIMEOUT_MS,
    retry: { maximumAttempts: 3 },
  }),
  /** PreToolUse command hooks may take a minute each; a retry would run them again, so one retry only. */
  // In milliseconds: a Plan is scheduled on every turn, and a number is the SDK's duration without parsing text.
  prepare: { startToCloseTimeout: 10 * 60_000, retry: { maximumAttempts: 2 } },
  /**
   * A hook that fails or hangs is no decision: the human still decides. Once the race is decided or the turn is
   * interrupted the activity is cancelled without waiting (TRY_CANCEL); the cancellation reaches it with its next
   * heartbeat's answer and kills the hook processes.
   */
  permissionRequestHooks: (options: SessionRouting) => ({
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: options.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS,
    retry: { maximumAttempts: 1 },
    cancellationType: ActivityCancellationType.TRY_CANCEL,
    summary: 'PermissionRequest hooks',
  }),
  /** A lost worker is retried once on another worker; the first answer is the only one the workflow takes. */
  approvalEvaluator: (options: SessionRouting, name: string) => ({
    startToCloseTimeout: EVALUATOR_TIMEOUT,
    heartbeatTimeout: options.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS,
    retry: { maximumAttempts: 2, initialInterval: '1 second' },
    cancellationType: ActivityCancellationType.TRY_CANCEL,
    summary: `approval evaluator ${name}`,
  }),
  verifyApproval: { startToCloseTimeout: '30 seconds', retry: { maximumAttempts: 3 } },
  admitSession: { startToCloseTimeout: '30 seconds', retry: { maximumAttempts: 3 } },
  stopBackgroundTasks: { startToCloseTimeout: '1 minute', retry: { maximumAttempts: 3 } },
  /**
   * Wait for the activity's answer to the cancellation: the call's result is then the one the activity returned (the
   * reject message, with PostToolUseFailure context), not a bare cancellation. The activity answers once it has fired
   * the handler's abort signal (Bash kills its process group on it); it does not wait for the handler to return.
   */
  executeCall: (plan: Pick<ReadyCallPlan, 'summary'>) => ({
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    summary: plan.summary,
  }),
} as const;

/**
 * Plan and Prepare: local activities on the workflow's worker, or regular ones on the session's tool queue. A Plan that
 * also prepares the first group runs that group's PreToolUse hooks, so it gets Prepare's limit, not Plan's: slow hooks
 * must not make a whole turn fail as "could not plan".
 */
export function pipelineActivities(
  options: Pick<SessionOptions, 'toolTaskQueue' | 'planTimeoutMs'>,
): Pick<Activities, 'planCalls' | 'prepareCalls'> {
  const planOptions = OPTIONS.plan(options);
  if (options.toolTaskQueue === undefined) {
    const { planCalls: localPlanCalls } = proxyLocalActivities<Activities>(planOptions);
    const { planCalls: localPlanAndPrepare, prepareCalls: localPrepareCalls } = proxyLocalActivities<Activities>(
      OPTIONS.prepare,
    );
    // A Plan that may run the first group is the only activity those calls get: it names them for the Web UI.
    const localPlanAndRun = (input: PlanCallsInput): Promise<PlannedCalls> =>
      proxyLocalActivities<Activities>({ ...OPTIONS.prepare, summary: planSummary(input.calls) }).planCalls(input);
    return {
      planCalls: (input) =>
        afterLocalActivities(() =>
          input.prepareFirstGroup === undefined
            ? localPlanCalls(input)
            : input.runFirstGroup === undefined
              ? localPlanAndPrepare(input)
              : localPlanAndRun(input),
        ),
      prepareCalls: (input) => afterLocalActivities(() => localPrepareCalls(input)),
    };
  }
  const remote = toolQueue(options);
  const { planCalls } = proxyActivities<Activities>({ ...remote, ...planOptions, summary: 'Plan' });
  const { planCalls: planAndPrepare } = proxyActivities<Activities>({ ...remote, ...OPTIONS.prepare, summary: 'Plan' });
  const { prepareCalls } = proxyActivities<Activities>({ ...remote, ...OPTIONS.prepare, summary: 'Prepare' });
  return {
    planCalls: async (input) => (input.prepareFirstGroup === undefined ? planCalls(input) : planAndPrepare(input)),
    prepareCalls,
  };
}

/** At most this many characters of a Plan's summary (the names of the calls it plans). */
const PLAN_SUMMARY_MAX_CHARS = 160;

/** `Plan: Read, Read, Glob`: the Web UI's label of a Plan that may also run the first group. */
export function planSummary(calls: ReadonlyArray<Pick<ToolCall, 'name'>>): string {
  const line = `Plan: ${calls.map((call) => call.name).join(', ')}`.replace(/\s+/g, ' ');
  return line.length > PLAN_SUMMARY_MAX_CHARS ? `${line.slice(0, PLAN_SUMMARY_MAX_CHARS - 1)}…` : line;
}

/** The session's PermissionRequest hooks, racing the human approver on the session's tool queue. */
export function permissionRequestHooksActivity(options: SessionRouting): Activities['runPermissionRequestHooks'] {
  return proxyActivities<Activities>({ ...toolQueue(options), ...OPTIONS.permissionRequestHooks(options) })
    .runPermissionRequestHooks;
}

/** The session's approval evaluator `name`, on the session's tool queue. */
export function approvalEvaluatorActivity(options: SessionRouting, name: string): Activities['runApprovalEvaluator'] {
  return proxyActivities<Activities>({ ...toolQueue(options), ...OPTIONS.approvalEvaluator(options, name) })
    .runApprovalEvaluator;
}

/**
 * Signature checks run on the workflow's own worker (every role registers `verifyApproval`): the verdict is recorded
 * as the local activity's result, so replay never checks a signature again and no key enters history.
 */
export const { verifyApproval } = proxyLocalActivities<Activities>(OPTIONS.verifyApproval);

/** The worker's word on a session's options (its `SWITCHYARD_SANDBOX` floor), asked on the workflow's own worker. */
export const { admitSession } = proxyLocalActivities<Activities>(OPTIONS.admitSession);

/** Runs where the tasks' data directory is: a regular activity on the session's task queue. */
export function stopBackgroundTasksActivity(options: SessionRouting): Activities['stopBackgroundTasks'] {
  return proxyActivities<Activities>({ ...toolQueue(options), ...OPTIONS.stopBackgroundTasks }).stopBackgroundTasks;
}

/** One call as a regular activity on the session's tool queue; at most once for side effects: only idempotent tools are retried after a lost worker. */
export function executeCallActivity(
  plan: Pick<ReadyCallPlan, 'summary' | 'flags'>,
  options: SessionRouting,
): Activities['executeCall'] {
  const remote: ActivityOptions = {
    ...toolQueue(options),
    startToCloseTimeout: EXECUTION_BACKSTOP,
    heartbeatTimeout: options.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS,
    retry: plan.flags.idempotent ? { maximumAttempts: 3, initialInterval: '1 second' } : { maximumAttempts: 1 },
    ...OPTIONS.executeCall(plan),
  };
  return proxyActivities<Activities>(remote).executeCall;
}

/** One call as a local activity: the deadline (or the local budget) is enforced inside the activity; this bound only catches a hung handler. */
export function localExecuteCallActivity(
  plan: Pick<ReadyCallPlan, 'summary' | 'timeoutMs'>,
  policy: LocalCallsPolicy,
): Activities['executeCall'] {
  const local: LocalActivityOptions = {
    startToCloseTimeout:
      Math.min(plan.timeoutMs ?? 0, policy.budgetMs ?? Number.POSITIVE_INFINITY) + LOCAL_CALL_TIMEOUT_MARGIN_MS,
    retry: { maximumAttempts: 3, initialInterval: '1 second' },
    ...OPTIONS.executeCall(plan),
  };
  return proxyLocalActivities<Activities>(local).executeCall;
}
