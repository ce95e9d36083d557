import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareCall } from '../../src/activities/prepare-call.js';
import type { CallPlan, ReadyCallPlan } from '../../src/contracts/call-plan.js';
import type { Tool, ToolOutput } from '../../src/tools/define-tool.js';
import {
  McpConnection,
  McpConnectionError,
  connectMcpTools,
  jsonSchemaOf,
  mcpServersFromConfig,
  mcpTool,
} from '../../src/tools/mcp/mcp.js';
import type { McpServerConfig, McpTool } from '../../src/tools/mcp/mcp.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { toolContext } from '../support/tool-context.js';
import { waitFor } from '../support/wait-for.js';
import { processExists } from '../support/processes.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const SERVER_SCRIPT = 'test/support/mcp-test-server.ts';
/** Server processes start through tsx, which takes a second or two. */
const SLOW = { timeout: 60_000 };

const stdioServer = (
  name: string,
  extra: Partial<Extract<McpServerConfig, { transport: 'stdio' }>> = {},
): McpServerConfig => ({
  name,
  transport: 'stdio',
  command: process.execPath,
  args: ['--import', 'tsx', SERVER_SCRIPT],
  cwd: repoRoot,
  ...extra,
});

const textOf = (output: ToolOutput): string => (typeof output === 'string' ? output : output.content);

/** A tools/registry pair with `prepare` (the front of the pipeline) and `run` (the tool's execute) helpers. */
function harness(tools: readonly Tool[]) {
  const registry = new ToolRegistry(tools);
  const tool = (name: string): Tool => {
    const found = registry.lookup(name);
    if (found === undefined)
      throw new Error(
        `no tool ${name}; have ${registry
          .list()
          .map((entry) => entry.name)
          .join(', ')}`,
      );
    return found;
  };
  const prepare = (name: string, input: unknown): Promise<CallPlan> =>
    prepareCall({
      registry,
      call: { id: 'c', name, input },
      context: { sessionId: 's', cwd: repoRoot, allowRules: [], denyRules: [] },
    });
  const ready = async (name: string, input: unknown): Promise<ReadyCallPlan> => {
    const plan = await prepare(name, input);
    if (plan.kind !== 'ready') throw new Error(`expected a ready plan for ${name}, got ${JSON.stringify(plan)}`);
    return plan;
  };
  const run = async (name: string, input: unknown, signal?: AbortSignal): Promise<ToolOutput> => {
    const plan = await ready(name, input);
    return tool(name).execute(plan.input, toolContext({ cwd: repoRoot, ...(signal === undefined ? {} : { signal }) }));
  };
  return { registry, tool, prepare, ready, run };
}

/** Starts the test server in streamable HTTP mode; resolves once it prints `listening <port>`. */
async function startHttpServer(port: number): Promise<{ child: ChildProcess; port: number; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER_SCRIPT, '--http', String(port)], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const listening = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening (\d+)/.exec(output);
      if (match !== null) resolve(Number(match[1]));
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) => reject(new Error(`HTTP test server exited (${code}) before listening: ${output}`)));
  });
  return { child, port: listening, url: `http://127.0.0.1:${listening}/mcp` };
}

async function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
}

async function stopHttpServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGKILL');
  await exited(child);
}

describe('MCP tools over stdio (a real server process)', SLOW, () => {
  const warnings: string[] = [];
  let mcp: { tools: McpTool[]; close(): Promise<void> };
  let h: ReturnType<typeof harness>;
  beforeAll(async () => {
    mcp = await connectMcpTools([stdioServer('notes')], { onWarning: (message) => warnings.push(message) });
    h = harness(mcp.tools);
  }, 60_000);
  afterAll(async () => {
    await mcp?.close();
  });
  const whoami = async (): Promise<number> => Number(textOf(await h.run('mcp__notes__whoami', {})));

  it('lists the server tools as mcp__<server>__<tool>, with their description and JSON Schema', () => {
    expect(mcp.tools.map((tool) => tool.name).sort()).toEqual(
      [
        'crash',
        'delete_note',
        'echo_meta',
        'fail',
        'huge',
        'idempotent_set',
        'imitate',
        'match_as',
        'media',
        'read_note',
        'screenshot',
        'slow',
        'stats',
        'structured',
        'whoami',
      ].map((name) => `mcp__notes__${name}`),
    );
    const readNote = h.tool('mcp__notes__read_note');
    expect(readNote.description).toBe('Reads a note');
    expect(jsonSchemaOf(readNote)).toMatchObject({
      type: 'object',
      properties: { id: { type: 'string' } },
      required: ['id'],
    });
    expect(readNote.resultBudget).toEqual({ maxModelBytes: 50_000, policy: 'truncate', keep: 'head' });
  });

  it('derives the flags of a call from the annotations', async () => {
    expect(await h.ready('mcp__notes__read_note', { id: 'n1' })).toMatchObject({
      flags: { concurrentSafe: true, readOnly: true, destructive: false, idempotent: false, sideEffectScope: 'none' },
      timeoutMs: 30_000,
      ruleKind: 'text',
      rememberRule: 'mcp__notes__read_note',
      summary: 'mcp__notes__read_note: {"id":"n1"}',
    });
    const deleteNote = await h.ready('mcp__notes__delete_note', { id: 'n1' });
    expect(deleteNote.flags).toMatchObject({
      concurrentSafe: false,
      readOnly: false,
      destructive: true,
      idempotent: false,
      sideEffectScope: 'external',
    });
    expect(deleteNote.ruleContent).toBeUndefined();
    // docs/SEMANTICS.md, Deliberate choices: an MCP tool annotated idempotent runs concurrently, though it still is not read-only.
    expect((await h.ready('mcp__notes__idempotent_set', { id: 'n1', text: 'x' })).flags).toMatchObject({
      concurrentSafe: true,
      readOnly: false,
      destructive: false,
      idempotent: true,
      sideEffectScope: 'external',
    });
    // No annotations: exclusive, not read-only, not retryable.
    expect((await h.ready('mcp__notes__fail', {})).flags).toMatchObject({
      concurrentSafe: false,
      readOnly: false,
      destructive: false,
      idempotent: false,
    });
  });

  it('lets an explicit destructiveHint win over readOnlyHint and idempotentHint', async () => {
    const connection = { serverName: 'notes', config: stdioServer('notes') } as unknown as McpConnection;
    const odd = mcpTool(connection, {
      name: 'odd',
      inputSchema: { type: 'object' },
      annotations: { readOnlyHint: true, destructiveHint: true },
    });
    const plan = await harness([odd]).ready('mcp__notes__odd', {});
    expect(plan.flags).toMatchObject({
      concurrentSafe: false,
      readOnly: false,
      destructive: true,
      sideEffectScope: 'external',
    });
    const both = mcpTool(connection, {
      name: 'both',
      inputSchema: { type: 'object' },
      annotations: { idempotentHint: true, destructiveHint: true },
    });
    expect((await harness([both]).ready('mcp__notes__both', {})).flags).toMatchObject({
      concurrentSafe: false,
      destructive: true,
      idempotent: true,
    });
  });

  it('executes read_note and delete_note on the server', async () => {
    expect(textOf(await h.run('mcp__notes__idempotent_set', { id: 'n9', text: 'hello' }))).toBe('set note n9');
    expect(textOf(await h.run('mcp__notes__read_note', { id: 'n9' }))).toBe('note n9: hello');
    expect(textOf(await h.run('mcp__notes__delete_note', { id: 'n9' }))).toBe('deleted note n9');
    expect(textOf(await h.run('mcp__notes__read_note', { id: 'n9' }))).toBe('no note n9');
  });

  it('turns an isError result into an error result for the model', async () => {
    expect(await h.run('mcp__notes__fail', {})).toMatchObject({
      content: 'the note store is on fire',
      isError: true,
      errorCode: 'mcp_error',
    });
  });

  it('shows media as placeholders and structured content as JSON', async () => {
    expect(textOf(await h.run('mcp__notes__media', {}))).toBe(
      '[image: image/png, 5 bytes]\n[audio: audio/wav, 3 bytes]\n[resource: note://n1]\n[resource: note://n2]',
    );
    expect(textOf(await h.run('mcp__notes__structured', {}))).toMatch(/^\{"count":\d+\}$/);
  });

  it("rejects missing required properties and wrong types before the call, in Ajv's words", async () => {
    expect(await h.prepare('mcp__notes__read_note', {})).toMatchObject({
      kind: 'rejected',
      stage: 'validation',
      errorCode: 'input_validation',
      modelContent: "<tool_use_error>InputValidationError: data must have required property 'id'</tool_use_error>",
    });
    const wrong = await h.prepare('mcp__notes__idempotent_set', { id: 'n1', text: 5, pinned: 'yes' });
    expect(wrong).toMatchObject({ kind: 'rejected', stage: 'validation' });
    expect(wrong.kind === 'rejected' && wrong.modelContent).toBe(
      '<tool_use_error>InputValidationError: data/text must be string, data/pinned must be boolean</tool_use_error>',
    );
    expect(await h.prepare('mcp__notes__slow', { ms: 1.5 })).toMatchObject({
      kind: 'rejected',
      modelContent: expect.stringContaining('data/ms must be integer'),
    });
    expect(await h.prepare('mcp__notes__read_note', ['n1'])).toMatchObject({
      kind: 'rejected',
      errorCode: 'input_validation',
    });
  });

  it('validates the whole JSON Schema: enums, formats, bounds, nested objects, additionalProperties', async () => {
    const schema = {
      type: 'object' as const,
      properties: {
        mode: { enum: ['fast', 'safe'] },
        when: { type: 'string', format: 'date-time' },
        count: { type: 'integer', minimum: 1 },
        target: { type: 'object', properties: { path: { type: 'string', pattern: '^/' } }, required: ['path'] },
      },
      required: ['mode'],
      additionalProperties: false,
    };
    // Validation happens before the call: a connection that never connects is enough.
    const connection = { serverName: 'notes', config: stdioServer('notes') } as unknown as McpConnection;
    const strict = harness([mcpTool(connection, { name: 'strict', inputSchema: schema })]);
    expect(
      await strict.prepare('mcp__notes__strict', {
        mode: 'safe',
        when: '2026-12-03T07:00:00Z',
        count: 2,
        target: { path: '/a' },
      }),
    ).toMatchObject({ kind: 'ready' });
    const plan = await strict.prepare('mcp__notes__strict', {
      mode: 'quick',
      when: 'yesterday',
      count: 0,
      target: { path: 'a' },
      extra: true,
    });
    expect(plan.kind === 'rejected' && plan.modelContent).toBe(
      '<tool_use_error>InputValidationError: data must NOT have additional properties, data/mode must be equal to one of the allowed values, ' +
        'data/when must match format "date-time", data/count must be >= 1, data/target/path must match pattern "^/"</tool_use_error>',
    );
    // A schema Ajv cannot compile is left to the server.
    const unresolvable = harness([
      mcpTool(connection, {
        name: 'unresolvable',
        inputSchema: { type: 'object', properties: { a: { $ref: 'https://example.com/missing.json' } } },
      }),
    ]);
    expect(await unresolvable.prepare('mcp__notes__unresolvable', { a: 1 })).toMatchObject({ kind: 'ready' });
  });

  it('cancels a slow call promptly when the signal aborts, and tells the server', async () => {
    const statsOf = async (): Promise<{ cancelled: number; slowStarted: number }> =>
      JSON.parse(textOf(await h.run('mcp__notes__stats', {}))) as { cancelled: number; slowStarted: number };
    const before = await statsOf();
    const controller = new AbortController();
    const reason = new Error('turn interrupted');
    const call = h.run('mcp__notes__slow', { ms: 60_000 }, controller.signal);
    const outcome = call.then(
      () => 'resolved',
      (error: unknown) => error,
    );
    // Abort once the server is running the call, so the cancellation has something in flight to reach.
    await waitFor(statsOf, (stats) => stats.slowStarted === before.slowStarted + 1, {
      timeoutMs: 30_000,
      what: 'the server to start the slow call',
    });
    const aborted = Date.now();
    controller.abort(reason);
    expect(await outcome).toBe(reason);
    // Promptly: far below the call's 60 s, and the server saw the cancellation.
    expect(Date.now() - aborted).toBeLessThan(10_000);
    await waitFor(statsOf, (stats) => stats.cancelled === before.cancelled + 1, {
      timeoutMs: 30_000,
      what: 'the server to see the cancellation',
    });
  });

  it('fails the call in flight clearly when the server dies, and the next call restarts it', async () => {
    const firstPid = await whoami();
    const crash = h.run('mcp__notes__crash', {});
    await expect(crash).rejects.toBeInstanceOf(McpConnectionError);
    await expect(crash).rejects.toThrow(
      /^MCP server "notes" is not connected \(it exited\): the call to "crash" failed with .*Connection closed\. The call may have partly run\./,
    );
    expect(processExists(firstPid)).toBe(false);
    expect(warnings).toContain('MCP server "notes" is not connected (it exited); the next call reconnects');
    const secondPid = await whoami();
    expect(secondPid).not.toBe(firstPid);
    expect(warnings).toContain('MCP server "notes" reconnected');
    expect(textOf(await h.run('mcp__notes__read_note', { id: 'n1' }))).toBe('note n1: buy milk');
  });

  it('shares one reconnection between calls that find the server dead', async () => {
    const before = await whoami();
    await expect(h.run('mcp__notes__crash', {})).rejects.toThrow(/not connected \(it exited\)/);
    const pids = await Promise.all([whoami(), whoami(), whoami()]);
    expect(new Set(pids).size).toBe(1);
    expect(pids[0]).not.toBe(before);
  });
});

describe('mcpServersFromConfig (.mcp.json, parsed with zod)', () => {
  it("reads Claude Code's shape: stdio servers with command, args, env, cwd; HTTP servers with url and headers", () => {
    const json = {
      mcpServers: {
        notes: { command: 'node', args: ['server.js'], env: { TOKEN: 't' }, cwd: '/srv', timeoutMs: 5_000 },
        typed: { type: 'stdio', command: 'notes-server' },
        web: { type: 'http', url: 'https://example.com/mcp', headers: { authorization: 'Bearer x' } },
      },
    };
    expect(mcpServersFromConfig(json, { source: '.mcp.json' })).toEqual([
      {
        name: 'notes',
        transport: 'stdio',
        command: 'node',
        args: ['server.js'],
        env: { TOKEN: 't' },
        cwd: '/srv',
        timeoutMs: 5_000,
      },
      { name: 'typed', transport: 'stdio', command: 'notes-server' },
      { name: 'web', transport: 'http', url: 'https://example.com/mcp', headers: { authorization: 'Bearer x' } },
    ]);
  });

  it('throws an error naming the file and every bad field', () => {
    const parse = (json: unknown) => () => mcpServersFromConfig(json, { source: '/repo/.mcp.json' });
    expect(parse({ mcpServers: { notes: { command: 5, args: ['a', 1] } } })).toThrow(
      new TypeError(
        'Invalid MCP config /repo/.mcp.json: mcpServers.notes.command: Invalid input: expected string, received number; ' +
          'mcpServers.notes.args.1: Invalid input: expected string, received number',
      ),
    );
    expect(parse({ mcpServers: { web: { url: 'ftp://example.com/' } } })).toThrow(
      'Invalid MCP config /repo/.mcp.json: mcpServers.web.url: expected an http or https URL',
    );
    expect(parse({ mcpServers: { web: { type: 'sse', url: 'https://example.com/sse' } } })).toThrow(
      'mcpServers.web.type: the SSE transport is not supported; use "type": "http" (streamable HTTP)',
    );
    expect(parse({ mcpServers: { notes: { comand: 'node' } } })).toThrow(
      'Invalid MCP config /repo/.mcp.json: mcpServers.notes.command: Invalid input: expected string, received undefined; mcpServers.notes: Unrecognized key: "comand"',
    );
    expect(parse({ servers: {} })).toThrow(
      'Invalid MCP config /repo/.mcp.json: mcpServers: Invalid input: expected record, received undefined',
    );
    expect(() => mcpServersFromConfig(null)).toThrow(
      'Invalid MCP config: (root): Invalid input: expected object, received null',
    );
  });
});

describe('MCP connections', SLOW, () => {
  it('close() ends every server process, and a closed connection refuses calls', async () => {
    const mcp = await connectMcpTools([stdioServer('a'), stdioServer('b', { timeoutMs: 5_000 })]);
    const h = harness(mcp.tools);
    const pidA = Number(textOf(await h.run('mcp__a__whoami', {})));
    const pidB = Number(textOf(await h.run('mcp__b__whoami', {})));
    expect(pidA).not.toBe(pidB);
    expect((await h.ready('mcp__b__whoami', {})).timeoutMs).toBe(5_000);
    expect((await h.ready('mcp__a__whoami', {})).timeoutMs).toBe(30_000);
    expect([processExists(pidA), processExists(pidB)]).toEqual([true, true]);
    await mcp.close();
    expect([processExists(pidA), processExists(pidB)]).toEqual([false, false]);
    await expect(h.run('mcp__a__whoami', {})).rejects.toThrow(
      'MCP server "a" is not connected: its connection was closed',
    );
  });

  it('reports a server that cannot start, or skips it when asked', async () => {
    const ghost = stdioServer('ghost', { command: '/nonexistent/mcp-server', args: [] });
    await expect(connectMcpTools([ghost])).rejects.toThrow(
      /^MCP server "ghost" failed to start: spawn \/nonexistent\/mcp-server ENOENT/,
    );
    const warnings: string[] = [];
    const skipped = await connectMcpTools([ghost], {
      skipFailedServers: true,
      onWarning: (message) => warnings.push(message),
    });
    expect(skipped.tools).toEqual([]);
    expect(warnings).toEqual(['MCP server "ghost" skipped: it could not be connected']);
    await skipped.close();
  });
});

describe('MCP tools over streamable HTTP (a real server process)', SLOW, () => {
  let server: { child: ChildProcess; port: number; url: string };
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    server = await startHttpServer(0);
    children.push(server.child);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(children.map(stopHttpServer));
  });

  it('lists and runs tools, and reconnects after the server restarts', async () => {
    const warnings: string[] = [];
    const mcp = await connectMcpTools(
      [{ name: 'web', transport: 'http', url: server.url, headers: { 'x-test': '1' } }],
      { onWarning: (message) => warnings.push(message) },
    );
    try {
      const h = harness(mcp.tools);
      expect(mcp.tools.map((tool) => tool.name)).toContain('mcp__web__read_note');
      expect((await h.ready('mcp__web__read_note', { id: 'n1' })).flags).toMatchObject({
        concurrentSafe: true,
        readOnly: true,
      });
      expect((await h.ready('mcp__web__delete_note', { id: 'n1' })).flags).toMatchObject({
        concurrentSafe: false,
        destructive: true,
      });
      expect(textOf(await h.run('mcp__web__read_note', { id: 'n1' }))).toBe('note n1: buy milk');
      expect(await h.run('mcp__web__fail', {})).toMatchObject({ isError: true, errorCode: 'mcp_error' });
      expect(Number(textOf(await h.run('mcp__web__whoami', {})))).toBe(server.child.pid);

      // The server dies during a call (once it reports running it): a clear error at once, not a wait for the
      // call's 60 s or the 30 s timeout.
      const slowStarted = async (): Promise<number> =>
        (JSON.parse(textOf(await h.run('mcp__web__stats', {}))) as { slowStarted: number }).slowStarted;
      const startedBefore = await slowStarted();
      const slow = h.run('mcp__web__slow', { ms: 60_000 }).then(
        () => 'resolved',
        (error: unknown) =>
          error instanceof McpConnectionError ? error.message : `not an McpConnectionError: ${String(error)}`,
      );
      await waitFor(slowStarted, (count) => count === startedBefore + 1, {
        timeoutMs: 30_000,
        what: 'the server to start the slow call',
      });
      const killed = Date.now();
      server.child.kill('SIGKILL');
      expect(await slow).toMatch(/^MCP server "web" is not connected \(connection lost\): the call to "slow" failed/);
      expect(Date.now() - killed).toBeLessThan(15_000);
      await exited(server.child);
      // While it is down, calls say so.
      await expect(h.run('mcp__web__whoami', {})).rejects.toThrow(
        /^MCP server "web" is not connected: reconnecting failed: .*ECONNREFUSED/,
      );

      const restarted = await startHttpServer(server.port);
      children.push(restarted.child);
      expect(Number(textOf(await h.run('mcp__web__whoami', {})))).toBe(restarted.child.pid);
      expect(warnings).toContain('MCP server "web" reconnected');

      // The server exits in the middle of handling a call.
      await expect(h.run('mcp__web__crash', {})).rejects.toThrow(
        /^MCP server "web" is not connected \((connection lost|unreachable)\): the call to "crash" failed/,
      );
      await exited(restarted.child);
      const again = await startHttpServer(server.port);
      children.push(again.child);
      expect(Number(textOf(await h.run('mcp__web__whoami', {})))).toBe(again.child.pid);
    } finally {
      await mcp.close();
    }
  });
});
