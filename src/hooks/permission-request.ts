import type { PermissionRequestHookInput, PermissionRequestHookResult } from '../contracts/hook-decisions.js';
import { hookMatches } from './matcher.js';
import type { SwitchyardHooks } from './types.js';

/** Whether any PermissionRequest hook matches the tool (the workflow then races the hooks against the human). */
export function hasPermissionRequestHooks(hooks: SwitchyardHooks | undefined, toolName: string): boolean {
  return (hooks?.permissionRequest ?? []).some((hook) => hookMatches(hook.matcher, toolName));
}

/**
 * Runs the matching PermissionRequest hooks in order; the first decision wins. A hook that throws is reported and
 * counts as no decision, so the human's answer still decides; once `signal` fires (an interrupt, or the human
 * deciding first) no further hook starts. Null: no hook decided.
 */
export async function runPermissionRequestHooks(options: {
  hooks: SwitchyardHooks;
  input: PermissionRequestHookInput;
  signal: AbortSignal;
  onError: (error: unknown, toolName: string) => void;
}): Promise<PermissionRequestHookResult | null> {
  const { input, signal } = options;
  for (const hook of options.hooks.permissionRequest ?? []) {
    if (signal.aborted) return null;
    if (!hookMatches(hook.matcher, input.toolName)) continue;
    try {
      const result = await hook.run(input, { signal });
      if (result?.behavior === 'allow' || result?.behavior === 'deny') return result;
    } catch (error) {
      if (!signal.aborted) options.onError(error, input.toolName);
    }
  }
  return null;
}
