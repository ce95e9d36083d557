// What Plan and an execution hand the workflow per call, apart from the activities' inputs and outputs
// (src/contracts/pipeline.ts), so the compact shape those travel in (src/contracts/compact-plan.ts) can name them.
import type { BackgroundTaskReport } from './background-tasks.js';
import type { RejectedCallPlan } from './call-plan.js';
import type { ToolResult } from './tool-result.js';

/** A call as Plan sees it: enough to group it, nothing more. */
export type PlannedCall =
  { kind: 'planned'; callId: string; toolName: string; concurrentSafe: boolean } | RejectedCallPlan;

/**
 * What one execution produced; the workflow adds the timings it measured and the permission wait. Its `content` holds
 * only the image blocks: the workflow puts the final text form in front when it hands the result out.
 */
export interface CallOutcome extends Pick<
  ToolResult,
  'status' | 'modelContent' | 'content' | 'isError' | 'errorCode' | 'display' | 'budget' | 'turnControl' | 'sandboxed'
> {
  /** Why a call that started a process ran it outside the sandbox (`sandboxed: false`), for the session's details. */
  unsandboxedReason?: string;
  /** Session-state keys the call sets (its context modifier). */
  sessionState?: Record<string, unknown>;
  /** An envelope that may replace `modelContent` under the turn's aggregate budget. */
  aggregateReplacement?: { envelope: string; artifact?: string };
  /** A background task the call started or observed (v1.1), for the session's records. */
  backgroundTask?: BackgroundTaskReport;
  /** Context from PostToolUse / PostToolUseFailure hooks, for the model under `[Hook additional context]`. */
  hookContext?: string[];
  /** Time the handler was working (deadline time), over all attempts. */
  activeMs: number;
  /** Time the handler waited at admission gates (not deadline time), over all attempts. */
  queuedMs: number;
  attempt?: number;
  /** A local attempt ran out of its budget: run the call again as a regular activity (nothing of this attempt counts). */
  relocate?: true;
}
