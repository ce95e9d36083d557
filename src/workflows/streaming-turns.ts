import { condition, log, setHandler } from '@temporalio/workflow';
import { DEFAULT_MAX_CALLS_PER_TURN, MAX_TURN_REQUEST_BYTES } from '../contracts/defaults.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import { addCallsUpdate, awaitResultsUpdate } from '../contracts/messages.js';
import { formatZodError, oversizeRequestReason, toolCallSchemas } from '../contracts/tool-call.js';
import type { AddCallsRequest, AwaitResultsRequest, ToolCall } from '../contracts/tool-call.js';
import type { AddCallsResult, AwaitResultsResult, ToolResult } from '../contracts/tool-result.js';
import { withSettledCalls } from './doubt-resolution.js';
import { inReleasedScope } from './released-scope.js';
import type { SessionState } from './session-state.js';
import type { ToolExecutor } from './tool-executor.js';
import type { Turn } from './turn.js';

/**
 * A session's streaming turns (docs/ARCHITECTURE.md, Wire contract): `addCalls` opens a turn and adds calls to it as
 * the model streams them, each planned at once and run by the scheduler when its group may start; `awaitResults` hands
 * out results in call order as they become final. A streaming turn queues behind the turns accepted before it, like a
 * whole one.
 */
export class StreamingTurns {
  readonly #executor: ToolExecutor;
  /** What an update that starts calls waits for first (the session's admission), if anything. */
  readonly #gate: () => Promise<void> | undefined;
  /** Streaming turns by id, while they run (completed ones answer from `state.completedTurns`). */
  readonly #running = new Map<string, Turn>();

  constructor(options: { executor: ToolExecutor; gate: () => Promise<void> | undefined }) {
    this.#executor = options.executor;
    this.#gate = options.gate;
  }

  /** Whether `turnId` is a streaming turn still running. */
  has(turnId: string): boolean {
    return this.#running.has(turnId);
  }

  /** The `addCalls` and `awaitResults` updates. */
  installHandlers(): void {
    setHandler(
      addCallsUpdate,
      (request: AddCallsRequest): Promise<AddCallsResult> | AddCallsResult => {
        const gate = this.#gate();
        return gate === undefined ? this.#addCalls(request) : gate.then(() => this.#addCalls(request));
      },
      {
        validator: (request) => this.#validateAddCalls(request),
      },
    );
    setHandler(awaitResultsUpdate, (request: AwaitResultsRequest) => this.#awaitResults(request), {
      validator: (request) => {
        const parsed = toolCallSchemas().awaitResults.safeParse(request);
        if (!parsed.success) throw new Error(`Invalid awaitResults request: ${formatZodError(parsed.error)}`);
        if (!this.#running.has(request.turnId) && !this.#executor.state.completedTurns.has(request.turnId)) {
          throw new Error(`Unknown turn "${request.turnId}": open a streaming turn with addCalls first`);
        }
      },
    });
  }

  #addCalls(request: AddCallsRequest): AddCallsResult {
    const { state, queue, scheduler } = this.#executor;
    let turn = this.#running.get(request.turnId);
    let calls: readonly ToolCall[] = request.calls;
    if (turn === undefined) {
      const created = scheduler.createTurn({ turnId: request.turnId, kind: 'streaming' });
      // Calls in doubt a person settled since the last turn come first (docs/SEMANTICS.md, Calls in doubt).
      calls = withSettledCalls(state, created, calls);
      turn = created;
      this.#running.set(request.turnId, created);
      queue
        .enqueue(request.turnId, (current) => scheduler.run(created, current))
        .catch((error: unknown) =>
          log.error('streaming turn failed', { turnId: request.turnId, error: projectErrorMessage(error) }),
        )
        .finally(() => this.#running.delete(request.turnId));
    }
    scheduler.addCalls({ turn, calls, done: request.done === true });
    return { turnId: turn.turnId, total: turn.calls.length, done: turn.done };
  }

  #validateAddCalls(request: AddCallsRequest): void {
    const { state, queue } = this.#executor;
    const parsed = toolCallSchemas().addCalls.safeParse(request);
    if (!parsed.success) throw new Error(`Invalid addCalls request: ${formatZodError(parsed.error)}`);
    const oversize = oversizeRequestReason(request.calls, MAX_TURN_REQUEST_BYTES);
    if (oversize !== undefined) throw new Error(`Invalid addCalls request: ${oversize}`);
    const turn = this.#running.get(request.turnId);
    if (turn === undefined) {
      if (queue.knows(request.turnId))
        throw new Error(
          `Turn "${request.turnId}" is a whole turn (executeTurn) or has ended; a streaming turn needs a new turnId`,
        );
      checkCallCount(state, request.calls.length, request.turnId);
      return;
    }
    if (turn.done && request.calls.length > 0)
      throw new Error(`Turn "${request.turnId}" is done: no more calls can be added`);
    const known = new Set(turn.calls.map((entry) => entry.call.id));
    const duplicate = parsed.data.calls.find((call) => known.has(call.id));
    if (duplicate !== undefined) throw new Error(`duplicate call id "${duplicate.id}" in turn "${request.turnId}"`);
    checkCallCount(state, turn.calls.length + request.calls.length, request.turnId);
  }

  async #awaitResults(request: AwaitResultsRequest): Promise<AwaitResultsResult> {
    const { state, scheduler } = this.#executor;
    const since = request.since ?? 0;
    const turn = this.#running.get(request.turnId);
    if (turn === undefined) {
      const results = state.completedTurns.get(request.turnId)?.results.slice(since) ?? [];
      return { results, next: since + results.length, done: true };
    }
    await inReleasedScope(() => condition(() => scheduler.readyCount(turn) > since || turn.ended));
    const upTo = scheduler.readyCount(turn);
    scheduler.handOut(turn, upTo);
    const ready = turn.calls.slice(since, upTo);
    for (const entry of ready) entry.state = 'yielded';
    const results = ready.map((entry) => entry.result).filter((result): result is ToolResult => result !== undefined);
    const next = since + results.length;
    return { results, next, done: turn.ended && next >= turn.calls.length };
  }
}

/** A turn's calls are bounded by the session's `maxCallsPerTurn`: a request that would pass it is rejected. */
export function checkCallCount(state: SessionState, count: number, turnId: string): void {
  const maxCalls = state.options.maxCallsPerTurn ?? DEFAULT_MAX_CALLS_PER_TURN;
  if (count > maxCalls) {
    throw new Error(
      `Turn "${turnId}" has ${count} calls, over this session's limit of ${maxCalls} calls per turn (maxCallsPerTurn); send fewer calls per turn`,
    );
  }
}
