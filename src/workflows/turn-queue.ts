import { CancellationScope, condition } from '@temporalio/workflow';
import type { TurnResult } from '../contracts/tool-result.js';
import { inReleasedScope } from './released-scope.js';
import type { CallTurn } from './run-call.js';
import type { SessionState } from './session-state.js';

/** The turn that runs now, with the scope an interrupt cancels. */
export interface RunningTurn extends CallTurn {
  scope: CancellationScope;
}

/**
 * Turns of one session run one at a time, in the order their updates were accepted, each in its own cancellation
 * scope. A turnId already seen re-attaches to its turn (running or completed) instead of running it twice.
 */
export class TurnQueue {
  readonly #state: SessionState;
  readonly #onChange: () => void;
  /** Turn ids in acceptance order; the head is running. */
  readonly #queue: string[] = [];
  readonly #running = new Map<string, Promise<TurnResult>>();
  #current: RunningTurn | undefined;

  constructor(options: { state: SessionState; onChange: () => void }) {
    this.#state = options.state;
    this.#onChange = options.onChange;
  }

  get idle(): boolean {
    return this.#queue.length === 0;
  }

  get current(): RunningTurn | undefined {
    return this.#current;
  }

  get runningTurnId(): string | undefined {
    return this.#queue[0];
  }

  get queuedTurns(): number {
    return Math.max(0, this.#queue.length - 1);
  }

  /** Whether a turn with this id was accepted (queued, running, or completed and still remembered). */
  knows(turnId: string): boolean {
    return this.#running.has(turnId) || this.#state.completedTurns.has(turnId);
  }

  /** The result (or the running promise) of a turn already accepted. */
  attach(turnId: string): TurnResult | Promise<TurnResult> | undefined {
    return this.#state.completedTurns.get(turnId) ?? this.#running.get(turnId);
  }

  /** Queues a turn; `run` starts when every turn accepted before it has ended. */
  enqueue(turnId: string, run: (current: RunningTurn) => Promise<TurnResult>): Promise<TurnResult> {
    const promise = this.#runInOrder(turnId, run);
    this.#running.set(turnId, promise);
    return promise;
  }

  /** Interrupts the running turn (signal `interrupt`); a second interrupt of the same turn changes nothing. */
  interrupt(reason: string | undefined): void {
    const current = this.#current;
    if (current === undefined || current.interrupted !== undefined) return;
    current.interrupted = reason === undefined ? {} : { reason };
    current.scope.cancel();
  }

  async #runInOrder(turnId: string, run: (current: RunningTurn) => Promise<TurnResult>): Promise<TurnResult> {
    this.#queue.push(turnId);
    this.#onChange();
    try {
      // Everything the turn waits on hangs off a scope that ends with it, so the session does not keep the turn.
      return await inReleasedScope(() => this.#runWhenFirst(turnId, run));
    } finally {
      this.#queue.shift();
      this.#running.delete(turnId);
      this.#onChange();
    }
  }

  async #runWhenFirst(turnId: string, run: (current: RunningTurn) => Promise<TurnResult>): Promise<TurnResult> {
    await condition(() => this.#queue[0] === turnId);
    this.#onChange();
    const scope = new CancellationScope();
    const current: RunningTurn = { turnId, scope };
    this.#current = current;
    let result: TurnResult;
    try {
      result = await scope.run(() => run(current));
    } finally {
      this.#current = undefined;
    }
    this.#state.recordCompletedTurn(result);
    return result;
  }
}
