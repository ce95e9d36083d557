import { compactOutcomes, compactPlannedCalls } from '../contracts/compact-plan.js';
import { groupCalls } from '../contracts/group-calls.js';
import type {
  Activities,
  LocalCallsPolicy,
  PlanCallsInput,
  PlannedCalls,
  RanFollowingGroup,
} from '../contracts/pipeline.js';
import { utf8Length } from '../contracts/utf8-length.js';
import { callInputBytes } from '../contracts/tool-call.js';
import { registryWithClientTools } from '../tools/client-tool.js';
import type { ToolRegistry } from '../tools/registry.js';
import { HOOK_HEARTBEAT_INTERVAL_MS, cancellationOf } from './cancellation.js';
import type { Warn } from './dependencies.js';
import { planCall } from './plan-call.js';
import { RAN_FIRST_GROUP_BYTES, runGroup } from './run-first-group.js';
import { failOnToolMismatch } from './tool-mismatch.js';

/**
 * Plan starts no following group once it has run this long. A local activity holds its workflow task open, and an
 * interrupt reaches the workflow only when the task ends or the SDK heartbeats it (at 80 % of the task timeout, 8 s
 * by default): a Plan that starts no group after this long (each local call stops at its local budget) has normally
 * ended by then, so an interrupt finds the turn's groups where it would have found them had each run on its own (an
 * interrupted Plan cancels every call of its turn, ran or not).
 */
export const FOLLOWING_GROUPS_WITHIN_MS = 2_000;

/**
 * The `planCalls` activity: lookup, input parse and concurrency flags of every call, for grouping (no file system, no
 * hooks). For a whole turn it also prepares the first group, which runs next anyway: one round trip instead of two;
 * and when the workflow asks and the group qualifies, runs it too (see `runFirstGroup`), then, when asked
 * (`runFollowingGroups`), each following group that qualifies the same way, one after another.
 */
export function createPlanCalls(options: {
  registry: ToolRegistry;
  defaultMaxConcurrency: number;
  localCalls: LocalCallsPolicy | false;
  pendingApprovalsSearchAttribute: boolean;
  workerIdentity: string | undefined;
  /**
   * The Prepare and the execution of one Plan's first group, made for each Plan: the calls a Plan runs run with the
   * hooks its Prepare saw (see `firstLookOnly`).
   */
  stages: () => Pick<Activities, 'prepareCalls' | 'executeCall'>;
  warn: Warn;
}): Activities['planCalls'] {
  const { defaultMaxConcurrency, localCalls } = options;
  return async (input) => {
    // As a regular activity (a tool queue, or PreToolUse hooks off the workflow's path), heartbeats while it prepares
    // and runs the first group, so a lost worker is noticed and an interrupt reaches the hooks and the calls.
    const { signal, stopHeartbeats } = cancellationOf({ heartbeatEveryMs: HOOK_HEARTBEAT_INTERVAL_MS });
    try {
      return await planAndPrepare(input, signal);
    } finally {
      stopHeartbeats();
    }
  };

  async function planAndPrepare(input: PlanCallsInput, signal: AbortSignal): Promise<PlannedCalls> {
    const started = Date.now();
    const registry = registryWithClientTools(options.registry, input.session.clientTools);
    const plans = input.calls.map((call) => planCall({ registry, call }));
    await failOnToolMismatch({ identity: options.workerIdentity, plans, warn: options.warn });
    const planned: PlannedCalls = {
      plans: input.compactPlans === true ? compactPlannedCalls(plans, input.calls) : plans,
      defaultMaxConcurrency,
      pendingApprovalsSearchAttribute: options.pendingApprovalsSearchAttribute,
    };
    if (localCalls !== false) planned.localCalls = localCalls;
    if (input.prepareFirstGroup !== undefined && plans.length > 0) {
      const groups = groupCalls(
        plans.map((plan, index) => ({
          id: plan.callId,
          concurrentSafe: plan.kind === 'planned' && plan.concurrentSafe,
          bytes: callInputBytes({ input: input.calls[index]?.input }),
        })),
        input.prepareFirstGroup.maxConcurrency ?? defaultMaxConcurrency,
      );
      const first = new Set(groups[0] ?? []);
      const calls = input.calls.filter((call) => first.has(call.id));
      const stages = options.stages();
      planned.firstGroup = await stages.prepareCalls({
        session: input.session,
        calls,
        ...(input.prepareFirstGroup.hooksOffPath === true ? { hooksOffPath: true } : {}),
        ...(input.prepareFirstGroup.postHooksOffPath === true ? { postHooksOffPath: true } : {}),
        ...(input.compactPlans === true ? { compactPlans: true } : {}),
      });
      // A group whose PreToolUse hooks are left to a regular Prepare (`hooksOffPath`) has nothing prepared to run.
      if (input.runFirstGroup !== undefined && localCalls !== false && planned.firstGroup.hooksDeferred !== true) {
        const run = { session: input.session, ...input.runFirstGroup, localCalls, executeCall: stages.executeCall };
        const ran = await runGroup({ ...run, calls, prepared: planned.firstGroup });
        if (ran !== undefined)
          planned.ranFirstGroup = input.compactPlans === true ? compactOutcomes(ran.outcomes) : ran.outcomes;
        // Following groups only where their Prepare runs no PreToolUse hook: a group Plan then does not run leaves
        // nothing behind, and the workflow prepares it again when it starts.
        if (ran?.mayContinue === true && input.runFollowingGroups === true && input.prepareFirstGroup.hooksOffPath) {
          const following = await runFollowingGroups({
            input,
            groups: groups.slice(1),
            run,
            stages,
            started,
            signal,
            usedBytes: ran.bytes,
          });
          if (following.length > 0) planned.ranGroups = following;
        }
      }
    }
    return planned;
  }

  /**
   * The groups after the first, each prepared just before it runs (as the workflow would when the group before it
   * ended) and run under the first group's conditions, in model order; stops at the first group that does not qualify
   * or after one that the next must not follow (`RanGroupOutcomes.mayContinue`), when the turn is interrupted, and
   * once Plan has run `FOLLOWING_GROUPS_WITHIN_MS`.
   */
  async function runFollowingGroups(options: {
    input: PlanCallsInput;
    groups: readonly string[][];
    run: Omit<Parameters<typeof runGroup>[0], 'calls' | 'prepared'>;
    stages: Pick<Activities, 'prepareCalls'>;
    started: number;
    signal: AbortSignal;
    usedBytes: number;
  }): Promise<RanFollowingGroup[]> {
    const { input } = options;
    const ranGroups: RanFollowingGroup[] = [];
    let usedBytes = options.usedBytes;
    for (const group of options.groups) {
      if (options.signal.aborted || Date.now() - options.started >= FOLLOWING_GROUPS_WITHIN_MS) break;
      const members = new Set(group);
      const calls = input.calls.filter((call) => members.has(call.id));
      const startedAfterMs = Date.now() - options.started;
      const prepared = await options.stages.prepareCalls({
        session: input.session,
        calls,
        hooksOffPath: true,
        ...(input.prepareFirstGroup?.postHooksOffPath === true ? { postHooksOffPath: true } : {}),
        ...(input.compactPlans === true ? { compactPlans: true } : {}),
      });
      if (prepared.hooksDeferred === true) break;
      const preparedBytes = utf8Length(JSON.stringify(prepared));
      const maxBytes = RAN_FIRST_GROUP_BYTES - usedBytes - preparedBytes;
      if (maxBytes <= 0) break;
      const ran = await runGroup({ ...options.run, calls, prepared, maxBytes });
      if (ran === undefined) break;
      // A group is handed back whole or not at all: a call left out would run after the next group had run.
      if (Object.keys(ran.outcomes).length !== calls.length) break;
      ranGroups.push({
        prepared,
        outcomes: input.compactPlans === true ? compactOutcomes(ran.outcomes) : ran.outcomes,
        startedAfterMs,
      });
      usedBytes += preparedBytes + ran.bytes;
      if (!ran.mayContinue) break;
    }
    return ranGroups;
  }
}
