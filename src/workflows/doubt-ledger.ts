import { ApplicationFailure, log, patched, setHandler } from '@temporalio/workflow';
import { approvalInputSummary } from '../contracts/approval.js';
import { callsInDoubtSchemas, inDoubtSigningPayload, ranInDoubtText } from '../contracts/calls-in-doubt.js';
import type {
  CallInDoubt,
  InDoubtOutcome,
  ResolveInDoubtRequest,
  ResolveInDoubtResult,
} from '../contracts/calls-in-doubt.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import { callsInDoubtQuery, resolveInDoubtUpdate } from '../contracts/messages.js';
import { formatZodError } from '../contracts/tool-call.js';
import type { ToolCall } from '../contracts/tool-call.js';
import type { ToolResult } from '../contracts/tool-result.js';
import { utf8Length } from '../contracts/utf8-length.js';
import { verifyApproval } from './activity-routing.js';
import { afterLocalActivities } from './local-activity-barrier.js';
import type { PolicyRefusalReason } from './policy-authority.js';
import type { TurnCall } from './schedule-calls.js';
import type { SessionState } from './session-state.js';

/**
 * Marks histories in which a call that is not idempotent and lost its worker is also recorded as in doubt (an event,
 * query `callsInDoubt`); older histories replay without the record.
 */
export const CALLS_IN_DOUBT_PATCH = 'calls-in-doubt';

/**
 * Largest input (UTF-8 bytes of its JSON) a call in doubt keeps for a `retry`: the list crosses continue-as-new, whose
 * payload Temporal bounds. A larger call can be settled `ran` or `not-ran`; a `retry` of it is refused with the reason.
 */
export const IN_DOUBT_INPUT_MAX_BYTES = 16 * 1_024;

/** A call in doubt as the session keeps it: what query `callsInDoubt` lists, and the call itself for a `retry`. */
export interface HeldCallInDoubt extends CallInDoubt {
  /** The call's resolved input (absent: over `IN_DOUBT_INPUT_MAX_BYTES`, so it cannot be retried). */
  input?: unknown;
}

/** A settled call the session's next turn reports: the output a person gave (`ran`), or the call run again (`retry`). */
export interface InDoubtReport {
  outcome: Extract<InDoubtOutcome, 'ran' | 'retry'>;
  call: HeldCallInDoubt;
  output?: string;
}

/** What continue-as-new carries of calls in doubt. */
export interface CarriedCallsInDoubt {
  open: HeldCallInDoubt[];
  reports: InDoubtReport[];
}

/**
 * The session's calls in doubt (docs/SEMANTICS.md, Calls in doubt): listed until a person settles them, then, for `ran`
 * and `retry`, reported by the session's next turn. Carried across continue-as-new.
 */
export class CallsInDoubtLedger {
  readonly #open = new Map<string, HeldCallInDoubt>();
  readonly #reports: InDoubtReport[] = [];

  constructor(carried?: CarriedCallsInDoubt) {
    for (const call of carried?.open ?? []) this.#open.set(call.callId, call);
    this.#reports.push(...(carried?.reports ?? []));
  }

  /** Query `callsInDoubt`: oldest first, without the kept inputs. */
  list(): CallInDoubt[] {
    return [...this.#open.values()].map(
      ({ callId, turnId, toolName, inputSummary, inputDigest, idempotencyKey, startedAt }) => ({
        callId,
        turnId,
        toolName,
        inputSummary,
        inputDigest,
        idempotencyKey,
        startedAt,
      }),
    );
  }

  get(callId: string): HeldCallInDoubt | undefined {
    return this.#open.get(callId);
  }

  /** Records a call in doubt; its input is kept for a `retry` when small enough. */
  record(call: Omit<HeldCallInDoubt, 'inputSummary' | 'input'>, input: unknown): HeldCallInDoubt {
    let size = Number.POSITIVE_INFINITY;
    try {
      size = utf8Length(JSON.stringify(input) ?? '');
    } catch {
      size = Number.POSITIVE_INFINITY;
    }
    const held: HeldCallInDoubt = {
      ...call,
      inputSummary: approvalInputSummary(call.toolName, input),
      ...(size <= IN_DOUBT_INPUT_MAX_BYTES ? { input } : {}),
    };
    this.#open.set(call.callId, held);
    return held;
  }

  /** Removes a settled call from the list; `ran` and `retry` wait for the next turn to report them. */
  settle(call: HeldCallInDoubt, outcome: InDoubtOutcome, output: string | undefined): void {
    this.#open.delete(call.callId);
    if (outcome === 'not-ran') return;
    this.#reports.push({ outcome, call, ...(output === undefined ? {} : { output }) });
  }

  /**
   * The settled calls a new turn reports first, in the order they were settled: a `retry` as a call of the turn (it
   * runs through the whole pipeline under its original call id), a `ran` as a result already complete. A call id the
   * turn's own calls use waits for a later turn.
   */
  takeReports(turnCallIds: ReadonlySet<string>): InDoubtReport[] {
    const taken: InDoubtReport[] = [];
    for (let index = 0; index < this.#reports.length;) {
      const report = this.#reports[index];
      if (report !== undefined && !turnCallIds.has(report.call.callId)) {
        taken.push(report);
        this.#reports.splice(index, 1);
      } else index += 1;
    }
    return taken;
  }

  get pendingReports(): number {
    return this.#reports.length;
  }

  carry(): CarriedCallsInDoubt | undefined {
    if (this.#open.size === 0 && this.#reports.length === 0) return undefined;
    return { open: [...this.#open.values()], reports: [...this.#reports] };
  }
}

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
      if (authority.kind === 'refused') {
        state.emit({
          type: 'ApprovalIgnored',
          turnId: options.turnId(),
          requestId: 'resolveInDoubt',
          reason: authority.reason,
          detail: authority.detail,
        });
        state.recordApprovalDecision({
          ...audit,
          outcome: 'ignored',
          ignoredBecause: authority.reason,
          detail: authority.detail,
        });
        throw ApplicationFailure.create({
          message: `resolveInDoubt refused (${authority.reason}): ${authority.detail}; nothing changed`,
          type: 'InDoubtResolutionRefused',
          nonRetryable: true,
        });
      }
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
