import type { ApprovalRequest, ApprovalSignal } from '../contracts/approval.js';
import type { PermissionDecision } from '../contracts/decide-permission.js';
import type { PermissionRequestBehavior } from '../contracts/hook-decisions.js';

/** A call waiting for approval, and the first answer it got. */
export interface PendingApproval {
  request: ApprovalRequest;
  decision?: ApprovalSignal;
  hookDecision?: { behavior: PermissionRequestBehavior; message?: string };
  /** A policy change or the approval evaluator decided. */
  ruling?: { kind: 'policy' | 'evaluator'; behavior: 'allow' | 'deny'; reason: string; by: string };
  /** The permission decision again, under the session's current policy (after `setPolicy`). */
  redecide?: () => PermissionDecision;
}

/** How a request that is no longer pending ended, for the decision log's detail. */
export type Ending = 'signal' | 'hook' | 'timeout' | 'cancelled' | 'policy' | 'evaluator';

export const ENDINGS: Record<Ending, string> = {
  signal: 'an earlier approval signal decided it',
  hook: 'a PermissionRequest hook answered first',
  timeout: 'the approval timed out',
  cancelled: 'the turn was interrupted',
  policy: 'a policy change decided it',
  evaluator: 'the approval evaluator decided first',
};

/** Ended requests remembered (this run only) to say how they ended. */
const ENDINGS_RETAINED = 200;

/** Whether a waiting call has its answer (a signal, a hook, a policy change or the evaluator). */
export function answered(entry: PendingApproval): boolean {
  return entry.decision !== undefined || entry.hookDecision !== undefined || entry.ruling !== undefined;
}

/**
 * The session's approval requests: those waiting (query `pendingApprovals`), and how the recently ended ones ended, so
 * a late signal is told why it changed nothing.
 */
export class PendingApprovals {
  readonly #pending = new Map<string, PendingApproval>();
  readonly #ended = new Map<string, { how: Ending; request: ApprovalRequest }>();

  add(entry: PendingApproval): void {
    this.#pending.set(entry.request.requestId, entry);
  }

  requests(): ApprovalRequest[] {
    return [...this.#pending.values()].map((entry) => entry.request);
  }

  entries(): IterableIterator<PendingApproval> {
    return this.#pending.values();
  }

  /** The request's entry while it is pending, answered or not. */
  get(requestId: string): PendingApproval | undefined {
    return this.#pending.get(requestId);
  }

  /** The request's entry while it still waits for an answer. */
  waiting(requestId: string): PendingApproval | undefined {
    const entry = this.#pending.get(requestId);
    return entry === undefined || answered(entry) ? undefined : entry;
  }

  /** How a request that is no longer pending ended (while remembered). */
  ended(requestId: string): { how: Ending; request: ApprovalRequest } | undefined {
    return this.#ended.get(requestId);
  }

  /** The request is no longer pending: remembered as ended `how`. */
  end(request: ApprovalRequest, how: Ending): void {
    const { requestId } = request;
    this.#pending.delete(requestId);
    this.#ended.set(requestId, { how, request });
    if (this.#ended.size > ENDINGS_RETAINED) this.#ended.delete(this.#ended.keys().next().value ?? '');
  }
}
