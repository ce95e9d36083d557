/**
 * The connection to one MCP server (split out of src/tools/mcp/mcp.ts): the client transport (stdio or streamable
 * HTTP), its lifecycle, and reconnection after the server died.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, Tool as McpSdkTool } from '@modelcontextprotocol/sdk/types.js';
import { TOOL_TIMEOUTS } from '../../contracts/defaults.js';
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

/** One tool as the server lists it (`tools/list`). */
export type McpToolInfo = McpSdkTool;

/** The result of `tools/call`. */
export type McpCallResult = CallToolResult;

export interface McpConnectionOptions {
  /** Reports a server that died, a reconnection, a tool that cannot be offered… */
  onWarning?(message: string, details: Record<string, unknown>): void;
}

/** A call failed because the server is not connected (it exited, it is unreachable); the next call reconnects. */
export class McpConnectionError extends Error {
  override readonly name = 'McpConnectionError';
}

/** Largest message read from a stdio server (the MCP SDK's own limit); a larger response fails only its call. */
const MCP_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/** Characters of a stdio server's stderr kept for error messages and warnings. */
const STDERR_TAIL_CHARS = 2_000;

interface Session {
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

/** A live connection to one MCP server; reconnects when the server died. */
export class McpConnection {
  readonly #options: McpConnectionOptions;
  #current: Session | undefined;
  #connecting: Promise<Session> | undefined;
  #sessionsOpened = 0;
  #closed = false;

  private constructor(
    readonly config: McpServerConfig,
    options: McpConnectionOptions,
  ) {
    this.#options = options;
  }

  /** Connects (spawns the process, or opens the HTTP session); rejects when the server cannot be reached. */
  static async connect(config: McpServerConfig, options: McpConnectionOptions = {}): Promise<McpConnection> {
    const connection = new McpConnection(config, options);
    await connection.#ensureSession();
    return connection;
  }

  get serverName(): string {
    return this.config.name;
  }

  /** Pid of the current stdio server process; undefined for HTTP or while disconnected. */
  get pid(): number | undefined {
    const session = this.#current;
    return session === undefined || session.lost !== undefined ? undefined : (session.stdio?.pid ?? undefined);
  }

  /** All tools of the server (every page of `tools/list`). */
  async listTools(signal?: AbortSignal): Promise<McpToolInfo[]> {
    return this.#request('tools/list', signal, async (client) => {
      const tools: McpToolInfo[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(
          cursor === undefined ? undefined : { cursor },
          signal === undefined ? undefined : { signal },
        );
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return tools;
    });
  }

  /**
   * Calls a tool. `signal` cancels the request (the server gets `notifications/cancelled`); `timeoutMs` is the SDK's
   * request timeout (default: the server's `timeoutMs`, else 30000).
   */
  async callTool(
    name: string,
    args: unknown,
    signal?: AbortSignal,
    options: { timeoutMs?: number; idempotencyKey?: string } = {},
  ): Promise<McpCallResult> {
    const timeout = options.timeoutMs ?? this.config.timeoutMs ?? TOOL_TIMEOUTS.mcp.defaultMs;
    // The execution's idempotency key travels in `_meta` (docs/SEMANTICS.md, Calls in doubt).
    const meta = options.idempotencyKey === undefined ? {} : { _meta: { idempotencyKey: options.idempotencyKey } };
    const result = await this.#request(`call to "${name}"`, signal, (client) =>
      client.callTool({ name, arguments: (args ?? {}) as Record<string, unknown>, ...meta }, undefined, {
        timeout,
        ...(signal === undefined ? {} : { signal }),
      }),
    );
    if ('content' in result && Array.isArray(result.content)) return result as McpCallResult;
    // A pre-2024-11-05 server's `toolResult`: only reachable with the compatibility schema, kept for safety.
    return {
      content: [{ type: 'text', text: JSON.stringify((result as { toolResult?: unknown }).toolResult ?? null) }],
    };
  }

  /** Closes the session (the child process ends, the HTTP session is deleted); later calls fail. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    const pending = this.#connecting;
    if (pending !== undefined) await pending.catch(() => undefined);
    const session = this.#current;
    this.#current = undefined;
    if (session !== undefined) await closeSession(session);
  }

  /** Runs one request on a live session, turning a lost connection into an `McpConnectionError`. */
  async #request<T>(what: string, signal: AbortSignal | undefined, run: (client: Client) => Promise<T>): Promise<T> {
    signal?.throwIfAborted();
    const session = await abortable(this.#ensureSession(), signal);
    try {
      return await run(session.client);
    } catch (error) {
      // The SDK wraps the abort reason in an McpError; give the caller the reason itself.
      if (signal?.aborted === true) throw signal.reason as Error;
      if (this.#closed && session.lost === undefined) {
        throw new McpConnectionError(
          `MCP server "${this.config.name}" is not connected: its connection was closed during the ${what}`,
          { cause: error },
        );
      }
      const loss = session.lost ?? this.#classifyLoss(error);
      if (loss === undefined) throw error;
      this.#markLost(session, loss.reason, error);
      const inFlight = what.startsWith('call') ? ' The call may have partly run.' : '';
      throw new McpConnectionError(
        `MCP server "${this.config.name}" is not connected (${loss.reason}): the ${what} failed with ${describeError(error)}.${inFlight} The next call reconnects.${stderrNote(session)}`,
        { cause: error },
      );
    }
  }

  /** The current session, or a new one; concurrent callers share one reconnection. */
  #ensureSession(): Promise<Session> {
    if (this.#closed)
      return Promise.reject(
        new McpConnectionError(`MCP server "${this.config.name}" is not connected: its connection was closed`),
      );
    const current = this.#current;
    if (current !== undefined && current.lost === undefined) return Promise.resolve(current);
    this.#connecting ??= this.#openSession().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  async #openSession(): Promise<Session> {
    const { config } = this;
    const reconnecting = this.#sessionsOpened > 0;
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
          this.#warn(`MCP server "${config.name}" sent a message of ${bytes} bytes, over the limit; it was dropped`, {
            server: config.name,
            bytes,
          }),
      );
      transport = stdio;
    } else {
      http = new StreamableHTTPClientTransport(
        new URL(config.url),
        config.headers === undefined ? undefined : { requestInit: { headers: config.headers } },
      );
      transport = http;
    }
    const session: Session = {
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
        this.#markLost(session, config.transport === 'stdio' ? 'it exited' : 'connection lost', undefined);
    };
    client.onerror = (error) => {
      // A broken HTTP response stream: the server went away mid-request, and the SDK would wait for the timeout.
      if (
        session.established &&
        config.transport === 'http' &&
        (/^SSE stream disconnected/.test(error.message) || /^Maximum reconnection attempts/.test(error.message))
      ) {
        this.#markLost(session, 'connection lost', error);
      }
    };
    try {
      await client.connect(transport);
    } catch (error) {
      await closeSession(session);
      const verb = config.transport === 'stdio' ? 'start' : 'connect';
      throw new McpConnectionError(
        `MCP server "${config.name}" ${reconnecting ? 'is not connected: reconnecting failed' : `failed to ${verb}`}: ${describeError(error)}${stderrNote(session)}`,
        { cause: error },
      );
    }
    this.#sessionsOpened += 1;
    session.established = true;
    if (this.#closed) {
      await closeSession(session);
      throw new McpConnectionError(`MCP server "${config.name}" is not connected: its connection was closed`);
    }
    this.#current = session;
    if (reconnecting)
      this.#warn(`MCP server "${config.name}" reconnected`, {
        server: config.name,
        ...(stdio?.pid == null ? {} : { pid: stdio.pid }),
      });
    return session;
  }

  /** Whether an error means the server is gone (as opposed to a failed request). */
  #classifyLoss(error: unknown): { reason: string } | undefined {
    if (error instanceof McpError && error.code === (ErrorCode.ConnectionClosed as number)) {
      return { reason: this.config.transport === 'stdio' ? 'it exited' : 'connection lost' };
    }
    if (error instanceof Error && error.message === 'Not connected')
      return { reason: this.config.transport === 'stdio' ? 'it exited' : 'connection lost' };
    if (this.config.transport === 'http') {
      // fetch rejects with a TypeError on network failures (refused, reset, DNS).
      if (error instanceof TypeError) return { reason: 'unreachable' };
      // The server no longer knows the session (it restarted).
      if (error instanceof StreamableHTTPError && error.code === 404) return { reason: 'its session expired' };
    }
    return undefined;
  }

  /** Marks a session dead: later calls open a new one; the calls in flight are rejected. */
  #markLost(session: Session, reason: string, cause: unknown): void {
    if (session.closing || session.lost !== undefined) return;
    session.lost = { reason };
    if (this.#current === session) this.#current = undefined;
    this.#warn(`MCP server "${this.config.name}" is not connected (${reason}); the next call reconnects`, {
      server: this.config.name,
      reason,
      ...(cause === undefined ? {} : { error: describeError(cause) }),
      ...(session.stderrTail === '' ? {} : { stderr: session.stderrTail }),
    });
    // Closing rejects the requests still waiting on this session (ConnectionClosed), and ends a process still running.
    void closeSession(session);
  }

  #warn(message: string, details: Record<string, unknown>): void {
    try {
      this.#options.onWarning?.(message, details);
    } catch {
      // A failing warning sink must not break the connection.
    }
  }
}

/** How long closing waits for the HTTP server to acknowledge the end of the session. */
const TERMINATE_SESSION_WAIT_MS = 2_000;

async function closeSession(session: Session): Promise<void> {
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

function stderrNote(session: Session): string {
  const tail = session.stderrTail.trim();
  if (tail === '') return '';
  return ` Server stderr: ${tail.length > 300 ? `…${tail.slice(-300)}` : tail}`;
}

/** Rejects with the signal's reason as soon as it aborts, without cancelling `promise` (which others may share). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error as Error);
      },
    );
  });
}
