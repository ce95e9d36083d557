import { setHandler } from '@temporalio/workflow';
import { clipSignalFields } from '../contracts/clip-fields.js';
import { ProgressLedger } from './call-progress.js';
import {
  activeTurnQuery,
  approvalDecisionCountsQuery,
  approvalDecisionsQuery,
  approvalSignal,
  backgroundTasksQuery,
  eventsQuery,
  interruptSignal,
  toolCallProgressSignal,
  pendingApprovalsQuery,
  pendingClientCallsQuery,
  sessionStateQuery,
  submitToolResultUpdate,
  turnResultsQuery,
} from '../contracts/messages.js';
import { clientToolsSchemas } from '../contracts/client-tools.js';
import type { SessionOptions } from '../contracts/session.js';
import { formatZodError } from '../contracts/tool-call.js';
import type { ToolCall } from '../contracts/tool-call.js';
import type { ActiveTurnView, TurnResult } from '../contracts/tool-result.js';
import { ApprovalBroker } from './approval-broker.js';
import { withSettledCalls } from './doubt-resolution.js';
import { SessionDetails } from './details.js';
import { Scheduler } from './scheduler.js';
import { SessionState } from './session-state.js';
import type { CarriedSessionState } from './session-state.js';
import { TurnQueue } from './turn-queue.js';

/**
 * The executor's core, one per workflow: session state, the approval broker, the turn queue, the scheduler and the
 * Web UI details, wired together. `toolSession` drives it through its updates; `runToolTurn` (`api.ts`) drives it
 * from a user's own workflow. Both run a turn through {@link ToolExecutor.runWholeTurn}, so grouping, the per-call
 * pipeline, approvals, budgets and results are the same code.
 */
export class ToolExecutor {
  readonly state: SessionState;
  readonly details: SessionDetails;
  readonly broker: ApprovalBroker;
  readonly queue: TurnQueue;
  readonly scheduler: Scheduler;

  constructor(options: SessionOptions, carried?: CarriedSessionState) {
    this.state = new SessionState(options, carried);
    this.details = new SessionDetails({
      sessionId: this.state.sessionId,
      cwd: options.cwd,
      permissionMode: options.permissionMode,
      sandboxMode: options.sandbox?.mode,
      ...(options.label === undefined ? {} : { label: options.label }),
    });
    this.broker = new ApprovalBroker({ state: this.state, onChange: () => this.refresh() });
    this.queue = new TurnQueue({ state: this.state, onChange: () => this.refresh() });
    this.scheduler = new Scheduler({
      state: this.state,
      broker: this.broker,
      onPlanned: (planned) => {
        this.details.searchAttributeAvailable = planned.pendingApprovalsSearchAttribute;
      },
    });
  }

  /** Publishes the session's view to the Web UI (current details, the pending-approvals search attribute). */
  refresh(): void {
    const { queue, state, broker } = this;
    this.details.update({
      runningTurnId: queue.runningTurnId,
      queuedTurns: queue.queuedTurns,
      completedTurns: state.completedTurns.size,
      pending: broker.pendingRequests(),
      ...(state.unsandboxed === undefined ? {} : { unsandboxed: state.unsandboxed }),
    });
  }

  /**
   * Runs a whole turn (all its calls known) after the turns accepted before it; a turnId already seen re-attaches to
   * that turn's result instead of running it twice.
   */
  runWholeTurn(turnId: string, calls: readonly ToolCall[]): Promise<TurnResult> | TurnResult {
    const attached = this.queue.attach(turnId);
    if (attached !== undefined) return attached;
    const turn = this.scheduler.createTurn({ turnId, kind: 'whole' });
    // Calls in doubt a person settled since the last turn come first (docs/SEMANTICS.md, Calls in doubt).
    this.scheduler.addCalls({ turn, calls: withSettledCalls(this.state, turn, calls), done: true });
    return this.queue.enqueue(turnId, (current) => this.scheduler.run(turn, current));
  }
}

/**
 * The handlers every workflow running tools has, whichever drives its turns (docs/ARCHITECTURE.md, Wire contract):
 * signals `approval` and `interrupt`; queries `events`, `pendingApprovals`, `backgroundTasks`, `approvalDecisions`,
 * `turnResults`, `sessionState`, `activeTurn`. `executor` is read at each message, so a caller may replace the executor
 * between turns.
 */
export function installExecutorHandlers(options: {
  executor: () => ToolExecutor;
  isStreaming: (turnId: string) => boolean;
}): void {
  const { executor, isStreaming } = options;
  // Every field a sender supplies is clipped first: the session logs and carries what it keeps of a signal.
  setHandler(approvalSignal, (signal) =>
    executor().broker.onSignal(clipSignalFields(signal), executor().queue.current?.turnId),
  );
  setHandler(interruptSignal, (signal) => executor().queue.interrupt(clipSignalFields(signal)?.reason));
  // v1.3: live output of running calls, from their own activities (bounded per call; see call-progress.ts).
  const progress = new ProgressLedger();
  setHandler(toolCallProgressSignal, (signal) => {
    const { queue, scheduler, state } = executor();
    const event = progress.accept(signal, {
      turnId: queue.current?.turnId,
      executing: (callId) => scheduler.executing.has(callId),
    });
    if (event !== undefined) state.emit(event);
  });
  setHandler(eventsQuery, (query) => executor().state.events.read(query?.since ?? 0));
  setHandler(pendingApprovalsQuery, () => executor().broker.pendingRequests());
  setHandler(pendingClientCallsQuery, () => executor().state.clientCalls.pending());
  setHandler(submitToolResultUpdate, (request) => executor().state.clientCalls.submit(request), {
    validator: (request) => {
      const parsed = clientToolsSchemas().submitToolResult.safeParse(request);
      if (!parsed.success) throw new Error(`Invalid submitToolResult request: ${formatZodError(parsed.error)}`);
      executor().state.clientCalls.validate(parsed.data);
    },
  });
  setHandler(backgroundTasksQuery, () => executor().state.backgroundTasks.list());
  setHandler(approvalDecisionsQuery, () => executor().state.approvalDecisions);
  setHandler(approvalDecisionCountsQuery, () => executor().state.approvalDecisionCounts());
  setHandler(turnResultsQuery, (query) => {
    const limit = Math.min(Math.max(Math.trunc(query?.limit ?? 10), 1), 50);
    return [...executor().state.completedTurns.values()].slice(-limit);
  });
  setHandler(sessionStateQuery, () => {
    const { state } = executor();
    return { state: { ...state.toolState }, rememberedRules: state.remembered.map((rule) => rule.source) };
  });
  setHandler(activeTurnQuery, (): ActiveTurnView | null => {
    const { queue, scheduler } = executor();
    const current = queue.current;
    if (current === undefined) return null;
    return {
      turnId: current.turnId,
      streaming: isStreaming(current.turnId),
      executing: [...scheduler.executing.keys()],
      interruptible: [...scheduler.executing.values()].every((behavior) => behavior === 'cancel'),
    };
  });
}
