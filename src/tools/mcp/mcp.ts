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
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType, JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation';
import type { CallToolResult, ContentBlock, Tool as McpSdkTool } from '@modelcontextprotocol/sdk/types.js';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { RE2JS } from 're2js';
import { z } from 'zod';
import { RESULT_BUDGETS, TOOL_TIMEOUTS } from '../../contracts/defaults.js';
import { formatZodError } from '../../contracts/tool-call.js';
import { neutralizeEnvelopes } from '../../contracts/texts.js';
import { defineTool } from '../define-tool.js';
import { BoundedReadBuffer } from './mcp-read-buffer.js';
import type { Tool, ToolOutput, ToolOutputImage, ValidationOutcome } from '../define-tool.js';
import { detectImageMediaType } from '../support/image-media-type.js';
import { mcpToolDisplay } from '../support/displays.js';

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

/** A Switchyard tool backed by an MCP tool; `mcpInputSchema` is the server's JSON Schema, for model adapters. */
export type McpTool = Tool & { mcpInputSchema: unknown };

/** A call failed because the server is not connected (it exited, it is unreachable); the next call reconnects. */
export class McpConnectionError extends Error {
  override readonly name = 'McpConnectionError';
}

/** ajv-formats is CommonJS: its default export is the function. */
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** Largest message read from a stdio server (the MCP SDK's own limit); a larger response fails only its call. */
const MCP_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/** Characters of a stdio server's stderr kept for error messages and warnings. */
const STDERR_TAIL_CHARS = 2_000;
/** Extra time the SDK's own request timeout leaves to the executor's deadline, which should fire first. */
const SDK_TIMEOUT_SLACK_MS = 1_000;
const SUMMARY_MAX_CHARS = 80;

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

function describeError(error: unknown): string {
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

/** A name part as Claude Code writes it: anything but letters, digits, `_` and `-` becomes `_`. */
function normalizeNamePart(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_');
}

/** The Switchyard name of an MCP tool: `mcp__<server>__<tool>`. */
export function mcpToolName(serverName: string, toolName: string): string {
  return `mcp__${normalizeNamePart(serverName)}__${normalizeNamePart(toolName)}`;
}

/** The JSON Schema a model should see for a tool: the MCP server's own for MCP tools, undefined for others. */
export function jsonSchemaOf(tool: Tool): unknown {
  return (tool as Partial<McpTool>).mcpInputSchema;
}

/**
 * Ajv's regular-expression engine for `pattern` and `patternProperties`: re2js, which matches in time linear in the
 * input. A server's schema and the model's arguments are both untrusted, and a backtracking engine (JavaScript's own)
 * takes time exponential in the input for patterns such as `^(a+)+$`, holding the worker's event loop. A pattern RE2
 * cannot compile (a back-reference, a look-ahead) is not checked here: it accepts every string, and the server, which
 * validates its own arguments, still does.
 */
const linearRegExp = Object.assign(
  (pattern: string, flags: string): { test(text: string): boolean; toString(): string } => {
    let compiled: RE2JS | undefined;
    try {
      compiled = RE2JS.compile(pattern);
    } catch {
      compiled = undefined;
    }
    return {
      test: (text) => compiled === undefined || compiled.matcher(text).find(),
      toString: () => `re2:${flags}:${pattern}`,
    };
  },
  { code: 'linearRegExp' },
);

/** An Ajv like the MCP SDK's own (formats checked, all errors reported), with the linear engine for patterns. */
function linearAjv(): Ajv {
  const ajv = new Ajv({
    strict: false,
    validateFormats: true,
    validateSchema: false,
    allErrors: true,
    code: { regExp: linearRegExp },
  });
  addFormats(ajv);
  return ajv;
}

/** One Ajv per server: schemas of different servers that reuse an `$id` must not meet in Ajv's cache. */
const validatorsByConnection = new WeakMap<McpConnection, AjvJsonSchemaValidator>();

/**
 * The check of a tool's arguments against its `inputSchema`, with the MCP SDK's Ajv validator (the one its client
 * uses for output schemas: formats checked, all errors reported) on an Ajv whose patterns run on re2js (see
 * `linearRegExp`). Compiled on first use. A schema Ajv cannot compile (a `$ref` it cannot resolve…) is left to the
 * server, which reports bad arguments as an error result.
 */
export function mcpArgumentsValidator(
  connection: McpConnection,
  schema: McpToolInfo['inputSchema'],
): (input: Record<string, unknown>) => ValidationOutcome {
  let validate: JsonSchemaValidator<unknown> | 'unchecked' | undefined;
  return (input) => {
    if (validate === undefined) {
      let validator = validatorsByConnection.get(connection);
      if (validator === undefined) {
        validator = new AjvJsonSchemaValidator(linearAjv());
        validatorsByConnection.set(connection, validator);
      }
      try {
        validate = validator.getValidator(schema as JsonSchemaType);
      } catch {
        validate = 'unchecked';
      }
    }
    if (validate === 'unchecked') return { ok: true };
    const result = validate(input);
    if (result.valid) return { ok: true };
    // Ajv's own wording: `data` is the arguments object, `data/text` its property `text`.
    return { ok: false, message: `InputValidationError: ${result.errorMessage}`, errorCode: 'input_validation' };
  };
}

function formatBlock(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
      return `[image: ${block.mimeType}, ${Buffer.byteLength(block.data, 'base64')} bytes]`;
    case 'audio':
      return `[audio: ${block.mimeType}, ${Buffer.byteLength(block.data, 'base64')} bytes]`;
    case 'resource':
      return `[resource: ${block.resource.uri}]`;
    case 'resource_link':
      return `[resource: ${block.uri}]`;
    default: {
      const unknown: { type?: unknown } = block;
      return `[${String(unknown.type)}]`;
    }
  }
}

/**
 * The model's output for a `tools/call` result: text as is; an image in a format the model APIs accept (told by its
 * bytes) as an image the executor stores as an artifact, after the text; other media as one-line placeholders; an
 * error result stays one.
 */
export function formatMcpResult(result: McpCallResult): ToolOutput {
  const parts: string[] = [];
  const images: ToolOutputImage[] = [];
  for (const block of result.content) {
    const image = block.type === 'image' ? decodeImage(block) : undefined;
    if (image === undefined) parts.push(formatBlock(block));
    else images.push(image);
  }
  const hasText = result.content.some((block) => block.type === 'text');
  if (!hasText && result.structuredContent !== undefined) parts.unshift(JSON.stringify(result.structuredContent));
  // The server's text, not Switchyard's: imitations of Switchyard's envelopes are neutralised.
  const content = neutralizeEnvelopes(parts.join('\n'));
  if (result.isError === true) {
    const message =
      content === '' && images.length === 0 ? 'The MCP tool reported an error without a message.' : content;
    return { content: message, isError: true, errorCode: 'mcp_error', ...(images.length === 0 ? {} : { images }) };
  }
  return images.length === 0 ? content : { content, images };
}

/**
 * A PostToolUse hook's `updatedMCPToolOutput` as the tool's output: content blocks, a `tools/call` result
 * (`{ content, isError? }`), or a string; anything else throws (the hook's replacement is then ignored).
 */
export function outputFromUpdatedMcpOutput(updated: unknown): ToolOutput {
  if (typeof updated === 'string') return updated;
  const result = Array.isArray(updated)
    ? { content: updated as unknown[] }
    : (updated as { content?: unknown; isError?: unknown } | null);
  if (result === null || typeof result !== 'object' || !Array.isArray(result.content)) {
    throw new TypeError('updatedMCPToolOutput must be a string, an array of MCP content blocks, or { content: [...] }');
  }
  for (const block of result.content as unknown[]) {
    const { type, text } = (block ?? {}) as { type?: unknown; text?: unknown };
    if (typeof type !== 'string') throw new TypeError('updatedMCPToolOutput has a content block without a type');
    if (type === 'text' && typeof text !== 'string')
      throw new TypeError('updatedMCPToolOutput has a text block without text');
  }
  return formatMcpResult({
    content: result.content as McpCallResult['content'],
    ...(result.isError === true ? { isError: true } : {}),
  });
}

/** An MCP image block as image bytes, when they are a format the model APIs accept; undefined otherwise. */
function decodeImage(block: Extract<ContentBlock, { type: 'image' }>): ToolOutputImage | undefined {
  const data = Buffer.from(block.data, 'base64');
  const mediaType = detectImageMediaType(data);
  return mediaType === undefined ? undefined : { mediaType, data };
}

/** The Switchyard tool for one MCP tool (exported for tests). */
export function mcpTool(connection: McpConnection, info: McpToolInfo): McpTool {
  const annotations = info.annotations ?? {};
  // The issue's rule, literally: only an explicit `destructiveHint: true` makes a tool destructive.
  const destructive = annotations.destructiveHint === true;
  const readOnly = annotations.readOnlyHint === true && !destructive;
  const idempotent = annotations.idempotentHint === true;
  const tool = defineTool({
    name: mcpToolName(connection.serverName, info.name),
    description: info.description ?? info.title ?? `Tool "${info.name}" of MCP server "${connection.serverName}"`,
    inputSchema: z.record(z.string(), z.unknown()),
    concurrentSafe: (readOnly || idempotent) && !destructive,
    readOnly,
    destructive,
    idempotent,
    sideEffectScope: readOnly ? 'none' : 'external',
    timeout: { defaultMs: connection.config.timeoutMs ?? TOOL_TIMEOUTS.mcp.defaultMs },
    resultBudget: RESULT_BUDGETS.mcp,
    // Rules name MCP tools whole (`mcp__server__tool`): no rule content.
    ruleKind: 'text',
    summarize(input) {
      const json = JSON.stringify(input);
      return json.length > SUMMARY_MAX_CHARS ? `${json.slice(0, SUMMARY_MAX_CHARS - 1)}…` : json;
    },
    validateInput: mcpArgumentsValidator(connection, info.inputSchema),
    async execute(input, context) {
      // Leave the executor's deadline to fire first, with its own timeout message.
      const remainingMs = context.deadline.remainingMs();
      const timeoutMs = remainingMs === undefined ? undefined : Math.max(1, remainingMs) + SDK_TIMEOUT_SLACK_MS;
      const result = await connection.callTool(info.name, input, context.signal, {
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
        idempotencyKey: context.idempotencyKey,
      });
      const output = formatMcpResult(result);
      // What a UI draws (v1.3): the server, the tool and the kinds of blocks it answered with.
      const display = mcpToolDisplay({
        server: connection.serverName,
        tool: info.name,
        content: result.content,
        isError: result.isError === true,
      });
      // PostToolUse hooks get the MCP result's content blocks, as in Claude Code.
      return typeof output === 'string'
        ? { content: output, hookResponse: result.content, display }
        : { ...output, hookResponse: result.content, display };
    },
    outputFromHook: outputFromUpdatedMcpOutput,
  });
  return Object.assign(tool, { mcpInputSchema: info.inputSchema });
}

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
