/**
 * Claude Code–compatible COMMAND hooks: shell commands from settings files, turned into the function hooks of
 * `types.ts`. The protocol is Claude Code's, so hook scripts written for Claude Code work unchanged:
 *
 * - The command runs through `/bin/sh -c` in the session directory, in its own process group, with the worker's
 *   environment minus what the environment policy drops (`src/tools/support/environment-policy.ts`: names that look like
 *   secrets), plus `SWITCHYARD_PROJECT_DIR` and `CLAUDE_PROJECT_DIR` (both the session directory).
 * - stdin is one JSON object: `session_id`, `transcript_path` (always `''`: there is no transcript file), `cwd`,
 *   `hook_event_name`, `tool_name`, `tool_input`, `tool_use_id`; PostToolUse adds `tool_response`, the tool's
 *   own output as Claude Code shapes it (Bash `stdout`/`stderr`/`interrupted`/`isImage`, Write/Edit `filePath`…;
 *   `{ content, isError }` for tools that give none), PostToolUseFailure adds `error` and `is_interrupt`, PermissionRequest adds
 *   `permission_request_id` and `reason` (Switchyard's names: Claude Code has no equivalent fields).
 * - Exit 0: stdout that starts with `{` is Claude Code's JSON output (see `HookOutput`); anything else is no decision.
 * - Exit 2: blocks; stderr is the reason (PreToolUse: deny; PermissionRequest: deny; PostToolUse and
 *   PostToolUseFailure: context for the model).
 * - Any other exit code, a timeout, a failure to start, or malformed JSON: the hook throws, which the callers
 *   log and count as no decision. A failing command hook never allows anything.
 * - An interrupted turn (the hook run's `signal`) kills the hook's process group, as a timeout does.
 */
import type { CommandHookConfig, HookEventName, HookSettings } from '../contracts/hook-settings.js';
import { clip, runForEvent } from './command-runner.js';
import type { CommandHookRun, HookOutput } from './command-runner.js';
import type { PermissionRequestBehavior } from '../contracts/hook-decisions.js';
import type {
  HookRunContext,
  PermissionRequestHook,
  PermissionRequestHookInput,
  PermissionRequestHookResult,
  PostToolUseFailureHook,
  PostToolUseFailureHookInput,
  PostToolUseHook,
  PostToolUseHookInput,
  PostToolUseHookResult,
  PreToolUseHook,
  PreToolUseHookInput,
  PreToolUseHookResult,
  SwitchyardHooks,
} from './types.js';

function compact<T extends object>(value: T): T | undefined {
  const entries = Object.entries(value).filter(([, field]) => field !== undefined);
  return entries.length === 0 ? undefined : (Object.fromEntries(entries) as T);
}

function preToolUseResult(output: HookOutput): PreToolUseHookResult | undefined {
  const specific = output.hookSpecificOutput;
  const legacy = output.decision === 'approve' ? 'allow' : output.decision === 'block' ? 'deny' : undefined;
  const decision = specific?.permissionDecision ?? output.permissionDecision ?? legacy;
  // The reason comes with the decision's own form.
  const reason =
    specific?.permissionDecision != null
      ? specific.permissionDecisionReason
      : output.permissionDecision != null
        ? output.permissionDecisionReason
        : output.reason;
  return compact<PreToolUseHookResult>({
    permissionDecision: decision ?? undefined,
    permissionDecisionReason: decision == null ? undefined : (reason ?? undefined),
    updatedInput: specific?.updatedInput ?? output.updatedInput ?? undefined,
    additionalContext: specific?.additionalContext ?? output.additionalContext ?? undefined,
    continue: output.continue ?? undefined,
    stopReason: output.stopReason ?? undefined,
  });
}

function permissionRequestResult(output: HookOutput, label: string): PermissionRequestHookResult | undefined {
  // `continue: false` stops everything; for a pending approval that means the call does not run.
  if (output.continue === false) return { behavior: 'deny', message: output.stopReason ?? `${label} stopped the turn` };
  const specific = output.hookSpecificOutput;
  let result: { behavior: PermissionRequestBehavior; message?: string | null; updatedInput?: unknown } | undefined;
  if (specific?.decision != null) result = specific.decision;
  else {
    const flat =
      specific?.permissionDecision != null ? specific : output.permissionDecision != null ? output : undefined;
    if (flat?.permissionDecision === 'allow' || flat?.permissionDecision === 'deny') {
      result = {
        behavior: flat.permissionDecision,
        message: flat.permissionDecisionReason,
        updatedInput: flat.updatedInput,
      };
    } else if (flat === undefined && output.decision != null) {
      result = {
        behavior: output.decision === 'approve' ? 'allow' : 'deny',
        message: output.reason,
        updatedInput: output.updatedInput,
      };
    }
  }
  if (result === undefined) return undefined;
  // Allowing the original input when the hook meant to allow a changed one would run what it did not approve.
  if (result.behavior === 'allow' && result.updatedInput != null)
    throw new Error(`${label} allowed with updatedInput, which PermissionRequest hooks cannot apply`);
  return result.message == null
    ? { behavior: result.behavior }
    : { behavior: result.behavior, message: result.message };
}

function postToolUseResult(output: HookOutput): PostToolUseHookResult | undefined {
  const context = [
    output.hookSpecificOutput?.additionalContext ?? output.additionalContext,
    output.decision === 'block' ? output.reason : undefined,
  ].filter((text): text is string => typeof text === 'string' && text !== '');
  return compact<PostToolUseHookResult>({
    additionalContext: context.length === 0 ? undefined : context.join('\n'),
    updatedMCPToolOutput: output.hookSpecificOutput?.updatedMCPToolOutput ?? undefined,
    continue: output.continue ?? undefined,
    stopReason: output.stopReason ?? undefined,
  });
}

function baseStdin(event: HookEventName, input: PreToolUseHookInput): Record<string, unknown> {
  return {
    session_id: input.sessionId,
    transcript_path: '',
    cwd: input.cwd,
    hook_event_name: event,
    tool_name: input.toolName,
    tool_input: input.toolInput ?? {},
    tool_use_id: input.toolUseId,
  };
}

/**
 * Turns settings into function hooks: each command of each matcher group becomes one hook, in order, with its
 * group's matcher. `env` adds to the process environment of every command.
 */
export function commandHooks(
  settings: HookSettings,
  options: { onWarning?: (message: string, details: Record<string, unknown>) => void; env?: NodeJS.ProcessEnv } = {},
): SwitchyardHooks {
  const each = <T>(event: HookEventName, make: (hook: CommandHookConfig, matcher: string | undefined) => T): T[] =>
    (settings.hooks?.[event] ?? []).flatMap((group) => group.hooks.map((hook) => make(hook, group.matcher)));
  const context = (
    event: HookEventName,
    hook: CommandHookConfig,
    cwd: string,
    stdin: Record<string, unknown>,
    run?: HookRunContext,
  ): CommandHookRun => ({
    event,
    hook,
    cwd,
    stdin,
    env: options.env,
    onWarning: options.onWarning,
    signal: run?.signal,
  });
  const label = (event: HookEventName, hook: CommandHookConfig): string => `${event} hook "${clip(hook.command, 200)}"`;
  const withMatcher = <T extends object>(matcher: string | undefined, hook: T): T & { matcher?: string } =>
    matcher === undefined ? hook : { matcher, ...hook };

  const preToolUse = each('PreToolUse', (hook, matcher): PreToolUseHook =>
    withMatcher(matcher, {
      async run(input: PreToolUseHookInput, run?: HookRunContext): Promise<PreToolUseHookResult | undefined> {
        const outcome = await runForEvent(context('PreToolUse', hook, input.cwd, baseStdin('PreToolUse', input), run));
        if (outcome.kind === 'block')
          return {
            permissionDecision: 'deny',
            permissionDecisionReason: outcome.reason || `Blocked by ${label('PreToolUse', hook)}`,
          };
        return outcome.output === undefined ? undefined : preToolUseResult(outcome.output);
      },
    }),
  );
  const permissionRequest = each('PermissionRequest', (hook, matcher): PermissionRequestHook =>
    withMatcher(matcher, {
      name: hook.command,
      async run(
        input: PermissionRequestHookInput,
        run?: HookRunContext,
      ): Promise<PermissionRequestHookResult | undefined> {
        const stdin = {
          ...baseStdin('PermissionRequest', input),
          permission_request_id: input.requestId,
          reason: input.reason,
        };
        const outcome = await runForEvent(context('PermissionRequest', hook, input.cwd, stdin, run));
        if (outcome.kind === 'block')
          return { behavior: 'deny', message: outcome.reason || `Denied by ${label('PermissionRequest', hook)}` };
        return outcome.output === undefined
          ? undefined
          : permissionRequestResult(outcome.output, label('PermissionRequest', hook));
      },
    }),
  );
  const postToolUse = each('PostToolUse', (hook, matcher): PostToolUseHook =>
    withMatcher(matcher, {
      name: hook.command,
      commandHook: true,
      async run(input: PostToolUseHookInput, run?: HookRunContext): Promise<PostToolUseHookResult | undefined> {
        const stdin = {
          ...baseStdin('PostToolUse', input),
          tool_response: input.toolOutput ?? {
            content: input.toolResponse.content,
            isError: input.toolResponse.isError,
          },
        };
        const outcome = await runForEvent(context('PostToolUse', hook, input.cwd, stdin, run));
        if (outcome.kind === 'block') return outcome.reason === '' ? undefined : { additionalContext: outcome.reason };
        return outcome.output === undefined ? undefined : postToolUseResult(outcome.output);
      },
    }),
  );
  const postToolUseFailure = each('PostToolUseFailure', (hook, matcher): PostToolUseFailureHook =>
    withMatcher(matcher, {
      name: hook.command,
      commandHook: true,
      async run(input: PostToolUseFailureHookInput, run?: HookRunContext): Promise<PostToolUseHookResult | undefined> {
        const stdin = {
          ...baseStdin('PostToolUseFailure', input),
          error: input.error,
          is_interrupt: input.isInterrupt,
        };
        const outcome = await runForEvent(context('PostToolUseFailure', hook, input.cwd, stdin, run));
        if (outcome.kind === 'block') return outcome.reason === '' ? undefined : { additionalContext: outcome.reason };
        return outcome.output === undefined ? undefined : postToolUseResult(outcome.output);
      },
    }),
  );
  return { preToolUse, permissionRequest, postToolUse, postToolUseFailure };
}
