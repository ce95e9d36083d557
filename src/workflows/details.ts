import { setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import type { ApprovalRequest } from '../contracts/approval.js';
import { pendingApprovalsSearchAttributeKey } from '../contracts/messages.js';

/** What the Web UI shows about a session right now. */
export interface SessionView {
  runningTurnId: string | undefined;
  queuedTurns: number;
  completedTurns: number;
  pending: readonly ApprovalRequest[];
}

/**
 * The session as the Temporal Web UI shows it: the workflow's current details (markdown) and the
 * `SwitchyardPendingApprovals` search attribute, so "which sessions wait for me" is one visibility query.
 */
export class SessionDetails {
  /** Set from the worker's answer at Plan: upserting an attribute the namespace lacks would fail the task. */
  searchAttributeAvailable = false;
  #searchAttributeValue = 0;

  update(view: SessionView): void {
    const lines: string[] = [];
    if (view.runningTurnId === undefined) lines.push(`**Idle.** ${view.completedTurns} turn(s) completed.`);
    else lines.push(`**Running turn \`${view.runningTurnId}\`**${view.queuedTurns > 0 ? `; ${view.queuedTurns} turn(s) queued` : ''}.`);
    if (view.pending.length > 0) {
      // A blank line before the list, or the Web UI renders it inline.
      lines.push('', `Waiting for ${view.pending.length} approval(s):`, '');
      for (const request of view.pending) {
        lines.push(`- \`${request.requestId}\` ${request.toolName} (call \`${request.callId}\`): ${request.reason ?? ''}`);
      }
    }
    setCurrentDetails(lines.join('\n'));
    if (this.searchAttributeAvailable && this.#searchAttributeValue !== view.pending.length) {
      this.#searchAttributeValue = view.pending.length;
      upsertSearchAttributes([{ key: pendingApprovalsSearchAttributeKey, value: view.pending.length }]);
    }
  }
}
