/**
 * The connection to one MCP server (split out of src/tools/mcp/mcp.ts): its lifecycle, requests on the live session,
 * and reconnection after the server died. The session itself (the client transport, stdio or streamable HTTP) is in
 * src/tools/mcp/mcp-session.ts.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Tool as McpSdkTool } from '@modelcontextprotocol/sdk/types.js';
import { TOOL_TIMEOUTS } from '../../contracts/defaults.js';
import {
  McpConnectionError,
  classifyLoss,
  closeSession,
  describeError,
  openMcpSession,
  stderrNote,
} from './mcp-session.js';
import type { McpServerConfig, McpSession } from './mcp-session.js';

/** One tool as the server lists it (`tools/list`). */
export type McpToolInfo = McpSdkTool;

/** The result of `tools/call`. */
export type McpCallResult = CallToolResult;

export interface McpConnectionOptions {
  /** Reports a server that died, a reconnection, a tool that cannot be offered… */
  onWarning?(message: string, details: Record<string, unknown>): void;
}

/** A live connection to one MCP server; reconnects when the server died. */
export class McpConnection {
  readonly #options: McpConnectionOptions;
  #current: McpSession | undefined;
  #connecting: Promise<McpSession> | undefined;
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
      const loss = session.lost ?? classifyLoss(this.config, error);
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
  #ensureSession(): Promise<McpSession> {
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

  async #openSession(): Promise<McpSession> {
    const { config } = this;
    const reconnecting = this.#sessionsOpened > 0;
    const session = await openMcpSession(config, {
      reconnecting,
      onLost: (lost, reason, cause) => this.#markLost(lost, reason, cause),
      onWarning: (message, details) => this.#warn(message, details),
    });
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
        ...(session.stdio?.pid == null ? {} : { pid: session.stdio.pid }),
      });
    return session;
  }

  /** Marks a session dead: later calls open a new one; the calls in flight are rejected. */
  #markLost(session: McpSession, reason: string, cause: unknown): void {
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
