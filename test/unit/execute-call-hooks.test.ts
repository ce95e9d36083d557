// The executeCall activity and its look at the session's hook settings: the tool starts without waiting for it, and
// the post hooks still come from it. The real Write tool, run through the activity in a mock activity context.
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createExecuteCall } from '../../src/activities/execute-call.js';
import { prepareCall } from '../../src/activities/prepare-call.js';
import { executionPlan } from '../../src/contracts/pipeline.js';
import type { CallOutcome } from '../../src/contracts/pipeline.js';
import type { SessionHooks, SessionHooksOf } from '../../src/hooks/session-hooks.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { scratchDir } from '../support/scratch.js';

const exists = (file: string): Promise<boolean> =>
  access(file).then(
    () => true,
    () => false,
  );

describe('executeCall and the hook settings', () => {
  it('starts the tool while the settings are still being looked at, and runs the post hooks from that look', async () => {
    const cwd = await scratchDir('switchyard-execute-hooks-');
    const registry = new ToolRegistry(builtinTools());
    const call = { id: 'w', name: 'Write', input: { file_path: 'made.txt', content: 'hello\n' } };
    const plan = await prepareCall({ registry, call, context: { sessionId: 's', cwd, allowRules: [], denyRules: [] } });
    if (plan.kind !== 'ready') throw new Error(`not prepared: ${JSON.stringify(plan)}`);

    let answerLook: (answer: SessionHooks) => void = () => undefined;
    const look = new Promise<SessionHooks>((resolve) => {
      answerLook = resolve;
    });
    const postHookSaw: string[] = [];
    const hooksOf: SessionHooksOf = () => look;
    const executeCall = createExecuteCall({
      dependencies: { registry, gates: new Map(), artifacts: undefined, dataDir: cwd },
      hooksOf,
    });
    const running = new MockActivityEnvironment().run(executeCall, {
      session: { sessionId: 's' },
      turnId: 't',
      cwd,
      plan: executionPlan(plan),
    });
    const made = path.join(cwd, 'made.txt');
    for (let waited = 0; !(await exists(made)) && waited < 5_000; waited += 10)
      await new Promise((resolve) => setTimeout(resolve, 10));
    // The file is written while the look has not answered.
    expect(await readFile(made, 'utf8')).toBe('hello\n');
    answerLook({
      hooks: {
        postToolUse: [
          {
            run: (input) => {
              postHookSaw.push(input.toolName);
              return { additionalContext: 'post hook ran' };
            },
          },
        ],
      },
      untrustedSettingsFiles: [],
    });
    const outcome = (await running) as CallOutcome;
    expect(outcome.status).toBe('success');
    expect(postHookSaw).toEqual(['Write']);
    expect(outcome.hookContext).toEqual(['post hook ran']);
  });

  // The look's own work on the activity's thread (a `stat` per settings file) comes after the tool has started, so an
  // approved call starts that much sooner. A stand-in tool of its own name records when its handler begins.
  it('begins the look only once the tool has started', async () => {
    const cwd = await scratchDir('switchyard-execute-hooks-');
    const order: string[] = [];
    const startMarker = defineTool({
      name: 'StartMarker',
      description: 'Records that its handler began.',
      inputSchema: z.object({}),
      execute() {
        order.push('tool started');
        return Promise.resolve('ok');
      },
    });
    const registry = new ToolRegistry([...builtinTools(), startMarker]);
    const call = { id: 'm', name: 'StartMarker', input: {} };
    const plan = await prepareCall({ registry, call, context: { sessionId: 's', cwd, allowRules: [], denyRules: [] } });
    if (plan.kind !== 'ready') throw new Error(`not prepared: ${JSON.stringify(plan)}`);
    const hooksOf: SessionHooksOf = () => {
      order.push('look');
      return Promise.resolve({ hooks: {}, untrustedSettingsFiles: [] });
    };
    const executeCall = createExecuteCall({
      dependencies: { registry, gates: new Map(), artifacts: undefined, dataDir: cwd },
      hooksOf,
    });
    const outcome = (await new MockActivityEnvironment().run(executeCall, {
      session: { sessionId: 's' },
      turnId: 't',
      cwd,
      plan: executionPlan(plan),
    })) as CallOutcome;
    expect(outcome.status).toBe('success');
    expect(order).toEqual(['tool started', 'look']);
  });
});
