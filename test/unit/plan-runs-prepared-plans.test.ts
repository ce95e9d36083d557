// A Plan that runs the group it has just prepared runs Prepare's own plans: it does not take the compact plans it is
// about to send apart again (`planBeforeCompacting`), and what it runs is what the workflow gets back by expanding
// them. The real Read on a scratch file; the activities run in a mock activity context.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it, vi } from 'vitest';
import { createActivities } from '../../src/activities/create-activities.js';
import { createPrepareCalls, planBeforeCompacting } from '../../src/activities/prepare-calls.js';
import * as compactPlans from '../../src/contracts/compact-plan.js';
import type { PlanCallsInput, PlannedCalls, PreparedCalls } from '../../src/contracts/pipeline.js';
import type { ToolCall } from '../../src/contracts/tool-call.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { scratchDir } from '../support/scratch.js';

vi.mock('../../src/contracts/compact-plan.js', async (original) => {
  const actual = await original<typeof compactPlans>();
  return { ...actual, expandPlan: vi.fn(actual.expandPlan) };
});

const rules = { mode: 'default' as const, rules: { allow: [], ask: [], deny: [] }, remembered: [] };

async function workspace(): Promise<{ cwd: string; calls: ToolCall[] }> {
  const cwd = await scratchDir('switchyard-plan-prepared-');
  await writeFile(path.join(cwd, 'a.txt'), 'alpha\n');
  await writeFile(path.join(cwd, 'b.txt'), 'beta\n');
  return {
    cwd,
    calls: [
      { id: 'r1', name: 'Read', input: { file_path: 'a.txt' } },
      { id: 'r2', name: 'Read', input: { file_path: path.join(cwd, 'b.txt') } },
    ],
  };
}

describe('the group a Plan runs', () => {
  it("is run from Prepare's plans, not from the compact plans taken apart again", async () => {
    const { cwd, calls } = await workspace();
    const activities = createActivities({
      registry: new ToolRegistry(builtinTools()),
      defaultCwd: cwd,
      userSettingsDir: false,
      dataDir: cwd,
      localCalls: { maxTimeoutMs: 30_000, budgetMs: 1_000 },
    });
    vi.mocked(compactPlans.expandPlan).mockClear();
    const input: PlanCallsInput = {
      session: { sessionId: 's', cwd },
      calls,
      compactPlans: true,
      prepareFirstGroup: { hooksOffPath: true, postHooksOffPath: true },
      runFirstGroup: { turnId: 't', rules },
    };
    const planned = (await new MockActivityEnvironment().run(activities.planCalls, input)) as PlannedCalls;
    const ran = compactPlans.expandOutcomes(planned.ranFirstGroup ?? {});
    expect(ran.r1?.modelContent).toContain('alpha');
    expect(ran.r2?.modelContent).toContain('beta');
    expect(compactPlans.expandPlan).not.toHaveBeenCalled();
  });

  it('Prepare’s plan is what expanding its compact plan gives back; a plan that came through a payload has none', async () => {
    const { cwd, calls } = await workspace();
    const prepareCalls = createPrepareCalls({
      registry: new ToolRegistry(builtinTools()),
      defaultCwd: cwd,
      hooksOf: () => Promise.resolve({ hooks: {}, untrustedSettingsFiles: [] }),
      workerIdentity: undefined,
      operatorRules: undefined,
      warn: () => undefined,
    });
    const prepared = (await new MockActivityEnvironment().run(prepareCalls, {
      session: { sessionId: 's', cwd },
      calls,
      compactPlans: true as const,
    })) as PreparedCalls;
    const throughPayload = JSON.parse(JSON.stringify(prepared)) as PreparedCalls;
    for (const [index, wire] of prepared.plans.entries()) {
      const call = calls[index];
      const before = planBeforeCompacting(wire);
      expect(before).toMatchObject({ kind: 'ready', callId: call?.id });
      expect(before).toStrictEqual(compactPlans.expandPlan(throughPayload.plans[index]!, call ?? { input: undefined }));
      expect(planBeforeCompacting(throughPayload.plans[index]!)).toBeUndefined();
    }
  });
});
