import { ApplicationFailure } from '@temporalio/activity';
import { evaluationResultSchema } from '../contracts/schemas.js';
import type { ApprovalEvaluator, EvaluationRequest, EvaluationResult } from '../contracts/policy.js';
import { formatZodError } from '../contracts/tool-call.js';
import type { Activities } from '../contracts/pipeline.js';
import { HOOK_HEARTBEAT_INTERVAL_MS, cancellationOf } from './cancellation.js';

/**
 * Runs the named evaluator on one waiting call. An unknown name or an answer that is not `{ decision, reason }` is an
 * error, which the session treats like `escalate`: the human decides.
 */
export async function runApprovalEvaluator(options: {
  evaluators: readonly ApprovalEvaluator[];
  evaluator: string;
  request: EvaluationRequest;
  signal: AbortSignal;
}): Promise<EvaluationResult> {
  const evaluator = options.evaluators.find((candidate) => candidate.name === options.evaluator);
  if (evaluator === undefined) {
    const known = options.evaluators.map((candidate) => candidate.name).join(', ') || 'none';
    throw ApplicationFailure.nonRetryable(
      `No approval evaluator named "${options.evaluator}" on this worker (it has: ${known}).`,
      'UnknownEvaluator',
    );
  }
  const { signal } = options;
  // An evaluator that ignores the signal is abandoned, not awaited, once the race is decided.
  const aborted = new Promise<never>((_, reject) => {
    // The SDK's own reason: a cancellation when the call was decided elsewhere, retryable when this worker shuts down.
    const stop = (): void =>
      reject(
        signal.reason instanceof Error
          ? signal.reason
          : ApplicationFailure.retryable('The evaluator was stopped.', 'EvaluatorStopped'),
      );
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  });
  const answer = evaluationResultSchema.safeParse(
    await Promise.race([evaluator.evaluate(options.request, { signal }), aborted]),
  );
  if (!answer.success)
    throw ApplicationFailure.nonRetryable(
      `Approval evaluator "${evaluator.name}" answered ${formatZodError(answer.error)}`,
      'BadEvaluatorAnswer',
    );
  return { decision: answer.data.decision, reason: answer.data.reason.slice(0, 2_000) };
}

/** The `runApprovalEvaluator` activity: an error or a timeout leaves the call to the human. */
export function createRunApprovalEvaluator(
  evaluators: readonly ApprovalEvaluator[],
): Activities['runApprovalEvaluator'] {
  return async (input) => {
    // Heartbeats carry the cancellation (the human decided first, or an interrupt) and notice a lost worker.
    const { signal, stopHeartbeats } = cancellationOf({ heartbeatEveryMs: HOOK_HEARTBEAT_INTERVAL_MS });
    try {
      return await runApprovalEvaluator({ evaluators, ...input, signal });
    } finally {
      stopHeartbeats();
    }
  };
}
