import { registryWithClientTools } from '../tools/client-tool.js';
import { stat } from 'node:fs/promises';
import os from 'node:os';
import { Context } from '@temporalio/activity';
import { maxConcurrencyFromEnv } from '../config/environment.js';
import { callInputBytes } from '../contracts/tool-call.js';
import { callInputValue, compactPlan } from '../contracts/compact-plan.js';
import type { WireCallPlan } from '../contracts/compact-plan.js';
import { PAYLOAD_LIMITS } from '../contracts/defaults.js';
import { utf8Length } from '../contracts/utf8-length.js';
import { inputDigest } from './digest.js';
import type { CallOutcome, ExecuteCallInput, LocalCallsPolicy, PlanCallsInput, PlannedCall, PlannedCalls, PrepareCallsInput, PreparedCalls, SessionContext } from '../contracts/pipeline.js';
import { groupCalls } from '../contracts/group-calls.js';
import type { ToolRegistry } from '../tools/registry.js';
import { AdmissionGate, DEFAULT_ADMISSION_GATES } from './admission-gate.js';
import type { ArtifactStore } from '../contracts/artifact-store.js';
import { executeCall } from './execute-call.js';
import { runPermissionRequestHooks } from '../hooks/permission-request.js';
import { sessionHooks } from '../hooks/session-hooks.js';
import type { PermissionRequestHookInput, PermissionRequestHookResult, SwitchyardHooks } from '../hooks/types.js';
import { planCall, rejected } from './plan-call.js';
import { toolNotOnWorker, workersWithOtherTools } from './tool-mismatch.js';
import { errorCodes } from '../contracts/tool-result.js';
import { texts } from '../contracts/texts.js';
import type { CallPlan } from '../contracts/call-plan.js';
import { dataDirFromEnv } from '../artifacts/file-artifact-store.js';
import type { StoppedBackgroundTasks } from '../contracts/background-tasks.js';
import { backgroundTaskStore } from '../tools/background-tasks.js';
import { prepareCall } from './prepare-call.js';
import type { PermissionRules } from '../contracts/session.js';
import type { ApprovalEvaluator, EvaluationRequest, EvaluationResult } from '../contracts/policy.js';
import { runApprovalEvaluator } from './approval-evaluator.js';
import { createVerifyApproval } from './verify-approval.js';

export interface ActivityDependencies {
  registry: ToolRegistry;
  /** Working directory of sessions that name none. Default: the worker's. */
  defaultCwd?: string;
  /** Group size for sessions that name none. Default `SWITCHYARD_MAX_TOOL_CONCURRENCY` or 10. */
  defaultMaxConcurrency?: number;
  /** Hooks given as functions; they run before command hooks from settings. */
  hooks?: SwitchyardHooks;
  /**
   * Where the user-level `settings.json` with command hooks is (default `~/.switchyard`); `false` reads no settings
   * files at all (project `<cwd>/.switchyard/settings.json` included).
   */
  userSettingsDir?: string | false;
  /** Whether the namespace has the `SwitchyardPendingApprovals` search attribute (the worker checks at start). */
  pendingApprovalsSearchAttribute?: boolean;
  /** Where full outputs go; without a store, over-budget outputs are truncated. */
  artifacts?: ArtifactStore;
  /**
   * The worker's data directory: background tasks live under `<dataDir>/background`. Default
   * `SWITCHYARD_DATA_DIR` / `~/.local/share/switchyard` (`dataDirFromEnv`).
   */
  dataDir?: string;
  /** Admission gates by name, with their permits. Default `{ model: 4, network: 16 }`. */
  admissionGates?: Readonly<Record<string, number>>;
  /** Where hook failures and other worker-side problems are reported. */
  onWarning?: (message: string, details: Record<string, unknown>) => void;
  /**
   * Short read-only calls run as local activities on the workflow's worker (see `PlannedCalls.localCalls`); `false`
   * (the default) when the tools must run elsewhere or local calls are not wanted.
   */
  localCalls?: LocalCallsPolicy | false;
  /**
   * This worker's identity as Temporal knows it, with its tool fingerprint (`workerIdentity`): a call naming a tool
   * this worker lacks while other workers on the queue offer different tools fails retryably, naming both.
   */
  workerIdentity?: string;
  /** The operator's rules (the worker's policy file): a tier above every session's rules. */
  operatorRules?: PermissionRules;
  /** Approval evaluators sessions may pick by name (`SessionOptions.approvalEvaluator`). */
  evaluators?: readonly ApprovalEvaluator[];
  /** The approvers file signed approvals are checked against (`SWITCHYARD_APPROVERS_FILE`); none: no signature verifies. */
  approversFile?: string;
}

/** Why a session's cwd cannot be used, or undefined when it is a directory. */
async function cwdProblem(cwd: string): Promise<string | undefined> {
  try {
    return (await stat(cwd)).isDirectory() ? undefined : `the session's cwd ${cwd} is not a directory`;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? `the session's cwd ${cwd} does not exist` : `the session's cwd ${cwd} cannot be used: ${(error as Error).message}`;
  }
}

export { MAX_CONCURRENCY_ENV_VARIABLES, maxConcurrencyFromEnv } from '../config/environment.js';

/** How often an activity that runs hooks heartbeats, so a cancellation reaches it (the SDK throttles the sends). */
const HOOK_HEARTBEAT_INTERVAL_MS = 1_000;

/**
 * The running activity's cancellation as an AbortSignal for hooks; with `heartbeatEveryMs`, heartbeats until
 * `stopHeartbeats` (a remote activity learns of its cancellation only from a heartbeat's answer). Outside an
 * activity (unit tests) the signal never fires.
 */
function cancellationOf(options: { heartbeatEveryMs?: number } = {}): { signal: AbortSignal; stopHeartbeats: () => void } {
  let activity: Context;
  try {
    activity = Context.current();
  } catch {
    return { signal: new AbortController().signal, stopHeartbeats: () => {} };
  }
  if (options.heartbeatEveryMs === undefined || activity.info.isLocal) return { signal: activity.cancellationSignal, stopHeartbeats: () => {} };
  activity.heartbeat();
  const timer = setInterval(() => activity.heartbeat(), options.heartbeatEveryMs);
  return { signal: activity.cancellationSignal, stopHeartbeats: () => clearInterval(timer) };
}

/** The activities of a worker; dependencies come in here so tests can hand in their own tools. */
export function createActivities(dependencies: ActivityDependencies) {
  const defaultCwd = dependencies.defaultCwd ?? process.cwd();
  const defaultMaxConcurrency = dependencies.defaultMaxConcurrency ?? maxConcurrencyFromEnv();
  const localCalls = dependencies.localCalls ?? false;
  const gates = new Map(
    Object.entries(dependencies.admissionGates ?? DEFAULT_ADMISSION_GATES).map(([name, permits]) => [name, new AdmissionGate(name, permits)]),
  );
  const dataDir = dependencies.dataDir ?? dataDirFromEnv();
  const executeDependencies = {
    registry: dependencies.registry,
    ...(dependencies.workerIdentity === undefined ? {} : { workerIdentity: dependencies.workerIdentity }),
    gates,
    artifacts: dependencies.artifacts,
    dataDir,
    ...(dependencies.onWarning === undefined ? {} : { onWarning: dependencies.onWarning }),
  };
  const warn = (message: string, details: Record<string, unknown> = {}): void => dependencies.onWarning?.(message, details);
  const hooksFor = sessionHooks({
    ...(dependencies.hooks === undefined ? {} : { hooks: dependencies.hooks }),
    ...(dependencies.userSettingsDir === undefined ? {} : { userSettingsDir: dependencies.userSettingsDir }),
    warn,
  });
  const cwdOf = (cwd: string | undefined): string => (cwd === undefined ? defaultCwd : cwd.replace(/^~(?=$|\/)/, os.homedir()));
  /** Prepare for a batch of calls: one round trip, each call through `prepareCall` with the session's hooks. */
  const prepareBatch = async (session: SessionContext, calls: PrepareCallsInput['calls']): Promise<PreparedCalls> => {
    const cwd = cwdOf(session.cwd);
    const context = {
      sessionId: session.sessionId,
      cwd,
      allowRules: session.allowRules ?? [],
      denyRules: session.denyRules ?? [],
      ...(session.sandbox === undefined ? {} : { sandbox: session.sandbox }),
    };
    const onHookError = (error: unknown, toolName: string): void =>
      dependencies.onWarning?.('PreToolUse hook failed; it counts as no decision', { toolName, error: String(error) });
    // A cwd that does not exist would make every tool fail late (Bash never starts): fail each call at once, saying why.
    const problem = await cwdProblem(cwd);
    if (problem !== undefined) {
      return { plans: calls.map((call) => rejected(call, 'validation', errorCodes.prepareFailed, `<tool_use_error>${problem}: the call did not run. Start the session with an existing cwd.</tool_use_error>`)), cwd };
    }
    const { hooks, untrustedSettingsFiles } = await hooksFor({ cwd, sessionHooks: session.sessionHooks, trustWorkspaceSettings: session.trustWorkspaceSettings });
    // Prepare is a local activity: an interrupt cancels it in-process, which stops (kills) its PreToolUse hooks.
    const { signal } = cancellationOf();
    const registry = registryWithClientTools(dependencies.registry, session.clientTools);
    const prepared = await Promise.all(calls.map((call) => prepareCall({ registry, call, context, onHookError, hooks, signal })));
    await failOnToolMismatch(prepared);
    const plans = withinPreparedBudget(prepared.map((plan, index) => compactPlan(plan, { sameAsCall: plan.kind === 'ready' && sameInputAsCall(plan.inputDigest, calls[index]) })));
    const result: PreparedCalls = untrustedSettingsFiles.length === 0 ? { plans, cwd } : { plans, cwd, untrustedSettings: untrustedSettingsFiles };
    if (dependencies.operatorRules !== undefined) result.operatorRules = dependencies.operatorRules;
    return result;
  };
  /**
   * A call naming a tool this worker lacks is `Tool not found` only when every live worker on the queue offers the same
   * tools; otherwise the workers disagree, and this one must not answer for the others: fail (retryably) naming both.
   */
  const failOnToolMismatch = async (plans: ReadonlyArray<CallPlan | PlannedCall>): Promise<void> => {
    const identity = dependencies.workerIdentity;
    const missing = plans.filter((plan) => plan.kind === 'rejected' && plan.errorCode === errorCodes.toolNotFound).map((plan) => plan.toolName);
    if (identity === undefined || missing.length === 0) return;
    const others = await workersWithOtherTools(identity);
    if (others.length === 0) return;
    warn('a call names a tool this worker lacks while other workers on its task queue offer different tools', { tools: missing, identity, others });
    throw toolNotOnWorker({ toolNames: missing, identity, others });
  };
  return {
    /**
     * Plan: lookup, input parse and concurrency flags of every call, for grouping (no file system, no hooks). For a
     * whole turn it also prepares the first group, which runs next anyway: one round trip instead of two.
     */
    async planCalls(input: PlanCallsInput): Promise<PlannedCalls> {
      const registry = registryWithClientTools(dependencies.registry, input.session.clientTools);
      const plans = input.calls.map((call) => planCall({ registry, call }));
      await failOnToolMismatch(plans);
      const planned: PlannedCalls = { plans, defaultMaxConcurrency, pendingApprovalsSearchAttribute: dependencies.pendingApprovalsSearchAttribute ?? false };
      if (localCalls !== false) planned.localCalls = localCalls;
      if (input.prepareFirstGroup !== undefined && plans.length > 0) {
        const groups = groupCalls(
          plans.map((plan, index) => ({ id: plan.callId, concurrentSafe: plan.kind === 'planned' && plan.concurrentSafe, bytes: callInputBytes({ input: input.calls[index]?.input }) })),
          input.prepareFirstGroup.maxConcurrency ?? defaultMaxConcurrency,
        );
        const first = new Set(groups[0] ?? []);
        planned.firstGroup = await prepareBatch(input.session, input.calls.filter((call) => first.has(call.id)));
      }
      return planned;
    },
    /** Prepare: the front half of the pipeline for calls whose group is about to run. */
    async prepareCalls(input: PrepareCallsInput): Promise<PreparedCalls> {
      return prepareBatch(input.session, input.calls);
    },
    /**
     * Runs the matching PermissionRequest hooks in order; the first decision wins. A hook that throws is reported
     * and counts as no decision, so the human's answer still decides.
     */
    async runPermissionRequestHooks(
      input: PermissionRequestHookInput & { sessionHooks?: Record<string, unknown>; trustWorkspaceSettings?: boolean },
    ): Promise<PermissionRequestHookResult | null> {
      const { sessionHooks, trustWorkspaceSettings, ...hookInput } = input;
      const { hooks } = await hooksFor({ cwd: hookInput.cwd, sessionHooks, trustWorkspaceSettings });
      // Heartbeats carry the cancellation (an interrupt, or the human deciding first) to the hooks, which stop.
      const { signal, stopHeartbeats } = cancellationOf({ heartbeatEveryMs: HOOK_HEARTBEAT_INTERVAL_MS });
      try {
        return await runPermissionRequestHooks({
          hooks,
          input: hookInput,
          signal,
          onError: (error, toolName) => dependencies.onWarning?.('PermissionRequest hook failed; it counts as no decision', { toolName, error: String(error) }),
        });
      } finally {
        stopHeartbeats();
      }
    },
    /**
     * Stops every running background task of a session: the session's end (workflow cancellation). Runs on the worker
     * whose data directory holds the tasks (one host; see README "Background tasks").
     */
    async stopBackgroundTasks(input: { sessionId: string }): Promise<StoppedBackgroundTasks> {
      const stopped = await backgroundTaskStore(dataDir).stopSession(input.sessionId);
      return {
        tasks: stopped.map(({ record, state }) => ({
          taskId: record.taskId,
          status: state.status === 'running' ? 'killed' : state.status,
          ...(state.exitCode === undefined ? {} : { exitCode: state.exitCode }),
        })),
      };
    },
    /** Asks the session's approval evaluator about a waiting call (an error or a timeout leaves it to the human). */
    async runApprovalEvaluator(input: { evaluator: string; request: EvaluationRequest }): Promise<EvaluationResult> {
      // Heartbeats carry the cancellation (the human decided first, or an interrupt) and notice a lost worker.
      const { signal, stopHeartbeats } = cancellationOf({ heartbeatEveryMs: HOOK_HEARTBEAT_INTERVAL_MS });
      try {
        return await runApprovalEvaluator({ evaluators: dependencies.evaluators ?? [], ...input, signal });
      } finally {
        stopHeartbeats();
      }
    },
    /** Checks a signed approval against the approvers file; returns the verdict only (docs/APPROVALS.md). */
    verifyApproval: createVerifyApproval(dependencies.approversFile === undefined ? {} : { approversFile: dependencies.approversFile }),
    /** Runs one allowed call. */
    async executeCall(request: ExecuteCallInput): Promise<CallOutcome> {
      const { hooks } = await hooksFor({ cwd: request.cwd, sessionHooks: request.session.sessionHooks, trustWorkspaceSettings: request.session.trustWorkspaceSettings });
      return executeCall({ dependencies: { ...executeDependencies, hooks }, request });
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;

/** Whether a resolved input (by its digest) is the call's own input, so Prepare need not send it back. */
function sameInputAsCall(digest: string, call: { input: unknown } | undefined): boolean {
  if (call === undefined) return false;
  const value = callInputValue(call);
  return value !== undefined && inputDigest(value) === digest;
}

/**
 * Keeps one Prepare's answer within `PAYLOAD_LIMITS.preparedBytes`: while it is larger, the call that takes the most
 * ends with an error result saying so, and the others run. (A command of hundreds of kilobytes whose simple commands
 * are not slices of it, for instance, carries them whole for the permission rules.)
 */
export function withinPreparedBudget(plans: WireCallPlan[], limitBytes: number = PAYLOAD_LIMITS.preparedBytes): WireCallPlan[] {
  const sizes = plans.map((plan) => utf8Length(JSON.stringify(plan)));
  let total = sizes.reduce((sum, size) => sum + size, 0);
  const result = [...plans];
  while (total > limitBytes) {
    let largest = -1;
    sizes.forEach((size, index) => {
      if (result[index]?.kind === 'ready' && (largest === -1 || size > (sizes[largest] ?? 0))) largest = index;
    });
    const plan = result[largest];
    if (plan === undefined) break;
    const bytes = sizes[largest] ?? 0;
    const message = texts.toolUseError(
      `Switchyard cannot carry what this call needs for its permission check (${bytes} bytes, over the ${limitBytes}-byte budget of one group): the call did not run. Split it into smaller calls, or write large content to a file first.`,
    );
    result[largest] = { kind: 'rejected', callId: plan.callId, toolName: plan.toolName, status: 'error', modelContent: message, errorCode: errorCodes.payloadTooLarge, stage: 'validation' };
    const replaced = utf8Length(JSON.stringify(result[largest]));
    total += replaced - bytes;
    sizes[largest] = replaced;
  }
  return result;
}
