/**
 * One session with an MCP server (the part of src/tools/mcp/mcp-connection.ts that talks to the SDK): how to reach
 * the server, the client transport it opens (stdio or streamable HTTP), what tells a lost server from a failed
 * request, and closing.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { BoundedReadBuffer } from './mcp-read-buffer.js';

/** How to reach one MCP server. `timeoutMs` is the deadline of each call (default 30000). */
export type McpServerConfig =
  | {
      name: string;
      transport: 'stdio';
      command: string;
      args?: string[];
      /**
       * Added to the few variables the SDK passes on by default (HOME, PATH, SHELL, TERM, USER, LOGNAME): the server
       * does not inherit the worker's whole environment.
       */
      env?: Record<string, string>;
      cwd?: string;
      timeoutMs?: number;
    }
  | { name: string; transport: 'http'; url: string; headers?: Record<string, string>; timeoutMs?: number };

/** A call failed because the server is not connected (it exited, it is unreachable); the next call reconnects. */
export class McpConnectionError extends Error {
  override readonly name = 'McpConnectionError';
}

/** Largest message read from a stdio server (the MCP SDK's own limit); a larger response fails only its call. */
const MCP_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/** Characters of a stdio server's stderr kept for error messages and warnings. */
const STDERR_TAIL_CHARS = 2_000;

export interface McpSession {
  client: Client;
  stdio: StdioClientTransport | undefined;
  http: StreamableHTTPClientTransport | undefined;
  stderrTail: string;
  /** Set once the server is gone; the connection then opens a new session on the next use. */
  lost: { reason: string } | undefined;
  /** Set when Switchyard closes the session itself, so its `onclose` is no loss. */
  closing: boolean;
  /** Set once `initialize` succeeded: a failure before that is a failed connect, not a loss. */
  established: boolean;
}

/**
 * Opens a session with the server: spawns the process (stdio) or opens the HTTP session, and runs `initialize`.
 * `onLost` hears of a server that went away once the caller has set `established`; `onWarning` of a message dropped
 * for its size. Rejects with an `McpConnectionError` (`reconnecting` words it) when the server cannot be reached.
 */
export async function openMcpSession(
  config: McpServerConfig,
  options: {
    reconnecting: boolean;
    onLost(session: McpSession, reason: string, cause: unknown): void;
    onWarning(message: string, details: Record<string, unknown>): void;
  },
): Promise<McpSession> {
  const client = new Client({ name: 'switchyard', version: '0.1.0' });
  let transport: Transport;
  let stdio: StdioClientTransport | undefined;
  let http: StreamableHTTPClientTransport | undefined;
  if (config.transport === 'stdio') {
    stdio = new StdioClientTransport({
      command: config.command,
      ...(config.args === undefined ? {} : { args: config.args }),
      ...(config.env === undefined ? {} : { env: config.env }),
      ...(config.cwd === undefined ? {} : { cwd: config.cwd }),
      stderr: 'pipe',
    });
    // The SDK's reader drops the connection when one message passes its limit; this one fails only that call.
    (stdio as unknown as { _readBuffer: BoundedReadBuffer })._readBuffer = new BoundedReadBuffer(
      MCP_MAX_MESSAGE_BYTES,
      (bytes, maxBytes) =>
        `MCP server "${config.name}" sent a response of ${bytes} bytes, over the ${maxBytes}-byte limit of one message: this call failed; the connection stays open for other calls`,
      (bytes) =>
        options.onWarning(
          `MCP server "${config.name}" sent a message of ${bytes} bytes, over the limit; it was dropped`,
          {
            server: config.name,
            bytes,
          },
        ),
    );
    transport = stdio;
  } else {
    http = new StreamableHTTPClientTransport(
      new URL(config.url),
      config.headers === undefined ? undefined : { requestInit: { headers: config.headers } },
    );
    transport = http;
  }
  const session: McpSession = {
    client,
    stdio,
    http,
    stderrTail: '',
    lost: undefined,
    closing: false,
    established: false,
  };
  // Read stderr continuously (a full pipe would block the server); keep its tail for messages.
  stdio?.stderr?.on('data', (chunk: unknown) => {
    session.stderrTail = (session.stderrTail + String(chunk)).slice(-STDERR_TAIL_CHARS);
  });
  client.onclose = () => {
    if (session.established)
      options.onLost(session, config.transport === 'stdio' ? 'it exited' : 'connection lost', undefined);
  };
  client.onerror = (error) => {
    // A broken HTTP response stream: the server went away mid-request, and the SDK would wait for the timeout.
    if (
      session.established &&
      config.transport === 'http' &&
      (/^SSE stream disconnected/.test(error.message) || /^Maximum reconnection attempts/.test(error.message))
    ) {
      options.onLost(session, 'connection lost', error);
    }
  };
  try {
    await client.connect(transport);
  } catch (error) {
    await closeSession(session);
    const verb = config.transport === 'stdio' ? 'start' : 'connect';
    throw new McpConnectionError(
      `MCP server "${config.name}" ${options.reconnecting ? 'is not connected: reconnecting failed' : `failed to ${verb}`}: ${describeError(error)}${stderrNote(session)}`,
      { cause: error },
    );
  }
  return session;
}

/** Whether an error means the server is gone (as opposed to a failed request). */
export function classifyLoss(config: McpServerConfig, error: unknown): { reason: string } | undefined {
  if (error instanceof McpError && error.code === (ErrorCode.ConnectionClosed as number)) {
    return { reason: config.transport === 'stdio' ? 'it exited' : 'connection lost' };
  }
  if (error instanceof Error && error.message === 'Not connected')
    return { reason: config.transport === 'stdio' ? 'it exited' : 'connection lost' };
  if (config.transport === 'http') {
    // fetch rejects with a TypeError on network failures (refused, reset, DNS).
    if (error instanceof TypeError) return { reason: 'unreachable' };
    // The server no longer knows the session (it restarted).
    if (error instanceof StreamableHTTPError && error.code === 404) return { reason: 'its session expired' };
  }
  return undefined;
}

/** How long closing waits for the HTTP server to acknowledge the end of the session. */
const TERMINATE_SESSION_WAIT_MS = 2_000;

export async function closeSession(session: McpSession): Promise<void> {
  if (session.closing) return;
  session.closing = true;
  if (session.http !== undefined && session.established && session.lost === undefined) {
    // Ends the session on the server (HTTP DELETE) so it frees its state; best effort.
    const http = session.http;
    await Promise.race([
      http.terminateSession().catch(() => undefined),
      sleep(TERMINATE_SESSION_WAIT_MS, undefined, { ref: false }),
    ]);
  }
  try {
    await session.client.close();
  } catch {
    // Already gone.
  }
}
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}

export function stderrNote(session: McpSession): string {
  const tail = session.stderrTail.trim();
  if (tail === '') return '';
  return ` Server stderr: ${tail.length > 300 ? `…${tail.slice(-300)}` : tail}`;
}
