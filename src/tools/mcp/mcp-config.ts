/**
 * MCP server configs from Claude Code's `.mcp.json` shape (split out of src/tools/mcp/mcp.ts).
 */
import { z } from 'zod';
import { formatZodError } from '../../contracts/tool-call.js';
import type { McpServerConfig } from './mcp-session.js';

const timeoutMsSchema = z.number().int().positive().optional();

/** A stdio server in `.mcp.json`: `{ "command", "args", "env" }` (Claude Code's shape), plus `cwd` and `timeoutMs`. */
const stdioServerEntrySchema = z.strictObject({
  type: z.literal('stdio').optional(),
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().min(1).optional(),
  timeoutMs: timeoutMsSchema,
});

/** A streamable HTTP server in `.mcp.json`: `{ "type": "http", "url", "headers" }`, plus `timeoutMs`. */
const httpServerEntrySchema = z.strictObject({
  type: z.literal('http').optional(),
  url: z.url({ protocol: /^https?$/, error: 'expected an http or https URL' }),
  headers: z.record(z.string(), z.string()).optional(),
  timeoutMs: timeoutMsSchema,
});

/** An entry with a `url` (or `"type": "http"`) is an HTTP server, any other a stdio server. */
const serverEntrySchema = z.record(z.string(), z.unknown()).transform((entry, context) => {
  if (entry.type === 'sse') {
    context.addIssue({
      code: 'custom',
      path: ['type'],
      message: 'the SSE transport is not supported; use "type": "http" (streamable HTTP)',
    });
    return z.NEVER;
  }
  const parsed = (
    entry.url !== undefined || entry.type === 'http' ? httpServerEntrySchema : stdioServerEntrySchema
  ).safeParse(entry);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues)
    context.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  return z.NEVER;
});

const mcpConfigSchema = z.object({
  mcpServers: z.record(z.string().min(1, 'a server needs a name'), serverEntrySchema),
});

/**
 * Server configs from Claude Code's `.mcp.json` shape, parsed with zod: `{ "mcpServers": { "<name>": { "command",
 * "args", "env" } | { "type": "http", "url", "headers" } } }` (`timeoutMs` may be added to either, `cwd` to a stdio
 * server). Throws a TypeError naming `source` (the file, when given) and each bad field.
 */
export function mcpServersFromConfig(json: unknown, { source }: { source?: string } = {}): McpServerConfig[] {
  const parsed = mcpConfigSchema.safeParse(json);
  if (!parsed.success)
    throw new TypeError(
      `Invalid MCP config${source === undefined ? '' : ` ${source}`}: ${formatZodError(parsed.error)}`,
    );
  return Object.entries(parsed.data.mcpServers).map(([name, entry]): McpServerConfig => {
    if ('url' in entry) {
      const { type: _type, ...http } = entry;
      return { name, transport: 'http', ...http };
    }
    const { type: _type, ...stdio } = entry;
    return { name, transport: 'stdio', ...stdio };
  });
}
