import {
  pendingApprovalsSearchAttribute,
  pendingApprovalsSearchAttributeKey,
  toolSessionWorkflowType,
} from '../contracts/messages.js';
import type { SwitchyardClient } from '../client/switchyard-client.js';
import { sessionLabelOf } from '../client/session-metadata.js';

/** A session as visibility lists it. */
export interface SessionListing {
  sessionId: string;
  status: string;
  pendingApprovals: number;
  startTime: string;
  closeTime?: string;
  /** v1.3: the session's label (`SessionOptions.label`), from the memo its client set at start. */
  label?: string;
}

/** Sessions of the client's task queue, newest first (one visibility query). */
export async function listSessions(
  client: SwitchyardClient,
  options: { pending?: boolean; all?: boolean; limit: number },
): Promise<SessionListing[]> {
  const clauses = [`WorkflowType = "${toolSessionWorkflowType}"`, `TaskQueue = "${client.taskQueue}"`];
  if (options.all !== true) clauses.push('ExecutionStatus = "Running"');
  if (options.pending === true) clauses.push(`${pendingApprovalsSearchAttribute} > 0`);
  const sessions: SessionListing[] = [];
  for await (const execution of client.client.workflow.list({
    query: clauses.join(' AND '),
    pageSize: Math.min(options.limit, 100),
  })) {
    sessions.push({
      sessionId: execution.workflowId,
      status: execution.status.name,
      pendingApprovals: Number(execution.typedSearchAttributes.get(pendingApprovalsSearchAttributeKey) ?? 0),
      startTime: execution.startTime.toISOString(),
      ...(execution.closeTime === undefined ? {} : { closeTime: execution.closeTime.toISOString() }),
      ...sessionLabelOf(execution.memo),
    });
    if (sessions.length >= options.limit) break;
  }
  return sessions.sort((a, b) => b.startTime.localeCompare(a.startTime));
}
