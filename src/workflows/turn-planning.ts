import { isCancellation, patched } from '@temporalio/workflow';
import type { CallPlan } from '../contracts/call-plan.js';
import { expandOutcomes, expandPlan, expandPlannedCalls } from '../contracts/compact-plan.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import { groupCalls } from '../contracts/group-calls.js';
import type { PlanCallsInput, PlannedCalls, PrepareCallsInput, PreparedCalls } from '../contracts/pipeline.js';
import { texts } from '../contracts/texts.js';
import { errorCodes } from '../contracts/tool-result.js';
import { pipelineActivities } from './activity-routing.js';
import { hooksOffPath, postHooksOffPath, regularPlanCalls, regularPrepareCalls } from './prepare-off-path.js';
import type { TurnCall } from './schedule-calls.js';
import type { SessionState } from './session-state.js';
import type { RanGroup, Turn } from './turn.js';

/**
 * Plan runs the groups after the first too (`PlanCallsInput.runFollowingGroups`), each after the one before it, as
 * long as each qualifies as the first did: a turn of allowed reads in several groups costs one local activity instead
 * of a Prepare and an activation more per group. Histories recorded before this patch replay as they ran.
 */
export const PLAN_RUNS_FOLLOWING_GROUPS_PATCH = 'plan-runs-following-groups';

/** Prepare's answer for a group's calls, plans expanded, with the outcomes of the calls Plan already ran. */
export type PreparedGroup = Omit<PreparedCalls, 'plans'> & { plans: CallPlan[]; ran?: RanGroup };

/**
 * Plan for calls a turn adds (the whole turn's, or a streaming turn's as they arrive): a failure or an interrupt
 * becomes error results for those calls, never a failed workflow task. `prepareFirstGroup` (whole turns): Plan also
 * prepares the first group, and runs it when it needs no decision of the workflow's own.
 */
export async function planTurnCalls(options: {
  state: SessionState;
  turn: Turn;
  added: readonly TurnCall[];
  prepareFirstGroup: boolean;
  onPlanned: (planned: PlannedCalls) => void;
}): Promise<void> {
  const { state, turn, added } = options;
  const reject = (modelContent: string, errorCode: string): void => {
    for (const entry of added)
      entry.planned = {
        kind: 'rejected',
        callId: entry.call.id,
        toolName: entry.call.name,
        status: 'error',
        modelContent,
        errorCode,
        stage: 'lookup',
      };
  };
  if (state.ruleError !== undefined) {
    reject(texts.invalidSessionRules(state.ruleError), errorCodes.permissionDenied);
    return;
  }
  try {
    const maxConcurrency = state.options.maxConcurrency;
    const input: PlanCallsInput = {
      session: state.context(),
      calls: added.map((entry) => entry.call),
      compactPlans: true,
    };
    if (options.prepareFirstGroup) {
      input.prepareFirstGroup = maxConcurrency === undefined ? {} : { maxConcurrency };
      if (hooksOffPath(state.options)) input.prepareFirstGroup.hooksOffPath = true;
      if (postHooksOffPath(state.options)) input.prepareFirstGroup.postHooksOffPath = true;
      // The first group may run in the same round trip when it needs no decision of the workflow's own: its calls
      // are counted by no limit, and run on this worker.
      if (state.options.toolTaskQueue === undefined && state.policy.limits.length === 0) {
        input.runFirstGroup = {
          turnId: turn.turnId,
          rules: { mode: state.policy.permissionMode, rules: state.rules, remembered: state.remembered },
        };
        if (input.prepareFirstGroup.hooksOffPath === true && patched(PLAN_RUNS_FOLLOWING_GROUPS_PATCH))
          input.runFollowingGroups = true;
      }
    }
    const since = Date.now();
    let planned = await pipelineActivities(state.options).planCalls(input);
    if (planned.firstGroup?.hooksDeferred === true && input.prepareFirstGroup !== undefined) {
      // PreToolUse hooks match the first group: planned again as a regular activity, which runs them off the
      // workflow's path (prepare-off-path.ts).
      const { hooksOffPath: _asked, ...prepareFirstGroup } = input.prepareFirstGroup;
      planned = await regularPlanCalls(state.options)({ ...input, prepareFirstGroup });
    }
    options.onPlanned(planned);
    turn.maxConcurrency ??= maxConcurrency ?? planned.defaultMaxConcurrency;
    const plans = expandPlannedCalls(planned.plans, input.calls);
    added.forEach((entry, offset) => {
      entry.planned = plans[offset];
    });
    if (planned.firstGroup !== undefined) turn.firstGroup = planned.firstGroup;
    if (planned.ranFirstGroup !== undefined)
      turn.ranFirstGroup = { since, outcomes: expandOutcomes(planned.ranFirstGroup) };
    if (planned.ranGroups !== undefined)
      turn.ranGroups = planned.ranGroups.map((group) => ({
        prepared: group.prepared,
        ran: { since: since + group.startedAfterMs, outcomes: expandOutcomes(group.outcomes) },
      }));
    if (planned.localCalls !== undefined && state.options.toolTaskQueue === undefined)
      turn.localCalls = planned.localCalls;
  } catch (error) {
    // An interrupt while planning: the calls are skipped like queued ones (their plans only need to exist).
    if (isCancellation(error)) reject(texts.rejectMessage, errorCodes.cancelled);
    else reject(`Switchyard could not plan the tool calls: ${projectErrorMessage(error)}`, errorCodes.prepareFailed);
  }
}

/** `ToolCallScheduled` for every call of a whole turn, the grouping on the first (once per turn). */
export function emitWholeGrouping(state: SessionState, turn: Turn): void {
  const groups = groupCalls(
    turn.calls
      .filter((entry) => entry.completion === undefined)
      .map((entry) => ({
        id: entry.call.id,
        concurrentSafe: entry.planned?.kind === 'planned' && entry.planned.concurrentSafe,
        bytes: entry.inputBytes ?? 0,
      })),
    turn.maxConcurrency ?? 10,
  );
  const byId = new Map(turn.calls.map((entry) => [entry.call.id, entry]));
  let first = true;
  groups.forEach((group, groupIndex) => {
    for (const callId of group) {
      const entry = byId.get(callId);
      const toolName = entry?.planned?.toolName ?? entry?.call.name ?? '';
      state.emit({
        type: 'ToolCallScheduled',
        turnId: turn.turnId,
        callId,
        toolName,
        groupIndex,
        ...(first ? { groups } : {}),
      });
      first = false;
    }
  });
}

/**
 * Prepare's answer for the calls of a group about to start, with their plans expanded (see `expandPlan`), and the
 * outcomes of the calls Plan already ran (Plan's own first group, and the following groups Plan ran too, each taken
 * by the group of the same calls; any mismatch drops what Plan ran after it).
 */
export async function prepareGroup(
  state: SessionState,
  turn: Turn,
  calls: readonly TurnCall[],
): Promise<PreparedGroup> {
  const byPlan =
    turn.firstGroup !== undefined ? { prepared: turn.firstGroup, ran: turn.ranFirstGroup } : turn.ranGroups?.shift();
  turn.firstGroup = undefined;
  turn.ranFirstGroup = undefined;
  const first = byPlan?.prepared;
  const ran = byPlan?.ran;
  const reuse =
    first !== undefined &&
    first.plans.length === calls.length &&
    first.plans.every((plan, index) => plan.callId === calls[index]?.call.id);
  if (!reuse || ran === undefined) turn.ranGroups = undefined;
  const prepared = reuse ? first : await prepareCalls(state, calls, first?.hooksDeferred === true);
  return {
    ...prepared,
    plans: prepared.plans.map((plan, index) => expandPlan(plan, calls[index]?.call ?? { input: undefined })),
    ...(reuse && ran !== undefined ? { ran } : {}),
  };
}

/**
 * Prepare for calls whose group is about to run: a local activity, which leaves PreToolUse hooks to a regular one
 * (`prepare-off-path.ts`); `deferred` when Plan already found that a hook matches them.
 */
async function prepareCalls(
  state: SessionState,
  calls: readonly TurnCall[],
  deferred: boolean,
): Promise<PreparedCalls> {
  const options = state.options;
  const request: PrepareCallsInput = {
    session: state.context(),
    calls: calls.map((entry) => entry.call),
    compactPlans: true,
  };
  if (postHooksOffPath(options)) request.postHooksOffPath = true;
  if (!hooksOffPath(options)) return pipelineActivities(options).prepareCalls(request);
  const local = deferred
    ? undefined
    : await pipelineActivities(options).prepareCalls({ ...request, hooksOffPath: true });
  if (local !== undefined && local.hooksDeferred !== true) return local;
  return regularPrepareCalls(options)(request);
}
