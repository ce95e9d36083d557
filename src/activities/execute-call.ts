import { idempotencyKeyOf } from '../contracts/calls-in-doubt.js';
import { Context } from '@temporalio/activity';
import { toolNotOnWorker } from './tool-mismatch.js';
import type {
  Activities,
  CallOutcome,
  ExecuteCallInput,
  ExecutionHeartbeat,
  ExecutionPlan,
} from '../contracts/pipeline.js';
import { DISPLAY_LIMITS } from '../contracts/defaults.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import { progressHeartbeat } from '../contracts/progress.js';
import type { ProgressHeartbeat } from '../contracts/progress.js';
import { texts } from '../contracts/texts.js';
import { turnControlOf } from '../contracts/turn-control.js';
import type { ToolDisplay, ToolResultStatus } from '../contracts/tool-result.js';
import { errorCodes } from '../contracts/tool-result.js';
import { ToolUseError } from '../tools/define-tool.js';
import type { Tool, ToolExecutionContext, ToolOutputObject } from '../tools/define-tool.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { AdmissionGate } from './admission-gate.js';
import type { ArtifactStore } from '../contracts/artifact-store.js';
import { runPostToolUseHooks } from '../hooks/post-tool-use.js';
import type { SessionHooksOf } from '../hooks/session-hooks.js';
import type { SwitchyardHooks } from '../hooks/types.js';
import { cutUtf8, serializeOutput } from './serialize-output.js';
import type { SerializedOutput } from './serialize-output.js';
import { storeImages } from './store-images.js';
import type { StoredImages } from './store-images.js';
import { resolveLimit } from '../tools/limits.js';
import { boundedDisplay, imageDisplay } from '../tools/support/displays.js';
import { ToolDeadline } from './tool-deadline.js';
import { startProgressSignals } from './progress-signal.js';
import { startExecuteToolSpan } from './execute-tool-span.js';
import type { Tracer } from '@opentelemetry/api';

const HEARTBEAT_INTERVAL_MS = 1_000;
/**
 * What a local attempt keeps of its start-to-close timeout after its post hooks (serialising a hook's replacement
 * output, answering): the hooks stop this long before the bound, so a slow hook never times out a call that ran.
 */
const LOCAL_POST_HOOK_MARGIN_MS = 3_000;
/** A bash_output display kept in history when the full output was persisted: the UI reads the artifact for more. */
const PERSISTED_DISPLAY_BYTES = 2_048;

export interface ExecuteCallDependencies {
  registry: ToolRegistry;
  gates: ReadonlyMap<string, AdmissionGate>;
  artifacts: ArtifactStore | undefined;
  /** The worker's data directory (background tasks live under it); tools see it as `context.dataDir`. */
  dataDir?: string;
  /** PostToolUse / PostToolUseFailure hooks, or their look at the settings, which may finish while the tool runs. */
  hooks?: SwitchyardHooks | Promise<SwitchyardHooks>;
  onWarning?: (message: string, details: Record<string, unknown>) => void;
  /** This worker's identity with its tool fingerprint (see tool-mismatch.ts). */
  workerIdentity?: string;
  /** OpenTelemetry tracer: an `execute_tool` span per execution (src/activities/execute-tool-span.ts). */
  tracer?: Tracer;
}

type HandlerEnd =
  | { kind: 'output'; output: ToolOutputObject }
  | { kind: 'error'; error: unknown }
  | { kind: 'timeout' }
  | { kind: 'cancelled' }
  | { kind: 'relocate' };

/** Bounds a display on its own, outside the model budget (docs/SEMANTICS.md, Display). */
function boundDisplay(
  display: ToolDisplay | undefined,
  options: { modelCopyShortened: boolean; persisted: boolean },
): ToolDisplay | undefined {
  const { modelCopyShortened, persisted } = options;
  if (display === undefined) return undefined;
  switch (display.type) {
    case 'text':
      return { type: 'text', text: cutUtf8(display.text, DISPLAY_LIMITS.bashOutputBytes, 'head') };
    case 'bash_output': {
      // Only when the model's copy was truncated or persisted: otherwise the model content says it all.
      if (!modelCopyShortened) return undefined;
      const limit = persisted ? PERSISTED_DISPLAY_BYTES : DISPLAY_LIMITS.bashOutputBytes;
      const stdout = cutUtf8(display.stdout, limit, 'tail');
      const stderr = cutUtf8(display.stderr, Math.max(0, limit - Buffer.byteLength(stdout)), 'tail');
      return {
        ...display,
        stdout,
        stderr,
        truncated: display.truncated || stdout !== display.stdout || stderr !== display.stderr,
      };
    }
    case 'file_diff':
      return display;
    case 'mcp_tool':
    case 'image':
    case 'web_fetch':
    case 'search':
    case 'background_task':
      // v1.3 kinds: built bounded by the built-in tools (DISPLAY_LIMITS); a custom tool's own is bounded here too.
      return boundedDisplay(display);
    default: {
      const exhaustive: never = display;
      return exhaustive;
    }
  }
}

function failure(
  status: ToolResultStatus,
  modelContent: string,
  errorCode: string,
  deadline: ToolDeadline,
  attempt: number,
): CallOutcome {
  return {
    status,
    modelContent,
    isError: true,
    errorCode,
    activeMs: deadline.activeMs,
    queuedMs: deadline.queuedMs,
    attempt,
  };
}

/** A call whose tool this worker does not have. */
function toolNotFound(plan: ExecutionPlan, dependencies: ExecuteCallDependencies): CallOutcome {
  // Plan found the tool, so another worker on this queue has it: a mismatch, retried where the tool may be.
  if (dependencies.workerIdentity !== undefined)
    throw toolNotOnWorker({ toolNames: [plan.toolName], identity: dependencies.workerIdentity, others: [] });
  return {
    status: 'error',
    modelContent: texts.toolNotFound(plan.toolName),
    isError: true,
    errorCode: errorCodes.toolNotFound,
    activeMs: 0,
    queuedMs: 0,
  };
}

/** One running handler: how it ends, its deadline and signal, and what to stop once the call has finished. */
interface RunningHandler {
  ended: Promise<HandlerEnd>;
  settle: (end: HandlerEnd) => void;
  abort: AbortController;
  deadline: ToolDeadline;
  /** The tool's latest progress report, as `reportProgress` set it. */
  setProgress: (report: ProgressHeartbeat) => void;
  /** Once the handler has ended: its deadline, the relocation timer and the cancellation listener. */
  stopWaiting: () => void;
  /** Once the call has finished (output stored, post hooks run): heartbeats and progress signals. */
  stopReporting: () => void;
}

/**
 * The machinery around one handler: its pausable deadline (a retry resumes from the last heartbeat's budget), the
 * activity's cancellation, a local attempt's move to a regular activity past its budget, and for a regular activity
 * heartbeats and progress signals. A local activity (a short read-only call on the workflow's worker) has no
 * heartbeats, progress signals or heartbeat timer: the server does not know it, and cancellation reaches it in-process.
 */
function startHandlerMachinery(activity: Context, request: ExecuteCallInput): RunningHandler {
  const { plan } = request;
  const abort = new AbortController();
  let settle: (end: HandlerEnd) => void = () => {};
  const ended = new Promise<HandlerEnd>((resolve) => {
    settle = resolve;
  });
  const resumed = activity.info.heartbeatDetails as ExecutionHeartbeat | undefined;
  const deadline = new ToolDeadline({
    budgetMs: plan.timeoutMs,
    ...(resumed === undefined ? {} : { resumed }),
    onExpire: () => {
      // Settle as a timeout first: aborting the handler's signal would otherwise settle it as a cancellation.
      settle({ kind: 'timeout' });
      abort.abort(new Error(texts.timedOut(plan.timeoutMs ?? 0)));
    },
  });
  let progress: ProgressHeartbeat | undefined;
  const { isLocal } = activity.info;
  let heartbeatTimer: ReturnType<typeof setInterval> | undefined;
  let progressSignals: { stop(): void } | undefined;
  if (!isLocal) {
    const heartbeat = (): void => {
      const details: ExecutionHeartbeat = {
        activeMs: deadline.activeMs,
        queuedMs: deadline.queuedMs,
        callId: plan.callId,
        toolName: plan.toolName,
        turnId: request.turnId,
        at: new Date().toISOString(),
      };
      if (progress !== undefined) details.progress = progress;
      activity.heartbeat(details);
    };
    heartbeat();
    heartbeatTimer = setInterval(heartbeat, HEARTBEAT_INTERVAL_MS);
    // v1.3: the same progress, as `ToolCallProgress` events in the session (progress-signal.ts: coalesced and bounded).
    progressSignals = startProgressSignals({
      activity,
      turnId: request.turnId,
      callId: plan.callId,
      toolName: plan.toolName,
      latest: () => progress,
    });
  }
  const onCancel = (): void => {
    settle({ kind: 'cancelled' });
    abort.abort(new Error('cancelled'));
  };
  activity.cancellationSignal.addEventListener('abort', onCancel, { once: true });
  if (activity.cancellationSignal.aborted) onCancel();
  // A local attempt holds its workflow task open: past its budget it makes way for a regular activity.
  const relocateTimer =
    isLocal && request.localBudgetMs !== undefined
      ? setTimeout(() => {
          settle({ kind: 'relocate' });
          abort.abort(new Error('moved to a regular activity'));
        }, request.localBudgetMs)
      : undefined;
  return {
    ended,
    settle,
    abort,
    deadline,
    setProgress: (report) => {
      progress = report;
    },
    stopWaiting: () => {
      clearTimeout(relocateTimer);
      deadline.dispose();
      activity.cancellationSignal.removeEventListener('abort', onCancel);
    },
    stopReporting: () => {
      clearInterval(heartbeatTimer);
      progressSignals?.stop();
    },
  };
}

/** What the tool sees of its call: the session's facts, its signal, deadline and progress, and the admission gates. */
function toolContext(options: {
  request: ExecuteCallInput;
  dependencies: ExecuteCallDependencies;
  handler: RunningHandler;
  attempt: number;
}): ToolExecutionContext {
  const { request, dependencies, handler, attempt } = options;
  const { plan, session } = request;
  const { abort, deadline } = handler;
  return {
    sessionId: session.sessionId,
    cwd: request.cwd,
    callId: plan.callId,
    turnId: request.turnId,
    signal: abort.signal,
    reportProgress: (report) => handler.setProgress(progressHeartbeat(report, new Date())),
    sessionState: request.sessionState ?? {},
    denyRules: session.denyRules ?? [],
    allowRules: session.allowRules ?? [],
    ...(session.readBeforeEdit === true ? { readBeforeEdit: true } : {}),
    ...(session.sandbox === undefined ? {} : { sandbox: session.sandbox }),
    attempt,
    idempotencyKey: idempotencyKeyOf(session.sessionId, plan.callId, attempt),
    deadline,
    artifacts: dependencies.artifacts,
    ...(dependencies.dataDir === undefined ? {} : { dataDir: dependencies.dataDir }),
    async admit(gateName, work) {
      const gate = dependencies.gates.get(gateName);
      if (gate === undefined)
        throw new Error(
          `Unknown admission gate "${gateName}"; this worker has: ${[...dependencies.gates.keys()].join(', ')}`,
        );
      deadline.pause();
      let release: () => void;
      try {
        release = await gate.acquire(abort.signal);
      } finally {
        deadline.resume();
      }
      try {
        return await work();
      } finally {
        release();
      }
    },
  };
}

/** Runs one allowed call: the handler under its pausable deadline, heartbeating, then serialisation of its output. */
export async function executeCall(options: {
  dependencies: ExecuteCallDependencies;
  request: ExecuteCallInput;
}): Promise<CallOutcome> {
  const { dependencies, request } = options;
  const { plan } = request;
  const activity = Context.current();
  const { attempt, isLocal } = activity.info;
  // When this attempt began, for a local attempt's bound (its start-to-close timeout is the only one it has).
  const attemptStartedAt = Math.min(Date.now(), activity.info.currentAttemptScheduledTimestampMs || Date.now());
  const tool: Tool | undefined = dependencies.registry.lookup(plan.toolName);
  if (tool === undefined) return toolNotFound(plan, dependencies);

  const span = startExecuteToolSpan(dependencies.tracer, {
    sessionId: request.session.sessionId,
    turnId: request.turnId,
    callId: plan.callId,
    toolName: plan.toolName,
    ...(request.permissionWaitMs === undefined ? {} : { permissionWaitMs: request.permissionWaitMs }),
  });
  const handler = startHandlerMachinery(activity, request);
  const { abort, deadline, settle } = handler;
  if (!abort.signal.aborted) {
    tool.execute(plan.input, toolContext({ request, dependencies, handler, attempt })).then(
      (output) => settle({ kind: 'output', output: typeof output === 'string' ? { content: output } : output }),
      (error: unknown) =>
        settle({ kind: abort.signal.aborted && !deadline.expired ? 'cancelled' : 'error', error } as HandlerEnd),
    );
  }

  let end: HandlerEnd;
  try {
    end = await handler.ended;
  } finally {
    handler.stopWaiting();
  }
  // Heartbeats go on while the output is stored and PostToolUse hooks run (a hook may take its whole timeout): a call
  // that already ran must not be timed out by the server, and then reported as lost or run again.
  try {
    const outcome = await finishCall({
      tool,
      plan,
      request,
      dependencies,
      end,
      deadline,
      attempt,
      postHooks: {
        signal: activity.cancellationSignal,
        ...(isLocal ? { boundMs: localPostHookBoundMs(attemptStartedAt, activity.info.startToCloseTimeoutMs) } : {}),
      },
    });
    // A local attempt that made way for a regular activity is not an execution: that activity records its own span.
    if (outcome.relocate !== true)
      span.end({
        status: outcome.status,
        ...(outcome.errorCode === undefined ? {} : { errorCode: outcome.errorCode }),
        ...(outcome.sandboxed === undefined ? {} : { sandboxed: outcome.sandboxed }),
        local: isLocal,
        attempt,
      });
    return outcome;
  } catch (error) {
    span.end({ status: 'error', errorCode: errorCodes.handlerError, local: isLocal, attempt });
    throw error;
  } finally {
    handler.stopReporting();
  }
}

/**
 * How long a local attempt's post hooks may take: what is left of its start-to-close timeout, less a margin. A regular
 * activity heartbeats while its hooks run and has no such bound: each hook has only its own timeout.
 */
export function localPostHookBoundMs(
  attemptStartedAt: number,
  startToCloseTimeoutMs: number,
  now = Date.now(),
): number {
  return Math.max(0, attemptStartedAt + startToCloseTimeoutMs - LOCAL_POST_HOOK_MARGIN_MS - now);
}

/** How the post hooks of one call are bounded: the activity's cancellation, and a local attempt's bound. */
interface PostHookBounds {
  signal: AbortSignal;
  boundMs?: number;
}

/** The outcome of a handler's end, through the PostToolUse / PostToolUseFailure hooks. */
async function finishCall(options: {
  tool: Tool;
  plan: ExecutionPlan;
  request: ExecuteCallInput;
  dependencies: ExecuteCallDependencies;
  end: HandlerEnd;
  deadline: ToolDeadline;
  attempt: number;
  postHooks: PostHookBounds;
}): Promise<CallOutcome> {
  const { tool, plan, request, dependencies, end, deadline, attempt } = options;
  let outcome: CallOutcome;
  switch (end.kind) {
    case 'relocate':
      // Nothing of this attempt counts: no hooks, no result; the regular activity starts the call afresh.
      return { ...failure('cancelled', '', errorCodes.relocated, deadline, attempt), relocate: true };
    case 'timeout':
      outcome = failure('error', texts.timedOut(plan.timeoutMs ?? 0), errorCodes.timeout, deadline, attempt);
      break;
    case 'cancelled':
      // Claude Code's REJECT_MESSAGE, whatever the tool: one text for every interrupt (a sibling's failure replaces it).
      outcome = failure('cancelled', texts.rejectMessage, errorCodes.cancelled, deadline, attempt);
      break;
    case 'error': {
      const business = end.error instanceof ToolUseError;
      const message = projectErrorMessage(end.error);
      outcome = failure(
        'error',
        business ? texts.toolUseError(message) : message,
        business ? (end.error as ToolUseError).code : errorCodes.handlerError,
        deadline,
        attempt,
      );
      break;
    }
    case 'output':
      outcome = await finishOutput({ tool, plan, request, output: end.output, deadline, attempt, dependencies });
      break;
    default: {
      const exhaustive: never = end;
      return exhaustive;
    }
  }
  const { outputFromHook } = tool;
  return runPostHooks({
    outcome,
    plan,
    request,
    dependencies,
    bounds: options.postHooks,
    toolOutput:
      end.kind === 'output' && end.output.hookResponse !== undefined
        ? end.output.hookResponse
        : { content: outcome.modelContent, isError: outcome.isError },
    ...(outputFromHook === undefined
      ? {}
      : {
          replaceOutput: async (updated: unknown) => {
            const output = outputFromHook.call(tool, updated);
            return finishOutput({
              tool,
              plan,
              request,
              output: typeof output === 'string' ? { content: output } : output,
              deadline,
              attempt,
              dependencies,
            });
          },
        }),
  });
}

/**
 * PostToolUse after a success, PostToolUseFailure after a failure, a timeout or a cancellation (`isInterrupt`).
 * Their context reaches the model; `continue: false` stops the turn. The outcome was decided when the tool returned:
 * a hook that fails, or that a local attempt's bound stops, adds its error to the hook context and changes nothing
 * else (docs/SEMANTICS.md, Hooks).
 */
async function runPostHooks(options: {
  outcome: CallOutcome;
  plan: ExecutionPlan;
  request: ExecuteCallInput;
  dependencies: ExecuteCallDependencies;
  bounds: PostHookBounds;
  /** The tool's own output shape for `tool_response`. */
  toolOutput: unknown;
  /** MCP tools: the outcome of a hook's `updatedMCPToolOutput` in place of the tool's output. */
  replaceOutput?: (updated: unknown) => Promise<CallOutcome>;
}): Promise<CallOutcome> {
  const { plan, request, dependencies } = options;
  let { outcome } = options;
  const hooks = await runPostToolUseHooks({
    hooks: await dependencies.hooks,
    call: {
      sessionId: request.session.sessionId,
      cwd: request.cwd,
      toolName: plan.toolName,
      toolInput: plan.input,
      toolUseId: plan.callId,
    },
    result: outcome,
    toolOutput: options.toolOutput,
    onWarning: dependencies.onWarning,
    signal: options.bounds.signal,
    ...(options.bounds.boundMs === undefined ? {} : { boundMs: options.bounds.boundMs }),
  });
  if (hooks === undefined) return outcome;
  // A replacement that cannot be read is reported and ignored.
  if (hooks.updatedMCPToolOutput !== undefined) {
    if (options.replaceOutput === undefined) {
      dependencies.onWarning?.(
        'PostToolUse hook returned updatedMCPToolOutput for a tool that is not an MCP tool; ignored',
        { toolName: plan.toolName },
      );
    } else {
      try {
        outcome = await options.replaceOutput(hooks.updatedMCPToolOutput.value);
      } catch (error) {
        dependencies.onWarning?.('PostToolUse hook returned an updatedMCPToolOutput that cannot be used; ignored', {
          toolName: plan.toolName,
          error: String(error),
        });
      }
    }
  }
  const hookContext = hooks.additionalContext;
  const turnControl = turnControlOf({
    toolName: plan.toolName,
    current: outcome.turnControl,
    postToolUse: hooks.stopTurn,
  });
  return {
    ...outcome,
    ...(hookContext.length === 0 ? {} : { hookContext }),
    ...(turnControl === undefined ? {} : { turnControl }),
  };
}

/**
 * A result's `image` display (v1.3) with the artifact its image was stored under: the tool's own (Read names the file)
 * or, for a tool that gave no display, one for its first stored image. Without a stored image there is none.
 */
function imageDisplayOf(display: ToolDisplay | undefined, images: StoredImages | undefined): ToolDisplay | undefined {
  const first = images?.blocks[0];
  if (display !== undefined && display.type !== 'image') return display;
  if (first === undefined) return undefined;
  return imageDisplay({
    mediaType: first.mediaType,
    bytes: first.bytes ?? 0,
    artifact: first.artifact,
    ...(display?.filePath === undefined ? {} : { filePath: display.filePath }),
  });
}

/**
 * The text lines of a result's images follow its serialized text, in the model content and in the envelope the
 * aggregate budget may swap in; the budgets measured the text alone, so image bytes never count as text.
 */
function withImageLines(serialized: SerializedOutput, images: StoredImages | undefined): SerializedOutput {
  if (images === undefined || images.lines.length === 0) return serialized;
  const lines = images.lines.join('\n');
  const result: SerializedOutput = { ...serialized, modelContent: `${serialized.modelContent}\n${lines}` };
  if (serialized.aggregateReplacement !== undefined)
    result.aggregateReplacement = {
      ...serialized.aggregateReplacement,
      envelope: `${serialized.aggregateReplacement.envelope}\n${lines}`,
    };
  return result;
}

async function finishOutput(options: {
  tool: Tool;
  plan: ExecutionPlan;
  request: ExecuteCallInput;
  output: ToolOutputObject;
  deadline: ToolDeadline;
  attempt: number;
  dependencies: ExecuteCallDependencies;
}): Promise<CallOutcome> {
  const { tool, plan, request, output, deadline, attempt, dependencies } = options;
  if (tool.outputSchema !== undefined && !tool.outputSchema.safeParse(output.data).success) {
    return failure('error', texts.outputSchemaFailed, errorCodes.outputSchema, deadline, attempt);
  }
  const images =
    output.images === undefined || output.images.length === 0
      ? undefined
      : await storeImages({
          images: output.images,
          store: dependencies.artifacts,
          sessionId: request.session.sessionId,
          callId: plan.callId,
          maxBytes: resolveLimit('imageMaxBytes'),
          onStoreError: (error) =>
            dependencies.onWarning?.('artifact store failed; an image was left out of the result', {
              callId: plan.callId,
              error: String(error),
            }),
        });
  const serialized =
    images !== undefined && output.spool === undefined && output.content.trim() === ''
      ? { modelContent: images.lines.join('\n') }
      : withImageLines(
          await serializeOutput({
            tool,
            content: output.content,
            ...(output.spool === undefined ? {} : { spool: output.spool }),
            ...(dependencies.artifacts === undefined ? {} : { store: dependencies.artifacts }),
            sessionId: request.session.sessionId,
            callId: plan.callId,
            onStoreError: (error) =>
              dependencies.onWarning?.('artifact store failed; the output was truncated instead', {
                callId: plan.callId,
                error: String(error),
              }),
          }),
          images,
        );
  const outcome: CallOutcome = {
    status: output.isError ? 'error' : 'success',
    modelContent: serialized.modelContent,
    isError: output.isError === true,
    activeMs: deadline.activeMs,
    queuedMs: deadline.queuedMs,
    attempt,
  };
  if (output.errorCode !== undefined) outcome.errorCode = output.errorCode;
  // Only the image blocks: the workflow puts the final text form in front when it hands the result out.
  if (images !== undefined && images.blocks.length > 0) outcome.content = images.blocks;
  if (serialized.budget !== undefined) outcome.budget = serialized.budget;
  if (serialized.aggregateReplacement !== undefined) outcome.aggregateReplacement = serialized.aggregateReplacement;
  const display = boundDisplay(imageDisplayOf(output.display, images), {
    modelCopyShortened: serialized.budget?.truncated === true,
    persisted: serialized.budget?.artifact !== undefined,
  });
  if (display !== undefined) outcome.display = display;
  if (output.sessionState !== undefined && !output.isError) outcome.sessionState = output.sessionState;
  if (output.backgroundTask !== undefined) outcome.backgroundTask = output.backgroundTask;
  if (output.sandboxed !== undefined) outcome.sandboxed = output.sandboxed;
  if (output.unsandboxedReason !== undefined) outcome.unsandboxedReason = output.unsandboxedReason;
  const turnControl = turnControlOf({
    toolName: tool.name,
    current: output.turnControl,
    stopOnSuccess: plan.stopTurnOnSuccess && !output.isError,
  });
  if (turnControl !== undefined) outcome.turnControl = turnControl;
  return outcome;
}

/**
 * The `executeCall` activity: one allowed call, with the session's PostToolUse / PostToolUseFailure hooks. The hooks
 * are looked up once the tool has started (the look's own work on this thread, a `stat` per settings file, is not in
 * the tool's way), and the tool does not wait for that look: only the post hooks need it.
 */
export function createExecuteCall(options: {
  dependencies: Omit<ExecuteCallDependencies, 'hooks'>;
  hooksOf: SessionHooksOf;
}): Activities['executeCall'] {
  return async (request) => {
    // A microtask later: `executeCall` starts the tool before it first waits.
    const hooks = Promise.resolve()
      .then(() =>
        options.hooksOf({
          sessionId: request.session.sessionId,
          cwd: request.cwd,
          sessionHooks: request.session.sessionHooks,
          trustWorkspaceSettings: request.session.trustWorkspaceSettings,
        }),
      )
      .then((looked) => looked.hooks);
    // A call that ends without post hooks (moved to a regular activity) never awaits the look: its failure must not
    // go unhandled. One that runs them awaits it and fails as it did when the look came first.
    hooks.catch(() => undefined);
    return executeCall({ dependencies: { ...options.dependencies, hooks }, request });
  };
}
