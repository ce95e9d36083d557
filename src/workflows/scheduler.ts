import { CancellationScope, condition, log } from '@temporalio/workflow';
import type { InterruptBehavior } from '../contracts/call-plan.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import type { PlannedCalls } from '../contracts/pipeline.js';
import { callInputBytes } from '../contracts/tool-call.js';
import type { ToolCall } from '../contracts/tool-call.js';
import { errorCodes } from '../contracts/tool-result.js';
import type { TurnResult } from '../contracts/tool-result.js';
import type { ApprovalBroker } from './approval-broker.js';
import { GroupRunner } from './group-runner.js';
import { inReleasedScope } from './released-scope.js';
import { handOutResults } from './result-handout.js';
import { skippedReason } from './results.js';
import { completedPrefix, startableCalls } from './schedule-calls.js';
import type { TurnCall } from './schedule-calls.js';
import type { SessionState } from './session-state.js';
import { SiblingGroup } from './sibling-group.js';
import { createTurn } from './turn.js';
import type { Turn } from './turn.js';
import { emitWholeGrouping, planTurnCalls } from './turn-planning.js';
import type { RunningTurn } from './turn-queue.js';

/**
 * The one scheduler for whole and streaming turns (docs/ARCHITECTURE.md, How one call flows): calls go queued →
 * executing → completed → yielded; a group starts when the one before it has finished; each call's Prepare runs when
 * its group starts (so a Write's file exists for the Edit after it, and a call a turn stop or an interrupt skips
 * never runs a hook); context modifiers apply in call order when a group ends (`group-runner.ts`); results are handed
 * out in call order through one aggregate budget (`result-handout.ts`).
 */
export class Scheduler {
  readonly #state: SessionState;
  readonly #onPlanned: (planned: PlannedCalls) => void;
  readonly #groups: GroupRunner;
  /** Calls between permission and result, with their interrupt behaviour (query `activeTurn`). */
  readonly executing = new Map<string, InterruptBehavior>();

  constructor(options: { state: SessionState; broker: ApprovalBroker; onPlanned: (planned: PlannedCalls) => void }) {
    this.#state = options.state;
    this.#onPlanned = options.onPlanned;
    this.#groups = new GroupRunner({ state: options.state, broker: options.broker, executing: this.executing });
  }

  createTurn(options: { turnId: string; kind: Turn['kind'] }): Turn {
    return createTurn(options);
  }

  /** Adds calls to a turn; streaming calls are planned at once (Plan has no side effects), even while the turn queues. */
  addCalls(options: { turn: Turn; calls: readonly ToolCall[]; done: boolean }): void {
    const { turn } = options;
    const addedAt = Date.now();
    const added = options.calls.map((call, offset): TurnCall => ({
      index: turn.calls.length + offset,
      call,
      inputBytes: callInputBytes(call),
      addedAt,
      state: 'queued',
    }));
    turn.calls.push(...added);
    if (options.done) turn.done = true;
    if (turn.kind === 'streaming' && added.length > 0) {
      // Called from the addCalls handler, in the session's root scope: planning gets a scope that ends with it.
      inReleasedScope(() => this.#plan({ turn, added, prepareFirstGroup: false })).catch((error: unknown) =>
        log.error('planning failed', { error: projectErrorMessage(error) }),
      );
    }
  }

  /** Runs a turn to its end; returns its result with every result handed out. */
  async run(turn: Turn, current: RunningTurn): Promise<TurnResult> {
    const state = this.#state;
    state.emit({
      type: 'TurnStarted',
      turnId: turn.turnId,
      callIds: turn.calls.map((entry) => entry.call.id),
      streaming: turn.kind === 'streaming',
    });
    if (turn.kind === 'whole') {
      // A settled call in doubt reported as `ran` is complete before the turn starts: nothing to plan.
      const added = turn.calls.filter((entry) => entry.completion === undefined);
      await this.#plan({ turn, added, prepareFirstGroup: true });
      emitWholeGrouping(state, turn);
    }
    const maxConcurrency = (): number => turn.maxConcurrency ?? 10;
    const finished = (): boolean => turn.done && turn.calls.every((entry) => entry.completion !== undefined);
    const skipping = (): boolean =>
      skippedReason({ interrupted: current.interrupted, stopReason: turn.stopReason }) !== undefined;
    for (;;) {
      // Not cancellable: the loop handles an interrupt itself (it ends what is queued and waits for the rest).
      await CancellationScope.nonCancellable(() =>
        condition(
          () =>
            finished() ||
            (current.interrupted !== undefined && !turn.done) ||
            (skipping() && turn.calls.some((entry) => entry.state === 'queued')) ||
            startableCalls({ calls: turn.calls, group: turn.group, maxConcurrency: maxConcurrency() }).start.length > 0,
        ),
      );
      // An interrupted turn takes no more calls.
      if (current.interrupted !== undefined) turn.done = true;
      if (this.#skipQueued(turn, current)) continue;
      if (finished()) break;
      const { start, newGroup } = startableCalls({
        calls: turn.calls,
        group: turn.group,
        maxConcurrency: maxConcurrency(),
      });
      this.#startGroupCalls(turn, start, newGroup);
      this.#groups.runBatch({ turn, current, batch: start, siblings: turn.siblings }).catch((error: unknown) => {
        const modelContent = `Switchyard failed while running the call: ${projectErrorMessage(error)}`;
        for (const entry of start)
          if (entry.completion === undefined)
            this.#groups.endCall({ turn, entry, status: 'error', modelContent, errorCode: errorCodes.handlerError });
      });
    }
    this.handOut(turn, turn.calls.length);
    turn.ended = true;
    return this.#turnResult(turn, current);
  }

  /**
   * Makes results final up to `upTo`, in call order, through the aggregate budget (replaced stays replaced), then
   * joins hook context (so it survives an envelope).
   */
  handOut(turn: Turn, upTo: number): void {
    handOutResults(this.#state, turn, upTo);
  }

  /** How many results from the start can be handed out now. */
  readyCount(turn: Turn): number {
    return completedPrefix(turn.calls);
  }

  /** Plan for calls the turn adds (`turn-planning.ts`). */
  #plan(options: { turn: Turn; added: readonly TurnCall[]; prepareFirstGroup: boolean }): Promise<void> {
    return planTurnCalls({ ...options, state: this.#state, onPlanned: this.#onPlanned });
  }

  /** Marks calls as executing in the open group (a new one when `newGroup`), announcing each of a streaming turn. */
  #startGroupCalls(turn: Turn, start: readonly TurnCall[], newGroup: boolean): void {
    if (newGroup || turn.group === undefined) {
      turn.group = { index: (turn.group?.index ?? -1) + 1, size: 0, allSafe: true, bytes: 0 };
      turn.siblings = new SiblingGroup();
    }
    const group = turn.group;
    for (const entry of start) {
      entry.state = 'executing';
      entry.startedAt = Date.now();
      entry.groupIndex = group.index;
      group.size += 1;
      group.bytes = (group.bytes ?? 0) + (entry.inputBytes ?? 0);
      group.allSafe = group.allSafe && entry.planned?.kind === 'planned' && entry.planned.concurrentSafe;
      if (turn.kind === 'streaming') {
        this.#state.emit({
          type: 'ToolCallScheduled',
          turnId: turn.turnId,
          callId: entry.call.id,
          toolName: entry.planned?.toolName ?? entry.call.name,
          groupIndex: group.index,
        });
      }
    }
  }

  /** Ends every queued call once the turn is interrupted or stopped; true when any was ended. */
  #skipQueued(turn: Turn, current: RunningTurn): boolean {
    const skip = skippedReason({ interrupted: current.interrupted, stopReason: turn.stopReason });
    if (skip === undefined) return false;
    let any = false;
    for (const entry of turn.calls) {
      if (entry.state !== 'queued') continue;
      this.#groups.endCall({ turn, entry, status: 'cancelled', ...skip });
      any = true;
    }
    return any;
  }

  /** The ended turn's result (every result handed out), announced by `TurnCompleted`. */
  #turnResult(turn: Turn, current: RunningTurn): TurnResult {
    const results = turn.calls.map((entry) => {
      if (entry.result === undefined) throw new Error(`unreachable: no result for call ${entry.call.id}`);
      return entry.result;
    });
    const reason =
      current.interrupted !== undefined
        ? `interrupted${current.interrupted.reason ? `: ${current.interrupted.reason}` : ''}`
        : turn.stopReason;
    const stopped = reason !== undefined;
    this.#state.emit({
      type: 'TurnCompleted',
      turnId: turn.turnId,
      stopped,
      ...(stopped ? { stopReason: reason } : {}),
      resultCount: results.length,
    });
    return stopped
      ? { turnId: turn.turnId, results, stopped, stopReason: reason }
      : { turnId: turn.turnId, results, stopped };
  }
}
