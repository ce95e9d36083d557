import { CancellationScope } from '@temporalio/workflow';

/**
 * Runs `fn` in a cancellable scope of its own, and cancels that scope once `fn` has settled.
 *
 * Every condition, activity, timer and child scope adds a closure to its scope's cancellation promise, and a promise
 * keeps those closures until it settles. The root scope's promise settles only when the workflow is cancelled, so
 * whatever a session did in the root scope stayed reachable until the next continue-as-new: every turn's calls, plans
 * and results (so a worker's memory grew with every turn). Cancelling the scope once its work is done
 * settles its promise and releases all of it; only the scope itself stays referenced by its parent.
 *
 * Cancelling a scope whose operations have all ended adds no command (the SDK checks that each one is still pending),
 * so histories do not change. `condition(fn, timeout)` in the SDK ends its own scope the same way.
 */
export async function inReleasedScope<T>(fn: () => Promise<T>): Promise<T> {
  const scope = new CancellationScope();
  try {
    return await scope.run(fn);
  } finally {
    scope.cancel();
  }
}
