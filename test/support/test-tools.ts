import { appendFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { ToolUseError, defineTool } from '../../src/tools/define-tool.js';
import type { Tool } from '../../src/tools/define-tool.js';
import { pathEscapeReason, resolveToolPath } from '../../src/tools/paths.js';
import { readTool } from '../../src/tools/builtin/read.js';

/**
 * Tools with the flags the grouping examples assume (docs/SEMANTICS.md, Grouping), implemented small so the
 * workflow's behaviour can be tested before the real built-ins exist.
 */

export const abortableSleep = (ms: number, signal: AbortSignal) => sleep(ms, undefined, { signal });

export const sleepTool = defineTool({
  name: 'Sleep',
  description: 'Sleeps, then answers its label.',
  inputSchema: z.object({ ms: z.number().int().min(0), label: z.string().optional() }),
  concurrentSafe: true,
  readOnly: true,
  async execute(input, context) {
    await abortableSleep(input.ms, context.signal);
    return input.label ?? `slept ${input.ms}`;
  },
});

export const blockingSleepTool = defineTool({
  name: 'BlockingSleep',
  description: 'Sleeps and cannot be interrupted.',
  inputSchema: z.object({ ms: z.number().int().min(0) }),
  concurrentSafe: true,
  readOnly: true,
  interruptBehavior: 'block',
  async execute(input) {
    await sleep(input.ms);
    return `blocked for ${input.ms}`;
  },
});

/** Appends to a file: exclusive, not idempotent, edits files; for approvals and at-most-once checks. */
export const fakeEditTool = defineTool({
  name: 'FakeEdit',
  description: 'Appends text to a file (a stand-in that edits files; not the built-in Edit).',
  inputSchema: z.object({ file_path: z.string(), text: z.string().default('x\n'), delay_ms: z.number().optional() }),
  editsFiles: true,
  ruleKind: 'path',
  ruleContent: (input) => input.file_path,
  summarize: (input) => input.file_path,
  resolveInput: (input, context) => ({ ...input, file_path: resolveToolPath(context.cwd, input.file_path) }),
  async validateInput(input, context) {
    const escape = await pathEscapeReason(context.cwd, resolveToolPath(context.cwd, input.file_path));
    return escape === undefined ? { ok: true } : { ok: false, message: escape };
  },
  prepareApproval: (input) => ({ preview: `append ${JSON.stringify(input.text)} to ${input.file_path}` }),
  async execute(input, context) {
    if (input.delay_ms !== undefined) await abortableSleep(input.delay_ms, context.signal);
    await appendFile(input.file_path, input.text);
    return `appended to ${input.file_path}`;
  },
});

export const fakeFetchTool = defineTool({
  name: 'FakeFetch',
  description: 'Pretends to fetch a URL (a stand-in; not the built-in WebFetch).',
  inputSchema: z.object({ url: z.string() }),
  concurrentSafe: true,
  readOnly: true,
  ruleKind: 'url',
  ruleContent: (input) => input.url,
  async execute(input) {
    return `fetched ${input.url}`;
  },
});

const READ_ONLY_COMMANDS = /^(ls|cat|git (log|status|diff))(\s|$)/;

/** Not the built-in Bash: its own read-only list (it calls `git log` read-only, which the real classifier does not). */
export const fakeShellTool = defineTool({
  name: 'FakeShell',
  description: 'Pretends to run a command; "fail" fails, "throw-classifier" makes the classifier throw.',
  inputSchema: z.object({ command: z.string() }),
  concurrentSafe: (input) => {
    if (input.command === 'throw-classifier') throw new Error('cannot parse');
    return READ_ONLY_COMMANDS.test(input.command);
  },
  readOnly: (input) => READ_ONLY_COMMANDS.test(input.command),
  ruleKind: 'command',
  ruleContent: (input) => input.command,
  summarize: (input) => input.command,
  async execute(input) {
    if (input.command === 'fail') throw new Error('command failed with exit code 1');
    return `ran ${input.command}`;
  },
});

/** Ends the turn on success, as the built-in submit_result does, under a name of its own. */
export const fakeSubmitTool = defineTool({
  name: 'FakeSubmit',
  description: 'Ends the turn on success.',
  inputSchema: z.object({ result: z.unknown() }),
  stopTurnOnSuccess: true,
  timeout: { kind: 'none' },
  sideEffectScope: 'session',
  readOnly: true,
  async execute(input) {
    return JSON.stringify(input.result);
  },
});

/** Sets a session-state key after a delay: shows context modifiers apply in call order. */
export const setStateTool = defineTool({
  name: 'SetState',
  description: 'Sets a session-state key.',
  inputSchema: z.object({ key: z.string(), value: z.unknown(), delay_ms: z.number().default(0) }),
  concurrentSafe: true,
  readOnly: true,
  readsSessionState: true,
  async execute(input, context) {
    await abortableSleep(input.delay_ms, context.signal);
    return {
      content: `saw ${JSON.stringify(context.sessionState[input.key] ?? null)}`,
      sessionState: { [input.key]: input.value },
    };
  },
});

export const businessFailureTool = defineTool({
  name: 'Refuse',
  description: 'Always fails with a business error.',
  inputSchema: z.object({}),
  concurrentSafe: true,
  readOnly: true,
  async execute() {
    throw new ToolUseError('nothing to do here');
  },
});

export const slowTool = defineTool({
  name: 'Slow',
  description: 'Sleeps past its 200 ms deadline.',
  inputSchema: z.object({}),
  readOnly: true,
  concurrentSafe: true,
  timeout: { defaultMs: 200 },
  async execute(_input, context) {
    await abortableSleep(5_000, context.signal);
    return 'never';
  },
});

/** The ledger stand-in under a name of its own, to sit beside the real built-in Edit (the fault runs' tool set). */
export const ledgerAppendTool: Tool = {
  ...fakeEditTool,
  name: 'LedgerAppend',
  description: 'Appends text to a file: not idempotent (test ledger).',
};

export function testTools(): Tool[] {
  return [
    readTool,
    sleepTool,
    blockingSleepTool,
    fakeEditTool,
    fakeFetchTool,
    fakeShellTool,
    fakeSubmitTool,
    setStateTool,
    businessFailureTool,
    slowTool,
    gatedWorkTool,
    appendThenWaitTool,
    bigOutputTool,
    badOutputTool,
  ];
}

/** Waits at the `model` admission gate, then holds the permit while it works for `work_ms`. */
export const gatedWorkTool = defineTool({
  name: 'GatedWork',
  description: 'Holds an admission permit while working.',
  inputSchema: z.object({
    work_ms: z.number().int().min(0),
    timeout_ms: z.number().int().positive().optional(),
    label: z.string(),
  }),
  concurrentSafe: true,
  readOnly: true,
  timeout: { defaultMs: 10_000, allowCallOverride: true },
  async execute(input, context) {
    return context.admit('model', async () => {
      await abortableSleep(input.work_ms, context.signal);
      return `${input.label} done`;
    });
  },
});

/** Not idempotent: appends a line at once, then works for a long time (for the lost-worker test). */
export const appendThenWaitTool = defineTool({
  name: 'AppendThenWait',
  description: 'Appends to a file, then waits.',
  inputSchema: z.object({ file_path: z.string(), wait_ms: z.number().int().min(0) }),
  editsFiles: true,
  async execute(input, context) {
    await appendFile(input.file_path, 'ran\n');
    await abortableSleep(input.wait_ms, context.signal);
    return 'finished';
  },
});

/** Returns `size` characters of output. */
export const bigOutputTool = defineTool({
  name: 'BigOutput',
  description: 'Produces a large output.',
  inputSchema: z.object({ size: z.number().int().min(0), char: z.string().length(1).default('z') }),
  concurrentSafe: true,
  readOnly: true,
  async execute(input) {
    return Array.from({ length: Math.ceil(input.size / 100) }, () => `${input.char.repeat(99)}\n`)
      .join('')
      .slice(0, input.size);
  },
});

/** Returns structured data that breaks its own output schema. */
export const badOutputTool = defineTool({
  name: 'BadOutput',
  description: 'Returns data that fails its output schema.',
  inputSchema: z.object({}),
  outputSchema: z.object({ count: z.number() }),
  concurrentSafe: true,
  readOnly: true,
  async execute() {
    return { content: 'count is many', data: { count: 'many' } };
  },
});
