import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMcpTools, mcpServersFromConfig } from '../../src/tools/mcp.js';
import type { McpTool } from '../../src/tools/mcp.js';
import { readTool } from '../../src/tools/read.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';

describe('MCP tools in a turn (real MCP server process, real Temporal server)', () => {
  let harness: Harness;
  let mcp: { tools: McpTool[]; close(): Promise<void> };
  beforeAll(async () => {
    // Claude Code's .mcp.json shape, as `switchyard worker --mcp-config` reads it.
    const servers = mcpServersFromConfig({
      mcpServers: { notes: { command: process.execPath, args: ['--import', 'tsx', path.resolve('test/support/mcp-test-server.ts')], cwd: path.resolve('.') } },
    });
    mcp = await connectMcpTools(servers);
    harness = await createHarness({ tools: [readTool, ...mcp.tools], defaultCwd: await scratchDir() });
  });
  afterAll(async () => {
    await harness.close();
    await mcp.close();
  });

  it('groups read-only MCP tools together and runs a destructive one alone, with their results', async () => {
    const { result, events } = await harness.withWorker(async () => {
      const session = await harness.startSession({ permissionMode: 'bypassPermissions' });
      const result = await session.executeTurn({
        turnId: 't',
        calls: [
          { id: 'r1', name: 'mcp__notes__read_note', input: { id: 'a' } },
          { id: 'r2', name: 'mcp__notes__read_note', input: { id: 'b' } },
          { id: 'del', name: 'mcp__notes__delete_note', input: { id: 'a' } },
          { id: 'r3', name: 'mcp__notes__read_note', input: { id: 'c' } },
          { id: 'bad', name: 'mcp__notes__fail', input: {} },
        ],
      });
      return { result, events: (await session.events()).events };
    });
    const scheduled = events.find((event) => event.type === 'ToolCallScheduled');
    expect(scheduled?.type === 'ToolCallScheduled' && scheduled.groups).toEqual([['r1', 'r2'], ['del'], ['r3'], ['bad']]); // fail has no annotations: exclusive (fail closed)
    const byId = Object.fromEntries(result.results.map((r) => [r.callId, r]));
    expect(byId.r1).toMatchObject({ status: 'success', toolName: 'mcp__notes__read_note' });
    expect(byId.r1?.modelContent).toContain('a');
    expect(byId.del?.status).toBe('success');
    expect(byId.bad).toMatchObject({ status: 'error', isError: true, modelContent: 'the note store is on fire' });
  });
});
