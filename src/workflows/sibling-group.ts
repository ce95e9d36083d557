import { patched } from '@temporalio/workflow';
import type { CancellationScope } from '@temporalio/workflow';
import type { ReadyCallPlan } from '../contracts/call-plan.js';

/**
 * Histories recorded before a failure also cancelled the calls of the same tool that join its group later ran those
 * calls: they replay as they ran.
 */
export const SIBLING_ERROR_CANCELS_LATE_JOINERS = 'sibling-error-cancels-late-joiners';

/**
 * The running calls of one group, for `cancelSiblingsOnError` (docs/SEMANTICS.md, Sibling cancellation): a failing Bash
 * cancels the Bash calls still running beside it — not other tools, not the turn — and a Bash call that joins the
 * group afterwards (a streaming turn, or a call that waited for approval) is cancelled as it starts.
 */
export class SiblingGroup {
  readonly #running = new Map<string, { toolName: string; scope: CancellationScope }>();
  readonly #cancelledBy = new Map<string, string>();
  /** By tool: the first of its calls that failed in this group, as the cancelled calls name it. */
  readonly #failed = new Map<string, string>();
  readonly #cancelsLateJoiners: () => boolean;

  /** `cancelsLateJoiners`: whether this history cancels late joiners (its patch; unit tests pass their answer). */
  constructor(options: { cancelsLateJoiners?: () => boolean } = {}) {
    this.#cancelsLateJoiners = options.cancelsLateJoiners ?? (() => patched(SIBLING_ERROR_CANCELS_LATE_JOINERS));
  }

  add(plan: ReadyCallPlan, scope: CancellationScope): void {
    this.#running.set(plan.callId, { toolName: plan.toolName, scope });
    const failed = this.#failed.get(plan.toolName);
    // Cancelled before it runs: its activity is never scheduled.
    if (failed !== undefined && !this.#cancelledBy.has(plan.callId) && this.#cancelsLateJoiners()) {
      this.#cancelledBy.set(plan.callId, failed);
      scope.cancel();
    }
  }

  remove(callId: string): void {
    this.#running.delete(callId);
  }

  cancelOthers(failed: ReadyCallPlan): void {
    const description = `${failed.toolName}(${failed.summary.replace(/^[^:]*: /, '')})`;
    if (!this.#failed.has(failed.toolName)) this.#failed.set(failed.toolName, description);
    for (const [callId, sibling] of this.#running) {
      if (callId === failed.callId || sibling.toolName !== failed.toolName || this.#cancelledBy.has(callId)) continue;
      this.#cancelledBy.set(callId, description);
      sibling.scope.cancel();
    }
  }

  cancelledBy(callId: string): string | undefined {
    return this.#cancelledBy.get(callId);
  }
}
