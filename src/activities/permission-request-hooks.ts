import type { Activities } from '../contracts/pipeline.js';
import { runPermissionRequestHooks } from '../hooks/permission-request.js';
import type { SessionHooksOf } from '../hooks/session-hooks.js';
import type { PermissionRequestHook, SwitchyardHooks } from '../hooks/types.js';
import { HOOK_HEARTBEAT_INTERVAL_MS, cancellationOf } from './cancellation.js';
import type { Warn } from './dependencies.js';

/**
 * The `runPermissionRequestHooks` activity: the session's PermissionRequest hooks race the human approver (the
 * first decision wins; a hook that throws counts as no decision).
 */
export function createPermissionRequestHooks(options: {
  hooksOf: SessionHooksOf;
  warn: Warn;
}): Activities['runPermissionRequestHooks'] {
  return async (input) => {
    const { sessionHooks, trustWorkspaceSettings, ...hookInput } = input;
    const { hooks } = await options.hooksOf({
      sessionId: hookInput.sessionId,
      cwd: hookInput.cwd,
      sessionHooks,
      trustWorkspaceSettings,
    });
    // Heartbeats carry the cancellation (an interrupt, or the human deciding first) to the hooks, which stop.
    const { signal, stopHeartbeats } = cancellationOf({ heartbeatEveryMs: HOOK_HEARTBEAT_INTERVAL_MS });
    try {
      return await runPermissionRequestHooks({
        hooks: namedDecisions(hooks),
        input: hookInput,
        signal,
        onError: (error, toolName) =>
          options.warn('PermissionRequest hook failed; it counts as no decision', { toolName, error: String(error) }),
      });
    } finally {
      stopHeartbeats();
    }
  };
}

/**
 * The hooks with each decision naming the hook that made it (its command; a hook given as a function: its `name`, else
 * its place in the list), so the decision log records `hook:<command>`, never a person.
 */
function namedDecisions(hooks: SwitchyardHooks): SwitchyardHooks {
  const named = (hook: PermissionRequestHook, index: number): PermissionRequestHook => ({
    ...hook,
    run: async (input, context) => {
      const result = await hook.run(input, context);
      return result === undefined
        ? undefined
        : { ...result, hook: hook.name ?? `PermissionRequest hook #${index + 1}` };
    },
  });
  return hooks.permissionRequest === undefined
    ? hooks
    : { ...hooks, permissionRequest: hooks.permissionRequest.map(named) };
}
