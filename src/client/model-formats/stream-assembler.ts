import type { ToolCall } from '../../contracts/tool-call.js';
import { errorCodes } from '../../contracts/tool-result.js';
import type { ToolResult } from '../../contracts/tool-result.js';
import { parseArguments } from './shared.js';

/** What an assembler feeds: `session.streamTurn(turnId)` (or anything shaped like it). */
export interface StreamTurnTarget {
  add(...calls: ToolCall[]): Promise<unknown>;
  end(): Promise<unknown>;
  results(): AsyncIterable<ToolResult>;
}

/** The model-facing text of a call the model's reply cut off before its input was complete. */
export function cutOffCallText(toolName: string, stopReason: string): string {
  return `<tool_use_error>The ${toolName} call was cut off before its input was complete (the model stopped: ${stopReason}); it did not run. Call it again, with a shorter input if it was long.</tool_use_error>`;
}

/**
 * The provider-neutral half of the streaming assemblers: calls are handed to the streaming turn in model order as
 * each completes (one `add` at a time, so the session sees them in order), `end()` once when the reply stops, and a
 * call the reply cut off gets an error result here instead of running (so every model call has a result and the
 * turn never waits for a call that will not come).
 */
export class ToolCallStream {
  readonly #turn: StreamTurnTarget;
  /** Every call id in model order, cut-off ones included. */
  readonly #order: string[] = [];
  readonly #cutOff = new Map<string, ToolResult>();
  readonly #calls: ToolCall[] = [];
  #accepted: Promise<unknown> = Promise.resolve();
  #ended = false;

  constructor(turn: StreamTurnTarget) {
    this.#turn = turn;
  }

  /** Calls handed to the turn so far, in model order (their input parsed when it was JSON). */
  get calls(): readonly ToolCall[] {
    return this.#calls;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** A complete call: `argumentsText` is the streamed JSON ('' for a no-argument tool), or an already parsed input. */
  complete(call: { id: string; name: string; argumentsText?: string; input?: unknown }): Promise<void> {
    const input = call.argumentsText === undefined ? (call.input ?? {}) : parseArguments(call.argumentsText);
    const toolCall: ToolCall = { id: call.id, name: call.name, input };
    this.#order.push(call.id);
    this.#calls.push(toolCall);
    return this.#chain(() => this.#turn.add(toolCall));
  }

  /** A call the reply stopped in the middle of: it gets an error result and never runs. */
  cutOff(call: { id: string; name: string; stopReason: string }): void {
    this.#order.push(call.id);
    this.#cutOff.set(call.id, {
      callId: call.id,
      toolName: call.name,
      status: 'error',
      modelContent: cutOffCallText(call.name, call.stopReason),
      isError: true,
      errorCode: errorCodes.inputValidation,
      timings: { totalMs: 0, permissionWaitMs: 0, queuedMs: 0 },
    });
  }

  /** Ends the turn (once). A reply without a call that ran opens no turn at all, so there is nothing to end. */
  end(): Promise<void> {
    if (this.#ended) return this.#chain(() => Promise.resolve());
    this.#ended = true;
    if (this.#calls.length === 0) return this.settled();
    return this.#chain(() => this.#turn.end());
  }

  /** Resolves when everything handed on so far was accepted by the session. */
  settled(): Promise<void> {
    return this.#chain(() => Promise.resolve());
  }

  #chain(step: () => Promise<unknown>): Promise<void> {
    this.#accepted = this.#accepted.then(step);
    return this.#accepted.then(() => undefined);
  }

  /**
   * Every call's result in model order once the turn is done: the session's results, with the cut-off calls'
   * error results in their places. Call it after the reply ended.
   */
  async results(): Promise<ToolResult[]> {
    await this.settled();
    let fromSession: AsyncIterator<ToolResult> | undefined;
    const results: ToolResult[] = [];
    for (const id of this.#order) {
      const cut = this.#cutOff.get(id);
      if (cut !== undefined) {
        results.push(cut);
        continue;
      }
      fromSession ??= this.#turn.results()[Symbol.asyncIterator]();
      const next = await fromSession.next();
      if (next.done === true) throw new Error(`The streaming turn ended without a result for call ${id}`);
      results.push(next.value);
    }
    return results;
  }
}
