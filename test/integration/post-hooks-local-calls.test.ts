import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolResult } from '../../src/contracts/tool-result.js';
import { connectMcpTools, mcpServersFromConfig } from '../../src/tools/mcp/mcp.js';
import type { McpTool } from '../../src/tools/mcp/mcp.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { callsRunByPlan, localExecuteCallMarkers } from '../support/history-text.js';

/**
 * A read-only call that runs as a local activity has a start-to-close bound of its local budget plus 15 s (1 s + 15 s
 * by default). A PostToolUse hook that sleeps 20 s outlived that bound and failed the finished call. A call that a
 * PostToolUse hook matches now runs as a regular activity (off the workflow's path, test/integration/
 * queries-during-post-hooks.test.ts), where the hook runs to its own timeout (30 s): the call's outcome must be the
 * one the tool returned, and neither tool nor hook may run again.
 */
const SLOW_HOOK = {
  matcher: 'Read|Grep|mcp__lookup__lookup',
  hooks: [
    {
      type: 'command' as const,
      // One line per run, naming the call, then a sleep longer than the local call's bound.
      command:
        'node -e \'let s="";process.stdin.on("data",(c)=>(s+=c)).on("end",()=>require("fs").appendFileSync(process.env.CLAUDE_PROJECT_DIR+"/hook-runs.txt",JSON.parse(s).tool_use_id+"\\n"))\'; sleep 20',
      timeout: 30,
    },
  ],
};

async function hookRuns(cwd: string): Promise<string[]> {
  const text = await readFile(path.join(cwd, 'hook-runs.txt'), 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line !== '');
}

async function collect(iterable: AsyncIterable<ToolResult>): Promise<ToolResult[]> {
  const results: ToolResult[] = [];
  for await (const result of iterable) results.push(result);
  return results;
}

describe('a slow PostToolUse hook never fails a finished read-only call (real server, real tools)', () => {
  let harness: Harness;
  let mcp: { tools: McpTool[]; close(): Promise<void> };
  beforeAll(async () => {
    const servers = mcpServersFromConfig({
      mcpServers: {
        lookup: {
          command: process.execPath,
          args: ['--import', 'tsx', path.resolve('test/support/mcp-lookup-server.ts')],
          cwd: path.resolve('.'),
        },
      },
    });
    mcp = await connectMcpTools(servers);
    harness = await createHarness({ tools: [...builtinTools(), ...mcp.tools] });
  }, 60_000);
  afterAll(async () => {
    await harness.close();
    await mcp.close();
  });

  const reads = (prefix: string): Array<{ id: string; name: string; input: Record<string, unknown> }> => [
    { id: `${prefix}-read`, name: 'Read', input: { file_path: 'a.txt' } },
    { id: `${prefix}-grep`, name: 'Grep', input: { pattern: 'alpha', output_mode: 'content' } },
    { id: `${prefix}-note`, name: 'mcp__lookup__lookup', input: { id: 'n1' } },
  ];

  const expectKept = (results: readonly ToolResult[], ids: readonly string[]): void => {
    expect(results.map((result) => [result.callId, result.status])).toEqual(ids.map((id) => [id, 'success']));
    const [read, grep, note] = results;
    expect(read?.modelContent).toContain('alpha');
    expect(grep?.modelContent).toContain('alpha');
    expect(note?.modelContent).toContain('entry n1: buy milk');
    for (const result of results) {
      expect(result.modelContent).not.toContain('timed out');
      expect(result.modelContent).not.toContain('[Hook additional context]');
    }
  };

  it('keeps the results of Read, Grep and an MCP read of a whole turn, runs each and its hook once', async () => {
    const cwd = await scratchDir();
    await writeFile(path.join(cwd, 'a.txt'), 'alpha\n');
    const ids = ['whole-read', 'whole-grep', 'whole-note'];
    const { results, history } = await harness.withWorker(async () => {
      const session = await harness.startSession({
        cwd,
        permissionMode: 'bypassPermissions',
        hooks: { PostToolUse: [SLOW_HOOK] },
      });
      // An exclusive first group, so the reads are the turn's second group: local activities, not Plan's own run.
      const turn = await session.executeTurn({
        turnId: 'whole',
        calls: [
          { id: 'whole-write', name: 'Write', input: { file_path: 'b.txt', content: 'beta\n' } },
          ...reads('whole'),
        ],
      });
      return { results: turn.results, history: (await session.workflow.fetchHistory()).events ?? [] };
    });
    // The three reads ran as regular activities (their post hooks off the workflow's path), and their hook once each.
    expect(localExecuteCallMarkers(history)).toBe(0);
    expect((await hookRuns(cwd)).sort()).toEqual([...ids].sort());
    expect(results[0]).toMatchObject({ callId: 'whole-write', status: 'success' });
    expectKept(results.slice(1), ids);
  }, 120_000);

  it('keeps the results of Read, Grep and an MCP read of a streaming turn, runs each and its hook once', async () => {
    const cwd = await scratchDir();
    await writeFile(path.join(cwd, 'a.txt'), 'alpha\n');
    const ids = ['stream-read', 'stream-grep', 'stream-note'];
    const { results, history } = await harness.withWorker(async () => {
      const session = await harness.startSession({
        cwd,
        permissionMode: 'bypassPermissions',
        hooks: { PostToolUse: [SLOW_HOOK] },
      });
      const turn = session.streamTurn('stream');
      const collected = collect(turn);
      await turn.add(...reads('stream'));
      await turn.end();
      return { results: await collected, history: (await session.workflow.fetchHistory()).events ?? [] };
    });
    expect(localExecuteCallMarkers(history)).toBe(0);
    expect((await hookRuns(cwd)).sort()).toEqual([...ids].sort());
    expectKept(results, ids);
  }, 120_000);
  it('reports a hook past its own timeout on a one-Read turn and on a regular activity; the results stand', async () => {
    const cwd = await scratchDir();
    await writeFile(path.join(cwd, 'a.txt'), 'alpha\n');
    const hook = { ...SLOW_HOOK, matcher: 'Read|Bash', hooks: [{ ...SLOW_HOOK.hooks[0], timeout: 2 }] };
    const { first, regular, history } = await harness.withWorker(async () => {
      const session = await harness.startSession({
        cwd,
        permissionMode: 'bypassPermissions',
        hooks: { PostToolUse: [hook] },
      });
      // A one-Read turn: with a PostToolUse hook, not Plan's own run but a regular activity. A read-only Bash with its
      // default 120 s deadline: a regular activity too.
      const one = await session.executeTurn({
        turnId: 'first',
        calls: [{ id: 'plan-read', name: 'Read', input: { file_path: 'a.txt' } }],
      });
      const two = await session.executeTurn({
        turnId: 'regular',
        calls: [{ id: 'cat', name: 'Bash', input: { command: 'cat a.txt' } }],
      });
      return {
        first: one.results[0],
        regular: two.results[0],
        history: (await session.workflow.fetchHistory()).events ?? [],
      };
    });
    expect(callsRunByPlan(history)).toEqual([]);
    expect(localExecuteCallMarkers(history)).toBe(0);
    expect((await hookRuns(cwd)).sort()).toEqual(['cat', 'plan-read']);
    for (const result of [first, regular]) {
      expect(result?.status).toBe('success');
      expect(result?.modelContent).toMatch(
        /alpha\n*\n\[Hook additional context\]\n1\. PostToolUse hook ".*sleep 20" timed out after 2s$/s,
      );
    }
  }, 120_000);
});
