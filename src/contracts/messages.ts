import { SearchAttributeType, defineSearchAttributeKey } from '@temporalio/common';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ApprovalDecisionCounts, ApprovalDecisionRecord, ApprovalRequest, ApprovalSignal } from './approval.js';
import type { BackgroundTaskView } from './background-tasks.js';
import type { CallInDoubt, ResolveInDoubtRequest, ResolveInDoubtResult } from './calls-in-doubt.js';
import type { PendingClientCall, SubmitToolResultRequest, SubmitToolResultResult } from './client-tools.js';
import type { EventsPage } from './events.js';
import type { SetPolicyRequest, SetPolicyResult } from './policy.js';
import type { AddCallsRequest, AwaitResultsRequest, ExecuteTurnRequest } from './tool-call.js';
import type { ActiveTurnView, AddCallsResult, AwaitResultsResult, TurnResult } from './tool-result.js';

/** Workflow type of a session (wire contract v1). */
export const toolSessionWorkflowType = 'toolSession';

/** An update, not a signal, because the caller waits for the results. The update id is the turnId. */
export const executeTurnUpdate = defineUpdate<TurnResult, [ExecuteTurnRequest]>('executeTurn');

/** Streaming turns: add calls while the model is still talking; returns once they are accepted. */
export const addCallsUpdate = defineUpdate<AddCallsResult, [AddCallsRequest]>('addCalls');

/** Streaming turns: long-polls the next results in call order. */
export const awaitResultsUpdate = defineUpdate<AwaitResultsResult, [AwaitResultsRequest]>('awaitResults');

/**
 * Changes the session's rules and/or permission mode; waiting calls are decided again at once. An update, not a
 * signal, because the caller learns the new version and which waiting calls it released or denied.
 */
export const setPolicyUpdate = defineUpdate<SetPolicyResult, [SetPolicyRequest]>('setPolicy');

/** v1.3: calls that are not idempotent whose worker died while they ran, until a person settles them. */
export const callsInDoubtQuery = defineQuery<CallInDoubt[]>('callsInDoubt');

/**
 * v1.3: settles a call in doubt (`ran` with its output, `not-ran`, or `retry` in the next turn); signed like an
 * approval in a session with approvers. An unknown call id is rejected.
 */
export const resolveInDoubtUpdate = defineUpdate<ResolveInDoubtResult, [ResolveInDoubtRequest]>('resolveInDoubt');

/** The running turn and whether everything executing is interruptible; null when idle. Not in wire contract v1. */
export const activeTurnQuery = defineQuery<ActiveTurnView | null>('activeTurn');

export const approvalSignal = defineSignal<[ApprovalSignal]>('approval');

export interface InterruptSignal {
  reason?: string;
}
export const interruptSignal = defineSignal<[InterruptSignal]>('interrupt');

/**
 * v1.3: a running call's live output, sent by its own `executeCall` activity (coalesced: at most one a second per call,
 * at most `EVENT_LIMITS.progressEventsPerCall` per call); the session records it as a `ToolCallProgress` event when
 * the call is executing in the running turn, and ignores it otherwise (docs/SEMANTICS.md, Events a UI draws from).
 */
export interface ToolCallProgressSignal {
  turnId: string;
  callId: string;
  toolName?: string;
  output?: string;
  message?: string;
  elapsedMs: number;
}
export const toolCallProgressSignal = defineSignal<[ToolCallProgressSignal]>('toolCallProgress');

export const pendingApprovalsQuery = defineQuery<ApprovalRequest[]>('pendingApprovals');

/** Calls of client tools waiting for the client's answer (`SessionOptions.clientTools`). */
export const pendingClientCallsQuery = defineQuery<PendingClientCall[]>('pendingClientCalls');

/** The client's answer to a parked client-tool call; unknown or already answered call ids are rejected. */
export const submitToolResultUpdate = defineUpdate<SubmitToolResultResult, [SubmitToolResultRequest]>(
  'submitToolResult',
);

/** What the session did with `approval` signals, oldest first: every accepted decision, the newest ignored ones. */
export const approvalDecisionsQuery = defineQuery<ApprovalDecisionRecord[]>('approvalDecisions');

/** How many `approval` signals the session took and ignored; `approvalDecisions` lists only the newest ignored ones. */
export const approvalDecisionCountsQuery = defineQuery<ApprovalDecisionCounts>('approvalDecisionCounts');

/** The most recent completed turns' results, oldest first (wire contract v1.1; `limit` default 10, at most 50). */
export const turnResultsQuery = defineQuery<TurnResult[], [{ limit?: number }?]>('turnResults');

export const eventsQuery = defineQuery<EventsPage, [{ since?: number }?]>('events');

/** v1.1: the session's background tasks as it last saw them (status updates when TaskOutput/TaskStop observe an end). */
export const backgroundTasksQuery = defineQuery<BackgroundTaskView[]>('backgroundTasks');

/** Name of the Int search attribute that counts a session's pending approvals. */
export const pendingApprovalsSearchAttribute = 'SwitchyardPendingApprovals';

/** Typed key of that search attribute. */
export const pendingApprovalsSearchAttributeKey = defineSearchAttributeKey(
  pendingApprovalsSearchAttribute,
  SearchAttributeType.INT,
);

/** Session state (todo list and other tool-set keys) and remembered rules; not part of the wire contract v1. */
export interface SessionStateView {
  state: Record<string, unknown>;
  rememberedRules: string[];
}
export const sessionStateQuery = defineQuery<SessionStateView>('sessionState');
