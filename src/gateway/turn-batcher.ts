import type { ToolCall } from '../contracts/tool-call.js';
import type { ToolResult, TurnResult } from '../contracts/tool-result.js';

interface Waiting {
  call: ToolCall;
  resolve(result: ToolResult): void;
  reject(error: unknown): void;
}

/**
 * Collects the calls that arrive within `windowMs` of the first one into one turn, so calls an MCP client sends
 * together (the tool calls of one model reply) are grouped by the session as one reply's calls are: read-only calls
 * together, side-effecting calls alone, in arrival order. Each caller gets its own call's result.
 */
export class TurnBatcher {
  #waiting: Waiting[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(
    /** Runs one turn; `turnId` is fresh for every batch. */
    private readonly runTurn: (calls: ToolCall[]) => Promise<TurnResult>,
    private readonly options: { windowMs: number; maxCalls: number },
  ) {}

  /** Queues a call for the next turn; resolves with its result once that turn ends. */
  submit(call: ToolCall): Promise<ToolResult> {
    return new Promise<ToolResult>((resolve, reject) => {
      this.#waiting.push({ call, resolve, reject });
      if (this.#waiting.length >= this.options.maxCalls) this.#flush();
      else this.#timer ??= setTimeout(() => this.#flush(), this.options.windowMs);
    });
  }

  #flush(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = this.#waiting;
    this.#waiting = [];
    if (batch.length === 0) return;
    this.runTurn(batch.map((entry) => entry.call)).then(
      (turn) => {
        for (const entry of batch) {
          const result = turn.results.find((candidate) => candidate.callId === entry.call.id);
          if (result === undefined)
            entry.reject(new Error(`the turn "${turn.turnId}" returned no result for call "${entry.call.id}"`));
          else entry.resolve(result);
        }
      },
      (error: unknown) => {
        for (const entry of batch) entry.reject(error);
      },
    );
  }
}
