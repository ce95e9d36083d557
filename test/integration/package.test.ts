import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { scratchDir, uniqueName } from '../support/harness.js';

// README "Install": the package as a user gets it. `npm pack` (which builds dist/ through `prepare`), the tarball
// installed into an empty project from the npm cache, then plain `node` (ESM, no tsx) and a TypeScript consumer
// against the shipped .d.ts. Optional dependencies are left out, as a library user may: the client and worker must
// not need them.

const run = promisify(execFile);
const repoRoot = path.resolve('.');
const ownPackage = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')) as {
  name: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const npm = (args: string[], cwd: string) => run('npm', args, { cwd, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' } });

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
const internal = await import('temporal-switchyard/dist/tools/bash.js').then(() => 'importable', (error) => error.code);
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

describe('the packed package, installed into an empty project', { timeout: 300_000 }, () => {
  let project: string;

  beforeAll(async () => {
    const scratch = await scratchDir('switchyard-package-');
    const packed = JSON.parse((await npm(['pack', '--json', '--pack-destination', scratch], repoRoot)).stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const tarball = path.join(scratch, packed[0]?.filename ?? '');
    const files = packed[0]?.files.map((file) => file.path) ?? [];
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/index.d.ts');
    expect(files).toContain('dist/workflow-bundle.js');
    expect(files.filter((file) => file.startsWith('src/') || file.startsWith('test/'))).toEqual([]);
    project = path.join(scratch, 'consumer');
    await mkdir(project);
    await writeFile(
      path.join(project, 'package.json'),
      JSON.stringify({
        name: 'consumer',
        private: true,
        type: 'module',
        dependencies: { [ownPackage.name]: `file:${tarball}`, zod: ownPackage.dependencies.zod },
        devDependencies: { '@types/node': ownPackage.devDependencies['@types/node'] },
      }),
    );
    // From the npm cache (the suite's own `npm ci` filled it); the registry only for what the cache lacks.
    await npm(['install', '--prefer-offline', '--omit=optional', '--no-package-lock'], project);
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
    expect(out.prebuiltWorkflowBundlePath).toBe(path.join(project, 'node_modules', ownPackage.name, 'dist', 'workflow-bundle.js'));
    expect(out.internal).toBe('ERR_PACKAGE_PATH_NOT_EXPORTED');
    expect(out.tools[0]?.name).toBe('Shout');
    expect(Object.keys(out.tools[0]?.input_schema.properties ?? {})).toEqual(['text']);
  });

  it('runs the switchyard command from node_modules/.bin with plain node', async () => {
    const { stdout } = await run(path.join(project, 'node_modules', '.bin', 'switchyard'), ['help'], { cwd: project });
    expect(stdout).toContain('Usage: switchyard <command>');
  });

  it('runs `switchyard dev` without the optional dependencies: JSON logs, and it says what to install', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, SWITCHYARD_LOG_FORMAT: 'pretty', HOME: await scratchDir('switchyard-package-home-') };
    delete env.TEMPORAL_ADDRESS;
    const failure = await run(path.join(project, 'node_modules', '.bin', 'switchyard'), ['dev', '--headless'], { cwd: project, env, timeout: 60_000 }).then(
      () => undefined,
      (error: { code: number | string; stdout: string; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    // The failure is one readable line on stderr that says what to install.
    expect(failure?.stderr).toMatch(/switchyard: `switchyard dev` needs the optional dependency @temporalio\/testing; install it/);
    // pino-pretty is not installed, so "pretty" falls back to JSON lines: whatever the worker logged is JSON.
    for (const line of (failure?.stdout ?? '').split('\n').filter((text) => text.trim() !== '')) expect(() => JSON.parse(line) as unknown, line).not.toThrow();
  });

  it('type-checks a TypeScript consumer against the shipped .d.ts', async () => {
    await writeFile(path.join(project, 'consumer.ts'), consumerSource);
    await writeFile(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        // skipLibCheck as most projects set it (checking every dependency's .d.ts triples the time); the
        // expected-error lines of consumer.ts prove the shipped types are precise rather than any.
        compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, types: ['node'], skipLibCheck: true },
        files: ['consumer.ts'],
      }),
    );
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const output = await run(process.execPath, [tsc, '-p', project], { cwd: project }).then(
      () => '',
      (error: { stdout: string }) => error.stdout,
    );
    const result = output.split('\n').filter((line) => /error TS\d+/.test(line)).join('\n');
    expect(result).toBe('');
  });
});
