/**
 * What crosses between the session workflow and its activities: the activities themselves (`Activities`, the names
 * registered with Temporal) with their inputs and outputs. Pure types, so the workflow, the activities and tests share
 * one definition.
 *
 * The per-call pipeline runs in two halves (docs/SEMANTICS.md, Plan and Prepare):
 * - Plan, once per turn (or per `addCalls` batch): lookup, JSON-string input parse, schema parse, concurrency flags
 *   of the parsed input. Nothing touches the file system and no hook runs, so grouping never depends on what an
 *   earlier call of the same turn will change.
 * - Prepare, per group just before it runs (per call in streaming turns): `validateInput`, `resolveInput`,
 *   PreToolUse hooks, `prepareApproval`, permission facts. A call a turn stop or an interrupt skips never gets here.
 */
import type { InDoubtSigningPayload } from './calls-in-doubt.js';
import type { ReadyCallPlan } from './call-plan.js';
import type { WireCallOutcome, WireCallPlan, WirePlannedCall } from './compact-plan.js';
import type { CallOutcome } from './call-outcome.js';
import type { ApprovalSigningPayload, ApprovalVerdict } from './approval.js';
import type { StoppedBackgroundTasks } from './background-tasks.js';
import type { PermissionRequestHookInput, PermissionRequestHookResult } from './hook-decisions.js';
import type { EvaluationRequest, EvaluationResult, PolicyChangeToVerify } from './policy.js';
import type { BudgetClientResultInput, BudgetedClientResult, ClientToolSpec } from './client-tools.js';
import type { ToolCall } from './tool-call.js';
import type { ProgressHeartbeat } from './progress.js';
import type { PermissionRules, SandboxMode, SandboxOptions } from './session.js';
import type { CallRules } from './decide-permission.js';

export type { CallOutcome, PlannedCall } from './call-outcome.js';

/** The session facts every activity of a session needs. */
export interface SessionContext {
  sessionId: string;
  /** The session's `cwd` option as given (`~` expanded on the worker); the worker's default when absent. */
  cwd?: string;
  /** The session's allow rules (file tools may use paths outside cwd that these name explicitly). */
  allowRules?: string[];
  /** The session's deny rules (reading tools skip files a `Read(...)` deny rule names). */
  denyRules?: string[];
  /** The session's own command hooks (`SessionOptions.hooks`). */
  sessionHooks?: Record<string, unknown>;
  /** Hooks from settings files inside the workspace load only when true (`SessionOptions.trustWorkspaceSettings`). */
  trustWorkspaceSettings?: boolean;
  /** Edit and Write refuse an existing file the session has not read since it changed (`SessionOptions.readBeforeEdit`). */
  readBeforeEdit?: boolean;
  /** The session's sandbox options as given (`SessionOptions.sandbox`); the worker resolves the defaults. */
  sandbox?: SandboxOptions;
  /** The session's client tools (`SessionOptions.clientTools`), which Plan and Prepare look up beside the worker's. */
  clientTools?: ClientToolSpec[];
}

export interface PlanCallsInput {
  session: SessionContext;
  calls: ToolCall[];
  /**
   * Prepare the turn's first group in the same round trip (whole turns): nothing runs before it, so this is still
   * "just before it runs". The group is computed with `groupCalls` and this cap, as the workflow does.
   */
  prepareFirstGroup?: { maxConcurrency?: number; hooksOffPath?: true; postHooksOffPath?: true };
  /**
   * Answer in the compact shape (plans without their defaults, flags as letters, Plan's list without repeats,
   * outcomes without defaults: src/contracts/compact-plan.ts). Only workflow code that expands that shape asks for
   * it, so an activity of a newer worker never sends it to a session whose code predates it (a rolling deploy).
   */
  compactPlans?: true;
  /**
   * With `prepareFirstGroup`: also run that group when every call of it runs locally (`batchLocalCalls`) and the
   * permission chain allows each one without asking under `rules` (the operator's rules are the worker's own). The
   * outcomes come back in `ranFirstGroup`: the turn's calls then need no activity round trip of their own.
   */
  runFirstGroup?: { turnId: string; rules: CallRules };
  /**
   * With `runFirstGroup` and a local Prepare that runs no PreToolUse hook (`prepareFirstGroup.hooksOffPath`): once
   * the first group ran whole, prepare and run each following group too, one after another in model order, while each
   * qualifies as the first did. Plan stops after a group one of whose calls failed, did not fit, moved to a regular
   * activity, started a background task or stops the turn, so no later group runs where it would not have.
   */
  runFollowingGroups?: true;
}

/** A group after the first that Plan prepared and ran (`PlanCallsInput.runFollowingGroups`). */
export interface RanFollowingGroup {
  prepared: PreparedCalls;
  /** What each call produced, by call id (every call of the group), as sent (`compactOutcomes`). */
  outcomes: Record<string, WireCallOutcome>;
  /** When the group's Prepare began, in milliseconds after Plan began. */
  startedAfterMs: number;
}

export interface PlannedCalls {
  /**
   * As sent: without repeats of the calls' ids and names (`compactPlannedCalls`); the workflow expands them
   * (`expandPlannedCalls`).
   */
  plans: WirePlannedCall[];
  /** The worker's default group size, recorded in history so replay sees the same grouping. */
  defaultMaxConcurrency: number;
  /** Whether the workflow may upsert the `SwitchyardPendingApprovals` search attribute. */
  pendingApprovalsSearchAttribute: boolean;
  /** The first group, prepared, when `prepareFirstGroup` asked for it. */
  firstGroup?: PreparedCalls;
  /**
   * What each call of the first group produced, by call id, when `runFirstGroup` asked and the group qualified. The
   * workflow decides permission again with the policy as it stands when this answer arrives, and uses an outcome only
   * for a call that is still allowed without asking and still runs locally; any other call runs as usual. As sent
   * (`compactOutcomes`); the workflow expands them (`expandOutcomes`).
   */
  ranFirstGroup?: Record<string, WireCallOutcome>;
  /**
   * The groups after the first that Plan ran too, in order (`runFollowingGroups`), each taken like `ranFirstGroup`:
   * permission decided again, an outcome used only for a call still allowed without asking that still runs locally.
   */
  ranGroups?: RanFollowingGroup[];
  /**
   * The worker that runs this session's workflow also runs its tools: read-only, idempotent, concurrency-safe calls
   * whose deadline is at most `maxTimeoutMs` run as local activities on it (no activity task round trip). Absent:
   * every call is a regular activity.
   */
  localCalls?: LocalCallsPolicy;
}

export interface LocalCallsPolicy {
  maxTimeoutMs: number;
  /** A local call still running after this long moves to a regular activity (absent in histories before it existed). */
  budgetMs?: number;
}

export interface PrepareCallsInput {
  session: SessionContext;
  calls: ToolCall[];
  /**
   * Answer in the compact shape (plans without their defaults, flags as letters, Plan's list without repeats,
   * outcomes without defaults: src/contracts/compact-plan.ts). Only workflow code that expands that shape asks for
   * it, so an activity of a newer worker never sends it to a session whose code predates it (a rolling deploy).
   */
  compactPlans?: true;
  /**
   * Asked of a Prepare that runs as a local activity: when a PreToolUse hook matches one of the calls, run no hook and
   * answer `hooksDeferred` at once, so the workflow runs this Prepare again as a regular activity. A local activity
   * holds its workflow task open, and no query or signal is answered until it ends; hooks may take minutes.
   */
  hooksOffPath?: true;
  /**
   * Mark each ready call that a PostToolUse (or PostToolUseFailure) command hook matches (`ReadyCallPlan.postToolUseHooks`), so
   * it runs as a regular activity: a local one holds the workflow task open while its post hooks run.
   */
  postHooksOffPath?: true;
}

export interface PreparedCalls {
  /** As sent: without repeats of the calls' inputs (`compactPlan`); the workflow expands them (`expandPlan`). */
  plans: WireCallPlan[];
  /** The session's effective working directory. */
  cwd: string;
  /** Hook settings files inside the workspace that were not loaded because the workspace is not trusted. */
  untrustedSettings?: string[];
  /** The operator's rules (the worker's policy file), recorded with the calls they judge. */
  operatorRules?: PermissionRules;
  /** Asked with `hooksOffPath`: a PreToolUse hook matches a call, so nothing was prepared (`plans` is empty). */
  hooksDeferred?: true;
}

/**
 * What Execute needs of a call's plan. The rest (permission facts, approval preview, hook outcome, rule content) was
 * used by the workflow before the call started and does not travel again: activity inputs are recorded in history.
 */
export type ExecutionPlan = Pick<ReadyCallPlan, 'callId' | 'toolName' | 'input' | 'timeoutMs' | 'stopTurnOnSuccess'>;

export function executionPlan(plan: ReadyCallPlan): ExecutionPlan {
  const { callId, toolName, input, timeoutMs, stopTurnOnSuccess } = plan;
  return timeoutMs === undefined
    ? { callId, toolName, input, stopTurnOnSuccess }
    : { callId, toolName, input, timeoutMs, stopTurnOnSuccess };
}

export interface ExecuteCallInput {
  session: SessionContext;
  turnId: string;
  /** The session's effective working directory (from Prepare). */
  cwd: string;
  plan: ExecutionPlan;
  /** The session's state, only for tools that read it (`ToolDefinition.readsSessionState`). */
  sessionState?: Record<string, unknown>;
  /**
   * A local attempt stops its handler after this long, runs no hooks and answers `relocate: true`: the workflow then
   * runs the call as a regular activity (see `DEFAULT_LOCAL_CALL_BUDGET_MS`).
   */
  localBudgetMs?: number;
  /**
   * How long the call waited for its approval (the workflow's `timings.permissionWaitMs`; 0 when allowed without
   * asking), for the execution's span (`switchyard.approval.wait_ms`). Absent in inputs recorded before it existed.
   */
  permissionWaitMs?: number;
}

/**
 * Heartbeat details: what a retry resumes from, and live progress for UIs (never in history; read back by
 * `toolProgressFromHeartbeat`). The call's ids ride along because the server's pending-activity view has no input.
 */
export interface ExecutionHeartbeat {
  activeMs: number;
  queuedMs: number;
  callId?: string;
  toolName?: string;
  turnId?: string;
  /** When the worker built these details (ISO 8601). */
  at?: string;
  progress?: ProgressHeartbeat;
}

/** Input of `runPermissionRequestHooks`: the call as its hooks see it, and where the session's hooks come from. */
export interface PermissionRequestHooksInput extends PermissionRequestHookInput {
  sessionHooks?: Record<string, unknown>;
  trustWorkspaceSettings?: boolean;
}

/** Input of `runApprovalEvaluator`: the evaluator the session picked, by name, and the waiting call. */
export interface ApprovalEvaluatorInput {
  evaluator: string;
  request: EvaluationRequest;
}

/**
 * Input of `verifyApproval`: what was signed and the signature; never a key. An approval sends its signed `payload`; a
 * signed `setPolicy` sends its `policyChange`, whose digest the activity computes (workflow code cannot hash).
 */
export type VerifyApprovalInput = (
  | { payload: ApprovalSigningPayload | InDoubtSigningPayload; policyChange?: undefined }
  | { policyChange: PolicyChangeToVerify; payload?: undefined }
) & {
  signature: string;
  /** The session's approvers, when it restricts who may decide. */
  sessionApprovers?: string[];
};

/** The verdict on a signature; for a `setPolicy`, with the `policyDigest` the activity computed. */
export type VerifyApprovalResult = ApprovalVerdict & { policyDigest?: string };

/** Input of `admitSession`: the session options a worker-level floor may refuse. */
export interface AdmitSessionInput {
  sandboxMode?: SandboxMode;
}

/** Whether the worker admits a session's options; the reason names the setting when it does not. */
export type SessionAdmission = { admitted: true } | { admitted: false; reason: string };

/**
 * The activities a worker registers, by the names Temporal records in histories (renaming one breaks replay). Built
 * by `createActivities` (`src/activities/create-activities.ts`), one file per activity.
 */
export interface Activities {
  /** Lookup, parse and concurrency flags of every call; with `prepareFirstGroup`, the first group prepared too. */
  planCalls(input: PlanCallsInput): Promise<PlannedCalls>;
  /** The front half of the pipeline for calls whose group is about to run. */
  prepareCalls(input: PrepareCallsInput): Promise<PreparedCalls>;
  /** The matching PermissionRequest hooks, in order: the first decision, or null for none. */
  runPermissionRequestHooks(input: PermissionRequestHooksInput): Promise<PermissionRequestHookResult | null>;
  /** Stops every running background task of a session (its end). */
  stopBackgroundTasks(input: { sessionId: string }): Promise<StoppedBackgroundTasks>;
  /** Asks the session's approval evaluator about a waiting call. */
  runApprovalEvaluator(input: ApprovalEvaluatorInput): Promise<EvaluationResult>;
  /** Checks a signed approval (or signed `setPolicy`) against the approvers file; the verdict only. */
  verifyApproval(input: VerifyApprovalInput): Promise<VerifyApprovalResult>;
  /** Whether this worker admits a session's options (`SWITCHYARD_SANDBOX=required` is a floor). */
  admitSession(input: AdmitSessionInput): Promise<SessionAdmission>;
  /** Runs one allowed call. */
  executeCall(input: ExecuteCallInput): Promise<CallOutcome>;
  /** A client tool's answer through the result budget (stored past it); a local activity on the workflow's worker. */
  budgetClientResult(input: BudgetClientResultInput): Promise<BudgetedClientResult>;
}
