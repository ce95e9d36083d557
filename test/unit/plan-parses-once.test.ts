// A Plan that prepares its first group parses each call's input once: Prepare, run by the same Plan on the same
// call, takes Plan's parse instead of parsing again. A stand-in tool counts the parses of its schema; the activities
// run in a mock activity context.
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createActivities } from '../../src/activities/create-activities.js';
import type { PlanCallsInput, PlannedCalls } from '../../src/contracts/pipeline.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { scratchDir } from '../support/scratch.js';

let parses = 0;
const echo = defineTool({
  name: 'Echo',
  description: 'A stand-in that answers with its key and counts how often its input is parsed.',
  inputSchema: z.object({ key: z.string() }).superRefine(() => {
    parses += 1;
  }),
  readOnly: true,
  concurrentSafe: true,
  // Short enough to run as a local call, so Plan runs the group itself.
  timeout: { defaultMs: 10_000 },
  execute: (input) => Promise.resolve(`echo ${input.key}`),
});

async function plan(input: Omit<PlanCallsInput, 'session'>): Promise<PlannedCalls> {
  const cwd = await scratchDir('switchyard-plan-parses-');
  const activities = createActivities({
    registry: new ToolRegistry([echo]),
    defaultCwd: cwd,
    userSettingsDir: false,
    dataDir: cwd,
    localCalls: { maxTimeoutMs: 30_000, budgetMs: 1_000 },
  });
  return (await new MockActivityEnvironment().run(activities.planCalls, {
    session: { sessionId: 's', cwd },
    ...input,
  })) as PlannedCalls;
}

const calls = [
  { id: 'a', name: 'Echo', input: { key: 'one' } },
  { id: 'b', name: 'Echo', input: { key: 'two' } },
];

describe("Plan's parse of each call", () => {
  it('serves the Prepare and the run of its first group: one parse per call', async () => {
    parses = 0;
    const planned = await plan({
      calls,
      prepareFirstGroup: { hooksOffPath: true, postHooksOffPath: true },
      runFirstGroup: {
        turnId: 't',
        rules: { mode: 'default', rules: { allow: [], ask: [], deny: [] }, remembered: [] },
      },
    });
    expect(Object.keys(planned.ranFirstGroup ?? {})).toEqual(['a', 'b']);
    expect(parses).toBe(2);
  });
});
