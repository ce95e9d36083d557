import { isCancellation, log } from '@temporalio/workflow';
import type { ApprovalRequest } from '../contracts/approval.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import type { EvaluationRequest } from '../contracts/policy.js';
import { approvalEvaluatorActivity } from './activity-routing.js';
import type { SessionState } from './session-state.js';

/** Calls of the session's recent history an evaluator sees. */
const RECENT_CALLS = 20;

/**
 * Runs the session's approval evaluator on a waiting call, as an activity: a lost worker is retried once on another
 * worker, and whatever answer arrives first is the only one the workflow takes, so the call is decided once. Returns
 * the evaluator's allow or deny; undefined (the human decides) for `escalate`, an error or a timeout.
 */
export async function consultEvaluator(options: {
  state: SessionState;
  name: string;
  request: ApprovalRequest;
  cwd: string;
}): Promise<{ decision: 'allow' | 'deny'; reason: string } | undefined> {
  const { state, name, request, cwd } = options;
  const runApprovalEvaluator = approvalEvaluatorActivity(state.options, name);
  const evaluation: EvaluationRequest = {
    sessionId: state.sessionId,
    turnId: request.turnId,
    callId: request.callId,
    toolName: request.toolName,
    input: request.input,
    reason: request.reason ?? '',
    cwd,
    recentHistory: recentCalls(state),
  };
  try {
    const answer = await runApprovalEvaluator({ evaluator: name, request: evaluation });
    if (answer.decision === 'escalate') return undefined;
    return { decision: answer.decision, reason: answer.reason };
  } catch (error) {
    if (!isCancellation(error))
      log.warn('approval evaluator gave no decision; the human decides', {
        evaluator: name,
        callId: request.callId,
        error: projectErrorMessage(error),
      });
    throw error;
  }
}

function recentCalls(state: SessionState): EvaluationRequest['recentHistory'] {
  const calls: EvaluationRequest['recentHistory'] = [];
  for (const event of state.events.read(0, Number.MAX_SAFE_INTEGER).events) {
    if (event.type === 'ToolCallResult')
      calls.push({ toolName: event.toolName, callId: event.callId, status: event.status });
    else if (event.type === 'ToolCallError')
      calls.push({
        toolName: event.toolName,
        callId: event.callId,
        status: event.status,
        message: event.message.slice(0, 300),
      });
  }
  return calls.slice(-RECENT_CALLS);
}
