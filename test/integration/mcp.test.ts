import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMcpTools, mcpServersFromConfig } from '../../src/tools/mcp/mcp.js';
import type { McpTool } from '../../src/tools/mcp/mcp.js';
import { readTool } from '../../src/tools/builtin/read.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';

describe('MCP tools in a turn (real MCP server process, real Temporal server)', () => {
  let harness: Harness;
  let mcp: { tools: McpTool[]; close(): Promise<void> };
  beforeAll(async () => {
    // Claude Code's .mcp.json shape, as `switchyard worker --mcp-config` reads it.
    const servers = mcpServersFromConfig({
      mcpServers: {
        notes: {
          command: process.execPath,
          args: ['--import', 'tsx', path.resolve('test/support/mcp-test-server.ts')],
          cwd: path.resolve('.'),
        },
      },
    });
    mcp = await connectMcpTools(servers);
    harness = await createHarness({ tools: [readTool, ...mcp.tools], defaultCwd: await scratchDir() });
  });
  afterAll(async () => {
    await harness.close();
    await mcp.close();
  });

  it('groups read-only MCP tools together and runs a destructive one alone, with their results', async () => {
    const { setUp, result, events } = await harness.withWorker(async () => {
      const session = await harness.startSession({ permissionMode: 'bypassPermissions' });
      const setUp = await session.executeTurn({
        turnId: 'setup',
        calls: [
          { id: 'set-a', name: 'mcp__notes__idempotent_set', input: { id: 'a', text: 'alpha' } },
          { id: 'set-b', name: 'mcp__notes__idempotent_set', input: { id: 'b', text: 'beta' } },
        ],
      });
      const result = await session.executeTurn({
        turnId: 't',
        calls: [
          { id: 'r1', name: 'mcp__notes__read_note', input: { id: 'a' } },
          { id: 'r2', name: 'mcp__notes__read_note', input: { id: 'b' } },
          { id: 'del', name: 'mcp__notes__delete_note', input: { id: 'a' } },
          { id: 'r3', name: 'mcp__notes__read_note', input: { id: 'a' } },
          { id: 'bad', name: 'mcp__notes__fail', input: {} },
        ],
      });
      return { setUp, result, events: (await session.events()).events };
    });
    expect(setUp.results.map((r) => [r.status, r.modelContent])).toEqual([
      ['success', 'set note a'],
      ['success', 'set note b'],
    ]);
    const scheduled = events.find((event) => event.type === 'ToolCallScheduled' && event.turnId === 't');
    expect(scheduled?.type === 'ToolCallScheduled' && scheduled.groups).toEqual([
      ['r1', 'r2'],
      ['del'],
      ['r3'],
      ['bad'],
    ]); // fail has no annotations: exclusive (fail closed)
    // What the MCP server answered, in the model's order: the reads before the delete saw the note, the one after
    // it did not.
    expect(result.results.map((r) => [r.callId, r.toolName, r.status, r.modelContent])).toEqual([
      ['r1', 'mcp__notes__read_note', 'success', 'note a: alpha'],
      ['r2', 'mcp__notes__read_note', 'success', 'note b: beta'],
      ['del', 'mcp__notes__delete_note', 'success', 'deleted note a'],
      ['r3', 'mcp__notes__read_note', 'success', 'no note a'],
      ['bad', 'mcp__notes__fail', 'error', 'the note store is on fire'],
    ]);
    expect(result.results.find((r) => r.callId === 'bad')?.isError).toBe(true);
  });
});
