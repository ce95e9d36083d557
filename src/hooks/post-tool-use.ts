import type { HookRunContext, PostToolUseHookResult, PreToolUseHookInput, SwitchyardHooks } from './types.js';
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

/** At most this many characters of a hook's command in the text that reports its failure. */
const HOOK_NAME_MAX_CHARS = 200;

/**
 * The hook context of a post hook stopped at the call's bound (`ran`) or never started because the bound had passed.
 * The call's result stands either way.
 */
export function postHookOverrun(label: string, boundMs: number, ran: boolean): string {
  const seconds = `${Math.round(boundMs / 100) / 10}s`;
  return ran
    ? `${label} was stopped: it ran past the ${seconds} a read-only call's post hooks may take; the tool's result stands`
    : `${label} did not run: the ${seconds} a read-only call's post hooks may take had passed; the tool's result stands`;
}

function clipName(name: string): string {
  return name.length <= HOOK_NAME_MAX_CHARS ? name : `${name.slice(0, HOOK_NAME_MAX_CHARS)}…`;
}

/**
 * PostToolUse after a success, PostToolUseFailure after a failure, a timeout or a cancellation (`isInterrupt`). A hook
 * that fails (throws, times out, is stopped at `boundMs`) changes nothing of the call's outcome: its error reaches the
 * model as hook context, in hook order, and is logged. Undefined: no hook answered.
 */
export async function runPostToolUseHooks(options: {
  hooks: SwitchyardHooks | undefined;
  call: PreToolUseHookInput;
  /** How the call ended, as the model will read it. */
  result: { status: 'success' | 'error' | 'cancelled' | 'denied'; modelContent: string; isError: boolean };
  /** The tool's own output shape for `tool_response`. */
  toolOutput: unknown;
  onWarning: ((message: string, details: Record<string, unknown>) => void) | undefined;
  /** Fires when the call's activity is cancelled: running hooks are stopped (command hooks' processes killed). */
  signal?: AbortSignal;
  /**
   * How long the hooks may take together, when the call's activity has a bound of its own (a local activity's
   * start-to-close timeout): a hook still running then is stopped and reported, and the call's outcome stands.
   */
  boundMs?: number;
}): Promise<PostToolUseHooksOutcome | undefined> {
  const { call, result } = options;
  const success = result.status === 'success';
  const event = success ? 'PostToolUse' : 'PostToolUseFailure';
  // One entry per hook, in hook order: its answer, or the text of its failure for the model.
  const results: Array<PostToolUseHookResult | { error: string }> = [];
  const stop = new AbortController();
  // A cancellation that arrives while the hooks run stops them. One that ended the call already does not: the
  // PostToolUseFailure hooks of an interrupted call (`isInterrupt`) still run.
  const onAbort = (): void => stop.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const endsAt = options.boundMs === undefined ? undefined : Date.now() + Math.max(0, options.boundMs);
  const run = async (
    hook: { matcher?: string; name?: string },
    invoke: (context: HookRunContext) => PostToolUseHookResult | undefined | Promise<PostToolUseHookResult | undefined>,
  ): Promise<void> => {
    if (!hookMatches(hook.matcher, call.toolName)) return;
    const label = hook.name === undefined ? `${event} hook` : `${event} hook "${clipName(hook.name)}"`;
    const leftMs = endsAt === undefined ? undefined : endsAt - Date.now();
    if (leftMs !== undefined && leftMs <= 0) {
      results.push({ error: postHookOverrun(label, options.boundMs ?? 0, false) });
      return;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const overrun = new Promise<'overrun'>((resolve) => {
      if (leftMs !== undefined) timer = setTimeout(() => resolve('overrun'), leftMs);
    });
    try {
      const answer = await Promise.race([Promise.resolve().then(() => invoke({ signal: stop.signal })), overrun]);
      if (answer === 'overrun') {
        // The hook's processes are killed; a function hook that ignores the signal is no longer waited for.
        stop.abort(new Error('post hooks ran past their bound'));
        results.push({ error: postHookOverrun(label, options.boundMs ?? 0, true) });
        options.onWarning?.(`${event} hook stopped: it ran past the call's bound`, {
          toolName: call.toolName,
          boundMs: options.boundMs,
        });
        return;
      }
      if (answer !== undefined && answer !== null && typeof answer === 'object') results.push(answer);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      // The model learns that a hook it may rely on did not run to the end; the call's own outcome stands.
      results.push({ error: message.startsWith(`${event} hook`) ? message : `${label} failed: ${message}` });
      options.onWarning?.(`${event} hook failed; its error is reported in the hook context`, {
        toolName: call.toolName,
        error: String(error),
      });
    } finally {
      clearTimeout(timer);
    }
  };
  try {
    if (success) {
      for (const hook of options.hooks?.postToolUse ?? []) {
        await run(hook, (context) =>
          hook.run(
            {
              ...call,
              toolResponse: { content: result.modelContent, isError: result.isError },
              toolOutput: options.toolOutput,
            },
            context,
          ),
        );
      }
    } else {
      for (const hook of options.hooks?.postToolUseFailure ?? []) {
        await run(hook, (context) =>
          hook.run({ ...call, error: result.modelContent, isInterrupt: result.status === 'cancelled' }, context),
        );
      }
    }
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
  if (results.length === 0) return undefined;
  const outcome: PostToolUseHooksOutcome = {
    additionalContext: hookContextOf(
      results.map((entry) => ('error' in entry ? { additionalContext: entry.error } : entry)),
    ),
  };
  // The last hook that replaced an MCP tool's output wins.
  const answers = results.filter((entry): entry is PostToolUseHookResult => !('error' in entry));
  const replacement = success ? answers.findLast((answer) => answer.updatedMCPToolOutput !== undefined) : undefined;
  if (replacement !== undefined) outcome.updatedMCPToolOutput = { value: replacement.updatedMCPToolOutput };
  const stopper = answers.find((answer) => answer.continue === false);
  if (stopper !== undefined) outcome.stopTurn = { reason: stopper.stopReason ?? HOOK_STOP_REASONS.postToolUse };
  return outcome;
}
