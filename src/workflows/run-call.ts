import { ActivityFailure, CancellationScope, TimeoutFailure, isCancellation, proxySinks } from '@temporalio/workflow';
import type { InterruptBehavior, ReadyCallPlan } from '../contracts/call-plan.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import { executionPlan } from '../contracts/pipeline.js';
import type { CallOutcome, ExecuteCallInput, LocalCallsPolicy } from '../contracts/pipeline.js';
import type { SwitchyardSinks, ToolCallTelemetryEndRecord } from '../contracts/sinks.js';
import { texts } from '../contracts/texts.js';
import { joinHookContext } from '../contracts/hook-context.js';
import { turnControlOf } from '../contracts/turn-control.js';
import { errorCodes } from '../contracts/tool-result.js';
import type { ToolResult } from '../contracts/tool-result.js';
import type { ApprovalBroker } from './approval-broker.js';
import { executeCallActivity, localExecuteCallActivity } from './activity-routing.js';
import { callPermissionInput, decidePermission, ruleMatchesCall } from '../contracts/decide-permission.js';
import type { PermissionInput } from '../contracts/decide-permission.js';
import { runsLocally } from '../contracts/local-calls.js';
import { afterLocalActivities } from './local-activity-barrier.js';
import { recordCallInDoubt } from './doubt-resolution.js';
import type { CallClock, CallCompletion, UntimedResult } from './results.js';
import { finishResult } from './results.js';
import type { SessionState } from './session-state.js';
import type { SiblingGroup } from './sibling-group.js';
import type { ParsedRules } from '../contracts/permission-rules.js';

const { switchyardTelemetry } = proxySinks<SwitchyardSinks>();

/** The turn a call belongs to, as the call sees it. */
export interface CallTurn {
  turnId: string;
  /** Set once the turn is interrupted. */
  interrupted?: { reason?: string };
}

/** Everything one call's run needs: one named object, so the stages below read as a chain. */
export interface CallRun {
  state: SessionState;
  broker: ApprovalBroker;
  turn: CallTurn;
  /** The session's effective working directory (from Prepare). */
  cwd: string;
  plan: ReadyCallPlan;
  clock: CallClock;
  siblings: SiblingGroup;
  /** Calls between permission and result, with their interrupt behaviour (query `activeTurn`). */
  executing: Map<string, InterruptBehavior>;
  /** When set, short read-only calls run as local activities (the workflow's worker hosts the tools). */
  localCalls?: LocalCallsPolicy;
  /** The operator's rules (the worker's policy file) as Prepare recorded them. */
  operator?: ParsedRules;
  /**
   * What the call produced when Plan already ran it (`PlannedCalls.ranFirstGroup`): taken instead of a run of its own
   * only when the call is still allowed without asking and still runs locally.
   */
  ran?: CallOutcome;
}

type Authorization =
  | {
      kind: 'authorized';
      permission: ToolCallTelemetryEndRecord['permission'];
      permissionWaitMs: number;
      rememberRule?: string;
    }
  | { kind: 'refused'; result: ToolResult };

/** The back half of the per-call pipeline, after Prepare: permission → approval → execute → result. */
export async function runCall(run: CallRun): Promise<CallCompletion> {
  const hookContext = joinHookContext(run.plan.hook?.additionalContext);
  run.executing.set(run.plan.callId, run.plan.interruptBehavior);
  try {
    const authorization = await authorizeCall(run);
    if (authorization.kind === 'refused') return { result: authorization.result, hookContext };
    if (run.turn.interrupted !== undefined) {
      const modelContent = texts.rejectMessage;
      return {
        result: finish(
          run,
          { ...base(run.plan), status: 'cancelled', modelContent, isError: true, errorCode: errorCodes.cancelled },
          'none_needed',
        ),
        hookContext,
      };
    }
    return await executeAuthorized({ run, authorization, hookContext });
  } finally {
    run.executing.delete(run.plan.callId);
  }
}

function base(plan: ReadyCallPlan): { callId: string; toolName: string } {
  return { callId: plan.callId, toolName: plan.toolName };
}

function finish(run: CallRun, result: UntimedResult, permission: ToolCallTelemetryEndRecord['permission']): ToolResult {
  return finishResult({ state: run.state, clock: run.clock, result, permission });
}

function denied(
  run: CallRun,
  options: { reason: string; source: string; permissionWaitMs: number; requestId?: string; by?: string },
): Authorization {
  const { plan, turn } = run;
  const requestId = options.requestId === undefined ? {} : { requestId: options.requestId };
  const by = options.by === undefined ? {} : { by: options.by };
  const policyVersion = run.state.policy.version;
  run.state.emit({
    type: 'PermissionDenied',
    turnId: turn.turnId,
    callId: plan.callId,
    reason: options.reason,
    source: options.source,
    ...requestId,
    ...by,
    policyVersion,
  });
  const errorCode = options.source === 'hook' ? errorCodes.hookBlocked : errorCodes.permissionDenied;
  const result = finish(
    run,
    {
      ...base(plan),
      status: 'denied',
      modelContent: options.reason,
      isError: true,
      errorCode,
      timings: { permissionWaitMs: options.permissionWaitMs },
    },
    'denied',
  );
  return { kind: 'refused', result };
}

/** The decision chain's input for this call, under the session's policy as it stands now. */
function permissionInput(run: CallRun): PermissionInput {
  const { state } = run;
  return callPermissionInput(run.plan, run.cwd, {
    mode: state.policy.permissionMode,
    rules: state.rules,
    remembered: state.remembered,
    ...(run.operator === undefined ? {} : { operator: run.operator }),
  });
}

/** The permission decision chain, the count limits, then — when it asks — the approval broker. */
async function authorizeCall(run: CallRun): Promise<Authorization> {
  const { state, plan, turn } = run;
  const input = permissionInput(run);
  const decision = decidePermission(input);
  const shadow = state.policy.shadow;
  if (shadow !== undefined) {
    const would = decidePermission({ ...input, rules: shadow });
    if (would.behavior !== decision.behavior) {
      state.emit({
        type: 'PolicyShadowDecision',
        turnId: turn.turnId,
        callId: plan.callId,
        toolName: plan.toolName,
        enforced: decision.behavior,
        shadow: would.behavior,
        shadowReason: would.reason,
        policyVersion: state.policy.version,
      });
    }
  }
  if (decision.behavior === 'deny')
    return denied(run, { reason: decision.reason, source: decision.source, permissionWaitMs: 0 });
  const limits =
    state.policy.limits.length === 0
      ? { taken: [] }
      : state.policy.takeLimits(turn.turnId, (rule) => ruleMatchesCall(rule, input));
  if ('denied' in limits) return denied(run, { reason: limits.denied, source: 'limit', permissionWaitMs: 0 });
  if (decision.behavior === 'allow') return { kind: 'authorized', permission: 'none_needed', permissionWaitMs: 0 };
  const authorization = await awaitApproval(run, decision.reason);
  if (authorization.kind === 'refused') state.policy.returnLimits(turn.turnId, limits.taken);
  return authorization;
}

/** The approval broker's outcome for a call that asks, as an authorization. */
async function awaitApproval(run: CallRun, reason: string): Promise<Authorization> {
  const { state, plan, turn } = run;
  const outcome = await run.broker.request({
    turnId: turn.turnId,
    cwd: run.cwd,
    plan,
    reason,
    redecide: () => decidePermission(permissionInput(run)),
  });
  const permissionWaitMs = outcome.waitMs;
  const policyVersion = state.policy.version;
  switch (outcome.kind) {
    case 'cancelled': {
      const modelContent = texts.rejectMessage;
      const result = finish(
        run,
        {
          ...base(plan),
          status: 'cancelled',
          modelContent,
          isError: true,
          errorCode: errorCodes.cancelled,
          timings: { permissionWaitMs },
        },
        'none_needed',
      );
      return { kind: 'refused', result };
    }
    case 'hook':
      if (outcome.behavior === 'deny') {
        return denied(run, {
          reason: outcome.message ?? `A PermissionRequest hook denied permission to use ${plan.toolName}.`,
          source: 'hook',
          permissionWaitMs,
        });
      }
      state.emit({
        type: 'PermissionResolved',
        turnId: turn.turnId,
        callId: plan.callId,
        decision: 'allow',
        source: 'hook',
        policyVersion,
      });
      return { kind: 'authorized', permission: 'approved', permissionWaitMs };
    case 'policy':
    case 'evaluator':
      if (outcome.behavior === 'deny')
        return denied(run, { reason: outcome.reason, source: outcome.kind, permissionWaitMs, by: outcome.by });
      state.emit({
        type: 'PermissionResolved',
        turnId: turn.turnId,
        callId: plan.callId,
        decision: 'allow',
        source: outcome.kind,
        by: outcome.by,
        policyVersion,
      });
      return { kind: 'authorized', permission: 'approved', permissionWaitMs };
    case 'timeout':
      return denied(run, {
        reason: texts.approvalTimedOut(plan.toolName, state.options.approvalTimeoutMs ?? 0),
        source: 'timeout',
        permissionWaitMs,
      });
    case 'decided': {
      const { signal } = outcome;
      if (signal.decision === 'deny') {
        return denied(run, {
          reason: texts.approvalDenied(plan.toolName, signal.reason),
          source: 'user',
          permissionWaitMs,
          requestId: signal.requestId,
        });
      }
      const by = signal.by === undefined ? {} : { by: signal.by };
      state.emit({
        type: 'PermissionResolved',
        turnId: turn.turnId,
        callId: plan.callId,
        requestId: signal.requestId,
        decision: signal.decision,
        source: 'user',
        ...by,
        policyVersion,
      });
      const authorized: Authorization = { kind: 'authorized', permission: 'approved', permissionWaitMs };
      return signal.decision === 'allow_always' ? { ...authorized, rememberRule: plan.rememberRule } : authorized;
    }
    default: {
      const exhaustive: never = outcome;
      return exhaustive;
    }
  }
}

async function executeAuthorized(options: {
  run: CallRun;
  authorization: Extract<Authorization, { kind: 'authorized' }>;
  hookContext: string[];
}): Promise<CallCompletion> {
  const { run, authorization, hookContext } = options;
  const { state, plan, turn, clock } = run;
  state.emit({
    type: 'ToolCallStarted',
    turnId: turn.turnId,
    callId: plan.callId,
    toolName: plan.toolName,
    readOnly: plan.flags.readOnly,
    sideEffectScope: plan.flags.sideEffectScope,
  });
  switchyardTelemetry.toolCallStarted({
    sessionId: clock.sessionId,
    turnId: turn.turnId,
    callId: plan.callId,
    toolName: plan.toolName,
    known: true,
    startedAt: clock.startedAt ?? Date.now(),
  });
  const ran = authorization.permission === 'none_needed' ? run.ran : undefined;
  const outcome =
    plan.clientTool === true
      ? await parkForClient(run)
      : await executeActivity(run, ran, authorization.permissionWaitMs);
  const turnControl = turnControlOf({
    toolName: plan.toolName,
    current: outcome.turnControl,
    preToolUse: plan.hook?.stopTurn,
  });
  const result: UntimedResult = {
    ...base(plan),
    status: outcome.status,
    modelContent: outcome.modelContent,
    isError: outcome.isError,
    timings: { permissionWaitMs: authorization.permissionWaitMs, queuedMs: outcome.queuedMs },
  };
  if (outcome.errorCode !== undefined) result.errorCode = outcome.errorCode;
  if (outcome.display !== undefined) result.display = outcome.display;
  if (outcome.content !== undefined) result.content = outcome.content;
  if (outcome.budget !== undefined) result.budget = outcome.budget;
  if (turnControl !== undefined) result.turnControl = turnControl;
  if (outcome.sandboxed !== undefined) result.sandboxed = outcome.sandboxed;
  if (outcome.sandboxed === false && outcome.unsandboxedReason !== undefined)
    state.noteUnsandboxed(outcome.unsandboxedReason);
  if (outcome.backgroundTask !== undefined) {
    state.backgroundTasks.observe({
      report: outcome.backgroundTask,
      turnId: turn.turnId,
      callId: plan.callId,
      toolName: plan.toolName,
      emit: (event) => state.emit(event),
    });
    if (outcome.backgroundTask.kind === 'started') result.backgroundTask = { taskId: outcome.backgroundTask.taskId };
  }
  const completion: CallCompletion = {
    result: finish(run, result, authorization.permission),
    hookContext: joinHookContext(hookContext, outcome.hookContext),
  };
  if (outcome.aggregateReplacement !== undefined) completion.replacement = outcome.aggregateReplacement;
  if (outcome.sessionState !== undefined) completion.stateChanges = outcome.sessionState;
  if (authorization.rememberRule !== undefined) completion.rememberRule = authorization.rememberRule;
  return completion;
}

/** A client tool's call: no activity runs; it waits for the client's `submitToolResult`. */
function parkForClient(run: CallRun): Promise<CallOutcome> {
  const { state, plan, turn } = run;
  const timeoutMs = state.options.clientToolTimeoutMs;
  return state.clientCalls.park({
    callId: plan.callId,
    turnId: turn.turnId,
    toolName: plan.toolName,
    input: plan.input,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    onParked: () =>
      state.emit({ type: 'ClientToolRequested', turnId: turn.turnId, callId: plan.callId, toolName: plan.toolName }),
  });
}

function failedOutcome(status: CallOutcome['status'], modelContent: string, errorCode: string): CallOutcome {
  return { status, modelContent, isError: true, errorCode, activeMs: 0, queuedMs: 0 };
}

/** Runs the call's activity; infrastructure failures become results, never a failed workflow task. */
async function executeActivity(
  run: CallRun,
  ran: CallOutcome | undefined,
  permissionWaitMs: number,
): Promise<CallOutcome> {
  const { state, plan, siblings } = run;
  const request: ExecuteCallInput = {
    session: state.context(),
    turnId: run.turn.turnId,
    cwd: run.cwd,
    plan: executionPlan(plan),
    ...(plan.readsSessionState ? { sessionState: { ...state.toolState } } : {}),
    // For the execution's span only: activity inputs are not compared on replay.
    permissionWaitMs,
  };
  const regular = (): Promise<CallOutcome> => executeCallActivity(plan, state.options)(request);
  const policy = run.localCalls;
  const execute = async (): Promise<CallOutcome> => {
    if (policy === undefined || !runsLocally(plan, policy)) return regular();
    const local =
      ran ??
      (await afterLocalActivities(() =>
        localExecuteCallActivity(
          plan,
          policy,
        )({ ...request, ...(policy.budgetMs === undefined ? {} : { localBudgetMs: policy.budgetMs }) }),
      ));
    if (local.relocate !== true) return local;
    // Still running after its local budget: the call starts again as a regular activity (it is idempotent and
    // read-only). The local attempt's time still counts in the call's timings (a wait at an admission gate is real).
    const moved = await regular();
    return { ...moved, activeMs: moved.activeMs + local.activeMs, queuedMs: moved.queuedMs + local.queuedMs };
  };
  // Its own scope, so a failing sibling of the same tool can cancel it without cancelling the turn.
  const scope = plan.interruptBehavior === 'block' ? undefined : new CancellationScope();
  if (scope !== undefined) siblings.add(plan, scope);
  try {
    // `block` tools run to completion through an interrupt.
    const outcome = scope === undefined ? await CancellationScope.nonCancellable(execute) : await scope.run(execute);
    const cancelledBy = siblings.cancelledBy(plan.callId);
    if (outcome.status === 'cancelled' && cancelledBy !== undefined)
      return { ...outcome, modelContent: texts.siblingErrored(cancelledBy), errorCode: errorCodes.siblingError };
    if (outcome.isError && outcome.status === 'error' && plan.cancelSiblingsOnError) siblings.cancelOthers(plan);
    return outcome;
  } catch (error) {
    if (isCancellation(error)) {
      const cancelledBy = siblings.cancelledBy(plan.callId);
      if (cancelledBy !== undefined)
        return failedOutcome('cancelled', texts.siblingErrored(cancelledBy), errorCodes.siblingError);
      return failedOutcome('cancelled', texts.rejectMessage, errorCodes.cancelled);
    }
    if (error instanceof ActivityFailure && error.cause instanceof TimeoutFailure) {
      // Only a missed heartbeat means the worker was lost; the backstop is a plain timeout.
      if (error.cause.timeoutType !== 'HEARTBEAT')
        return failedOutcome('error', texts.timedOut(plan.timeoutMs ?? 0), errorCodes.timeout);
      if (!plan.flags.idempotent) {
        recordCallInDoubt(state, {
          callId: plan.callId,
          turnId: run.turn.turnId,
          toolName: plan.toolName,
          input: plan.input,
          inputDigest: plan.inputDigest,
          startedAt: run.clock.startedAt ?? Date.now(),
        });
        return failedOutcome('error', texts.interruptedMayHavePartlyRun(plan.toolName), errorCodes.interrupted);
      }
    }
    return failedOutcome('error', projectErrorMessage(error), errorCodes.handlerError);
  } finally {
    siblings.remove(plan.callId);
  }
}
