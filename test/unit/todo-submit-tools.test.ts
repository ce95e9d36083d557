import { describe, expect, it } from 'vitest';
import { prepareCall } from '../../src/activities/prepare-call.js';
import type { ReadyCallPlan } from '../../src/contracts/call-plan.js';
import type { ToolOutputObject } from '../../src/tools/define-tool.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { submitResultTool } from '../../src/tools/builtin/submit-result.js';
import { todoWriteTool } from '../../src/tools/builtin/todo-write.js';
import { toolContext } from '../support/tool-context.js';

const registry = new ToolRegistry([todoWriteTool, submitResultTool]);
const cwd = '/nonexistent-cwd';
const prepare = (name: string, input: unknown) =>
  prepareCall({
    registry,
    call: { id: 'c', name, input },
    context: { sessionId: 's', cwd, allowRules: [], denyRules: [] },
  });
const rejectedContent = (plan: Awaited<ReturnType<typeof prepare>>): string =>
  plan.kind === 'rejected' ? plan.modelContent : `not rejected: ${JSON.stringify(plan)}`;

describe('TodoWrite', () => {
  const todos = [
    { content: 'Write the parser', status: 'completed', activeForm: 'Writing the parser' },
    { content: 'Run the tests', status: 'in_progress', activeForm: 'Running the tests', id: '2' },
    { content: 'Update the docs', status: 'pending' },
  ];

  it('plans an exclusive session-scope call that needs no approval, with a 30 s deadline', async () => {
    const plan = await prepare('TodoWrite', { todos });
    expect(plan).toMatchObject({
      kind: 'ready',
      toolName: 'TodoWrite',
      flags: {
        concurrentSafe: false,
        readOnly: false,
        declaredReadOnly: true,
        destructive: false,
        sideEffectScope: 'session',
        idempotent: true,
      },
      summary: 'TodoWrite: 3 todos: 1 completed, 1 in progress, 1 pending',
      timeoutMs: 30_000,
      stopTurnOnSuccess: false,
    });
  });

  it('replaces the todo list through the session-state modifier and summarizes the counts', async () => {
    const plan = (await prepare('TodoWrite', {
      todos: [...todos, { content: 'Ship it', status: 'pending', priority: 'high' }],
    })) as ReadyCallPlan;
    const output = (await todoWriteTool.execute(plan.input, toolContext({ cwd }))) as ToolOutputObject;
    expect(output.content).toBe(
      'Todos have been modified successfully. 4 todos: 1 completed, 1 in progress, 2 pending. ' +
        'Keep using the todo list to track your progress, and proceed with the current tasks if applicable.',
    );
    // Another CLI's `priority` key is dropped, not stored.
    expect(output.sessionState).toEqual({ todos: [...todos, { content: 'Ship it', status: 'pending' }] });
    expect(output.isError).toBeUndefined();
  });

  it('accepts an empty list, which clears the todos', async () => {
    const plan = (await prepare('TodoWrite', { todos: [] })) as ReadyCallPlan;
    expect(plan.kind).toBe('ready');
    const output = (await todoWriteTool.execute(plan.input, toolContext({ cwd }))) as ToolOutputObject;
    expect(output.sessionState).toEqual({ todos: [] });
    expect(output.content).toContain('0 todos: the list is empty');
  });

  it('refuses more than one in_progress item in validateInput', async () => {
    const plan = await prepare('TodoWrite', { todos: [...todos, { content: 'Fix the bug', status: 'in_progress' }] });
    expect(plan).toMatchObject({ kind: 'rejected', stage: 'validation', errorCode: 'multiple_in_progress' });
    expect(rejectedContent(plan)).toBe(
      '<tool_use_error>At most one todo may be in_progress at a time; 2 are: "Run the tests", "Fix the bug"</tool_use_error>',
    );
  });

  it('refuses a list of more than 100 items, naming the limit', async () => {
    const many = Array.from({ length: 101 }, (_, index) => ({ content: `Task ${index}`, status: 'pending' }));
    const plan = await prepare('TodoWrite', { todos: many });
    expect(plan).toMatchObject({ kind: 'rejected', stage: 'validation', errorCode: 'todo_list_too_large' });
    expect(rejectedContent(plan)).toBe(
      '<tool_use_error>The todo list has 101 items; at most 100 are allowed (SWITCHYARD_TODO_MAX_ITEMS). Merge or remove items and send the whole list again.</tool_use_error>',
    );
    expect((await prepare('TodoWrite', { todos: many.slice(0, 100) })).kind).toBe('ready');
  });

  it('refuses a list whose text exceeds 20,000 characters, naming the limit', async () => {
    const long = [
      { content: 'x'.repeat(15_000), status: 'pending' },
      { content: 'y'.repeat(4_000), status: 'pending', activeForm: 'z'.repeat(1_001) },
    ];
    const plan = await prepare('TodoWrite', { todos: long });
    expect(plan).toMatchObject({ kind: 'rejected', stage: 'validation', errorCode: 'todo_list_too_large' });
    expect(rejectedContent(plan)).toBe(
      '<tool_use_error>The todo list holds 20,001 characters of text; at most 20,000 are allowed (SWITCHYARD_TODO_MAX_CHARS). Shorten the items and send the whole list again.</tool_use_error>',
    );
  });

  it('follows SWITCHYARD_TODO_MAX_ITEMS', async () => {
    process.env.SWITCHYARD_TODO_MAX_ITEMS = '2';
    try {
      expect(rejectedContent(await prepare('TodoWrite', { todos }))).toMatch(
        /The todo list has 3 items; at most 2 are allowed/,
      );
    } finally {
      delete process.env.SWITCHYARD_TODO_MAX_ITEMS;
    }
  });

  it('refuses a bad status, an empty content and a missing list in the schema', async () => {
    for (const input of [
      { todos: [{ content: 'x', status: 'done' }] },
      { todos: [{ content: '', status: 'pending' }] },
      {},
    ]) {
      const plan = await prepare('TodoWrite', input);
      expect(plan, JSON.stringify(input)).toMatchObject({ kind: 'rejected', errorCode: 'input_validation' });
      expect(rejectedContent(plan)).toMatch(/^<tool_use_error>InputValidationError: todos/);
    }
  });
});

describe('submit_result', () => {
  it('plans an exclusive call without deadline that needs no approval and stops the turn', async () => {
    const plan = await prepare('submit_result', { result: { ok: true } });
    expect(plan).toMatchObject({
      kind: 'ready',
      toolName: 'submit_result',
      flags: { concurrentSafe: false, readOnly: false, declaredReadOnly: true, sideEffectScope: 'session' },
      stopTurnOnSuccess: true,
    });
    expect(plan.kind === 'ready' && 'timeoutMs' in plan).toBe(false);
    expect(submitResultTool.timeout).toEqual({ kind: 'none' });
  });

  it('returns a string result as it is and anything else as JSON', async () => {
    const run = async (result: unknown): Promise<unknown> => {
      const plan = (await prepare('submit_result', { result })) as ReadyCallPlan;
      expect(plan.kind).toBe('ready');
      return submitResultTool.execute(plan.input, toolContext({ cwd }));
    };
    expect(await run('All 12 tests pass.')).toBe('All 12 tests pass.');
    expect(await run({ files: ['a.ts'], passed: 12 })).toBe('{\n  "files": [\n    "a.ts"\n  ],\n  "passed": 12\n}');
    expect(await run(null)).toBe('null');
    expect(await run(0)).toBe('0');
    expect(await run('')).toBe('');
  });

  it('requires result, even when the key is present with no value', async () => {
    for (const input of [{}, { result: undefined }, '{}']) {
      const plan = await prepare('submit_result', input);
      expect(plan, JSON.stringify(input)).toMatchObject({
        kind: 'rejected',
        stage: 'validation',
        errorCode: 'input_validation',
      });
      expect(rejectedContent(plan)).toMatch(/^<tool_use_error>InputValidationError: result: /);
    }
    expect(submitResultTool.inputSchema.safeParse({ result: undefined }).success).toBe(false);
    expect((await prepare('submit_result', { result: 'x', extra: 1 })).kind).toBe('rejected');
  });
});
