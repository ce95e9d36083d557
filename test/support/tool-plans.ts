import { prepareCall } from '../../src/activities/prepare-call.js';
import type { CallPlan, ReadyCallPlan } from '../../src/contracts/call-plan.js';
import type { Tool } from '../../src/tools/define-tool.js';
import { ToolRegistry } from '../../src/tools/registry.js';

/** Plans calls of `tools` as a turn's planning activity would (lookup, validation, resolution, flags). */
export function planner(
  tools: readonly Tool[],
): (cwd: string, name: string, input: unknown, allowRules?: string[]) => Promise<CallPlan> {
  const registry = new ToolRegistry(tools);
  return (cwd, name, input, allowRules = []) =>
    prepareCall({
      registry,
      call: { id: 'c', name, input },
      context: { sessionId: 's', cwd, allowRules, denyRules: [] },
    });
}

export function ready(plan: CallPlan): ReadyCallPlan {
  if (plan.kind !== 'ready') throw new Error(`expected a ready plan, got: ${plan.modelContent}`);
  return plan;
}

/** The model-facing text of a rejected plan. */
export function rejection(plan: CallPlan): string {
  if (plan.kind !== 'rejected') throw new Error(`expected a rejected plan for ${plan.toolName}`);
  return plan.modelContent;
}
