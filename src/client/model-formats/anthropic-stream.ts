import type { ToolResult } from '../../contracts/tool-result.js';
import type { ToolCall } from '../../contracts/tool-call.js';
import type { Tool } from '../../tools/define-tool.js';
import { parseArguments } from './shared.js';
import { ToolCallStream } from './stream-assembler.js';
import type { StreamTurnTarget } from './stream-assembler.js';
import { toolNameMap } from './tool-names.js';
import type { ToolNameMap } from './tool-names.js';

/** An event of the Anthropic Messages stream (`stream: true`), as the SSE `data` JSON or the SDK's stream events. */
export interface AnthropicStreamEvent {
  type: string;
  index?: number;
  content_block?: { type: string; id?: string; name?: string; input?: unknown };
  delta?: { type?: string; partial_json?: string; stop_reason?: string | null };
}

interface OpenBlock {
  id: string;
  name: string;
  json: string;
  startInput: unknown;
}

/**
 * Feeds a streaming turn from an Anthropic Messages stream: each `tool_use` block is added when its
 * `content_block_stop` arrives (`content_block_start` with `input: {}` → `input_json_delta` fragments →
 * `content_block_stop`; a no-argument tool streams `partial_json: ""` and becomes `{}`), and the turn ends at
 * `message_stop`. A block the reply cut off (`stop_reason: max_tokens`) gets an error result instead of running.
 *
 * ```ts
 * const tools = anthropicToolStream({ turn: session.streamTurn(turnId) });
 * for await (const event of stream) await tools.push(event);
 * const results = await tools.results();
 * ```
 */
export class AnthropicToolStream {
  readonly #stream: ToolCallStream;
  readonly #names: ToolNameMap;
  readonly #open = new Map<number, OpenBlock>();
  /** A stopped block whose JSON does not parse: cut off if the reply ends at max_tokens, else a malformed call. */
  #held: OpenBlock | undefined;
  #stopReason: string | undefined;

  constructor(options: { turn: StreamTurnTarget; tools?: readonly Tool[] }) {
    this.#stream = new ToolCallStream(options.turn);
    this.#names = toolNameMap(options.tools, 'anthropic');
  }

  get calls(): readonly ToolCall[] {
    return this.#stream.calls;
  }

  /** The message's `stop_reason` once `message_delta` carried it. */
  get stopReason(): string | undefined {
    return this.#stopReason;
  }

  /** Takes one stream event; resolves when any call it completed was accepted by the session. */
  push(event: AnthropicStreamEvent): Promise<void> {
    switch (event.type) {
      case 'content_block_start': {
        this.#releaseHeld();
        const block = event.content_block;
        if (block?.type === 'tool_use' && event.index !== undefined) {
          this.#open.set(event.index, {
            id: block.id ?? '',
            name: this.#names.fromModel(block.name ?? ''),
            json: '',
            startInput: block.input ?? {},
          });
        }
        return this.#stream.settled();
      }
      case 'content_block_delta': {
        const open = event.index === undefined ? undefined : this.#open.get(event.index);
        if (open !== undefined && event.delta?.type === 'input_json_delta') open.json += event.delta.partial_json ?? '';
        return this.#stream.settled();
      }
      case 'content_block_stop': {
        const open = event.index === undefined ? undefined : this.#open.get(event.index);
        if (open === undefined) return this.#stream.settled();
        this.#open.delete(event.index as number);
        if (open.json.trim() === '')
          return this.#stream.complete({ id: open.id, name: open.name, input: open.startInput });
        const input = parseArguments(open.json);
        if (typeof input === 'string') {
          this.#held = open;
          return this.#stream.settled();
        }
        return this.#stream.complete({ id: open.id, name: open.name, input });
      }
      case 'message_delta':
        if (typeof event.delta?.stop_reason === 'string') this.#stopReason = event.delta.stop_reason;
        return this.#stream.settled();
      case 'message_stop':
        return this.finish();
      case 'error':
        return this.finish('error');
      default:
        return this.#stream.settled();
    }
  }

  #releaseHeld(): void {
    const held = this.#held;
    if (held === undefined) return;
    this.#held = undefined;
    void this.#stream.complete({ id: held.id, name: held.name, argumentsText: held.json }).catch(() => undefined);
  }

  /**
   * Ends the turn: called by `message_stop`; call it yourself when the stream broke off. Calls still open get an
   * error result naming the stop reason.
   */
  finish(stopReason = this.#stopReason ?? 'the stream ended'): Promise<void> {
    if (this.#stream.ended) return this.#stream.settled();
    const held = this.#held;
    this.#held = undefined;
    if (held !== undefined) {
      if (stopReason === 'max_tokens') this.#stream.cutOff({ id: held.id, name: held.name, stopReason });
      else
        void this.#stream.complete({ id: held.id, name: held.name, argumentsText: held.json }).catch(() => undefined);
    }
    for (const open of [...this.#open.entries()].sort(([a], [b]) => a - b).map(([, block]) => block))
      this.#stream.cutOff({ id: open.id, name: open.name, stopReason });
    this.#open.clear();
    return this.#stream.end();
  }

  /** Every call's result in model order (cut-off calls included), once the turn is done. */
  results(): Promise<ToolResult[]> {
    return this.#stream.results();
  }
}

export function anthropicToolStream(options: { turn: StreamTurnTarget; tools?: readonly Tool[] }): AnthropicToolStream {
  return new AnthropicToolStream(options);
}
