import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { ApprovalDecision, ApprovalRequest } from '../../src/contracts/approval.js';
import type { SessionEvent, SessionEventType } from '../../src/contracts/events.js';
import { sessionStateQuery } from '../../src/contracts/messages.js';
import type { SessionStateView } from '../../src/contracts/messages.js';
import { waitFor } from './wait-for.js';

/**
 * What a user of a session can look at — its event log, its pending approvals, its session state — read the way a
 * client reads them (queries), so integration tests assert what a user would notice.
 */

/** Every retained event of the session from `since` on, following the cursor page by page. */
export async function allEvents(session: SessionHandle, since = 0): Promise<SessionEvent[]> {
  const events: SessionEvent[] = [];
  let cursor = since;
  for (;;) {
    const page = await session.events(cursor);
    events.push(...page.events);
    if (page.events.length === 0 || page.next === cursor) return events;
    cursor = page.next;
  }
}

/** The events of one type, narrowed. */
export function eventsOfType<T extends SessionEventType>(
  events: readonly SessionEvent[],
  type: T,
): Array<Extract<SessionEvent, { type: T }>> {
  return events.filter((event): event is Extract<SessionEvent, { type: T }> => event.type === type);
}

/** Waits until the session has at least `count` pending approvals and returns them. */
export function waitForPendingApprovals(session: SessionHandle, count = 1): Promise<ApprovalRequest[]> {
  return waitFor(
    () => session.pendingApprovals(),
    (list) => list.length >= count,
    { what: `${count} pending approval(s)`, timeoutMs: 60_000 },
  );
}

/** Answers one pending request the way an approver does: with its request id and its input digest. */
export function answer(session: SessionHandle, request: ApprovalRequest, decision: ApprovalDecision): Promise<void> {
  return session.approve({
    requestId: request.requestId,
    decision,
    inputDigest: request.inputDigest,
    by: 'test-approver',
  });
}

/** The `sessionState` query: tool-set state (the todo list) and remembered `allow_always` rules. */
export function sessionStateOf(session: SessionHandle): Promise<SessionStateView> {
  return session.workflow.query(sessionStateQuery);
}

/** The message a client sees when an update is rejected by the session's validator (the failure's cause). */
export async function rejectionOf(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'accepted',
    (error: Error) => (error.cause instanceof Error ? error.cause.message : error.message),
  );
}

/** The run id of the session's current run (it changes when the session continues as new). */
export async function currentRunId(session: SessionHandle): Promise<string> {
  return (await session.workflow.describe()).runId;
}
