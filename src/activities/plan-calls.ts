import { groupCalls } from '../contracts/group-calls.js';
import type { Activities, LocalCallsPolicy, PlanCallsInput, PlannedCalls } from '../contracts/pipeline.js';
import { callInputBytes } from '../contracts/tool-call.js';
import { registryWithClientTools } from '../tools/client-tool.js';
import type { ToolRegistry } from '../tools/registry.js';
import { HOOK_HEARTBEAT_INTERVAL_MS, cancellationOf } from './cancellation.js';
import type { Warn } from './dependencies.js';
import { planCall } from './plan-call.js';
import { runFirstGroup } from './run-first-group.js';
import { failOnToolMismatch } from './tool-mismatch.js';

/**
 * The `planCalls` activity: lookup, input parse and concurrency flags of every call, for grouping (no file system, no
 * hooks). For a whole turn it also prepares the first group, which runs next anyway: one round trip instead of two;
 * and when the workflow asks and the group qualifies, runs it too (see `runFirstGroup`).
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
    const { stopHeartbeats } = cancellationOf({ heartbeatEveryMs: HOOK_HEARTBEAT_INTERVAL_MS });
    try {
      return await planAndPrepare(input);
    } finally {
      stopHeartbeats();
    }
  };

  async function planAndPrepare(input: PlanCallsInput): Promise<PlannedCalls> {
    const registry = registryWithClientTools(options.registry, input.session.clientTools);
    const plans = input.calls.map((call) => planCall({ registry, call }));
    await failOnToolMismatch({ identity: options.workerIdentity, plans, warn: options.warn });
    const planned: PlannedCalls = {
      plans,
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
      });
      // A group whose PreToolUse hooks are left to a regular Prepare (`hooksOffPath`) has nothing prepared to run.
      if (input.runFirstGroup !== undefined && localCalls !== false && planned.firstGroup.hooksDeferred !== true) {
        const ran = await runFirstGroup({
          session: input.session,
          calls,
          prepared: planned.firstGroup,
          turnId: input.runFirstGroup.turnId,
          rules: input.runFirstGroup.rules,
          localCalls,
          executeCall: stages.executeCall,
        });
        if (ran !== undefined) planned.ranFirstGroup = ran;
      }
    }
    return planned;
  }
}
