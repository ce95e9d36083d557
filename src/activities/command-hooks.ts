/**
 * Claude Code–compatible COMMAND hooks: shell commands from settings files, turned into the function hooks of
 * `hooks.ts`. The protocol is Claude Code's, so hook scripts written for Claude Code work unchanged:
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
import { readFile, realpath, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { z } from 'zod';
import { HOOK_EVENT_NAMES, hookSettingsSchema, mergeHookSettings } from '../contracts/hook-settings.js';
import type { CommandHookConfig, HookEventName, HookSettings } from '../contracts/hook-settings.js';
import { trustedWorkspacesFromEnv } from '../config/environment.js';
import { childEnvironment } from '../tools/support/environment-policy.js';
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
} from './hooks.js';
import type { PermissionRequestBehavior } from '../contracts/hook-settings.js';

/** Seconds a command hook may run when its settings give no `timeout` (Claude Code's default). */
export const DEFAULT_HOOK_TIMEOUT_SECONDS = 60;
/** More output than this on stdout or stderr fails the hook. */
const MAX_HOOK_OUTPUT_BYTES = 4 * 1024 * 1024;

/** Counts hooks whose type is not `command` in raw settings, to report what is ignored. */
function unsupportedHookTypes(raw: unknown): string[] {
  const types: string[] = [];
  const hooks = (raw as { hooks?: unknown } | null)?.hooks;
  if (hooks === null || typeof hooks !== 'object') return types;
  for (const event of HOOK_EVENT_NAMES) {
    const groups = (hooks as Record<string, unknown>)[event];
    if (!Array.isArray(groups)) continue;
    for (const group of groups as unknown[]) {
      const entries = (group as { hooks?: unknown } | null)?.hooks;
      if (!Array.isArray(entries)) continue;
      for (const entry of entries as unknown[]) {
        const type = (entry as { type?: unknown } | null)?.type;
        if (typeof type === 'string' && type !== 'command') types.push(`${event}:${type}`);
      }
    }
  }
  return types;
}

async function readSettingsFile(file: string, onWarning: ((message: string) => void) | undefined): Promise<HookSettings | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    onWarning?.(`Ignoring hook settings ${file}: cannot read it (${error instanceof Error ? error.message : String(error)})`);
    return undefined;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    onWarning?.(`Ignoring hook settings ${file}: invalid JSON (${error instanceof Error ? error.message : String(error)})`);
    return undefined;
  }
  const parsed = hookSettingsSchema.safeParse(raw);
  if (!parsed.success) {
    onWarning?.(`Ignoring hook settings ${file}: ${z.prettifyError(parsed.error)}`);
    return undefined;
  }
  const unsupported = unsupportedHookTypes(raw);
  if (unsupported.length > 0) {
    onWarning?.(`Hook settings ${file}: only "command" hooks are supported; ignoring ${unsupported.join(', ')}`);
  }
  return parsed.data;
}

/**
 * Settings files inside a workspace, in merge order: Claude Code's project and local files, then Switchyard's.
 * The model can write them and a cloned repository can ship them, so their hooks load only when trusted.
 */
export function workspaceSettingsFiles(cwd: string): string[] {
  return [path.resolve(cwd, '.claude', 'settings.json'), path.resolve(cwd, '.claude', 'settings.local.json'), path.resolve(cwd, '.switchyard', 'settings.json')];
}

export { trustedWorkspacesFromEnv } from '../config/environment.js';

async function realPathOf(file: string): Promise<string | undefined> {
  return realpath(file).catch(() => undefined);
}

/** Whether the workspace's real path is one of the trusted real paths or inside one; paths that do not exist trust nothing. */
export async function isTrustedWorkspace(options: { cwd: string; trustedWorkspaces: readonly string[] }): Promise<boolean> {
  const workspace = await realPathOf(options.cwd);
  if (workspace === undefined) return false;
  for (const entry of options.trustedWorkspaces) {
    const trusted = await realPathOf(path.resolve(entry));
    if (trusted === undefined) continue;
    const relative = path.relative(trusted, workspace);
    if (relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative))) return true;
  }
  return false;
}

async function isFile(file: string): Promise<boolean> {
  return stat(file).then(
    (stats) => stats.isFile(),
    () => false,
  );
}

export interface LoadedHookSettings {
  /** The merged settings of every file that was read. */
  settings: HookSettings;
  /** Workspace settings files that exist but were not read, because the workspace is not trusted. */
  untrusted: string[];
}

/**
 * Reads and merges `<userDir>/settings.json` (user level; default `~/.switchyard`; always trusted) and, when the
 * workspace is trusted, its settings files (`workspaceSettingsFiles`), in that order. The workspace is trusted
 * when `trustWorkspaceSettings` is true (the session option) or its real path is in or under one of
 * `trustedWorkspaces` (default: the worker's `SWITCHYARD_TRUSTED_WORKSPACES`). Untrusted workspace files are not
 * read at all, only named in `untrusted`. A missing file is fine; an unreadable or invalid one is reported through
 * `onWarning` and skipped. Never throws.
 */
export async function loadHookSettings(options: {
  cwd: string;
  userDir?: string;
  trustWorkspaceSettings?: boolean;
  trustedWorkspaces?: readonly string[];
  onWarning?: (message: string) => void;
}): Promise<LoadedHookSettings> {
  const userFile = path.resolve(options.userDir ?? path.join(os.homedir(), '.switchyard'), 'settings.json');
  const userReal = await realPathOf(userFile);
  // With the session in the home directory (or a workspace file linked to the user file), both are one file: the
  // user's own, read once, as user settings.
  const workspaceFiles: string[] = [];
  for (const file of workspaceSettingsFiles(options.cwd)) {
    if (file === userFile) continue;
    if (userReal !== undefined && (await realPathOf(file)) === userReal) continue;
    workspaceFiles.push(file);
  }
  const trusted =
    options.trustWorkspaceSettings === true ||
    (await isTrustedWorkspace({ cwd: options.cwd, trustedWorkspaces: options.trustedWorkspaces ?? trustedWorkspacesFromEnv() }));
  const files = trusted ? [userFile, ...workspaceFiles] : [userFile];
  const loaded = await Promise.all(files.map((file) => readSettingsFile(file, options.onWarning)));
  const untrusted = trusted ? [] : (await Promise.all(workspaceFiles.map(async (file) => ((await isFile(file)) ? [file] : [])))).flat();
  return { settings: mergeHookSettings(...loaded), untrusted };
}

export type CommandHookOutcome =
  | { kind: 'ok'; stdout: string; json?: Record<string, unknown> }
  /** Exit code 2: stderr, trimmed. */
  | { kind: 'block'; reason: string }
  /** Another exit code, a timeout, a signal, a failure to start, too much output, or stdout that is malformed JSON. */
  | { kind: 'error'; message: string };

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // The group is already gone.
  }
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

function clip(text: string, limit = 500): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}…`;
}

/**
 * Runs one command hook: `/bin/sh -c <command>` in `cwd`, with `input` as JSON on stdin, in its own process group
 * that is killed (SIGKILL) on timeout or abort. The environment is the worker's minus what the environment policy
 * drops; `env` (the worker's own additions) adds to it and overrides it.
 */
export async function runCommandHook(options: {
  command: string;
  timeoutMs: number;
  cwd: string;
  input: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
}): Promise<CommandHookOutcome> {
  const { command, timeoutMs, cwd, signal } = options;
  if (signal?.aborted === true) return { kind: 'error', message: 'was cancelled before it started' };
  const child = execa('/bin/sh', ['-c', command], {
    cwd,
    // Without extendEnv, what the policy dropped stays dropped.
    extendEnv: false,
    env: { ...childEnvironment(), ...options.env, SWITCHYARD_PROJECT_DIR: cwd, CLAUDE_PROJECT_DIR: cwd },
    detached: true,
    input: JSON.stringify(options.input),
    reject: false,
    maxBuffer: MAX_HOOK_OUTPUT_BYTES,
  });
  let stopped: 'timeout' | 'abort' | undefined;
  const stop = (why: 'timeout' | 'abort'): void => {
    stopped ??= why;
    killGroup(child.pid);
  };
  const timer = setTimeout(() => stop('timeout'), timeoutMs);
  const onAbort = (): void => stop('abort');
  signal?.addEventListener('abort', onAbort, { once: true });
  let result;
  try {
    result = await child;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
  if (stopped === 'timeout') return { kind: 'error', message: `timed out after ${seconds(timeoutMs)}` };
  if (stopped === 'abort') return { kind: 'error', message: 'was cancelled' };
  if (result.isMaxBuffer) {
    killGroup(child.pid);
    return { kind: 'error', message: `printed more than ${MAX_HOOK_OUTPUT_BYTES} bytes` };
  }
  const stdout = typeof result.stdout === 'string' ? result.stdout : '';
  const stderr = (typeof result.stderr === 'string' ? result.stderr : '').trim();
  if (result.exitCode === undefined) {
    if (result.signal !== undefined) return { kind: 'error', message: `was killed by ${result.signal}` };
    return { kind: 'error', message: `failed to start: ${(result.originalMessage || result.shortMessage || 'unknown error').replace(/\s*\n\s*/g, '; ')}` };
  }
  if (result.exitCode === 2) return { kind: 'block', reason: stderr };
  if (result.exitCode !== 0) return { kind: 'error', message: `exited with code ${result.exitCode}${stderr === '' ? '' : `: ${clip(stderr)}`}` };
  const trimmed = stdout.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return { kind: 'ok', stdout };
  let json: unknown;
  try {
    json = JSON.parse(trimmed);
  } catch (error) {
    return { kind: 'error', message: `printed invalid JSON (${error instanceof Error ? error.message : String(error)}): ${clip(trimmed, 200)}` };
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return { kind: 'error', message: `printed JSON that is not an object: ${clip(trimmed, 200)}` };
  return { kind: 'ok', stdout, json: json as Record<string, unknown> };
}

const nullishString = z.string().nullish();
const permissionDecisionSchema = z.enum(['allow', 'deny', 'ask']).nullish();
const updatedInputSchema = z.record(z.string(), z.unknown()).nullish();

/**
 * Claude Code's hook JSON output. Unknown fields (`suppressOutput`, `systemMessage`…) are ignored; a known field
 * of the wrong type fails the hook. `null` counts as absent.
 */
const hookOutputSchema = z.object({
  continue: z.boolean().nullish(),
  stopReason: nullishString,
  /** Legacy: PreToolUse `approve` = allow, `block` = deny; PostToolUse `block` = `reason` goes to the model. */
  decision: z.enum(['approve', 'block']).nullish(),
  reason: nullishString,
  /** Flat forms of the `hookSpecificOutput` fields. */
  permissionDecision: permissionDecisionSchema,
  permissionDecisionReason: nullishString,
  updatedInput: updatedInputSchema,
  additionalContext: nullishString,
  hookSpecificOutput: z
    .object({
      hookEventName: nullishString,
      permissionDecision: permissionDecisionSchema,
      permissionDecisionReason: nullishString,
      updatedInput: updatedInputSchema,
      additionalContext: nullishString,
      /** PostToolUse, MCP tools only: the output that replaces the tool's. */
      updatedMCPToolOutput: z.unknown().optional(),
      /** PermissionRequest. */
      decision: z
        .object({ behavior: z.enum(['allow', 'deny']), message: nullishString, updatedInput: updatedInputSchema })
        .nullish(),
    })
    .nullish(),
});
type HookOutput = z.infer<typeof hookOutputSchema>;

type Warn = ((message: string, details: Record<string, unknown>) => void) | undefined;

interface CommandHookRun {
  event: HookEventName;
  hook: CommandHookConfig;
  cwd: string;
  stdin: Record<string, unknown>;
  env: NodeJS.ProcessEnv | undefined;
  onWarning: Warn;
  signal: AbortSignal | undefined;
}

/** Runs the command and validates its JSON; throws on every failure. `undefined` output: no JSON printed. */
async function runForEvent(run: CommandHookRun): Promise<{ kind: 'ok'; output?: HookOutput } | { kind: 'block'; reason: string }> {
  const { event, hook } = run;
  const label = `${event} hook "${clip(hook.command, 200)}"`;
  const timeoutMs = (hook.timeout ?? DEFAULT_HOOK_TIMEOUT_SECONDS) * 1000;
  const outcome = await runCommandHook({
    command: hook.command,
    timeoutMs,
    cwd: run.cwd,
    input: run.stdin,
    ...(run.env === undefined ? {} : { env: run.env }),
    ...(run.signal === undefined ? {} : { signal: run.signal }),
  });
  switch (outcome.kind) {
    case 'error':
      throw new Error(`${label} ${outcome.message}`);
    case 'block':
      return outcome;
    case 'ok': {
      if (outcome.json === undefined) {
        if (outcome.stdout.trim() !== '') {
          run.onWarning?.(`${label} printed output that is not JSON; it counts as no decision`, {
            event,
            command: hook.command,
            stdout: clip(outcome.stdout.trim()),
          });
        }
        return { kind: 'ok' };
      }
      const parsed = hookOutputSchema.safeParse(outcome.json);
      if (!parsed.success) throw new Error(`${label} printed JSON that does not fit Claude Code's hook output: ${z.prettifyError(parsed.error)}`);
      const name = parsed.data.hookSpecificOutput?.hookEventName;
      if (typeof name === 'string' && name !== event) throw new Error(`${label} printed hookSpecificOutput for ${name}, not ${event}`);
      return { kind: 'ok', output: parsed.data };
    }
    default: {
      const exhaustive: never = outcome;
      return exhaustive;
    }
  }
}

/** Drops undefined fields; undefined when nothing is left. */
function compact<T extends object>(value: T): T | undefined {
  const entries = Object.entries(value).filter(([, field]) => field !== undefined);
  return entries.length === 0 ? undefined : (Object.fromEntries(entries) as T);
}

function preToolUseResult(output: HookOutput): PreToolUseHookResult | undefined {
  const specific = output.hookSpecificOutput;
  const legacy = output.decision === 'approve' ? 'allow' : output.decision === 'block' ? 'deny' : undefined;
  const decision = specific?.permissionDecision ?? output.permissionDecision ?? legacy;
  // The reason comes with the decision's own form.
  const reason = specific?.permissionDecision != null ? specific.permissionDecisionReason : output.permissionDecision != null ? output.permissionDecisionReason : output.reason;
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
    const flat = specific?.permissionDecision != null ? specific : output.permissionDecision != null ? output : undefined;
    if (flat?.permissionDecision === 'allow' || flat?.permissionDecision === 'deny') {
      result = { behavior: flat.permissionDecision, message: flat.permissionDecisionReason, updatedInput: flat.updatedInput };
    } else if (flat === undefined && output.decision != null) {
      result = { behavior: output.decision === 'approve' ? 'allow' : 'deny', message: output.reason, updatedInput: output.updatedInput };
    }
  }
  if (result === undefined) return undefined;
  // Allowing the original input when the hook meant to allow a changed one would run what it did not approve.
  if (result.behavior === 'allow' && result.updatedInput != null) throw new Error(`${label} allowed with updatedInput, which PermissionRequest hooks cannot apply`);
  return result.message == null ? { behavior: result.behavior } : { behavior: result.behavior, message: result.message };
}

function postToolUseResult(output: HookOutput): PostToolUseHookResult | undefined {
  const context = [output.hookSpecificOutput?.additionalContext ?? output.additionalContext, output.decision === 'block' ? output.reason : undefined].filter(
    (text): text is string => typeof text === 'string' && text !== '',
  );
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
  const context = (event: HookEventName, hook: CommandHookConfig, cwd: string, stdin: Record<string, unknown>, run?: HookRunContext): CommandHookRun => ({
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
        if (outcome.kind === 'block') return { permissionDecision: 'deny', permissionDecisionReason: outcome.reason || `Blocked by ${label('PreToolUse', hook)}` };
        return outcome.output === undefined ? undefined : preToolUseResult(outcome.output);
      },
    }),
  );
  const permissionRequest = each('PermissionRequest', (hook, matcher): PermissionRequestHook =>
    withMatcher(matcher, {
      async run(input: PermissionRequestHookInput, run?: HookRunContext): Promise<PermissionRequestHookResult | undefined> {
        const stdin = { ...baseStdin('PermissionRequest', input), permission_request_id: input.requestId, reason: input.reason };
        const outcome = await runForEvent(context('PermissionRequest', hook, input.cwd, stdin, run));
        if (outcome.kind === 'block') return { behavior: 'deny', message: outcome.reason || `Denied by ${label('PermissionRequest', hook)}` };
        return outcome.output === undefined ? undefined : permissionRequestResult(outcome.output, label('PermissionRequest', hook));
      },
    }),
  );
  const postToolUse = each('PostToolUse', (hook, matcher): PostToolUseHook =>
    withMatcher(matcher, {
      async run(input: PostToolUseHookInput): Promise<PostToolUseHookResult | undefined> {
        const stdin = { ...baseStdin('PostToolUse', input), tool_response: input.toolOutput ?? { content: input.toolResponse.content, isError: input.toolResponse.isError } };
        const outcome = await runForEvent(context('PostToolUse', hook, input.cwd, stdin));
        if (outcome.kind === 'block') return outcome.reason === '' ? undefined : { additionalContext: outcome.reason };
        return outcome.output === undefined ? undefined : postToolUseResult(outcome.output);
      },
    }),
  );
  const postToolUseFailure = each('PostToolUseFailure', (hook, matcher): PostToolUseFailureHook =>
    withMatcher(matcher, {
      async run(input: PostToolUseFailureHookInput): Promise<PostToolUseHookResult | undefined> {
        const stdin = { ...baseStdin('PostToolUseFailure', input), error: input.error, is_interrupt: input.isInterrupt };
        const outcome = await runForEvent(context('PostToolUseFailure', hook, input.cwd, stdin));
        if (outcome.kind === 'block') return outcome.reason === '' ? undefined : { additionalContext: outcome.reason };
        return outcome.output === undefined ? undefined : postToolUseResult(outcome.output);
      },
    }),
  );
  return { preToolUse, permissionRequest, postToolUse, postToolUseFailure };
}
