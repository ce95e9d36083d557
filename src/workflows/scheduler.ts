import { CancellationScope, condition, isCancellation, log } from '@temporalio/workflow';
import type { CallPlan, InterruptBehavior, ReadyCallPlan } from '../contracts/call-plan.js';
import { expandPlan } from '../contracts/compact-plan.js';
import { utf8Length } from '../contracts/utf8-length.js';
import { DEFAULT_AGGREGATE_BUDGET_CHARS } from '../contracts/defaults.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import { groupCalls } from '../contracts/group-calls.js';
import type {
  CallOutcome,
  LocalCallsPolicy,
  PlanCallsInput,
  PlannedCalls,
  PrepareCallsInput,
  PreparedCalls,
} from '../contracts/pipeline.js';
import { texts } from '../contracts/texts.js';
import { callInputBytes } from '../contracts/tool-call.js';
import type { ToolCall } from '../contracts/tool-call.js';
import { errorCodes } from '../contracts/tool-result.js';
import type { ToolResult, TurnResult } from '../contracts/tool-result.js';
import { pipelineActivities } from './activity-routing.js';
import { hooksOffPath, postHooksOffPath, regularPlanCalls, regularPrepareCalls } from './prepare-off-path.js';
import { applyAggregateBudget } from './aggregate-budget.js';
import type { ApprovalBroker } from './approval-broker.js';
import type { CallCompletion } from './results.js';
import { endedResult, skippedReason, withTextForm } from './results.js';
import { withHookContext } from '../contracts/hook-context.js';
import { turnStopReason } from '../contracts/turn-control.js';
import { inReleasedScope } from './released-scope.js';
import { batchLocalCalls } from '../contracts/local-calls.js';
import { runCall } from './run-call.js';
import { OPERATOR_RULE_LABEL, parseRules } from '../contracts/permission-rules.js';
import { completedPrefix, startableCalls } from './schedule-calls.js';
import type { OpenGroup, TurnCall } from './schedule-calls.js';
import type { SessionChanges, SessionState } from './session-state.js';
import { SiblingGroup } from './sibling-group.js';
import type { RunningTurn } from './turn-queue.js';

/** One turn as the scheduler runs it. A whole turn is a streaming turn whose calls all arrive at once, `done`. */
export interface Turn {
  turnId: string;
  kind: 'whole' | 'streaming';
  calls: TurnCall[];
  /** No more calls will be added (the model's reply is complete, or the turn was interrupted). */
  done: boolean;
  /** Every result has been handed out and the turn's result is final. */
  ended: boolean;
  stopReason?: string;
  /** The session's effective working directory, from Prepare. */
  cwd?: string;
  maxConcurrency?: number;
  group?: OpenGroup;
  siblings: SiblingGroup;
  /** Session changes of calls that finished while others still ran: applied, in call order, when none runs. */
  pendingChanges: Array<{ index: number; changes: SessionChanges }>;
  /** Results before this index are final (handed out). */
  handedOut: number;
  handedOutChars: number;
  /** The first group, prepared by Plan (whole turns). */
  firstGroup?: PreparedCalls;
  /** The first group's outcomes when Plan also ran it (see `PlanCallsInput.runFirstGroup`), and when Plan began. */
  ranFirstGroup?: RanGroup;
  /** Short read-only calls run as local activities (from Plan: the worker hosts the tools). */
  localCalls?: LocalCallsPolicy;
}

/** Outcomes of calls Plan ran, by call id, and the workflow time Plan began (those calls' start). */
interface RanGroup {
  since: number;
  outcomes: Record<string, CallOutcome>;
}

/**
 * The one scheduler for whole and streaming turns (docs/ARCHITECTURE.md, How one call flows): calls go queued →
 * executing → completed → yielded; a group starts when the one before it has finished; each call's Prepare runs when
 * its group starts (so a Write's file exists for the Edit after it, and a call a turn stop or an interrupt skips
 * never runs a hook); context modifiers apply in call order when a group ends; results are handed out in call order
 * through one aggregate budget.
 */
export class Scheduler {
  readonly #state: SessionState;
  readonly #broker: ApprovalBroker;
  readonly #onPlanned: (planned: PlannedCalls) => void;
  /** Calls between permission and result, with their interrupt behaviour (query `activeTurn`). */
  readonly executing = new Map<string, InterruptBehavior>();

  constructor(options: { state: SessionState; broker: ApprovalBroker; onPlanned: (planned: PlannedCalls) => void }) {
    this.#state = options.state;
    this.#broker = options.broker;
    this.#onPlanned = options.onPlanned;
  }

  createTurn(options: { turnId: string; kind: Turn['kind'] }): Turn {
    return {
      turnId: options.turnId,
      kind: options.kind,
      calls: [],
      done: false,
      ended: false,
      siblings: new SiblingGroup(),
      pendingChanges: [],
      handedOut: 0,
      handedOutChars: 0,
    };
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
      this.#emitWholeGrouping(turn);
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
          state.emit({
            type: 'ToolCallScheduled',
            turnId: turn.turnId,
            callId: entry.call.id,
            toolName: entry.planned?.toolName ?? entry.call.name,
            groupIndex: group.index,
          });
        }
      }
      this.#runBatch({ turn, current, batch: start, siblings: turn.siblings }).catch((error: unknown) => {
        const modelContent = `Switchyard failed while running the call: ${projectErrorMessage(error)}`;
        for (const entry of start)
          if (entry.completion === undefined)
            this.#endCall({ turn, entry, status: 'error', modelContent, errorCode: errorCodes.handlerError });
      });
    }
    this.handOut(turn, turn.calls.length);
    turn.ended = true;
    const results = turn.calls.map((entry) => {
      if (entry.result === undefined) throw new Error(`unreachable: no result for call ${entry.call.id}`);
      return entry.result;
    });
    const reason =
      current.interrupted !== undefined
        ? `interrupted${current.interrupted.reason ? `: ${current.interrupted.reason}` : ''}`
        : turn.stopReason;
    const stopped = reason !== undefined;
    state.emit({
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

  /**
   * Makes results final up to `upTo`, in call order, through the aggregate budget (replaced stays replaced), then
   * joins hook context (so it survives an envelope).
   */
  handOut(turn: Turn, upTo: number): void {
    if (upTo <= turn.handedOut) return;
    const batch = turn.calls.slice(turn.handedOut, upTo);
    const keyOf = (entry: TurnCall): string => `${turn.turnId}/${entry.call.id}`;
    const outcome = applyAggregateBudget({
      results: batch.map((entry) => {
        const completion = completionOf(entry);
        return {
          key: keyOf(entry),
          modelContent: completion.result.modelContent,
          ...(completion.replacement === undefined ? {} : { replacement: completion.replacement }),
        };
      }),
      budgetChars: this.#state.options.aggregateBudgetChars ?? DEFAULT_AGGREGATE_BUDGET_CHARS,
      alreadyReplaced: this.#state.replacedResults,
      charsAlreadyHandedOut: turn.handedOutChars,
    });
    for (const key of outcome.replaced) this.#state.replacedResults.add(key);
    const newlyReplaced = new Set(outcome.newlyReplaced);
    for (const entry of batch) {
      const { result, replacement, hookContext } = completionOf(entry);
      let final: ToolResult = result;
      if (replacement !== undefined && outcome.replaced.has(keyOf(entry))) {
        const originalBytes = result.budget?.originalBytes ?? utf8Length(result.modelContent);
        // An envelope of the stored whole output, or (no store) a shorter cut.
        const budget: NonNullable<ToolResult['budget']> =
          replacement.artifact === undefined
            ? { truncated: true, originalBytes, modelBytes: utf8Length(replacement.envelope), policy: 'truncate' }
            : {
                truncated: true,
                originalBytes,
                modelBytes: utf8Length(replacement.envelope),
                policy: 'artifact',
                artifact: replacement.artifact,
              };
        final = { ...result, modelContent: replacement.envelope, budget };
        // `ToolCallResult` told the sizes when the call finished; the sizes the model gets follow.
        if (newlyReplaced.has(keyOf(entry))) {
          this.#state.emit({
            type: 'ToolCallResultReplaced',
            turnId: turn.turnId,
            callId: result.callId,
            toolName: result.toolName,
            ...budget,
          });
        }
      }
      turn.handedOutChars += final.modelContent.length;
      const timeline: NonNullable<ToolResult['timeline']> = {
        addedAt: new Date(entry.addedAt).toISOString(),
        finishedAt: new Date(entry.finishedAt ?? Date.now()).toISOString(),
      };
      if (entry.startedAt !== undefined) timeline.startedAt = new Date(entry.startedAt).toISOString();
      const modelContent = withHookContext(final.modelContent, hookContext ?? []);
      entry.result = {
        ...final,
        modelContent,
        ...(final.content === undefined ? {} : { content: withTextForm(final.content, modelContent) }),
        timeline,
      };
    }
    turn.handedOut = upTo;
  }

  /** How many results from the start can be handed out now. */
  readyCount(turn: Turn): number {
    return completedPrefix(turn.calls);
  }

  /** Plan: a failure or an interrupt becomes error results for those calls, never a failed workflow task. */
  async #plan(options: { turn: Turn; added: readonly TurnCall[]; prepareFirstGroup: boolean }): Promise<void> {
    const { turn, added } = options;
    const reject = (modelContent: string, errorCode: string): void => {
      for (const entry of added)
        entry.planned = {
          kind: 'rejected',
          callId: entry.call.id,
          toolName: entry.call.name,
          status: 'error',
          modelContent,
          errorCode,
          stage: 'lookup',
        };
    };
    if (this.#state.ruleError !== undefined) {
      reject(texts.invalidSessionRules(this.#state.ruleError), errorCodes.permissionDenied);
      return;
    }
    try {
      const state = this.#state;
      const maxConcurrency = state.options.maxConcurrency;
      const input: PlanCallsInput = { session: state.context(), calls: added.map((entry) => entry.call) };
      if (options.prepareFirstGroup) {
        input.prepareFirstGroup = maxConcurrency === undefined ? {} : { maxConcurrency };
        if (hooksOffPath(state.options)) input.prepareFirstGroup.hooksOffPath = true;
        if (postHooksOffPath(state.options)) input.prepareFirstGroup.postHooksOffPath = true;
        // The first group may run in the same round trip when it needs no decision of the workflow's own: its calls
        // are counted by no limit, and run on this worker.
        if (state.options.toolTaskQueue === undefined && state.policy.limits.length === 0) {
          input.runFirstGroup = {
            turnId: turn.turnId,
            rules: { mode: state.policy.permissionMode, rules: state.rules, remembered: state.remembered },
          };
        }
      }
      const since = Date.now();
      let planned = await pipelineActivities(state.options).planCalls(input);
      if (planned.firstGroup?.hooksDeferred === true && input.prepareFirstGroup !== undefined) {
        // PreToolUse hooks match the first group: planned again as a regular activity, which runs them off the
        // workflow's path (prepare-off-path.ts).
        const { hooksOffPath: _asked, ...prepareFirstGroup } = input.prepareFirstGroup;
        planned = await regularPlanCalls(state.options)({ ...input, prepareFirstGroup });
      }
      this.#onPlanned(planned);
      turn.maxConcurrency ??= maxConcurrency ?? planned.defaultMaxConcurrency;
      added.forEach((entry, offset) => {
        entry.planned = planned.plans[offset];
      });
      if (planned.firstGroup !== undefined) turn.firstGroup = planned.firstGroup;
      if (planned.ranFirstGroup !== undefined) turn.ranFirstGroup = { since, outcomes: planned.ranFirstGroup };
      if (planned.localCalls !== undefined && this.#state.options.toolTaskQueue === undefined)
        turn.localCalls = planned.localCalls;
    } catch (error) {
      // An interrupt while planning: the calls are skipped like queued ones (their plans only need to exist).
      if (isCancellation(error)) reject(texts.rejectMessage, errorCodes.cancelled);
      else reject(`Switchyard could not plan the tool calls: ${projectErrorMessage(error)}`, errorCodes.prepareFailed);
    }
  }

  /** `ToolCallScheduled` for every call of a whole turn, the grouping on the first (once per turn). */
  #emitWholeGrouping(turn: Turn): void {
    const groups = groupCalls(
      turn.calls
        .filter((entry) => entry.completion === undefined)
        .map((entry) => ({
          id: entry.call.id,
          concurrentSafe: entry.planned?.kind === 'planned' && entry.planned.concurrentSafe,
          bytes: entry.inputBytes ?? 0,
        })),
      turn.maxConcurrency ?? 10,
    );
    const byId = new Map(turn.calls.map((entry) => [entry.call.id, entry]));
    let first = true;
    groups.forEach((group, groupIndex) => {
      for (const callId of group) {
        const entry = byId.get(callId);
        const toolName = entry?.planned?.toolName ?? entry?.call.name ?? '';
        this.#state.emit({
          type: 'ToolCallScheduled',
          turnId: turn.turnId,
          callId,
          toolName,
          groupIndex,
          ...(first ? { groups } : {}),
        });
        first = false;
      }
    });
  }

  /** Ends every queued call once the turn is interrupted or stopped; true when any was ended. */
  #skipQueued(turn: Turn, current: RunningTurn): boolean {
    const skip = skippedReason({ interrupted: current.interrupted, stopReason: turn.stopReason });
    if (skip === undefined) return false;
    let any = false;
    for (const entry of turn.calls) {
      if (entry.state !== 'queued') continue;
      this.#endCall({ turn, entry, status: 'cancelled', ...skip });
      any = true;
    }
    return any;
  }

  /** Prepare for the calls that start together, then each one's run; each result completes its call. */
  async #runBatch(options: {
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
        this.#endCall({
          turn,
          entry,
          status: planned.status,
          modelContent: planned.modelContent,
          errorCode: planned.errorCode,
        });
      else toPrepare.push(entry);
    }
    if (toPrepare.length === 0) return;
    let prepared: Omit<PreparedCalls, 'plans'> & { plans: CallPlan[]; ran?: RanGroup };
    try {
      prepared = await this.#prepare(turn, toPrepare);
    } catch (error) {
      const skip = isCancellation(error)
        ? skippedReason({ interrupted: current.interrupted ?? {}, stopReason: undefined })
        : undefined;
      const modelContent =
        skip?.modelContent ?? `Switchyard could not prepare the tool calls: ${projectErrorMessage(error)}`;
      for (const entry of toPrepare)
        this.#endCall({
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
          this.#endCall({
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
          executing: this.executing,
          ...(localCalls === undefined ? {} : { localCalls }),
          ...(operator === undefined ? {} : { operator }),
          ...(ran === undefined ? {} : { ran }),
        });
        this.#complete(turn, entry, completion);
      }),
    );
  }

  /**
   * Prepare's answer for the calls, with their plans expanded (see `expandPlan`), and the outcomes of the calls Plan
   * already ran (only with Plan's own first group).
   */
  async #prepare(
    turn: Turn,
    calls: readonly TurnCall[],
  ): Promise<Omit<PreparedCalls, 'plans'> & { plans: CallPlan[]; ran?: RanGroup }> {
    const first = turn.firstGroup;
    const ran = turn.ranFirstGroup;
    turn.firstGroup = undefined;
    turn.ranFirstGroup = undefined;
    const reuse =
      first !== undefined &&
      first.plans.length === calls.length &&
      first.plans.every((plan, index) => plan.callId === calls[index]?.call.id);
    const prepared = reuse ? first : await this.#prepareCalls(calls, first?.hooksDeferred === true);
    return {
      ...prepared,
      plans: prepared.plans.map((plan, index) => expandPlan(plan, calls[index]?.call ?? { input: undefined })),
      ...(reuse && ran !== undefined ? { ran } : {}),
    };
  }

  /**
   * Prepare for calls whose group is about to run: a local activity, which leaves PreToolUse hooks to a regular one
   * (`prepare-off-path.ts`); `deferred` when Plan already found that a hook matches them.
   */
  async #prepareCalls(calls: readonly TurnCall[], deferred: boolean): Promise<PreparedCalls> {
    const options = this.#state.options;
    const request: PrepareCallsInput = { session: this.#state.context(), calls: calls.map((entry) => entry.call) };
    if (postHooksOffPath(options)) request.postHooksOffPath = true;
    if (!hooksOffPath(options)) return pipelineActivities(options).prepareCalls(request);
    const local = deferred
      ? undefined
      : await pipelineActivities(options).prepareCalls({ ...request, hooksOffPath: true });
    if (local !== undefined && local.hooksDeferred !== true) return local;
    return regularPrepareCalls(options)(request);
  }

  #clock(turn: Turn, entry: TurnCall): { sessionId: string; turnId: string; startedAt: number | undefined } {
    return { sessionId: this.#state.sessionId, turnId: turn.turnId, startedAt: entry.startedAt };
  }

  /** A call that ends without running its pipeline (rejected, skipped, or failed to prepare). */
  #endCall(options: {
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

function completionOf(entry: TurnCall): CallCompletion {
  if (entry.completion === undefined) throw new Error(`unreachable: call ${entry.call.id} has no result to hand out`);
  return entry.completion;
}
