// Settling calls in doubt: recording one when a call that is not idempotent lost its worker, the `callsInDoubt`
// query and the `resolveInDoubt` update (signed by an approver in an approvers session), and the turn's results once
// its calls are settled. The ledger they work on is src/workflows/doubt-ledger.ts.
import { ApplicationFailure, log, patched, setHandler } from '@temporalio/workflow';
import { callsInDoubtSchemas, inDoubtSigningPayload, ranInDoubtText } from '../contracts/calls-in-doubt.js';
import type { ResolveInDoubtRequest, ResolveInDoubtResult } from '../contracts/calls-in-doubt.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import { callsInDoubtQuery, resolveInDoubtUpdate } from '../contracts/messages.js';
import { formatZodError } from '../contracts/tool-call.js';
import type { ToolCall } from '../contracts/tool-call.js';
import type { ToolResult } from '../contracts/tool-result.js';
import { verifyApproval } from './activity-routing.js';
import { afterLocalActivities } from './local-activity-barrier.js';
import { refusedSignedChange } from './policy-authority.js';
import type { PolicyRefusalReason } from './policy-authority.js';
import type { TurnCall } from './schedule-calls.js';
import type { SessionState } from './session-state.js';
import { CALLS_IN_DOUBT_PATCH, IN_DOUBT_INPUT_MAX_BYTES } from './doubt-ledger.js';
import type { InDoubtReport } from './doubt-ledger.js';

/** The call a `retry` runs: the original call id, tool and input. */
export function retryCall(report: InDoubtReport): ToolCall {
  return { id: report.call.callId, name: report.call.toolName, input: report.call.input };
}

/**
 * A `ran` report as a call of the new turn that is already complete: the output the person gave is its result, as if
 * the tool had returned it (no tool runs, no hook fires).
 */
export function ranEntry(report: InDoubtReport, index: number, now: number): TurnCall {
  const { call } = report;
  const result: ToolResult = {
    callId: call.callId,
    toolName: call.toolName,
    status: 'success',
    modelContent: ranInDoubtText(call.toolName, report.output),
    isError: false,
    timings: { totalMs: 0, permissionWaitMs: 0, queuedMs: 0 },
  };
  return {
    index,
    call: { id: call.callId, name: call.toolName, input: call.input ?? {} },
    addedAt: now,
    finishedAt: now,
    state: 'completed',
    completion: { result },
  };
}

/**
 * Records a call that is not idempotent and lost its worker while it ran (only in histories marked by
 * `CALLS_IN_DOUBT_PATCH`): listed by `callsInDoubt` and told by a `CallInDoubt` event.
 */
export function recordCallInDoubt(
  state: SessionState,
  call: { callId: string; turnId: string; toolName: string; input: unknown; inputDigest: string; startedAt: number },
): void {
  if (!patched(CALLS_IN_DOUBT_PATCH)) return;
  const held = state.callsInDoubt.record(
    {
      callId: call.callId,
      turnId: call.turnId,
      toolName: call.toolName,
      inputDigest: call.inputDigest,
      // The execution in doubt ran as its activity's first attempt: calls that are not idempotent are never retried.
      idempotencyKey: `${state.sessionId}:${call.callId}:1`,
      startedAt: new Date(call.startedAt).toISOString(),
    },
    call.input,
  );
  state.emit({
    type: 'CallInDoubt',
    turnId: held.turnId,
    callId: held.callId,
    toolName: held.toolName,
    inputSummary: held.inputSummary,
    inputDigest: held.inputDigest,
    idempotencyKey: held.idempotencyKey,
    startedAt: held.startedAt,
  });
}

/** Whether a resolution may apply: taken (verified when a signature checked out), or refused with the reason. */
type ResolutionAuthority =
  { kind: 'taken'; verified: boolean } | { kind: 'refused'; reason: PolicyRefusalReason; detail: string };

/**
 * A resolution's authority, as a signed `setPolicy`'s: a session without approvers takes an unsigned one, unverified;
 * with approvers only one signed by one of them applies. A signature, when there is one, must check out either way
 * (the `verifyApproval` local activity, whose recorded verdict replay reuses); expiry is judged in workflow time.
 */
async function judgeResolution(state: SessionState, request: ResolveInDoubtRequest): Promise<ResolutionAuthority> {
  const approvers = state.options.approvers;
  if (request.signature === undefined) {
    if (approvers === undefined) return { kind: 'taken', verified: false };
    return {
      kind: 'refused',
      reason: 'unsigned',
      detail: `this session takes only resolutions signed by its approvers (${approvers.join(', ') || 'none'})`,
    };
  }
  if (request.expiresAt !== undefined && Date.parse(request.expiresAt) <= Date.now()) {
    return {
      kind: 'refused',
      reason: 'expired',
      detail: `the signed resolution expired at ${request.expiresAt} (session time ${new Date().toISOString()})`,
    };
  }
  try {
    const signature = request.signature;
    const verdict = await afterLocalActivities(() =>
      verifyApproval({
        payload: inDoubtSigningPayload(state.sessionId, request),
        signature,
        ...(approvers === undefined ? {} : { sessionApprovers: approvers }),
      }),
    );
    if (!verdict.verified) return { kind: 'refused', reason: verdict.reason, detail: verdict.detail };
    return { kind: 'taken', verified: true };
  } catch (error) {
    return {
      kind: 'refused',
      reason: 'verification_failed',
      detail: `the signature could not be checked: ${projectErrorMessage(error)}`,
    };
  }
}

function unknownCall(callId: string): Error {
  return new Error(
    `Unknown call in doubt "${callId}": query callsInDoubt lists the calls this session can settle (a settled call leaves the list)`,
  );
}

/** The checks that keep a bad request out of history: its shape, the call id, and a `retry` of a call without input. */
function validateResolution(state: SessionState, request: ResolveInDoubtRequest): void {
  const parsed = callsInDoubtSchemas().resolveInDoubt.safeParse(request);
  if (!parsed.success) throw new Error(`Invalid resolveInDoubt request: ${formatZodError(parsed.error)}`);
  const call = state.callsInDoubt.get(request.callId);
  if (call === undefined) throw unknownCall(request.callId);
  if (request.outcome === 'retry' && !('input' in call))
    throw new Error(
      `Call "${request.callId}" cannot be retried: its input was over ${IN_DOUBT_INPUT_MAX_BYTES} bytes and was not kept; settle it as ran or not-ran`,
    );
}

/** Query `callsInDoubt` and update `resolveInDoubt` (docs/SEMANTICS.md, Calls in doubt). */
export function installCallsInDoubtHandlers(options: { state: () => SessionState; turnId: () => string }): void {
  setHandler(callsInDoubtQuery, () => options.state().callsInDoubt.list());
  setHandler(
    resolveInDoubtUpdate,
    async (request: ResolveInDoubtRequest): Promise<ResolveInDoubtResult> => {
      const state = options.state();
      const authority = await judgeResolution(state, request);
      const call = state.callsInDoubt.get(request.callId);
      const audit = {
        requestId: 'resolveInDoubt',
        by: request.by,
        callId: request.callId,
        ...(call === undefined
          ? {}
          : {
              toolName: call.toolName,
              turnId: call.turnId,
              inputDigest: call.inputDigest,
              inputSummary: call.inputSummary,
            }),
        ...(request.expiresAt === undefined ? {} : { expiresAt: request.expiresAt }),
      };
      if (authority.kind === 'refused')
        throw refusedSignedChange({
          state,
          turnId: options.turnId(),
          refusal: authority,
          audit,
          failureType: 'InDoubtResolutionRefused',
        });
      // Another resolution may have settled the call while this one's signature was checked.
      if (call === undefined) throw ApplicationFailure.create({ message: unknownCall(request.callId).message });
      state.callsInDoubt.settle(call, request.outcome, request.output);
      state.recordApprovalDecision({
        ...audit,
        verified: authority.verified,
        outcome: 'accepted',
        reason: `resolveInDoubt: ${request.outcome}`,
      });
      state.emit({
        type: 'CallInDoubtResolved',
        turnId: call.turnId,
        callId: call.callId,
        toolName: call.toolName,
        outcome: request.outcome,
        by: request.by,
        verified: authority.verified,
      });
      log.info('call in doubt settled', { callId: call.callId, outcome: request.outcome });
      return {
        callId: call.callId,
        outcome: request.outcome,
        verified: authority.verified,
        reportedInNextTurn: request.outcome !== 'not-ran',
      };
    },
    { validator: (request) => validateResolution(options.state(), request) },
  );
}

/**
 * Puts the settled calls a new turn reports before the model's own calls: the `ran` ones as results already complete,
 * then each `retry` as a call of the turn. Returns the calls to add to the turn (the retries, then `calls`).
 */
export function withSettledCalls(
  state: SessionState,
  turn: { calls: TurnCall[] },
  calls: readonly ToolCall[],
): readonly ToolCall[] {
  if (state.callsInDoubt.pendingReports === 0) return calls;
  const reports = state.callsInDoubt.takeReports(new Set(calls.map((call) => call.id)));
  const now = Date.now();
  for (const report of reports) if (report.outcome === 'ran') turn.calls.push(ranEntry(report, turn.calls.length, now));
  const retries = reports.filter((report) => report.outcome === 'retry').map(retryCall);
  return retries.length === 0 ? calls : [...retries, ...calls];
}
