import type { ToolCall } from '../../contracts/tool-call.js';
import type { ToolResult } from '../../contracts/tool-result.js';
import type { Tool } from '../../tools/define-tool.js';
import { parseArguments } from './shared.js';
import { ToolCallStream } from './stream-assembler.js';
import type { StreamTurnTarget } from './stream-assembler.js';
import { toolNameMap } from './tool-names.js';
import type { ToolNameMap } from './tool-names.js';

/** A Chat Completions stream chunk (`stream: true`, `object: 'chat.completion.chunk'`). */
export interface OpenAIChatStreamChunk {
  choices?: Array<{
    index?: number;
    delta?: {
      tool_calls?: Array<{
        index: number;
        id?: string | null;
        type?: string | null;
        function?: { name?: string | null; arguments?: string | null };
      }> | null;
    };
    finish_reason?: string | null;
  }>;
}

interface OpenCall {
  index: number;
  id: string;
  name: string;
  arguments: string;
}

/**
 * Feeds a streaming turn from a Chat Completions stream: `delta.tool_calls[]` fragments are joined by `index` (the
 * first carries `id` and `function.name`, later ones `function.arguments` pieces); a call is added as soon as the
 * next index starts (the API streams calls one after another) or the choice's `finish_reason` arrives, which also
 * ends the turn. At `finish_reason: 'length'` a call whose arguments are incomplete gets an error result.
 */
export class OpenAIChatToolStream {
  readonly #stream: ToolCallStream;
  readonly #names: ToolNameMap;
  readonly #choice: number;
  readonly #open = new Map<number, OpenCall>();
  #finishReason: string | undefined;

  constructor(options: { turn: StreamTurnTarget; tools?: readonly Tool[]; choice?: number }) {
    this.#stream = new ToolCallStream(options.turn);
    this.#names = toolNameMap(options.tools, 'openai-chat');
    this.#choice = options.choice ?? 0;
  }

  get calls(): readonly ToolCall[] {
    return this.#stream.calls;
  }

  get finishReason(): string | undefined {
    return this.#finishReason;
  }

  /** Takes one chunk; resolves when any call it completed was accepted by the session. */
  push(chunk: OpenAIChatStreamChunk): Promise<void> {
    const choice = chunk.choices?.find((candidate) => (candidate.index ?? 0) === this.#choice);
    for (const fragment of choice?.delta?.tool_calls ?? []) {
      let open = this.#open.get(fragment.index);
      if (open === undefined) {
        this.#completeBefore(fragment.index);
        open = { index: fragment.index, id: '', name: '', arguments: '' };
        this.#open.set(fragment.index, open);
      }
      // Later fragments carry `id: null` and `name: null` (the documented stream): only strings count.
      if (typeof fragment.id === 'string' && open.id === '') open.id = fragment.id;
      if (typeof fragment.function?.name === 'string') open.name += fragment.function.name;
      open.arguments += fragment.function?.arguments ?? '';
    }
    if (typeof choice?.finish_reason === 'string') return this.finish(choice.finish_reason);
    return this.#stream.settled();
  }

  #completeBefore(index: number): void {
    for (const open of this.#ordered()) {
      if (open.index >= index) continue;
      this.#open.delete(open.index);
      void this.#stream
        .complete({ id: open.id, name: this.#names.fromModel(open.name), argumentsText: open.arguments })
        .catch(() => undefined);
    }
  }

  #ordered(): OpenCall[] {
    return [...this.#open.values()].sort((a, b) => a.index - b.index);
  }

  /** Ends the turn: called when `finish_reason` arrives; call it yourself when the stream broke off. */
  finish(finishReason = this.#finishReason ?? 'the stream ended'): Promise<void> {
    this.#finishReason = finishReason;
    if (this.#stream.ended) return this.#stream.settled();
    const cutShort = finishReason !== 'tool_calls' && finishReason !== 'stop';
    for (const open of this.#ordered()) {
      const name = this.#names.fromModel(open.name);
      const incomplete =
        typeof parseArguments(open.arguments) === 'string' || (open.arguments === '' && finishReason === 'length');
      if (cutShort && incomplete) this.#stream.cutOff({ id: open.id, name, stopReason: finishReason });
      else void this.#stream.complete({ id: open.id, name, argumentsText: open.arguments }).catch(() => undefined);
    }
    this.#open.clear();
    return this.#stream.end();
  }

  results(): Promise<ToolResult[]> {
    return this.#stream.results();
  }
}

export function openAIChatToolStream(options: {
  turn: StreamTurnTarget;
  tools?: readonly Tool[];
  choice?: number;
}): OpenAIChatToolStream {
  return new OpenAIChatToolStream(options);
}
