import { isCancellation } from '@temporalio/workflow';
import type { InterruptBehavior, ReadyCallPlan } from '../contracts/call-plan.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import { batchLocalCalls } from '../contracts/local-calls.js';
import { OPERATOR_RULE_LABEL, parseRules } from '../contracts/permission-rules.js';
import { errorCodes } from '../contracts/tool-result.js';
import type { ToolResult } from '../contracts/tool-result.js';
import { turnStopReason } from '../contracts/turn-control.js';
import type { ApprovalBroker } from './approval-broker.js';
import type { CallCompletion } from './results.js';
import { endedResult, skippedReason } from './results.js';
import { runCall } from './run-call.js';
import type { TurnCall } from './schedule-calls.js';
import type { SessionState } from './session-state.js';
import type { SiblingGroup } from './sibling-group.js';
import type { Turn } from './turn.js';
import type { PreparedGroup } from './turn-planning.js';
import { prepareGroup } from './turn-planning.js';
import type { RunningTurn } from './turn-queue.js';

/**
 * Runs the calls the scheduler starts together: Prepare for them, then each one's run (`runCall`), each result
 * completing its call. When the last running call of a group completes, the group ends: its context modifiers apply in
 * call order (docs/SEMANTICS.md, Session state) and `ToolBatchComplete` reports it.
 */
export class GroupRunner {
  readonly #state: SessionState;
  readonly #broker: ApprovalBroker;
  /** Calls between permission and result, with their interrupt behaviour (the scheduler's, query `activeTurn`). */
  readonly #executing: Map<string, InterruptBehavior>;

  constructor(options: { state: SessionState; broker: ApprovalBroker; executing: Map<string, InterruptBehavior> }) {
    this.#state = options.state;
    this.#broker = options.broker;
    this.#executing = options.executing;
  }

  /** Prepare for the calls that start together, then each one's run; each result completes its call. */
  async runBatch(options: {
    turn: Turn;
    current: RunningTurn;
    batch: readonly TurnCall[];
    siblings: SiblingGroup;
  }): Promise<void> {
    const { turn, current, batch, siblings } = options;
    const toPrepare: TurnCall[] = [];
    for (const entry of batch) {
      const planned = entry.planned;
      if (planned?.kind === 'rejected')
        this.endCall({
          turn,
          entry,
          status: planned.status,
          modelContent: planned.modelContent,
          errorCode: planned.errorCode,
        });
      else toPrepare.push(entry);
    }
    if (toPrepare.length === 0) return;
    let prepared: PreparedGroup;
    try {
      prepared = await prepareGroup(this.#state, turn, toPrepare);
    } catch (error) {
      const skip = isCancellation(error)
        ? skippedReason({ interrupted: current.interrupted ?? {}, stopReason: undefined })
        : undefined;
      const modelContent =
        skip?.modelContent ?? `Switchyard could not prepare the tool calls: ${projectErrorMessage(error)}`;
      for (const entry of toPrepare)
        this.endCall({
          turn,
          entry,
          status: skip === undefined ? 'error' : 'cancelled',
          modelContent,
          errorCode: skip?.errorCode ?? errorCodes.prepareFailed,
        });
      return;
    }
    turn.cwd ??= prepared.cwd;
    this.#state.reportUntrustedSettings(turn.turnId, prepared.untrustedSettings);
    const ready = prepared.plans.filter((plan): plan is ReadyCallPlan => plan.kind !== 'rejected');
    const localCalls = batchLocalCalls(ready, turn.localCalls);
    const operator =
      prepared.operatorRules === undefined
        ? undefined
        : parseRules(prepared.operatorRules, () => undefined, OPERATOR_RULE_LABEL);
    await Promise.all(
      toPrepare.map(async (entry, offset) => {
        const plan = prepared.plans[offset];
        if (plan === undefined || plan.kind === 'rejected') {
          const rejected = plan ?? {
            status: 'error' as const,
            modelContent: 'Switchyard prepared no plan for this call.',
            errorCode: errorCodes.prepareFailed,
          };
          this.endCall({
            turn,
            entry,
            status: rejected.status,
            modelContent: rejected.modelContent,
            errorCode: rejected.errorCode,
          });
          return;
        }
        const ran = prepared.ran?.outcomes[plan.callId];
        // A call Plan ran began with Plan.
        if (ran !== undefined && prepared.ran !== undefined) entry.startedAt = prepared.ran.since;
        const completion = await runCall({
          state: this.#state,
          broker: this.#broker,
          turn: current,
          cwd: prepared.cwd,
          plan,
          clock: this.#clock(turn, entry),
          siblings,
          executing: this.#executing,
          ...(localCalls === undefined ? {} : { localCalls }),
          ...(operator === undefined ? {} : { operator }),
          ...(ran === undefined ? {} : { ran }),
        });
        this.#complete(turn, entry, completion);
      }),
    );
  }

  /** A call that ends without running its pipeline (rejected, skipped, or failed to prepare). */
  endCall(options: {
    turn: Turn;
    entry: TurnCall;
    status: ToolResult['status'];
    modelContent: string;
    errorCode: string;
  }): void {
    const { turn, entry } = options;
    const call = { callId: entry.call.id, toolName: entry.planned?.toolName ?? entry.call.name };
    const result = endedResult({
      state: this.#state,
      clock: this.#clock(turn, entry),
      call,
      status: options.status,
      modelContent: options.modelContent,
      errorCode: options.errorCode,
    });
    this.#complete(turn, entry, { result });
  }

  #clock(turn: Turn, entry: TurnCall): { sessionId: string; turnId: string; startedAt: number | undefined } {
    return { sessionId: this.#state.sessionId, turnId: turn.turnId, startedAt: entry.startedAt };
  }

  #complete(turn: Turn, entry: TurnCall, completion: CallCompletion): void {
    const wasGrouped = entry.state === 'executing';
    entry.state = 'completed';
    entry.finishedAt = Date.now();
    entry.completion = completion;
    const { result } = completion;
    const stopReason = turnStopReason(result);
    if (stopReason !== undefined && turn.stopReason === undefined) turn.stopReason = stopReason;
    if (!wasGrouped) return;
    turn.pendingChanges.push({ index: entry.index, changes: completion });
    if (turn.calls.some((other) => other.state === 'executing')) return;
    // The group has ended: context modifiers apply after the whole group, in call order (docs/SEMANTICS.md, Session
    // state).
    const changes = turn.pendingChanges.sort((a, b) => a.index - b.index).map((change) => change.changes);
    turn.pendingChanges = [];
    this.#state.apply(changes);
    const groupIndex = turn.group?.index ?? 0;
    const members = turn.calls.filter((other) => other.groupIndex === groupIndex);
    const failed = members.filter((other) => other.completion?.result.isError === true).length;
    this.#state.emit({
      type: 'ToolBatchComplete',
      turnId: turn.turnId,
      groupIndex,
      succeeded: members.length - failed,
      failed,
    });
  }
}
