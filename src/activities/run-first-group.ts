import type { ToolCall } from '../contracts/tool-call.js';
import { expandPlan } from '../contracts/compact-plan.js';
import type { ReadyCallPlan } from '../contracts/call-plan.js';
import { callPermissionInput, decidePermission } from '../contracts/decide-permission.js';
import type { CallRules } from '../contracts/decide-permission.js';
import { batchLocalCalls } from '../contracts/local-calls.js';
import { OPERATOR_RULE_LABEL, parseRules } from '../contracts/permission-rules.js';
import { executionPlan } from '../contracts/pipeline.js';
import type {
  Activities,
  CallOutcome,
  LocalCallsPolicy,
  PreparedCalls,
  SessionContext,
} from '../contracts/pipeline.js';
import { utf8Length } from '../contracts/utf8-length.js';

/**
 * At most this many bytes of outcomes come back from one Plan (Temporal warns about a payload over 512 KiB): the
 * outcomes are kept in call order while they fit, and a call whose outcome does not fit runs again on its own.
 */
export const RAN_FIRST_GROUP_BYTES = 384 * 1024;

/**
 * Plan's shortcut for a whole turn's first group (`PlanCallsInput.runFirstGroup`): when every call of the prepared
 * group would run as a local activity and the permission chain allows each one without asking, the calls run here,
 * in the same local activity, instead of one local activity each after the workflow has decided. They are read-only
 * and idempotent (that is what running locally requires), so running one whose result the workflow then does not use
 * (a policy change that arrived meanwhile) changes nothing. Returns the outcomes by call id, or undefined when the
 * group does not qualify.
 */
export async function runFirstGroup(options: {
  session: SessionContext;
  calls: readonly ToolCall[];
  prepared: PreparedCalls;
  turnId: string;
  rules: CallRules;
  localCalls: LocalCallsPolicy;
  executeCall: Activities['executeCall'];
}): Promise<Record<string, CallOutcome> | undefined> {
  const { prepared, calls, localCalls } = options;
  if (prepared.plans.length === 0 || prepared.plans.length !== calls.length) return undefined;
  const plans: ReadyCallPlan[] = [];
  for (const [index, wire] of prepared.plans.entries()) {
    const plan = expandPlan(wire, calls[index] ?? { input: undefined });
    // Client tools wait for the client, tools that read session state need the workflow's state, and a tool that
    // cancels its siblings on error needs each call in its own cancellation scope.
    if (plan.kind !== 'ready' || plan.clientTool === true || plan.readsSessionState || plan.cancelSiblingsOnError)
      return undefined;
    plans.push(plan);
  }
  const policy = batchLocalCalls(plans, localCalls);
  if (policy === undefined) return undefined;
  const operator =
    prepared.operatorRules === undefined
      ? undefined
      : parseRules(prepared.operatorRules, () => undefined, OPERATOR_RULE_LABEL);
  const rules: CallRules = operator === undefined ? options.rules : { ...options.rules, operator };
  const allowed = plans.every(
    (plan) => decidePermission(callPermissionInput(plan, prepared.cwd, rules)).behavior === 'allow',
  );
  if (!allowed) return undefined;
  const outcomes = await Promise.all(
    plans.map((plan) =>
      options
        .executeCall({
          session: options.session,
          turnId: options.turnId,
          cwd: prepared.cwd,
          plan: executionPlan(plan),
          ...(policy.budgetMs === undefined ? {} : { localBudgetMs: policy.budgetMs }),
          // Allowed without asking: no approval wait.
          permissionWaitMs: 0,
        })
        // A call that failed here runs again on its own, where a failure becomes its result.
        .catch(() => undefined),
    ),
  );
  const ran: Record<string, CallOutcome> = {};
  let bytes = 0;
  for (const [index, outcome] of outcomes.entries()) {
    const plan = plans[index];
    if (outcome === undefined || plan === undefined) continue;
    bytes += utf8Length(JSON.stringify(outcome));
    if (bytes > RAN_FIRST_GROUP_BYTES) break;
    ran[plan.callId] = outcome;
  }
  return ran;
}
