import { describe, expect, it } from 'vitest';
import { wordCountTool } from '../../examples/word-count-tool.js';
import { prepareCall } from '../../src/activities/prepare-call.js';
import type { ReadyCallPlan } from '../../src/contracts/call-plan.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { toolContext } from '../support/tool-context.js';

describe('the README custom tool example', () => {
  const registry = new ToolRegistry([wordCountTool]);
  const prepare = (input: unknown) => prepareCall({ registry, call: { id: 'c', name: 'WordCount', input }, context: { sessionId: 's', cwd: '/tmp', allowRules: [], denyRules: [] } });

  it('plans a concurrent, read-only call and counts words', async () => {
    const plan = await prepare({ text: 'three little words' });
    expect(plan).toMatchObject({ kind: 'ready', flags: { concurrentSafe: true, readOnly: true }, summary: 'WordCount: 18 characters', timeoutMs: 5_000 });
    expect(await wordCountTool.execute((plan as ReadyCallPlan).input, toolContext({ cwd: '/tmp' }))).toBe('3 words');
  });

  it('rejects bad input and reports a business failure', async () => {
    expect((await prepare({ text: 3 })).kind).toBe('rejected');
    await expect(wordCountTool.execute({ text: '   ' }, toolContext({ cwd: '/tmp' }))).rejects.toThrow('The text has no words.');
  });
});
