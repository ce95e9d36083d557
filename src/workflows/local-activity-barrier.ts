import { CancellationScope, condition } from '@temporalio/workflow';

/**
 * Where this workflow run counts its local activities that were scheduled and have not resolved. Not a module
 * variable: the workflow modules are evaluated once and shared by every workflow of the worker
 * (src/workflows/shared-modules.ts). The sandbox's global object is the workflow's own (the SDK swaps its properties
 * per workflow and starts each run from clean globals), so the count lives there.
 */
const IN_FLIGHT = Symbol.for('switchyard.localActivitiesInFlight');
const runGlobals = globalThis as unknown as Record<typeof IN_FLIGHT, number | undefined>;
const inFlight = (): number => runGlobals[IN_FLIGHT] ?? 0;

/**
 * Runs a local activity and hands back its outcome only once no local activity of this workflow is in flight.
 *
 * Temporal records a local activity's result as a marker, but not which workflow activation delivered it. Run live,
 * results that finish at different moments arrive in separate activations. On replay, every result whose marker is
 * reached arrives in one activation. A workflow that reacts to each result as it arrives (starting the next call,
 * preparing a streamed one) can then issue its commands in another order on replay than it did live, and the replay
 * fails. The fault run caught it (seed 9003, `Missing associated machine for LocalActivity(11)`): live, a streamed
 * call's Plan resolved before the Prepare of the call ahead of it, so the next Prepare came first; on replay both
 * resolved together and the earlier call's execution came first. Handed over only when the last local activity in
 * flight resolves, results are seen at the same moment and in the same order live and on replay. With one local
 * activity in flight (the usual case) nothing waits.
 *
 * The cost: while local activities overlap, the first results wait for the last (local calls are bounded by their
 * 1 s budget, and the workflow task stays open while any runs anyway).
 */
export async function afterLocalActivities<T>(run: () => Promise<T>): Promise<T> {
  runGlobals[IN_FLIGHT] = inFlight() + 1;
  try {
    return await run();
  } finally {
    runGlobals[IN_FLIGHT] = inFlight() - 1;
    // Not cancellable: an interrupt must not swap a result that has arrived for a cancellation.
    if (inFlight() > 0) await CancellationScope.nonCancellable(() => condition(() => inFlight() === 0));
    await CancellationScope.nonCancellable(afterOtherJobs);
  }
}

/**
 * Resolves two rounds of condition checks later, so a local activity's result is acted on after the other jobs of
 * its activation.
 *
 * A local activity that outlives its workflow task (the worker heartbeats the task at 80 % of its timeout; a loaded
 * machine got there) resolves, live, in an activation of a later task, after an update that task brought has run and
 * answered. On replay the SDK resolves it in the same activation as that update (its marker is in the same task), and
 * the two raced by the length of their promise chains: the result's reaction (the next call's activity, the
 * search-attribute upsert of an approval) could go first, so the commands came in another order than history
 * recorded (`[TMPRL1100] Nondeterminism error: Update machine does not handle this event:
 * UpsertWorkflowSearchAttributes`, or `Activity machine does not handle this event: WorkflowExecutionUpdateCompleted`).
 * test/faults/replay-race.test.ts arranges it (scripts/replay-race.ts); the histories that failed are fixtures.
 *
 * Not behind a patch: live, a result that arrives alone in its activation is acted on in the same order with or
 * without the wait, and histories of the race only replay with it (the old code cannot replay them either).
 * The SDK runs an activation's microtasks, then unblocks conditions in
 * the order they were made, then runs microtasks again, until nothing moves: whatever the activation's other jobs
 * (an update's handler and its answer, a signal, a timer) do in their promise chains and first waits happens first,
 * live and on replay alike.
 */
async function afterOtherJobs(): Promise<void> {
  for (let round = 0; round < 2; round += 1) {
    let asked = false;
    // False when first asked (at once), true at the next check: one round of the SDK's loop.
    await condition(() => asked || !(asked = true));
  }
}
