import type { PreToolUseOutcome } from '../contracts/call-plan.js';
import { hookContextOf, joinHookContext } from '../contracts/hook-context.js';
import { HOOK_STOP_REASONS } from '../contracts/turn-control.js';
import { hookMatches } from './matcher.js';
import type { PreToolUseHookInput, SwitchyardHooks } from './types.js';

/** What the PreToolUse hooks of one call decided, combined; `updatedInput` is the last input a hook rewrote. */
export interface PreToolUseHooksOutcome {
  outcome?: PreToolUseOutcome;
  updatedInput?: { value: unknown };
}

/**
 * Runs the matching PreToolUse hooks in order; a hook that throws is reported and counts as no decision. Decisions
 * combine deny > ask > allow (the reason comes with the strongest); each hook sees the input as rewritten so far.
 */
export async function runPreToolUseHooks(options: {
  hooks: SwitchyardHooks | undefined;
  /** The call, with its input after validation and resolution. */
  call: PreToolUseHookInput;
  onError: ((error: unknown, toolName: string) => void) | undefined;
  /** The Prepare activity's cancellation (an interrupted turn): the hooks get it and stop. */
  signal: AbortSignal;
}): Promise<PreToolUseHooksOutcome> {
  const { call } = options;
  const hooks = (options.hooks?.preToolUse ?? []).filter((hook) => hookMatches(hook.matcher, call.toolName));
  if (hooks.length === 0) return {};
  const outcome: PreToolUseOutcome = {};
  let updatedInput: { value: unknown } | undefined;
  const rank = { allow: 1, ask: 2, deny: 3 } as const;
  for (const hook of hooks) {
    // Interrupted: the calls will not run, so later hooks need not either.
    if (options.signal.aborted) break;
    let result;
    try {
      result = await hook.run(
        { ...call, toolInput: updatedInput?.value ?? call.toolInput },
        { signal: options.signal },
      );
    } catch (error) {
      options.onError?.(error, call.toolName);
      continue;
    }
    if (result === undefined || result === null || typeof result !== 'object') continue;
    const decision = result.permissionDecision;
    if (decision === 'allow' || decision === 'ask' || decision === 'deny') {
      if (outcome.decision === undefined || rank[decision] > rank[outcome.decision]) {
        outcome.decision = decision;
        if (result.permissionDecisionReason !== undefined) outcome.reason = result.permissionDecisionReason;
        else delete outcome.reason;
      }
    }
    if (result.updatedInput !== undefined) updatedInput = { value: result.updatedInput };
    const context = hookContextOf([result]);
    if (context.length > 0) outcome.additionalContext = joinHookContext(outcome.additionalContext, context);
    if (result.continue === false) outcome.stopTurn = { reason: result.stopReason ?? HOOK_STOP_REASONS.preToolUse };
  }
  return updatedInput === undefined ? { outcome } : { outcome, updatedInput };
}
