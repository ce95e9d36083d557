import { CancellationScope, patched, proxyLocalActivities } from '@temporalio/workflow';
import { CLIENT_RESULT_BUDGET_MIN_CHARS, CLIENT_TOOL_RESULT_BUDGET } from '../contracts/client-tools.js';
import type { BudgetedClientResult } from '../contracts/client-tools.js';
import { PERSISTED_PREVIEW_CHARS } from '../contracts/defaults.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import type { Activities } from '../contracts/pipeline.js';
import { utf8Length } from '../contracts/utf8-length.js';
import { afterLocalActivities } from './local-activity-barrier.js';

/**
 * Marks histories where a large client answer goes through the result budget; older ones handed it to the model
 * whole, and replay them so.
 */
export const CLIENT_RESULT_BUDGET_PATCH = 'switchyard-client-result-budget';

/** A store write of one answer: quick, retried twice. */
const { budgetClientResult } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3, initialInterval: '1 second' },
  summary: 'client tool result budget',
});

/**
 * What the model gets of a client tool's answer. A short one as it is. A longer one (`CLIENT_RESULT_BUDGET_MIN_CHARS`)
 * through the `budgetClientResult` local activity: past `CLIENT_TOOL_RESULT_BUDGET` the envelope of the stored whole,
 * and the envelope the turn's aggregate budget may swap in. Only that answer enters history and the turn's result,
 * never the whole: a turn with several megabytes of answers would otherwise fail every workflow task (Temporal refuses
 * a task completion over 4 MB) and the session would be stuck. Where no local activity can store it (the session's
 * tools run on another queue, or the activity failed), the head is kept with a notice, cut here.
 */
export async function budgetedClientAnswer(options: {
  sessionId: string;
  callId: string;
  toolName: string;
  content: string;
  localStore: boolean;
}): Promise<BudgetedClientResult> {
  const { content } = options;
  if (content.length <= CLIENT_RESULT_BUDGET_MIN_CHARS || !patched(CLIENT_RESULT_BUDGET_PATCH))
    return { modelContent: content };
  if (options.localStore) {
    try {
      // The answer has arrived: an interrupt now must not turn it into a cancellation.
      return await CancellationScope.nonCancellable(() =>
        afterLocalActivities(() =>
          budgetClientResult({
            sessionId: options.sessionId,
            callId: options.callId,
            toolName: options.toolName,
            content,
          }),
        ),
      );
    } catch (error) {
      return cutAnswer(content, `the session could not store it: ${projectErrorMessage(error)}`);
    }
  }
  return cutAnswer(content, "the session's tools run on another task queue, where no store is at hand");
}

/** The answer's head within the budget, with a notice of what was cut and why (pure: workflow code). */
function cutAnswer(content: string, why: string): BudgetedClientResult {
  const originalBytes = utf8Length(content);
  if (originalBytes <= CLIENT_TOOL_RESULT_BUDGET.maxModelBytes) return { modelContent: content };
  // Characters take 1 to 3 bytes (4 for a pair): a third of the byte budget in characters always fits.
  let kept = content.slice(0, Math.floor(CLIENT_TOOL_RESULT_BUDGET.maxModelBytes / 3));
  const last = kept.charCodeAt(kept.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) kept = kept.slice(0, -1);
  const modelContent = `${kept}\n[Client tool result truncated: ${originalBytes} bytes, the first ${utf8Length(kept)} bytes kept; ${why}]`;
  const envelope = `${kept.slice(0, PERSISTED_PREVIEW_CHARS)}\n[Client tool result truncated: ${originalBytes} bytes, the first ${PERSISTED_PREVIEW_CHARS} characters kept]`;
  return {
    modelContent,
    budget: { truncated: true, originalBytes, modelBytes: utf8Length(modelContent), policy: 'truncate' },
    aggregateReplacement: { envelope },
  };
}
