import type { ToolCall } from '../../contracts/tool-call.js';
import type { ToolResult } from '../../contracts/tool-result.js';
import type { Tool } from '../../tools/define-tool.js';
import { ToolCallStream } from './stream-assembler.js';
import type { StreamTurnTarget } from './stream-assembler.js';
import { toolNameMap } from './tool-names.js';
import type { ToolNameMap } from './tool-names.js';

/** An event of the Responses stream (`stream: true`). */
export interface OpenAIResponsesStreamEvent {
  type: string;
  item_id?: string;
  output_index?: number;
  delta?: string;
  arguments?: string;
  item?: { type: string; id?: string; call_id?: string; name?: string; arguments?: string };
  response?: { status?: string; incomplete_details?: { reason?: string } | null };
}

interface OpenItem {
  callId: string;
  name: string;
  arguments: string;
}

/**
 * Feeds a streaming turn from a Responses stream: `response.output_item.added` opens a `function_call` item,
 * `response.function_call_arguments.delta` appends to it, and `response.function_call_arguments.done` (or
 * `response.output_item.done`) adds the call, keyed by its `call_id`. `response.completed` ends the turn;
 * `response.incomplete` (`max_output_tokens`) and `response.failed` end it too, giving unfinished calls an error
 * result.
 */
export class OpenAIResponsesToolStream {
  readonly #stream: ToolCallStream;
  readonly #names: ToolNameMap;
  readonly #open = new Map<string, OpenItem>();
  readonly #done = new Set<string>();

  constructor(options: { turn: StreamTurnTarget; tools?: readonly Tool[] }) {
    this.#stream = new ToolCallStream(options.turn);
    this.#names = toolNameMap(options.tools, 'openai-responses');
  }

  get calls(): readonly ToolCall[] {
    return this.#stream.calls;
  }

  /** Takes one event; resolves when any call it completed was accepted by the session. */
  push(event: OpenAIResponsesStreamEvent): Promise<void> {
    switch (event.type) {
      case 'response.output_item.added': {
        const item = event.item;
        if (item?.type === 'function_call' && item.id !== undefined) {
          this.#open.set(item.id, {
            callId: item.call_id ?? item.id,
            name: this.#names.fromModel(item.name ?? ''),
            arguments: item.arguments ?? '',
          });
        }
        return this.#stream.settled();
      }
      case 'response.function_call_arguments.delta': {
        const open = event.item_id === undefined ? undefined : this.#open.get(event.item_id);
        if (open !== undefined) open.arguments += event.delta ?? '';
        return this.#stream.settled();
      }
      case 'response.function_call_arguments.done':
        return this.#complete(event.item_id, event.arguments);
      case 'response.output_item.done': {
        const item = event.item;
        if (item?.type !== 'function_call' || item.id === undefined) return this.#stream.settled();
        if (!this.#open.has(item.id) && !this.#done.has(item.id)) {
          this.#open.set(item.id, {
            callId: item.call_id ?? item.id,
            name: this.#names.fromModel(item.name ?? ''),
            arguments: '',
          });
        }
        return this.#complete(item.id, item.arguments);
      }
      case 'response.completed':
        return this.finish('completed');
      case 'response.incomplete':
        return this.finish(event.response?.incomplete_details?.reason ?? 'incomplete');
      case 'response.failed':
        return this.finish('failed');
      case 'error':
        return this.finish('error');
      default:
        return this.#stream.settled();
    }
  }

  #complete(itemId: string | undefined, finalArguments: string | undefined): Promise<void> {
    const open = itemId === undefined ? undefined : this.#open.get(itemId);
    if (open === undefined || itemId === undefined) return this.#stream.settled();
    this.#open.delete(itemId);
    this.#done.add(itemId);
    return this.#stream.complete({ id: open.callId, name: open.name, argumentsText: finalArguments ?? open.arguments });
  }

  /** Ends the turn: called by `response.completed` / `.incomplete` / `.failed`; call it yourself if the stream broke off. */
  finish(reason = 'the stream ended'): Promise<void> {
    if (this.#stream.ended) return this.#stream.settled();
    for (const open of this.#open.values()) {
      if (reason === 'completed')
        void this.#stream
          .complete({ id: open.callId, name: open.name, argumentsText: open.arguments })
          .catch(() => undefined);
      else this.#stream.cutOff({ id: open.callId, name: open.name, stopReason: reason });
    }
    this.#open.clear();
    return this.#stream.end();
  }

  results(): Promise<ToolResult[]> {
    return this.#stream.results();
  }
}

export function openAIResponsesToolStream(options: {
  turn: StreamTurnTarget;
  tools?: readonly Tool[];
}): OpenAIResponsesToolStream {
  return new OpenAIResponsesToolStream(options);
}
