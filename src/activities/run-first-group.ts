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
import { planBeforeCompacting } from './prepare-calls.js';

/**
 * At most this many bytes of outcomes come back from one Plan (Temporal warns about a payload over 512 KiB): the
 * outcomes are kept in call order while they fit, and a call whose outcome does not fit runs again on its own.
 */
export const RAN_FIRST_GROUP_BYTES = 384 * 1024;

/** A group Plan ran: the outcomes kept, by call id, and whether the workflow may go on to the group after it. */
export interface RanGroupOutcomes {
  outcomes: Record<string, CallOutcome>;
  /** UTF-8 bytes of the outcomes kept. */
  bytes: number;
  /**
   * Every call's outcome is kept and none changes what the next group may do: none failed, moved to a regular
   * activity, started a background task or stops the turn (its own answer, or a PreToolUse hook's).
   */
  mayContinue: boolean;
}

/**
 * Plan's shortcut for a whole turn's first group (`PlanCallsInput.runFirstGroup`): when every call of the prepared
 * group would run as a local activity and the permission chain allows each one without asking, the calls run here,
 * in the same local activity, instead of one local activity each after the workflow has decided. They are read-only
 * and idempotent (that is what running locally requires), so running one whose result the workflow then does not use
 * (a policy change that arrived meanwhile) changes nothing. Returns the outcomes by call id, or undefined when the
 * group does not qualify.
 */
export async function runFirstGroup(options: RunGroupOptions): Promise<Record<string, CallOutcome> | undefined> {
  return (await runGroup(options))?.outcomes;
}

type RunGroupOptions = {
  session: SessionContext;
  calls: readonly ToolCall[];
  prepared: PreparedCalls;
  turnId: string;
  rules: CallRules;
  localCalls: LocalCallsPolicy;
  executeCall: Activities['executeCall'];
  /** Bytes of outcomes this group may still return (`RAN_FIRST_GROUP_BYTES` less what earlier groups returned). */
  maxBytes?: number;
};

/**
 * Runs a prepared group inside Plan under the first group's conditions (see `runFirstGroup`), the first or a
 * following one (`PlanCallsInput.runFollowingGroups`); undefined when the group does not qualify.
 */
export async function runGroup(options: RunGroupOptions): Promise<RanGroupOutcomes | undefined> {
  const { prepared, calls, localCalls } = options;
  const maxBytes = options.maxBytes ?? RAN_FIRST_GROUP_BYTES;
  if (prepared.plans.length === 0 || prepared.plans.length !== calls.length) return undefined;
  const plans: ReadyCallPlan[] = [];
  for (const [index, wire] of prepared.plans.entries()) {
    const plan = planBeforeCompacting(wire) ?? expandPlan(wire, calls[index] ?? { input: undefined });
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
  let mayContinue = true;
  for (const [index, outcome] of outcomes.entries()) {
    const plan = plans[index];
    if (outcome === undefined || plan === undefined) {
      mayContinue = false;
      continue;
    }
    if (
      outcome.turnControl?.stopTurn === true ||
      plan.hook?.stopTurn !== undefined ||
      outcome.relocate === true ||
      outcome.backgroundTask !== undefined
    )
      mayContinue = false;
    const size = utf8Length(JSON.stringify(outcome));
    if (bytes + size > maxBytes) {
      mayContinue = false;
      break;
    }
    bytes += size;
    ran[plan.callId] = outcome;
  }
  return { outcomes: ran, bytes, mayContinue };
}
