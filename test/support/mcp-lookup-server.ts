/**
 * A one-tool MCP server over stdio for the tests of local read-only MCP calls: `lookup` is annotated read-only and
 * idempotent, so a call to it runs as a local activity (a read-only tool without `idempotentHint` does not). Run it
 * with `node --import tsx test/support/mcp-lookup-server.ts` from the repository root.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const entries = new Map<string, string>([['n1', 'buy milk']]);

const server = new McpServer({ name: 'switchyard-test-lookup', version: '1.0.0' });
server.registerTool(
  'lookup',
  {
    description: 'Looks an entry up',
    inputSchema: { id: z.string() },
    annotations: { readOnlyHint: true, idempotentHint: true },
  },
  ({ id }) => ({
    content: [{ type: 'text', text: entries.has(id) ? `entry ${id}: ${entries.get(id)}` : `no entry ${id}` }],
  }),
);
await server.connect(new StdioServerTransport());
// The client closing stdin ends the server.
process.stdin.on('end', () => process.exit(0));
