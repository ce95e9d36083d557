import { statSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import os from 'node:os';
import { callInputValue, compactPlan } from '../contracts/compact-plan.js';
import type { WireCallPlan } from '../contracts/compact-plan.js';
import { PAYLOAD_LIMITS } from '../contracts/defaults.js';
import type { CallPlan } from '../contracts/call-plan.js';
import type { Activities, PreparedCalls } from '../contracts/pipeline.js';
import type { PermissionRules } from '../contracts/session.js';
import { texts } from '../contracts/texts.js';
import { errorCodes } from '../contracts/tool-result.js';
import { utf8Length } from '../contracts/utf8-length.js';
import { hookMatches } from '../hooks/matcher.js';
import type { SessionHooksOf } from '../hooks/session-hooks.js';
import type { SwitchyardHooks } from '../hooks/types.js';
import { registryWithClientTools } from '../tools/client-tool.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { ToolPrepareContext } from '../tools/define-tool.js';
import { rememberRealPaths } from '../tools/paths.js';
import { HOOK_HEARTBEAT_INTERVAL_MS, cancellationOf } from './cancellation.js';
import type { Warn } from './dependencies.js';
import { rejected } from './plan-call.js';
import { prepareCall } from './prepare-call.js';
import { failOnToolMismatch } from './tool-mismatch.js';

/** The plan each compact plan of this process was made from (see `planBeforeCompacting`). */
const compactedFrom = new WeakMap<WireCallPlan, CallPlan>();

/**
 * The plan Prepare compacted into `wire`, when this process made it: what `expandPlan` would give back (the same
 * fields; the input the same value), without taking the compact plan apart again. For a Plan that runs the group it
 * has just prepared, in the same process (`runGroup`); a plan that came through a payload has no entry.
 */
export function planBeforeCompacting(wire: WireCallPlan): CallPlan | undefined {
  return compactedFrom.get(wire);
}

/**
 * The `prepareCalls` activity: the front half of the pipeline for calls whose group is about to run, in one round
 * trip, each call through `prepareCall` with the session's hooks.
 */
export function createPrepareCalls(options: {
  registry: ToolRegistry;
  defaultCwd: string;
  hooksOf: SessionHooksOf;
  workerIdentity: string | undefined;
  operatorRules: PermissionRules | undefined;
  warn: Warn;
}): Activities['prepareCalls'] {
  const { warn } = options;
  const cwdOf = (cwd: string | undefined): string =>
    cwd === undefined ? options.defaultCwd : cwd.replace(/^~(?=$|\/)/, os.homedir());
  return async ({ session, calls, hooksOffPath, postHooksOffPath, compactPlans }) => {
    const cwd = cwdOf(session.cwd);
    const context: ToolPrepareContext = {
      sessionId: session.sessionId,
      cwd,
      allowRules: session.allowRules ?? [],
      denyRules: session.denyRules ?? [],
      ...(session.sandbox === undefined ? {} : { sandbox: session.sandbox }),
    };
    const onHookError = (error: unknown, toolName: string): void =>
      warn('PreToolUse hook failed; it counts as no decision', { toolName, error: String(error) });
    // A cwd that does not exist would make every tool fail late (Bash never starts): fail each call at once, saying why.
    const problem = cwdProblem(cwd);
    if (problem !== undefined) {
      return {
        plans: calls.map((call) =>
          rejected(
            call,
            'validation',
            errorCodes.prepareFailed,
            `<tool_use_error>${problem}: the call did not run. Start the session with an existing cwd.</tool_use_error>`,
          ),
        ),
        cwd,
      };
    }
    // The look at the hook settings goes on while the calls are validated; each call waits for it only before its
    // PreToolUse hooks (see `prepareCall`).
    const looking = options.hooksOf({
      sessionId: session.sessionId,
      cwd,
      sessionHooks: session.sessionHooks,
      trustWorkspaceSettings: session.trustWorkspaceSettings,
    });
    const hooks = looking.then((looked) => looked.hooks);
    // A Prepare whose calls all fail validation never waits for the hooks: a failed look must not go unhandled (it
    // still fails the Prepare below, as it did when the look came first).
    hooks.catch(() => undefined);
    const registry = registryWithClientTools(options.registry, session.clientTools);
    // Asked as a local activity, which holds the workflow task (and every query and signal) while it runs: hooks
    // that may take minutes run in the regular activity the workflow schedules on this answer instead.
    if (hooksOffPath === true && preToolUseHookMatches(await hooks, calls, registry))
      return { plans: [], cwd, hooksDeferred: true };
    // The calls of this Prepare resolve each path once for their validation and, without PreToolUse hooks, for their
    // permission facts. A call with PreToolUse hooks resolves every path again after them (see `prepareCall`): the
    // facts the rules judge are never older than the call's own hooks, and execution checks the opened file anyway.
    context.realPath = rememberRealPaths();
    // As a local activity an interrupt cancels Prepare in-process; as a regular one (hooks off the workflow's path, or
    // a tool queue) the cancellation comes with a heartbeat's answer. Either stops (kills) its PreToolUse hooks.
    const { signal, stopHeartbeats } = cancellationOf({ heartbeatEveryMs: HOOK_HEARTBEAT_INTERVAL_MS });
    const prepared = await Promise.all(
      calls.map((call) => prepareCall({ registry, call, context, onHookError, hooks, signal })),
    ).finally(stopHeartbeats);
    const { untrustedSettingsFiles } = await looking;
    // A call with post hooks runs as a regular activity: as a local one its hooks would hold the workflow task open.
    if (postHooksOffPath === true) {
      const seen = await hooks;
      for (const plan of prepared)
        if (plan.kind === 'ready' && postToolUseHookMatches(seen, plan.toolName)) plan.postToolUseHooks = true;
    }
    await failOnToolMismatch({ identity: options.workerIdentity, plans: prepared, warn });
    const wires = prepared.map((plan, index) => {
      const wire = compactPlan(plan, {
        sameAsCall: plan.kind === 'ready' && sameInputAsCall(plan.input, calls[index]),
        leaveOutDefaults: compactPlans === true,
      });
      if (wire !== plan) compactedFrom.set(wire, plan);
      return wire;
    });
    const plans = withinPreparedBudget(wires);
    const result: PreparedCalls =
      untrustedSettingsFiles.length === 0 ? { plans, cwd } : { plans, cwd, untrustedSettings: untrustedSettingsFiles };
    if (options.operatorRules !== undefined) result.operatorRules = options.operatorRules;
    return result;
  };
}

/** Whether a PreToolUse hook matches one of the calls (by the tool's own name, as the hooks see it). */
function preToolUseHookMatches(
  hooks: SwitchyardHooks | undefined,
  calls: ReadonlyArray<{ name: string }>,
  registry: ToolRegistry,
): boolean {
  const preToolUse = hooks?.preToolUse ?? [];
  if (preToolUse.length === 0) return false;
  return calls.some((call) => {
    const tool = registry.lookup(call.name);
    return tool !== undefined && preToolUse.some((hook) => hookMatches(hook.matcher, tool.name));
  });
}

/**
 * Whether a PostToolUse or PostToolUseFailure command hook matches the tool (by its own name, as the hooks see it). A
 * command hook may take up to its own timeout; in-process hooks given to the worker are its operator's own code and
 * run where the call runs (a local call's post hook bound still applies to them).
 */
function postToolUseHookMatches(hooks: SwitchyardHooks | undefined, toolName: string): boolean {
  const post = [...(hooks?.postToolUse ?? []), ...(hooks?.postToolUseFailure ?? [])];
  return post.some((hook) => hook.commandHook === true && hookMatches(hook.matcher, toolName));
}

/**
 * Why a session's cwd cannot be used, or undefined when it is a directory. Looked at synchronously: the cwd is the
 * session's, never a path from a call's input, and a trip through libuv's thread pool would make every call wait.
 */
function cwdProblem(cwd: string): string | undefined {
  try {
    return statSync(cwd).isDirectory() ? undefined : `the session's cwd ${cwd} is not a directory`;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT'
      ? `the session's cwd ${cwd} does not exist`
      : `the session's cwd ${cwd} cannot be used: ${(error as Error).message}`;
  }
}

/**
 * Whether a resolved input is the call's own input, so Prepare need not send it back: equal as values (keys in any
 * order), which makes their canonical JSON and digest the same. Values that differ only where JSON does not look (a
 * key whose value is undefined) count as different, and the input is sent: never wrong, at most a few bytes more.
 */
function sameInputAsCall(input: unknown, call: { input: unknown } | undefined): boolean {
  if (call === undefined) return false;
  const value = callInputValue(call);
  return value !== undefined && isDeepStrictEqual(input, value);
}

/**
 * Keeps one Prepare's answer within `PAYLOAD_LIMITS.preparedBytes`: while it is larger, the call that takes the most
 * ends with an error result saying so, and the others run. (A command of hundreds of kilobytes whose simple commands
 * are not slices of it, for instance, carries them whole for the permission rules.)
 */
export function withinPreparedBudget(
  plans: WireCallPlan[],
  limitBytes: number = PAYLOAD_LIMITS.preparedBytes,
): WireCallPlan[] {
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
    result[largest] = {
      kind: 'rejected',
      callId: plan.callId,
      toolName: plan.toolName,
      status: 'error',
      modelContent: message,
      errorCode: errorCodes.payloadTooLarge,
      stage: 'validation',
    };
    const replaced = utf8Length(JSON.stringify(result[largest]));
    total += replaced - bytes;
    sizes[largest] = replaced;
  }
  return result;
}
