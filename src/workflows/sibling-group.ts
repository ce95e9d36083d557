import type { CancellationScope } from '@temporalio/workflow';
import type { ReadyCallPlan } from '../contracts/call-plan.js';

/**
 * The running calls of one group, for `cancelSiblingsOnError` (docs/SEMANTICS.md, Sibling cancellation): a failing Bash
 * cancels the Bash calls still running beside it — not other tools, not the turn.
 */
export class SiblingGroup {
  readonly #running = new Map<string, { toolName: string; scope: CancellationScope }>();
  readonly #cancelledBy = new Map<string, string>();

  add(plan: ReadyCallPlan, scope: CancellationScope): void {
    this.#running.set(plan.callId, { toolName: plan.toolName, scope });
  }

  remove(callId: string): void {
    this.#running.delete(callId);
  }

  cancelOthers(failed: ReadyCallPlan): void {
    for (const [callId, sibling] of this.#running) {
      if (callId === failed.callId || sibling.toolName !== failed.toolName || this.#cancelledBy.has(callId)) continue;
      this.#cancelledBy.set(callId, `${failed.toolName}(${failed.summary.replace(/^[^:]*: /, '')})`);
      sibling.scope.cancel();
    }
  }

  cancelledBy(callId: string): string | undefined {
    return this.#cancelledBy.get(callId);
  }
}
