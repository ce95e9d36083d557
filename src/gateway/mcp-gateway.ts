import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { SwitchyardClient } from '../client/switchyard-client.js';
import { modelToolSchemas } from '../client/model-formats/shared.js';
import type { ApprovalRequest } from '../contracts/approval.js';
import type { SessionOptions } from '../contracts/session.js';
import type { ToolResult, TurnResult } from '../contracts/tool-result.js';
import type { Tool } from '../tools/define-tool.js';
import { mcpResultOf } from './mcp-content.js';
import type { McpCallResult } from './mcp-content.js';
import { TurnBatcher } from './turn-batcher.js';

/** Prefix of the turn ids the gateway starts, so a reconnecting client re-attaches only to the gateway's own calls. */
export const GATEWAY_TURN_PREFIX = 'mcp-';

export interface GatewayOptions {
  switchyard: SwitchyardClient;
  /** The session every `tools/call` runs in; started on first use with `sessionOptions`. */
  sessionId: string;
  sessionOptions: SessionOptions;
  /** The tools `tools/list` shows: the same set the session's workers offer. */
  tools: readonly Tool[];
  /** Calls that arrive within this window form one turn (default 25 ms). */
  batchWindowMs?: number;
  /** How often a waiting call looks for its approval request, to tell the client (default 1,000 ms). */
  statusPollMs?: number;
  /** Most calls in one turn (default 64). */
  maxCallsPerTurn?: number;
}

/** A tool as `tools/list` returns it. */
export interface McpToolListing {
  name: string;
  description: string;
  inputSchema: Record<string, unknown> & { type: 'object' };
  annotations: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean };
}

/** What a call waiting for a human tells the client (an MCP progress message). */
export function waitingForApprovalMessage(request: ApprovalRequest, sessionId: string): string {
  const what =
    request.preview === undefined
      ? request.toolName
      : `${request.toolName}: ${request.preview.split('\n')[0]?.slice(0, 120) ?? ''}`;
  return `waiting for approval of ${what} (request ${request.requestId}): \`switchyard approve ${request.requestId} --session ${sessionId}\`, or see \`switchyard pending\``;
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * Switchyard as an MCP server: each `tools/call` becomes a call of one Switchyard session, through grouping,
 * permission rules, hooks and durable approvals. The MCP request stays open while the call waits for a human, with
 * progress notifications saying so; a client that goes away leaves the call pending in the session (an approval
 * still decides it), and a client that sends the same call again while it waits is attached to it instead of
 * starting a second one.
 */
export class SwitchyardGateway {
  readonly #options: GatewayOptions;
  readonly #batcher: TurnBatcher;
  readonly #listing: McpToolListing[];
  /** Turns this process started or re-attached to, by call id: a pending request already being awaited. */
  readonly #attached = new Set<string>();

  constructor(options: GatewayOptions) {
    this.#options = options;
    this.#listing = listTools(options.tools);
    this.#batcher = new TurnBatcher((calls) => this.#runTurn(calls), {
      windowMs: options.batchWindowMs ?? 25,
      maxCalls: options.maxCallsPerTurn ?? 64,
    });
  }

  get sessionId(): string {
    return this.#options.sessionId;
  }

  listTools(): McpToolListing[] {
    return this.#listing;
  }

  /** Runs one `tools/call`; `progress` (when the client asked for it) hears what the call waits for. */
  async callTool(name: string, args: unknown, progress?: (message: string) => Promise<void>): Promise<McpCallResult> {
    const reattached = await this.#reattach(name, args);
    const callId = reattached?.callId ?? `${GATEWAY_TURN_PREFIX}${randomUUID()}`;
    const running = reattached?.result ?? this.#batcher.submit({ id: callId, name, input: args ?? {} });
    const stopReporting = progress === undefined ? () => {} : this.#reportWaits(callId, progress);
    try {
      return await mcpResultOf(await running, this.#options.switchyard.artifacts);
    } finally {
      stopReporting();
      this.#attached.delete(callId);
    }
  }

  /** An MCP server for one client connection (stdio, or one streamable HTTP session). */
  createServer(): Server {
    const server = new Server({ name: 'switchyard', version: '0.1.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.listTools() }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const token = request.params._meta?.progressToken;
      let step = 0;
      const progress =
        token === undefined
          ? undefined
          : async (message: string): Promise<void> => {
              step += 1;
              await extra.sendNotification({
                method: 'notifications/progress',
                params: { progressToken: token, progress: step, message },
              });
            };
      return this.callTool(request.params.name, request.params.arguments ?? {}, progress);
    });
    return server;
  }

  async #runTurn(calls: Parameters<SwitchyardClient['executeTurnWithStart']>[1]['calls']): Promise<TurnResult> {
    const { switchyard, sessionId, sessionOptions } = this.#options;
    for (const call of calls) this.#attached.add(call.id);
    return switchyard.executeTurnWithStart(
      sessionId,
      { turnId: `${GATEWAY_TURN_PREFIX}${randomUUID()}`, calls },
      sessionOptions,
    );
  }

  /** A pending gateway call with the same tool and input that nobody in this process awaits: its result. */
  async #reattach(name: string, args: unknown): Promise<{ callId: string; result: Promise<ToolResult> } | undefined> {
    const session = this.#options.switchyard.session(this.#options.sessionId);
    let pending: ApprovalRequest[];
    try {
      pending = await session.pendingApprovals();
    } catch {
      return undefined; // no session yet
    }
    const match = pending.find(
      (request) =>
        request.turnId.startsWith(GATEWAY_TURN_PREFIX) &&
        request.toolName === name &&
        !this.#attached.has(request.callId) &&
        sameJson(request.input, args),
    );
    if (match === undefined) return undefined;
    this.#attached.add(match.callId);
    const turn = session.workflow.getUpdateHandle<TurnResult>(match.turnId).result();
    const result = turn.then((value) => {
      const found = value.results.find((candidate) => candidate.callId === match.callId);
      if (found === undefined)
        throw new Error(`the turn "${match.turnId}" returned no result for call "${match.callId}"`);
      return found;
    });
    return { callId: match.callId, result };
  }

  /** Polls the session for this call's approval request and tells the client while it waits; returns a stopper. */
  #reportWaits(callId: string, progress: (message: string) => Promise<void>): () => void {
    const { switchyard, sessionId, statusPollMs = 1_000 } = this.#options;
    let told: string | undefined;
    let stopped = false;
    const poll = async (): Promise<void> => {
      if (stopped) return;
      try {
        const pending = await switchyard.session(sessionId).pendingApprovals();
        const request = pending.find((candidate) => candidate.callId === callId);
        // Said again at every poll while waiting: a client that resets its request timeout on progress keeps waiting.
        if (request !== undefined) {
          told = waitingForApprovalMessage(request, sessionId);
          await progress(told);
        } else if (told !== undefined) {
          told = undefined;
          await progress('approved or decided; running');
        }
      } catch {
        // the session may not exist yet (first call), or the server is restarting: try again at the next poll
      }
    };
    const timer = setInterval(() => void poll(), statusPollMs);
    void poll();
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }
}

function listTools(tools: readonly Tool[]): McpToolListing[] {
  const schemas = modelToolSchemas(tools);
  return tools.map((tool, index) => {
    const schema = schemas[index]?.inputSchema ?? {};
    const annotations: McpToolListing['annotations'] = {};
    if (typeof tool.readOnly === 'boolean') annotations.readOnlyHint = tool.readOnly;
    if (tool.destructive === true) annotations.destructiveHint = true;
    if (tool.idempotent !== undefined) annotations.idempotentHint = tool.idempotent;
    return { name: tool.name, description: tool.description, inputSchema: { ...schema, type: 'object' }, annotations };
  });
}
