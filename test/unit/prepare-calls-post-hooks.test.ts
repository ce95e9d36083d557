// The prepareCalls activity marks the calls that PostToolUse (or PostToolUseFailure) command hooks match, when the
// workflow asks (`postHooksOffPath`): such a call runs as a regular activity, never a local one (`runsLocally`).
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { createPrepareCalls } from '../../src/activities/prepare-calls.js';
import { expandPlan } from '../../src/contracts/compact-plan.js';
import type { WireCallPlan } from '../../src/contracts/compact-plan.js';
import { runsLocally } from '../../src/contracts/local-calls.js';
import type { PreparedCalls } from '../../src/contracts/pipeline.js';
import { commandHooks } from '../../src/hooks/command-hooks.js';
import type { SwitchyardHooks } from '../../src/hooks/types.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { scratchDir } from '../support/scratch.js';

async function prepare(cwd: string, hooks: SwitchyardHooks, asked: boolean): Promise<PreparedCalls> {
  const prepareCalls = createPrepareCalls({
    registry: new ToolRegistry(builtinTools()),
    defaultCwd: cwd,
    hooksOf: () => Promise.resolve({ hooks, untrustedSettingsFiles: [] }),
    workerIdentity: undefined,
    operatorRules: undefined,
    warn: () => undefined,
  });
  return (await new MockActivityEnvironment().run(prepareCalls, {
    session: { sessionId: 's', cwd },
    calls: [
      { id: 'read', name: 'Read', input: { file_path: 'a.txt' } },
      { id: 'glob', name: 'Glob', input: { pattern: '*.txt' } },
    ],
    ...(asked ? { postHooksOffPath: true as const } : {}),
  })) as PreparedCalls;
}

const marks = (prepared: PreparedCalls): Array<[string, boolean]> =>
  prepared.plans.map((plan: WireCallPlan) => [
    plan.callId,
    plan.kind === 'ready' && 'postToolUseHooks' in plan && plan.postToolUseHooks === true,
  ]);

describe('prepareCalls marks the calls PostToolUse command hooks match', () => {
  const settings = (event: 'PostToolUse' | 'PostToolUseFailure') => ({
    hooks: { [event]: [{ matcher: 'Read', hooks: [{ type: 'command' as const, command: 'true' }] }] },
  });

  it('marks a call a PostToolUse or PostToolUseFailure command hook matches, and no other, when asked', async () => {
    const cwd = await scratchDir('switchyard-post-marks-');
    await writeFile(path.join(cwd, 'a.txt'), 'alpha\n');
    for (const event of ['PostToolUse', 'PostToolUseFailure'] as const) {
      const prepared = await prepare(cwd, commandHooks(settings(event)), true);
      expect(marks(prepared)).toEqual([
        ['read', true],
        ['glob', false],
      ]);
      const [read, glob] = prepared.plans.map((plan) => expandPlan(plan, { input: undefined }));
      const policy = { maxTimeoutMs: 30_000, budgetMs: 1_000 };
      if (read?.kind !== 'ready' || glob?.kind !== 'ready') throw new Error('not ready');
      expect(runsLocally(read, policy)).toBe(false);
      expect(runsLocally(glob, policy)).toBe(true);
    }
  });

  it('marks nothing when not asked (histories before the patch), nor for in-process hooks given to the worker', async () => {
    const cwd = await scratchDir('switchyard-post-marks-');
    await writeFile(path.join(cwd, 'a.txt'), 'alpha\n');
    expect(marks(await prepare(cwd, commandHooks(settings('PostToolUse')), false))).toEqual([
      ['read', false],
      ['glob', false],
    ]);
    const inProcess: SwitchyardHooks = { postToolUse: [{ matcher: 'Read', run: () => undefined }] };
    expect(marks(await prepare(cwd, inProcess, true))).toEqual([
      ['read', false],
      ['glob', false],
    ]);
  });
});
