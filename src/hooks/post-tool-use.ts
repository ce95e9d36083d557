import type { PostToolUseHookResult, PreToolUseHookInput, SwitchyardHooks } from './types.js';
import { hookContextOf } from '../contracts/hook-context.js';
import { HOOK_STOP_REASONS } from '../contracts/turn-control.js';
import { hookMatches } from './matcher.js';

/** What the PostToolUse (or PostToolUseFailure) hooks of one call asked for, combined. */
export interface PostToolUseHooksOutcome {
  /** Context for the model, in hook order; empty texts are dropped. */
  additionalContext: string[];
  /** The first hook that asked to stop the turn (`continue: false`). */
  stopTurn?: { reason: string };
  /** After a success: the last `updatedMCPToolOutput` given, to replace an MCP tool's output. */
  updatedMCPToolOutput?: { value: unknown };
}

/**
 * PostToolUse after a success, PostToolUseFailure after a failure, a timeout or a cancellation (`isInterrupt`). A hook
 * that throws is reported and ignored. Undefined: no hook answered.
 */
export async function runPostToolUseHooks(options: {
  hooks: SwitchyardHooks | undefined;
  call: PreToolUseHookInput;
  /** How the call ended, as the model will read it. */
  result: { status: 'success' | 'error' | 'cancelled' | 'denied'; modelContent: string; isError: boolean };
  /** The tool's own output shape for `tool_response`. */
  toolOutput: unknown;
  onWarning: ((message: string, details: Record<string, unknown>) => void) | undefined;
}): Promise<PostToolUseHooksOutcome | undefined> {
  const { call, result } = options;
  const success = result.status === 'success';
  const results: PostToolUseHookResult[] = [];
  const run = async (
    matcher: string | undefined,
    invoke: () => PostToolUseHookResult | undefined | Promise<PostToolUseHookResult | undefined>,
  ): Promise<void> => {
    if (!hookMatches(matcher, call.toolName)) return;
    try {
      const answer = await invoke();
      if (answer !== undefined && answer !== null && typeof answer === 'object') results.push(answer);
    } catch (error) {
      options.onWarning?.(`${success ? 'PostToolUse' : 'PostToolUseFailure'} hook failed; ignored`, {
        toolName: call.toolName,
        error: String(error),
      });
    }
  };
  if (success) {
    for (const hook of options.hooks?.postToolUse ?? []) {
      await run(hook.matcher, () =>
        hook.run({
          ...call,
          toolResponse: { content: result.modelContent, isError: result.isError },
          toolOutput: options.toolOutput,
        }),
      );
    }
  } else {
    for (const hook of options.hooks?.postToolUseFailure ?? []) {
      await run(hook.matcher, () =>
        hook.run({ ...call, error: result.modelContent, isInterrupt: result.status === 'cancelled' }),
      );
    }
  }
  if (results.length === 0) return undefined;
  const outcome: PostToolUseHooksOutcome = { additionalContext: hookContextOf(results) };
  // The last hook that replaced an MCP tool's output wins.
  const replacement = success ? results.findLast((answer) => answer.updatedMCPToolOutput !== undefined) : undefined;
  if (replacement !== undefined) outcome.updatedMCPToolOutput = { value: replacement.updatedMCPToolOutput };
  const stop = results.find((answer) => answer.continue === false);
  if (stop !== undefined) outcome.stopTurn = { reason: stop.stopReason ?? HOOK_STOP_REASONS.postToolUse };
  return outcome;
}
