// What a Prepare sends back of each call's input: nothing when the resolved input is the call's own (the workflow
// takes it from the call), the resolved input when it differs. The real Read (its path is resolved against cwd) and a
// stand-in tool that resolves nothing, run through the activity in a mock activity context.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPrepareCalls } from '../../src/activities/prepare-calls.js';
import { expandPlan } from '../../src/contracts/compact-plan.js';
import type { PreparedCalls } from '../../src/contracts/pipeline.js';
import type { ToolCall } from '../../src/contracts/tool-call.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { inputDigest } from '../../src/activities/digest.js';
import { scratchDir } from '../support/scratch.js';

const lookup = defineTool({
  name: 'Lookup',
  description: 'A stand-in whose input is used as given.',
  inputSchema: z.object({ key: z.string(), options: z.object({ exact: z.boolean(), limit: z.number() }).optional() }),
  readOnly: true,
  execute: (input) => Promise.resolve(input.key),
});

async function prepare(cwd: string, calls: ToolCall[]): Promise<PreparedCalls> {
  const prepareCalls = createPrepareCalls({
    registry: new ToolRegistry([...builtinTools(), lookup]),
    defaultCwd: cwd,
    hooksOf: () => Promise.resolve({ hooks: {}, untrustedSettingsFiles: [] }),
    workerIdentity: undefined,
    operatorRules: undefined,
    warn: () => undefined,
  });
  return (await new MockActivityEnvironment().run(prepareCalls, {
    session: { sessionId: 's', cwd },
    calls,
    compactPlans: true as const,
  })) as PreparedCalls;
}

describe('the input a Prepare sends back', () => {
  it('leaves out an input equal to the call’s own (keys in any order, or as a JSON string), sends one that differs', async () => {
    const cwd = await scratchDir('switchyard-prepare-input-');
    await writeFile(path.join(cwd, 'a.txt'), 'a\n');
    const calls: ToolCall[] = [
      { id: 'same', name: 'Lookup', input: { key: 'k', options: { limit: 2, exact: true } } },
      { id: 'text', name: 'Lookup', input: '{"options":{"exact":false,"limit":1},"key":"j"}' },
      { id: 'r', name: 'Read', input: { file_path: 'a.txt' } },
    ];
    const prepared = await prepare(cwd, calls);
    const wires = prepared.plans.map((plan) => plan as unknown as Record<string, unknown>);
    expect(wires.map((wire) => 'input' in wire)).toEqual([false, false, true]);
    const plans = prepared.plans.map((wire, index) => expandPlan(wire, calls[index] ?? { input: undefined }));
    expect(plans[0]).toMatchObject({ kind: 'ready', input: { key: 'k', options: { exact: true, limit: 2 } } });
    expect(plans[1]).toMatchObject({ kind: 'ready', input: { key: 'j', options: { exact: false, limit: 1 } } });
    expect(plans[2]).toMatchObject({ kind: 'ready', input: { file_path: path.join(cwd, 'a.txt') } });
    // The digest is the resolved input's, whichever way the input travels.
    for (const plan of plans) if (plan.kind === 'ready') expect(plan.inputDigest).toBe(inputDigest(plan.input));
  });
});
