/**
 * MCP servers as Switchyard tools: connects servers over stdio or streamable HTTP with `@modelcontextprotocol/sdk`,
 * lists their tools and turns each into a tool named `mcp__<server>__<tool>` (Claude Code's naming), so every call
 * runs as an activity like any other tool.
 *
 * The server's annotations decide the flags (docs/SEMANTICS.md, Deliberate choices: MCP tools run concurrently when
 * their annotations say read-only or idempotent, alone when they say destructive): `readOnlyHint: true` (without
 * `destructiveHint: true`) → read-only and concurrent; `idempotentHint: true` (without `destructiveHint: true`) →
 * concurrent and retryable after a lost worker, but still asks for approval like any other side-effecting tool;
 * `destructiveHint: true` → exclusive. The hints come from the server and are not verified.
 *
 * A server that dies (its process exits, its HTTP endpoint goes away) fails the calls in flight with a clear
 * `McpConnectionError`; the next call reconnects (spawns the process again, opens a new HTTP session) before it runs.
 */
import { McpConnection } from './mcp-connection.js';
import type { McpConnectionOptions } from './mcp-connection.js';
import { McpConnectionError, describeError } from './mcp-session.js';
import type { McpServerConfig } from './mcp-session.js';
import { mcpTool, mcpToolName, normalizeNamePart } from './mcp-tool.js';
import type { McpTool } from './mcp-tool.js';

export { McpConnection } from './mcp-connection.js';
export type { McpCallResult, McpConnectionOptions, McpToolInfo } from './mcp-connection.js';
export { McpConnectionError } from './mcp-session.js';
export type { McpServerConfig } from './mcp-session.js';
export {
  formatMcpResult,
  jsonSchemaOf,
  mcpArgumentsValidator,
  mcpTool,
  mcpToolName,
  outputFromUpdatedMcpOutput,
} from './mcp-tool.js';
export type { McpTool } from './mcp-tool.js';
export { mcpServersFromConfig } from './mcp-config.js';

/** Tool names are 1-64 letters, digits, `_`, `.`, `:` or `-` (see `defineTool`). */
const VALID_TOOL_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * Connects every server and returns Switchyard tools named `mcp__<server>__<tool>` (Claude Code's naming), plus a
 * close function. The tool list is a snapshot taken at connect time (`tools/list_changed` is not followed).
 * A server that cannot be reached fails the whole call (the others are closed) unless `skipFailedServers` is set;
 * a tool whose name does not fit (over 64 characters, or a duplicate after normalisation) is skipped with a warning.
 */
export async function connectMcpTools(
  configs: McpServerConfig[],
  options: McpConnectionOptions & { skipFailedServers?: boolean } = {},
): Promise<{ tools: McpTool[]; close(): Promise<void> }> {
  const seen = new Map<string, string>();
  for (const config of configs) {
    const normalized = normalizeNamePart(config.name);
    if (config.name === '') throw new TypeError('An MCP server needs a name');
    const previous = seen.get(normalized);
    if (previous !== undefined)
      throw new TypeError(
        `MCP servers "${previous}" and "${config.name}" have the same name once normalised ("${normalized}")`,
      );
    seen.set(normalized, config.name);
  }
  const warn = (message: string, details: Record<string, unknown>): void => {
    try {
      options.onWarning?.(message, details);
    } catch {
      // ignore a failing sink
    }
  };
  const connectionOptions: McpConnectionOptions = options.onWarning === undefined ? {} : { onWarning: warn };

  const settled = await Promise.allSettled(
    configs.map(async (config) => {
      const connection = await McpConnection.connect(config, connectionOptions);
      try {
        return { connection, infos: await connection.listTools() };
      } catch (error) {
        await connection.close();
        throw error;
      }
    }),
  );
  const connections: McpConnection[] = [];
  const close = async (): Promise<void> => {
    await Promise.all(connections.map((connection) => connection.close()));
  };
  const failures: string[] = [];
  const tools: McpTool[] = [];
  const names = new Set<string>();
  settled.forEach((outcome, index) => {
    const serverName = configs[index]?.name ?? '?';
    if (outcome.status === 'rejected') {
      failures.push(describeError(outcome.reason));
      if (options.skipFailedServers === true)
        warn(`MCP server "${serverName}" skipped: it could not be connected`, {
          server: serverName,
          error: describeError(outcome.reason),
        });
      return;
    }
    const { connection, infos } = outcome.value;
    connections.push(connection);
    for (const info of infos) {
      const name = mcpToolName(connection.serverName, info.name);
      if (!VALID_TOOL_NAME.test(name) || names.has(name)) {
        warn(
          `MCP tool "${info.name}" of server "${serverName}" skipped: ${names.has(name) ? `its name ${name} is taken` : `${name} is longer than 64 characters`}`,
          {
            server: serverName,
            tool: info.name,
          },
        );
        continue;
      }
      names.add(name);
      tools.push(mcpTool(connection, info));
    }
  });
  if (failures.length > 0 && options.skipFailedServers !== true) {
    await close();
    throw new McpConnectionError(failures.join('; '));
  }
  return { tools, close };
}
