import { execFile } from 'node:child_process';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { scratchDir, uniqueName } from '../support/harness.js';
import { ownPackage, packedPackage } from '../support/snippets-package.js';

// The package as a user gets it (README, the walkthrough): `npm pack` (which builds dist/ through `prepare`), the
// tarball installed into an empty project from the npm cache (test/support/snippets-package.ts, shared with the
// snippet test), then plain `node` (ESM, no tsx) and a TypeScript consumer against the shipped .d.ts. Optional
// dependencies are left out, as a library user may: the client and worker must not need them.

const run = promisify(execFile);
const repoRoot = path.resolve('.');

/** A session with a tool defined in the consumer through `defineTool`, on a worker from `temporal-switchyard/worker`. */
const consumerScript = `
import { SwitchyardClient, toAnthropicTools } from 'temporal-switchyard';
import { NativeConnection, builtinTools, createSwitchyardWorker, defineTool, prebuiltWorkflowBundlePath } from 'temporal-switchyard/worker';
import { z } from 'zod';

const { TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: namespace, TASK_QUEUE: taskQueue, SESSION: session, DATA_DIR: dataDir } = process.env;
const shout = defineTool({
  name: 'Shout',
  description: 'Upper-cases a text.',
  inputSchema: z.strictObject({ text: z.string() }),
  readOnly: true,
  concurrentSafe: true,
  async execute(input) {
    return input.text.toUpperCase() + '!';
  },
});
const internal = await import('temporal-switchyard/dist/tools/builtin/bash.js').then(() => 'importable', (error) => error.code);
const connection = await NativeConnection.connect({ address });
const started = Date.now();
const worker = await createSwitchyardWorker({ connection, namespace, taskQueue, tools: [...builtinTools(), shout], dataDir, userSettingsDir: false });
const workerStartMs = Date.now() - started;
const client = await SwitchyardClient.connect({ address, namespace, taskQueue });
const turn = await worker.runUntil(() =>
  client.executeTurnWithStart(session, {
    turnId: 't1',
    calls: [
      { id: 'c1', name: 'Shout', input: { text: 'hello' } },
      { id: 'c2', name: 'Read', input: { file_path: new URL('./package.json', import.meta.url).pathname, limit: 2 } },
    ],
  }, { cwd: process.cwd() }),
);
await client.client.connection.close();
await connection.close();
console.log(JSON.stringify({ turn, workerStartMs, prebuiltWorkflowBundlePath, internal, tools: toAnthropicTools([shout]) }));
`;

/** Type-checked only: the public API as a TypeScript user writes against it. */
const consumerSource = `
import { SwitchyardClient, callsFromAnthropic, toAnthropicToolResults } from 'temporal-switchyard';
import type { ToolResult, TurnResult, SessionOptions } from 'temporal-switchyard';
import { createSwitchyardWorker, defineTool, ToolUseError } from 'temporal-switchyard/worker';
import type { SwitchyardHooks, Tool } from 'temporal-switchyard/worker';
import { toolSession } from 'temporal-switchyard/workflows';
import { z } from 'zod';

export const count: Tool = defineTool({
  name: 'Count',
  description: 'Counts characters.',
  inputSchema: z.strictObject({ text: z.string() }),
  async execute(input, context) {
    context.signal.throwIfAborted();
    if (input.text === '') throw new ToolUseError('empty');
    const length: number = input.text.length;
    return String(length);
  },
});

export const hooks: SwitchyardHooks = { preToolUse: [] };
export const options: SessionOptions = { cwd: '/tmp', permissionMode: 'default' };
export async function turn(client: SwitchyardClient): Promise<ToolResult[]> {
  const result: TurnResult = await client.executeTurnWithStart('s', { turnId: 't', calls: callsFromAnthropic([]) }, options);
  toAnthropicToolResults(result);
  return result.results;
}
export const workerFactory: typeof createSwitchyardWorker = createSwitchyardWorker;
export const workflow: typeof toolSession = toolSession;

// The declarations are precise, not any: each line below must be a type error.
// @ts-expect-error the input schema says text is a string
defineTool({ name: 'Bad', description: 'x', inputSchema: z.strictObject({ text: z.string() }), execute: async (input) => input.text * 2 });
// @ts-expect-error a status is a string union
export const status: number = ({} as ToolResult).status;
// @ts-expect-error no such permission mode
export const mode: SessionOptions = { permissionMode: 'yolo' };
// @ts-expect-error the worker needs a connection
export const noConnection = () => createSwitchyardWorker({});
`;

/** README.md and docs/*.md: the documents whose code blocks the snippet test runs. */
async function documents(): Promise<string[]> {
  const docs = (await readdir(path.join(repoRoot, 'docs'))).filter((name) => name.endsWith('.md')).sort();
  return Promise.all(
    ['README.md', ...docs.map((name) => path.join('docs', name))].map((file) =>
      readFile(path.join(repoRoot, file), 'utf8'),
    ),
  );
}

/** What the documents' TypeScript blocks import from the package: per entry point, the value and type-only names. */
async function readmeImports(): Promise<Map<string, { values: Set<string>; types: Set<string> }>> {
  const imports = new Map<string, { values: Set<string>; types: Set<string> }>();
  for (const text of await documents()) {
    for (const [, block = ''] of text.matchAll(/^```ts(?: [^\n]*)?\n([\s\S]*?)^```$/gm)) {
      for (const [, typeOnly, names = '', specifier = ''] of block.matchAll(
        /^import (type )?\{([^}]*)\} from '(temporal-switchyard(?:\/[a-z-]+)?)';$/gm,
      )) {
        const entry = imports.get(specifier) ?? { values: new Set<string>(), types: new Set<string>() };
        imports.set(specifier, entry);
        for (const name of names
          .split(',')
          .map((part) => part.trim())
          .filter((part) => part !== '')) {
          if (typeOnly !== undefined || name.startsWith('type ')) entry.types.add(name.replace(/^type /, ''));
          else entry.values.add(name);
        }
      }
    }
  }
  return imports;
}

/** The TypeScript errors of one file of the consumer project, checked against the installed package's .d.ts. */
async function typeCheck(project: string, file: string): Promise<string> {
  const config = path.join(project, `tsconfig.${file}.json`);
  await writeFile(
    config,
    JSON.stringify({
      // skipLibCheck as most projects set it (checking every dependency's .d.ts triples the time); the
      // expected-error lines of consumer.ts prove the shipped types are precise rather than any.
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        types: ['node'],
        skipLibCheck: true,
      },
      files: [file],
    }),
  );
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const output = await run(process.execPath, [tsc, '-p', config], { cwd: project }).then(
    () => '',
    (error: { stdout: string }) => error.stdout,
  );
  return output
    .split('\n')
    .filter((line) => /error TS\d+/.test(line))
    .join('\n');
}

/**
 * Every loop of docs/AGENT-LOOPS.md under plain node, from the installed package: the built-in Read tool exported to
 * each API, a model reply in each API's shape read back into Switchyard calls, a real turn on a real session, and the
 * results in the API's shape; the three stream assemblers fed each API's event stream through `serverSentEvents`, on
 * streaming turns.
 */
const loopsScript = `
import {
  SwitchyardClient, anthropicToolStream, callsFromAiSdk, callsFromAnthropic, callsFromGemini, callsFromOpenAI, callsFromOpenAIResponses,
  openAIChatToolStream, openAIResponsesToolStream, serverSentEvents, toAiSdkToolResults, toAiSdkTools, toAnthropicToolResults,
  toAnthropicTools, toGeminiFunctionResponses, toGeminiTools, toOpenAIChatTools, toOpenAIResponsesOutputs, toOpenAIResponsesTools,
  toOpenAIToolMessages,
} from 'temporal-switchyard';
import { NativeConnection, builtinTools, createSwitchyardWorker } from 'temporal-switchyard/worker';

const { TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: namespace, TASK_QUEUE: taskQueue, SESSION: sessionId, DATA_DIR: dataDir } = process.env;
const tools = builtinTools().filter((tool) => tool.name === 'Read');
const args = JSON.stringify({ file_path: new URL('./package.json', import.meta.url).pathname, limit: 2 });
/** A text/event-stream body as fetch gives it. */
const sse = (events) => new Response(events.map((data) => 'data: ' + JSON.stringify(data) + '\\n\\n').join('')).body;
const connection = await NativeConnection.connect({ address });
const worker = await createSwitchyardWorker({ connection, namespace, taskQueue, tools, dataDir, userSettingsDir: false });
const client = await SwitchyardClient.connect({ address, namespace, taskQueue });
const loops = await worker.runUntil(async () => {
  const session = await client.startSession(sessionId, { cwd: process.cwd() });
  const exported = {
    anthropic: toAnthropicTools(tools)[0].name,
    chat: toOpenAIChatTools(tools)[0].function.name,
    responses: toOpenAIResponsesTools(tools)[0].name,
    gemini: toGeminiTools(tools)[0].functionDeclarations[0].name,
    aiSdk: Object.keys(toAiSdkTools(tools)),
  };
  const results = {};
  let turn = await session.executeTurn({ turnId: 'anthropic', calls: callsFromAnthropic([{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: JSON.parse(args) }], { tools }) });
  results.anthropic = toAnthropicToolResults(turn);
  turn = await session.executeTurn({ turnId: 'chat', calls: callsFromOpenAI([{ id: 'call_1', function: { name: 'Read', arguments: args } }], { tools }) });
  results.chat = toOpenAIToolMessages(turn);
  turn = await session.executeTurn({ turnId: 'responses', calls: callsFromOpenAIResponses([{ type: 'function_call', id: 'fc_1', call_id: 'call_r', name: 'Read', arguments: args }], { tools }) });
  results.responses = toOpenAIResponsesOutputs(turn);
  const parts = [{ functionCall: { id: 'g1', name: 'Read', args: JSON.parse(args) } }];
  turn = await session.executeTurn({ turnId: 'gemini', calls: callsFromGemini(parts, { tools }) });
  results.gemini = toGeminiFunctionResponses(turn, { functionCalls: parts });
  const toolCalls = [{ type: 'tool-call', toolCallId: 'ai_1', toolName: 'Read', input: JSON.parse(args) }];
  turn = await session.executeTurn({ turnId: 'ai-sdk', calls: callsFromAiSdk(toolCalls, { tools }) });
  results.aiSdk = toAiSdkToolResults(turn, { toolCalls });

  const anthropic = anthropicToolStream({ turn: session.streamTurn('anthropic-stream'), tools });
  for await (const { data } of serverSentEvents(sse([
    { type: 'message_start', message: { id: 'msg_1', role: 'assistant', content: [] } },
    { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_s', name: 'Read', input: {} } },
    { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: args.slice(0, 10) } },
    { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: args.slice(10) } },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'tool_use' } },
    { type: 'message_stop' },
  ]))) await anthropic.push(JSON.parse(data));
  results.anthropicStream = toAnthropicToolResults(await anthropic.results());

  const chat = openAIChatToolStream({ turn: session.streamTurn('chat-stream'), tools });
  for await (const { data } of serverSentEvents(sse([
    { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_s', type: 'function', function: { name: 'Read', arguments: '' } }] } }] },
    { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: args } }] } }] },
    { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
  ]))) await chat.push(JSON.parse(data));
  results.chatStream = toOpenAIToolMessages(await chat.results());

  const responses = openAIResponsesToolStream({ turn: session.streamTurn('responses-stream'), tools });
  for await (const { data } of serverSentEvents(sse([
    { type: 'response.output_item.added', output_index: 0, item: { type: 'function_call', id: 'fc_s', call_id: 'call_rs', name: 'Read', arguments: '' } },
    { type: 'response.function_call_arguments.delta', item_id: 'fc_s', delta: args },
    { type: 'response.function_call_arguments.done', item_id: 'fc_s', arguments: args },
    { type: 'response.completed', response: { status: 'completed' } },
  ]))) await responses.push(JSON.parse(data));
  results.responsesStream = toOpenAIResponsesOutputs(await responses.results());
  return { exported, results };
});
await client.client.connection.close();
await connection.close();
console.log(JSON.stringify({ loops }));
`;

describe('the packed package, installed into an empty project', { timeout: 300_000 }, () => {
  let project: string;

  beforeAll(async () => {
    const packed = await packedPackage();
    expect(packed.files).toContain('dist/index.js');
    expect(packed.files).toContain('dist/index.d.ts');
    expect(packed.files).toContain('dist/workflow-bundle.js');
    expect(packed.files.filter((file) => file.startsWith('src/') || file.startsWith('test/'))).toEqual([]);
    project = packed.project;
  }, 600_000);

  it('runs a turn with a defineTool tool under plain node (ESM), from the prebuilt workflow bundle', async () => {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', consumerScript], {
      cwd: project,
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_NAMESPACE: inject('temporalNamespace'),
        TASK_QUEUE: uniqueName('package-tq'),
        SESSION: uniqueName('package-session'),
        DATA_DIR: await scratchDir('switchyard-package-data-'),
      },
    });
    // The SDK's own logs go to stdout too; the script's answer is the one JSON line.
    const out = JSON.parse(stdout.split('\n').find((line) => line.startsWith('{"turn"')) ?? '{}') as {
      turn: { results: Array<{ callId: string; status: string; modelContent: string }> };
      prebuiltWorkflowBundlePath: string;
      internal: string;
      tools: Array<{ name: string; input_schema: { properties: Record<string, unknown> } }>;
    };
    expect(out.turn.results.map((result) => [result.callId, result.status])).toEqual([
      ['c1', 'success'],
      ['c2', 'success'],
    ]);
    expect(out.turn.results[0]?.modelContent).toBe('HELLO!');
    expect(out.turn.results[1]?.modelContent).toContain('"name":"consumer"');
    expect(out.prebuiltWorkflowBundlePath).toBe(
      path.join(project, 'node_modules', ownPackage.name, 'dist', 'workflow-bundle.js'),
    );
    expect(out.internal).toBe('ERR_PACKAGE_PATH_NOT_EXPORTED');
    expect(out.tools[0]?.name).toBe('Shout');
    expect(Object.keys(out.tools[0]?.input_schema.properties ?? {})).toEqual(['text']);
  });

  it('exports every name the code blocks of README.md and docs/ import, under plain node and to TypeScript', async () => {
    const imports = await readmeImports();
    expect([...imports.keys()].sort()).toEqual([
      'temporal-switchyard',
      'temporal-switchyard/worker',
      'temporal-switchyard/workflows',
    ]);
    const rootValues = imports.get('temporal-switchyard')?.values ?? new Set<string>();
    const agentLoops = await readFile(path.join(repoRoot, 'docs', 'AGENT-LOOPS.md'), 'utf8');
    // The loops of docs/AGENT-LOOPS.md: each adapter named there (imported by a block, or in the text), and checked
    // below with the imported names.
    for (const name of [
      'callsFromOpenAIResponses',
      'toOpenAIResponsesOutputs',
      'toGeminiTools',
      'callsFromGemini',
      'toGeminiFunctionResponses',
      'toAiSdkTools',
      'callsFromAiSdk',
      'toAiSdkToolResults',
      'anthropicToolStream',
      'openAIChatToolStream',
      'openAIResponsesToolStream',
      'serverSentEvents',
    ]) {
      expect(agentLoops).toContain(name);
      rootValues.add(name);
    }
    // Values: plain node imports each entry point and finds each name defined.
    const entries = [...imports].map(([specifier, { values }]) => [specifier, [...values]] as const);
    const script = `
      const entries = ${JSON.stringify(entries)};
      const missing = [];
      for (const [specifier, names] of entries) {
        const module = await import(specifier);
        for (const name of names) if (module[name] === undefined) missing.push(specifier + ': ' + name);
      }
      console.log(JSON.stringify({ missing, count: entries.reduce((sum, [, names]) => sum + names.length, 0) }));
    `;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: project });
    const answer = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as { missing: string[]; count: number };
    expect(answer.missing).toEqual([]);
    expect(answer.count).toBe(entries.reduce((sum, [, names]) => sum + names.length, 0));
    expect(answer.count).toBeGreaterThanOrEqual(25);
    // Types (and the values as TypeScript sees them): the same imports type-checked against the shipped .d.ts.
    // Each name under an alias of its entry point's: one name may come from two entry points (ToolCall).
    const alias = (specifier: string): string => specifier.replace(/\W/g, '_');
    const local = (specifier: string, name: string): string => `${alias(specifier)}_${name}`;
    // A name one block imports as a value and another as a type is imported once, as a value.
    for (const { values, types } of imports.values()) for (const name of values) types.delete(name);
    const lines = [...imports].flatMap(([specifier, { values, types }]) => [
      ...(values.size === 0
        ? []
        : [
            `import { ${[...values].map((name) => `${name} as ${local(specifier, name)}`).join(', ')} } from '${specifier}';`,
            `export const values_${alias(specifier)} = [${[...values].map((name) => local(specifier, name)).join(', ')}];`,
          ]),
      ...(types.size === 0
        ? []
        : [
            `import type { ${[...types].map((name) => `${name} as ${local(specifier, name)}`).join(', ')} } from '${specifier}';`,
            `export type Types_${alias(specifier)} = [${[...types].map((name) => local(specifier, name)).join(', ')}];`,
          ]),
    ]);
    await writeFile(path.join(project, 'readme-imports.ts'), `${lines.join('\n')}\n`);
    expect(await typeCheck(project, 'readme-imports.ts')).toBe('');
  });

  it('runs every loop of docs/AGENT-LOOPS.md (Anthropic, Chat, Responses, Gemini, AI SDK, three stream assemblers)', async () => {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', loopsScript], {
      cwd: project,
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_NAMESPACE: inject('temporalNamespace'),
        TASK_QUEUE: uniqueName('package-loops-tq'),
        SESSION: uniqueName('package-loops'),
        DATA_DIR: await scratchDir('switchyard-package-data-'),
      },
    });
    const { loops } = JSON.parse(stdout.split('\n').find((line) => line.startsWith('{"loops"')) ?? '{}') as {
      loops: { exported: Record<string, unknown>; results: Record<string, unknown> };
    };
    expect(loops.exported).toEqual({
      anthropic: 'Read',
      chat: 'Read',
      responses: 'Read',
      gemini: 'Read',
      aiSdk: ['Read'],
    });
    // package.json's first lines, in each API's result shape, keyed by the id the model sent.
    const read: unknown = expect.stringContaining('"name":"consumer"');
    expect(loops.results).toMatchObject({
      anthropic: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: read }],
      chat: [{ role: 'tool', tool_call_id: 'call_1', content: read }],
      responses: [{ type: 'function_call_output', call_id: 'call_r', output: read }],
      gemini: [{ functionResponse: { id: 'g1', name: 'Read', response: { output: read } } }],
      aiSdk: [{ type: 'tool-result', toolCallId: 'ai_1', toolName: 'Read', output: { type: 'text', value: read } }],
      anthropicStream: [{ type: 'tool_result', tool_use_id: 'toolu_s', content: read }],
      chatStream: [{ role: 'tool', tool_call_id: 'call_s', content: read }],
      responsesStream: [{ type: 'function_call_output', call_id: 'call_rs', output: read }],
    });
  });

  it('runs the switchyard command from node_modules/.bin with plain node', async () => {
    const { stdout } = await run(path.join(project, 'node_modules', '.bin', 'switchyard'), ['help'], { cwd: project });
    expect(stdout).toContain('Usage: switchyard <command>');
  });

  it('`worker --tools tool.ts` without tsx beside it is a usage error that says what to install (not Node\'s "Unknown file extension")', async () => {
    const module = path.join(project, 'my-tool.ts');
    await writeFile(module, 'export const nothing: number = 1;\n');
    const failure = await run(path.join(project, 'node_modules', '.bin', 'switchyard'), ['worker', '--tools', module], {
      cwd: project,
      timeout: 60_000,
    }).then(
      () => undefined,
      (error: { code: number | string; stderr: string }) => error,
    );
    expect(failure?.code).toBe(2);
    expect(failure?.stderr).toContain(
      `--tools ${module} is TypeScript, which Node runs only through tsx: install it beside your project (npm install --save-dev tsx) or pass the compiled .js file`,
    );
  });

  it('runs `switchyard dev` without the optional dependencies: JSON logs, and it says what to install', async () => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      SWITCHYARD_LOG_FORMAT: 'pretty',
      HOME: await scratchDir('switchyard-package-home-'),
    };
    delete env.TEMPORAL_ADDRESS;
    const failure = await run(path.join(project, 'node_modules', '.bin', 'switchyard'), ['dev', '--headless'], {
      cwd: project,
      env,
      timeout: 60_000,
    }).then(
      () => undefined,
      (error: { code: number | string; stdout: string; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    // The failure is one readable line on stderr that says what to install.
    expect(failure?.stderr).toMatch(
      /switchyard: `switchyard dev` needs the optional dependency @temporalio\/testing; install it/,
    );
    // pino-pretty is not installed, so "pretty" falls back to JSON lines: whatever the worker logged is JSON.
    for (const line of (failure?.stdout ?? '').split('\n').filter((text) => text.trim() !== ''))
      expect(() => JSON.parse(line) as unknown, line).not.toThrow();
  });

  it('type-checks a TypeScript consumer against the shipped .d.ts', async () => {
    await writeFile(path.join(project, 'consumer.ts'), consumerSource);
    expect(await typeCheck(project, 'consumer.ts')).toBe('');
  });
});
