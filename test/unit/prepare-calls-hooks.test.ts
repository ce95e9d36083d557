// The prepareCalls activity and the session's hooks: its look at the hook settings and the calls' validation, and
// what a PreToolUse hook that changes where a path leads does to the permission facts. The real Read tool, run
// through the activity in a mock activity context.
import { mkdir, symlink, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPrepareCalls } from '../../src/activities/prepare-calls.js';
import { expandPlan } from '../../src/contracts/compact-plan.js';
import type { PreparedCalls } from '../../src/contracts/pipeline.js';
import type { SessionHooks, SessionHooksOf } from '../../src/hooks/session-hooks.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { scratchDir } from '../support/scratch.js';

async function prepare(options: {
  registry: ToolRegistry;
  cwd: string;
  hooksOf: SessionHooksOf;
  calls: Array<{ id: string; name: string; input: unknown }>;
}): Promise<PreparedCalls> {
  const prepareCalls = createPrepareCalls({
    registry: options.registry,
    defaultCwd: options.cwd,
    hooksOf: options.hooksOf,
    workerIdentity: undefined,
    operatorRules: undefined,
    warn: () => undefined,
  });
  return (await new MockActivityEnvironment().run(prepareCalls, {
    session: { sessionId: 's', cwd: options.cwd },
    calls: options.calls,
  })) as PreparedCalls;
}

describe('prepareCalls and the session hooks', () => {
  it('resolves paths again after a PreToolUse hook: a link the hook retargets outside cwd is seen where it now leads', async () => {
    const root = await scratchDir('switchyard-prepare-hooks-');
    const cwd = path.join(root, 'work');
    await mkdir(cwd);
    await writeFile(path.join(cwd, 'a.txt'), 'inside\n');
    await writeFile(path.join(root, 'secret.txt'), 'outside\n');
    const link = path.join(cwd, 'link.txt');
    await symlink(path.join(cwd, 'a.txt'), link);
    const hooks: SessionHooks = {
      hooks: {
        preToolUse: [
          {
            matcher: 'Read',
            run: async () => {
              await unlink(link);
              await symlink(path.join(root, 'secret.txt'), link);
              return undefined;
            },
          },
        ],
      },
      untrustedSettingsFiles: [],
    };
    const calls = [{ id: 'r', name: 'Read', input: { file_path: 'link.txt' } }];
    const prepared = await prepare({
      registry: new ToolRegistry(builtinTools()),
      cwd,
      hooksOf: () => Promise.resolve(hooks),
      calls,
    });
    const [wire] = prepared.plans;
    if (wire === undefined) throw new Error('no plan');
    const plan = expandPlan(wire, calls[0] ?? { input: undefined });
    expect(plan).toMatchObject({ kind: 'ready', permission: { realPath: path.join(root, 'secret.txt') } });
  });

  it("validates the calls while the settings are still being looked at; PreToolUse hooks wait for the look's answer", async () => {
    const cwd = await scratchDir('switchyard-prepare-hooks-');
    const validated: string[] = [];
    const probe = defineTool({
      name: 'Probe',
      description: 'A test tool that records its validation.',
      inputSchema: z.object({ label: z.string() }),
      readOnly: true,
      validateInput(input) {
        validated.push(input.label);
        return Promise.resolve({ ok: true });
      },
      execute: () => Promise.resolve('probed'),
    });
    let answerLook: (answer: SessionHooks) => void = () => undefined;
    const look = new Promise<SessionHooks>((resolve) => {
      answerLook = resolve;
    });
    const hookSaw: string[] = [];
    const preparing = prepare({
      registry: new ToolRegistry([probe]),
      cwd,
      hooksOf: () => look,
      calls: [{ id: 'p', name: 'Probe', input: { label: 'first' } }],
    });
    for (let waited = 0; validated.length === 0 && waited < 2_000; waited += 10)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(validated).toEqual(['first']);
    expect(hookSaw).toEqual([]);
    answerLook({
      hooks: {
        preToolUse: [
          {
            run: (input) => {
              hookSaw.push(input.toolName);
              return undefined;
            },
          },
        ],
      },
      untrustedSettingsFiles: ['/w/.claude/settings.json'],
    });
    const prepared = await preparing;
    expect(hookSaw).toEqual(['Probe']);
    expect(prepared.plans[0]).toMatchObject({ kind: 'ready', callId: 'p' });
    expect(prepared.untrustedSettings).toEqual(['/w/.claude/settings.json']);
  });
});
