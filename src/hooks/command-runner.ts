/**
 * The command runner: one command hook as a process (`/bin/sh -c`, its own process group, killed on timeout or
 * abort), and its stdout read as Claude Code's hook JSON output (`hookOutputSchema`). What each event makes of the
 * output is in `command-hooks.ts`.
 */
import { execa } from 'execa';
import { z } from 'zod';
import type { CommandHookConfig, HookEventName } from '../contracts/hook-settings.js';
import { childEnvironment } from '../tools/support/environment-policy.js';
import { signalProcessGroup } from '../tools/support/signal-process-group.js';

/** Seconds a command hook may run when its settings give no `timeout` (Claude Code's default). */
export const DEFAULT_HOOK_TIMEOUT_SECONDS = 60;
/** More output than this on stdout or stderr fails the hook. */
const MAX_HOOK_OUTPUT_BYTES = 4 * 1024 * 1024;

export type CommandHookOutcome =
  | { kind: 'ok'; stdout: string; json?: Record<string, unknown> }
  /** Exit code 2: stderr, trimmed. */
  | { kind: 'block'; reason: string }
  /** Another exit code, a timeout, a signal, a failure to start, too much output, or stdout that is malformed JSON. */
  | { kind: 'error'; message: string };

function killGroup(pid: number | undefined): void {
  signalProcessGroup(pid, 'SIGKILL');
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

export function clip(text: string, limit = 500): string {
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
    return {
      kind: 'error',
      message: `failed to start: ${(result.originalMessage || result.shortMessage || 'unknown error').replace(/\s*\n\s*/g, '; ')}`,
    };
  }
  if (result.exitCode === 2) return { kind: 'block', reason: stderr };
  if (result.exitCode !== 0)
    return { kind: 'error', message: `exited with code ${result.exitCode}${stderr === '' ? '' : `: ${clip(stderr)}`}` };
  const trimmed = stdout.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return { kind: 'ok', stdout };
  let json: unknown;
  try {
    json = JSON.parse(trimmed);
  } catch (error) {
    return {
      kind: 'error',
      message: `printed invalid JSON (${error instanceof Error ? error.message : String(error)}): ${clip(trimmed, 200)}`,
    };
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    return { kind: 'error', message: `printed JSON that is not an object: ${clip(trimmed, 200)}` };
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
export type HookOutput = z.infer<typeof hookOutputSchema>;

export type Warn = ((message: string, details: Record<string, unknown>) => void) | undefined;

export interface CommandHookRun {
  event: HookEventName;
  hook: CommandHookConfig;
  cwd: string;
  stdin: Record<string, unknown>;
  env: NodeJS.ProcessEnv | undefined;
  onWarning: Warn;
  signal: AbortSignal | undefined;
}

/** Runs the command and validates its JSON; throws on every failure. `undefined` output: no JSON printed. */
export async function runForEvent(
  run: CommandHookRun,
): Promise<{ kind: 'ok'; output?: HookOutput } | { kind: 'block'; reason: string }> {
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
      if (!parsed.success)
        throw new Error(
          `${label} printed JSON that does not fit Claude Code's hook output: ${z.prettifyError(parsed.error)}`,
        );
      const name = parsed.data.hookSpecificOutput?.hookEventName;
      if (typeof name === 'string' && name !== event)
        throw new Error(`${label} printed hookSpecificOutput for ${name}, not ${event}`);
      return { kind: 'ok', output: parsed.data };
    }
    default: {
      const exhaustive: never = outcome;
      return exhaustive;
    }
  }
}

/** Drops undefined fields; undefined when nothing is left. */
