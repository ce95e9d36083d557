import { condition, isCancellation } from '@temporalio/workflow';
import { oversizeToolResultReason } from '../contracts/client-tools.js';
import type { PendingClientCall, SubmitToolResultRequest } from '../contracts/client-tools.js';
import type { CallOutcome } from '../contracts/pipeline.js';
import { texts } from '../contracts/texts.js';
import { errorCodes } from '../contracts/tool-result.js';
import { budgetedClientAnswer } from './client-result-budget.js';

interface ParkedCall {
  view: PendingClientCall;
  answer?: SubmitToolResultRequest;
}

/**
 * Client-tool calls that passed permission and wait for the client's answer (update `submitToolResult`). The wait is
 * workflow state, so it survives worker and server restarts; it is a wait, not execution time (no deadline runs).
 * Answered call ids are remembered for the run, so a second answer is rejected rather than lost silently. An answer of
 * any size ends as a result: a large one through the result budget (`budgetedClientAnswer`).
 */
export class ClientCallBoard {
  readonly #parked = new Map<string, ParkedCall>();
  readonly #answered = new Set<string>();
  readonly #sessionId: string;
  /** Whether a local activity on this worker may store large answers (the session's tools run here). */
  readonly #localStore: boolean;

  constructor(options: { sessionId: string; localStore: boolean }) {
    this.#sessionId = options.sessionId;
    this.#localStore = options.localStore;
  }

  /** Query `pendingClientCalls`: the calls waiting now, oldest first. */
  pending(): PendingClientCall[] {
    return [...this.#parked.values()].filter((entry) => entry.answer === undefined).map((entry) => entry.view);
  }

  /**
   * The update validator: rejects an unknown or already answered call id, and an answer over
   * `SUBMIT_TOOL_RESULT_MAX_BYTES` (nothing is applied, nothing enters history).
   */
  validate(request: SubmitToolResultRequest): void {
    const oversize = oversizeToolResultReason(request);
    if (oversize !== undefined) throw new Error(oversize);
    if (this.#answered.has(request.callId)) throw new Error(`Client call "${request.callId}" was already answered`);
    const parked = this.#parked.get(request.callId);
    if (parked === undefined)
      throw new Error(`No client call "${request.callId}" is waiting for a result (query pendingClientCalls)`);
  }

  /** The update handler, after the validator accepted it. */
  submit(request: SubmitToolResultRequest): { callId: string; accepted: true } {
    this.validate(request);
    const parked = this.#parked.get(request.callId)!;
    parked.answer = request;
    this.#answered.add(request.callId);
    return { callId: request.callId, accepted: true };
  }

  /**
   * Parks a call until the client answers, the turn is interrupted (cancellation of the turn's scope) or `timeoutMs`
   * passes. Never throws: each ending is the call's outcome.
   */
  async park(options: {
    callId: string;
    turnId: string;
    toolName: string;
    input: unknown;
    timeoutMs?: number;
    onParked: () => void;
  }): Promise<CallOutcome> {
    const { callId, turnId, toolName, input, timeoutMs } = options;
    const entry: ParkedCall = {
      view: { callId, turnId, toolName, input, requestedAt: new Date(Date.now()).toISOString() },
    };
    this.#parked.set(callId, entry);
    options.onParked();
    const startedAt = Date.now();
    try {
      if (timeoutMs === undefined) await condition(() => entry.answer !== undefined);
      else await condition(() => entry.answer !== undefined, timeoutMs);
      const waitedMs = Date.now() - startedAt;
      if (entry.answer === undefined) {
        this.#answered.add(callId); // too late now: a later answer is rejected, not taken for another call
        return {
          status: 'error',
          modelContent: texts.clientToolTimedOut(toolName, timeoutMs ?? 0),
          isError: true,
          errorCode: errorCodes.timeout,
          activeMs: 0,
          queuedMs: waitedMs,
        };
      }
      const { content, isError } = entry.answer;
      const answer =
        content === ''
          ? { modelContent: texts.emptyOutput(toolName) }
          : await budgetedClientAnswer({
              sessionId: this.#sessionId,
              callId,
              toolName,
              content,
              localStore: this.#localStore,
            });
      const { modelContent } = answer;
      const budgeted = {
        ...(answer.budget === undefined ? {} : { budget: answer.budget }),
        ...(answer.aggregateReplacement === undefined ? {} : { aggregateReplacement: answer.aggregateReplacement }),
      };
      return isError === true
        ? {
            status: 'error',
            modelContent,
            isError: true,
            errorCode: errorCodes.handlerError,
            activeMs: 0,
            queuedMs: waitedMs,
            ...budgeted,
          }
        : { status: 'success', modelContent, isError: false, activeMs: 0, queuedMs: waitedMs, ...budgeted };
    } catch (error) {
      if (!isCancellation(error)) throw error;
      this.#answered.add(callId);
      return {
        status: 'cancelled',
        modelContent: texts.rejectMessage,
        isError: true,
        errorCode: errorCodes.cancelled,
        activeMs: 0,
        queuedMs: Date.now() - startedAt,
      };
    } finally {
      this.#parked.delete(callId);
    }
  }
}
