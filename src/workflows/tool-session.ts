import {
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  log,
  patched,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { DEFAULT_CONTINUE_AS_NEW_EVENTS, MAX_TURN_REQUEST_BYTES } from '../contracts/defaults.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import { executeTurnUpdate, setPolicyUpdate } from '../contracts/messages.js';
import { invalidRule, policyDecider, policySchemas } from '../contracts/policy.js';
import type { SetPolicyRequest, SetPolicyResult } from '../contracts/policy.js';
import type { SessionOptions } from '../contracts/session.js';
import { executeTurnRequestProblem, formatZodError, oversizeRequestReason } from '../contracts/tool-call.js';
import type { ExecuteTurnRequest } from '../contracts/tool-call.js';
import type { TurnResult } from '../contracts/tool-result.js';
import { utf8Length } from '../contracts/utf8-length.js';
import { admitSession, stopBackgroundTasksActivity } from './activity-routing.js';
import { afterLocalActivities } from './local-activity-barrier.js';
import { installCallsInDoubtHandlers } from './doubt-resolution.js';
import { judgePolicyChangeWithoutSignature, refusedSignedChange, verifyPolicyChange } from './policy-authority.js';
import type { PolicyAuthority } from './policy-authority.js';
import type { CarriedSessionState, SessionState } from './session-state.js';
import { StreamingTurns, checkCallCount } from './streaming-turns.js';
import { ToolExecutor, installExecutorHandlers } from './tool-executor.js';

export type { CarriedSessionState } from './session-state.js';

/** What a session returns when it ends (it only ends by continue-as-new today). */
export interface SessionSummary {
  turns: number;
}

/**
 * The durable tool session: one workflow per agent session, one update per model reply. Its turns run on the
 * executor's core (`tool-executor.ts`: state, turn queue, scheduler, per-call run, approval broker, Web UI details),
 * the same core `runToolTurn` (`api.ts`) runs in a user's own workflow; this workflow adds the updates and continues
 * as new between turns when history grows.
 */
export async function toolSession(
  options: SessionOptions = {},
  carried?: CarriedSessionState,
): Promise<SessionSummary> {
  const admission: Admission = { pending: asksForAdmission(options) };
  const executor = new ToolExecutor(options, carried);
  const { state, queue } = executor;
  // The handlers are in place before the first await: an update that came with the start is never turned away
  // for want of a handler (it waits for the admission instead, see `admissionGate`).
  installHandlers(executor, admission);
  executor.refresh();
  await admitOnThisWorker(options, admission);

  const eventThreshold = options.continueAsNewAfterEvents ?? DEFAULT_CONTINUE_AS_NEW_EVENTS;
  try {
    await condition(
      () => queue.idle && (workflowInfo().continueAsNewSuggested || state.events.appendedThisRun >= eventThreshold),
    );
    // Signals and updates that arrived meanwhile finish first; none is lost across continue-as-new.
    await condition(allHandlersFinished);
  } catch (error) {
    // Cancelling the workflow ends the session: its background tasks end with it (continue-as-new keeps them).
    if (isCancellation(error)) await stopBackgroundTasksAtEnd(state);
    throw error;
  }
  return await continueAsNew<typeof toolSession>(options, state.carry(utf8Length(JSON.stringify(options))));
}

/** Marks histories in which a session asks its worker to admit its sandbox mode; older ones replay without asking. */
const SANDBOX_FLOOR_PATCH = 'sandbox-floor';

/** Whether the worker has admitted the session's options yet, and why it refused them if it did. */
interface Admission {
  pending: boolean;
  refusal?: string;
}

/** Only `off` and `auto` can be refused, so only sessions asking for them ask the worker (and mark their history). */
function asksForAdmission(options: SessionOptions): boolean {
  const sandboxMode = options.sandbox?.mode;
  return sandboxMode !== undefined && sandboxMode !== 'required' && patched(SANDBOX_FLOOR_PATCH);
}

function sessionRefused(reason: string): ApplicationFailure {
  return ApplicationFailure.create({ message: reason, type: 'SessionRefused', nonRetryable: true });
}

/**
 * A worker-level `SWITCHYARD_SANDBOX=required` is a floor no session option lowers: a session that asks for `off` or
 * `auto` is refused before any turn runs (turns wait for the admission, and a refused session's turns fail with the
 * reason), and ends with a failure naming the setting once those updates have answered.
 */
async function admitOnThisWorker(options: SessionOptions, admission: Admission): Promise<void> {
  if (!admission.pending) return;
  const result = await afterLocalActivities(() => admitSession({ sandboxMode: options.sandbox?.mode ?? 'auto' }));
  admission.pending = false;
  if (result.admitted) return;
  admission.refusal = result.reason;
  await condition(allHandlersFinished);
  throw sessionRefused(result.reason);
}

/**
 * What an update that starts calls waits for before it does: nothing (undefined, so the handler runs at once, as in
 * histories before the admission existed) once the session is admitted; else the admission, failing with the
 * refusal's reason.
 */
function admissionGate(admission: Admission): Promise<void> | undefined {
  if (!admission.pending && admission.refusal === undefined) return undefined;
  return (async () => {
    await condition(() => !admission.pending);
    if (admission.refusal !== undefined) throw sessionRefused(admission.refusal);
  })();
}

/**
 * The session's end (workflow cancellation: `SessionHandle.end()`, `temporal workflow cancel`): an activity stops the
 * background tasks the session still believes running, and `BackgroundTaskEnded` records each. Not cancellable
 * itself; a failure is logged and the session ends anyway. A terminated workflow runs no code, so termination leaves
 * its tasks running (docs/CONCEPTS.md, "Background tasks").
 */
async function stopBackgroundTasksAtEnd(state: SessionState): Promise<void> {
  if (!state.backgroundTasks.anyRunning) return;
  try {
    const stopped = await CancellationScope.nonCancellable(() =>
      stopBackgroundTasksActivity(state.options)({ sessionId: state.sessionId }),
    );
    state.backgroundTasks.sessionEnded({ tasks: stopped.tasks, emit: (event) => state.emit(event) });
  } catch (error) {
    log.error("could not stop the session's background tasks", { error: projectErrorMessage(error) });
  }
}

/** The wire contract's messages (docs/ARCHITECTURE.md, Wire contract), each to the part that owns it. */
function installHandlers(executor: ToolExecutor, admission: Admission): void {
  const { state, queue } = executor;
  const streaming = new StreamingTurns({ executor, gate: () => admissionGate(admission) });

  // An update, not a signal, because the caller waits for the results; the update id is the turnId.
  setHandler(
    executeTurnUpdate,
    (request: ExecuteTurnRequest): Promise<TurnResult> | TurnResult => {
      const gate = admissionGate(admission);
      const run = (): Promise<TurnResult> | TurnResult => executor.runWholeTurn(request.turnId, request.calls);
      return gate === undefined ? run() : gate.then(run);
    },
    {
      validator: (request) => {
        const problem = executeTurnRequestProblem(request);
        if (problem !== undefined) throw new Error(`Invalid executeTurn request: ${problem}`);
        const oversize = oversizeRequestReason(request.calls, MAX_TURN_REQUEST_BYTES);
        if (oversize !== undefined) throw new Error(`Invalid executeTurn request: ${oversize}`);
        if (streaming.has(request.turnId))
          throw new Error(`Turn "${request.turnId}" is a streaming turn: use addCalls and awaitResults`);
        if (!queue.knows(request.turnId)) checkCallCount(state, request.calls.length, request.turnId);
      },
    },
  );
  streaming.installHandlers();
  installSetPolicyHandler(executor);
  installExecutorHandlers({ executor: () => executor, isStreaming: (turnId) => streaming.has(turnId) });
  installCallsInDoubtHandlers({ state: () => state, turnId: () => queue.current?.turnId ?? '' });
}

/**
 * The `setPolicy` update: an update, not a signal, so the caller learns the new version and what it released; the
 * validator keeps bad rules out of history, so a rejected change applies nothing. In a session with approvers only a
 * change signed by one of them applies; any other is refused with the reason (docs/APPROVALS.md, Signed policy
 * changes).
 */
function installSetPolicyHandler(executor: ToolExecutor): void {
  const { state, queue } = executor;
  const applyPolicy = (request: SetPolicyRequest, authority: PolicyAuthority): SetPolicyResult => {
    const turnId = queue.current?.turnId ?? '';
    if (authority.kind === 'refused')
      throw refusedSignedChange({
        state,
        turnId,
        refusal: authority,
        audit: { requestId: 'setPolicy', by: policyDecider(request.by), source: 'policy' },
        failureType: 'PolicyChangeRefused',
      });
    const policyVersion = state.policy.update(request);
    // Decisions a policy change makes are the policy's (`policy:<by>`), never a bare name taken for a person.
    const { released, denied } = executor.broker.reconsider({
      by: policyDecider(request.by),
      verified: authority.verified,
    });
    const by = request.by === undefined ? {} : { by: request.by };
    const reason = request.reason === undefined ? {} : { reason: request.reason };
    state.emit({
      type: 'PolicyChanged',
      turnId,
      policyVersion,
      ...by,
      verified: authority.verified,
      ...(authority.policyDigest === undefined ? {} : { policyDigest: authority.policyDigest }),
      ...reason,
      released,
      denied,
    });
    return { policyVersion, released, denied };
  };
  setHandler(
    setPolicyUpdate,
    (request: SetPolicyRequest): SetPolicyResult | Promise<SetPolicyResult> => {
      // Unsigned and expired changes are judged at once, in the activation they arrived in; a signature is checked.
      const judged = judgePolicyChangeWithoutSignature(state, request);
      if (judged !== undefined) return applyPolicy(request, judged);
      return verifyPolicyChange(state, request).then((authority) => applyPolicy(request, authority));
    },
    {
      validator: (request) => {
        const parsed = policySchemas().setPolicy.safeParse(request);
        if (!parsed.success) throw new Error(`Invalid setPolicy request: ${formatZodError(parsed.error)}`);
        const bad = invalidRule(parsed.data.rules);
        if (bad !== undefined) throw new Error(`Invalid setPolicy request: ${bad}`);
      },
    },
  );
}
