import { isClientTool } from '../tools/client-tool.js';
import type { CallPlan, PreToolUseOutcome, ReadyCallPlan, RejectedCallPlan } from '../contracts/call-plan.js';
import { withHookContext } from '../contracts/hook-context.js';
import { errorCodes } from '../contracts/tool-result.js';
import type { ToolCall } from '../contracts/tool-call.js';
import { formatZodError } from '../contracts/tool-call.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import { parseRule, ruleCoversTool } from '../contracts/permission-rules.js';
import { texts } from '../contracts/texts.js';
import type { Tool, ToolPrepareContext } from '../tools/define-tool.js';
import type { ToolRegistry } from '../tools/registry.js';
import { SUBCOMMAND_TOOLS } from '../tools/shell/subcommand-tools.js';
import { isInside } from '../tools/paths.js';
import { hasPermissionRequestHooks } from '../hooks/permission-request.js';
import { runPreToolUseHooks } from '../hooks/pre-tool-use.js';
import type { SwitchyardHooks } from '../hooks/types.js';
import { computeFlags, lookupAndParse, rejected } from './plan-call.js';
import { inputDigest } from './digest.js';
import { resolveTimeoutMs } from './resolve-timeout.js';

const SUMMARY_MAX_CHARS = 160;

function summarize(tool: Tool, input: unknown): string {
  let detail = '';
  try {
    detail = tool.summarize?.(input) ?? '';
  } catch {
    detail = '';
  }
  const line = (detail === '' ? tool.name : `${tool.name}: ${detail}`).replace(/\s+/g, ' ');
  return line.length > SUMMARY_MAX_CHARS ? `${line.slice(0, SUMMARY_MAX_CHARS - 1)}…` : line;
}

/** A call a deny rule names as a whole: denied by the workflow whatever its input, so nothing reads the input. */
function deniedWholePlan(call: ToolCall, tool: Tool, input: unknown): ReadyCallPlan {
  return {
    kind: 'ready',
    callId: call.id,
    toolName: tool.name,
    input,
    inputDigest: inputDigest(input),
    flags: computeFlags(tool, input),
    summary: tool.name,
    interruptBehavior: tool.interruptBehavior ?? 'cancel',
    alwaysAsk: tool.alwaysAsk === true,
    stopTurnOnSuccess: false,
    cancelSiblingsOnError: false,
    ruleKind: tool.ruleKind ?? 'text',
    rememberRule: tool.name,
    editsInsideCwd: false,
    hasPermissionRequestHooks: false,
    readsSessionState: false,
  };
}

/** The tool's `validateInput` then `resolveInput` on an input: the resolved input, or the call's rejection. */
async function validateAndResolve(
  tool: Tool,
  call: ToolCall,
  input: unknown,
  context: ToolPrepareContext,
): Promise<{ ok: true; input: unknown } | { ok: false; plan: RejectedCallPlan }> {
  const rejectedBy = (errorCode: string, message: string) => ({
    ok: false as const,
    plan: { ...rejected(call, 'validation', errorCode, texts.toolUseError(message)), toolName: tool.name },
  });
  try {
    const validation = (await tool.validateInput?.(input, context)) ?? { ok: true };
    if (!validation.ok) return rejectedBy(validation.errorCode ?? errorCodes.businessFailure, validation.message);
    return { ok: true, input: (await tool.resolveInput?.(input, context)) ?? input };
  } catch (error) {
    return rejectedBy(errorCodes.businessFailure, projectErrorMessage(error));
  }
}

/**
 * An input a PreToolUse hook rewrote: parsed by the tool's schema, then validated and resolved again (with `checks`,
 * which resolve every path afresh). The new input, or the call's rejection with the hooks' context.
 */
async function rewrittenInput(options: {
  tool: Tool;
  call: ToolCall;
  updated: unknown;
  checks: ToolPrepareContext;
  hookOutcome: PreToolUseOutcome | undefined;
}): Promise<{ ok: true; input: unknown } | { ok: false; plan: RejectedCallPlan }> {
  const { tool, call, hookOutcome } = options;
  const reparsed = tool.inputSchema.safeParse(options.updated);
  if (!reparsed.success) {
    return {
      ok: false,
      plan: withPreHookContext(hookOutcome, {
        ...rejected(
          call,
          'validation',
          errorCodes.inputValidation,
          texts.inputValidationError(
            `input rewritten by a PreToolUse hook is invalid: ${formatZodError(reparsed.error)}`,
          ),
        ),
        toolName: tool.name,
      }),
    };
  }
  const resolved = await validateAndResolve(tool, call, reparsed.data, options.checks);
  return resolved.ok ? resolved : { ok: false, plan: withPreHookContext(hookOutcome, resolved.plan) };
}

/**
 * Prepare, the front half of the pipeline for one call, run just before its group (docs/SEMANTICS.md, Plan and
 * Prepare; up to the permission decision): lookup and schema parse again (cheap, and the plan carries no input),
 * `validateInput`, `resolveInput`, PreToolUse hooks, then the flags, digest, deadline, approval preview and permission
 * facts of the final input.
 */
export async function prepareCall(options: {
  registry: ToolRegistry;
  call: ToolCall;
  context: ToolPrepareContext;
  /**
   * The session's hooks, or the look at its settings that finds them: validation goes on meanwhile, and the call
   * waits for them before its PreToolUse hooks.
   */
  hooks?: SwitchyardHooks | Promise<SwitchyardHooks | undefined>;
  onHookError?: (error: unknown, toolName: string) => void;
  /** The Prepare activity's cancellation (an interrupted turn): PreToolUse hooks get it and stop. */
  signal?: AbortSignal;
}): Promise<CallPlan> {
  const { registry, call, context } = options;
  const parsed = lookupAndParse({ registry, call });
  if (parsed.kind === 'rejected') return parsed;
  const { tool } = parsed;
  // A deny rule naming the whole tool decides before anything reads the input: the call is denied by the workflow
  // whatever its input, so neither the tool's checks (an MCP schema's patterns…) nor the PreToolUse hooks run.
  if (deniedAsAWhole(context.denyRules, tool.name)) return deniedWholePlan(call, tool, parsed.input);
  const resolved = await validateAndResolve(tool, call, parsed.input, context);
  if (!resolved.ok) return resolved.plan;
  let { input } = resolved;

  const hooks = await options.hooks;
  // A PreToolUse hook may change where a path leads: from here on, this call resolves every path again instead of
  // taking an answer remembered from before its hooks ran.
  const checks =
    hooks?.preToolUse !== undefined && hooks.preToolUse.length > 0 ? withoutRememberedPaths(context) : context;
  const hookOutcome = await runPreToolUseHooks({
    hooks,
    call: { sessionId: context.sessionId, cwd: context.cwd, toolName: tool.name, toolInput: input, toolUseId: call.id },
    onError: options.onHookError,
    signal: options.signal ?? new AbortController().signal,
  });
  if (hookOutcome.updatedInput !== undefined) {
    const rewritten = await rewrittenInput({
      tool,
      call,
      updated: hookOutcome.updatedInput.value,
      checks,
      hookOutcome: hookOutcome.outcome,
    });
    if (!rewritten.ok) return rewritten.plan;
    input = rewritten.input;
  }
  return await readyPlan({ tool, call, input, context, checks, hooks, hookOutcome: hookOutcome.outcome });
}

/** The plan of a call whose final input is known: its flags, rules, permission facts, deadline and approval preview. */
async function readyPlan(options: {
  tool: Tool;
  call: ToolCall;
  input: unknown;
  context: ToolPrepareContext;
  checks: ToolPrepareContext;
  hooks: SwitchyardHooks | undefined;
  hookOutcome: PreToolUseOutcome | undefined;
}): Promise<ReadyCallPlan> {
  const { tool, call, input, context, checks } = options;
  let ruleContent: string | undefined;
  try {
    ruleContent = tool.ruleContent?.(input);
  } catch {
    // No rule content: only whole-tool rules match this call.
  }
  const plan: ReadyCallPlan = {
    kind: 'ready',
    callId: call.id,
    toolName: tool.name,
    input,
    inputDigest: inputDigest(input),
    flags: computeFlags(tool, input),
    summary: summarize(tool, input),
    interruptBehavior: tool.interruptBehavior ?? 'cancel',
    alwaysAsk: tool.alwaysAsk === true,
    stopTurnOnSuccess: tool.stopTurnOnSuccess === true,
    cancelSiblingsOnError: tool.cancelSiblingsOnError === true,
    ruleKind: tool.ruleKind ?? 'text',
    rememberRule: rememberRuleFor(tool, input, ruleContent),
    editsInsideCwd: tool.editsFiles === true && ruleContent !== undefined && isInside(context.cwd, ruleContent),
    hasPermissionRequestHooks: hasPermissionRequestHooks(options.hooks, tool.name),
    readsSessionState: tool.readsSessionState === true,
  };
  if (ruleContent !== undefined) plan.ruleContent = ruleContent;
  if (isClientTool(tool)) plan.clientTool = true;
  if (tool.permissionFacts !== undefined) {
    try {
      plan.permission = await tool.permissionFacts(input, checks);
    } catch (error) {
      plan.permission = {
        deny: { reason: `${tool.name} could not check this call's permissions: ${projectErrorMessage(error)}` },
      };
    }
  }
  const timeoutMs = resolveTimeoutMs(tool, input);
  if (timeoutMs !== undefined) plan.timeoutMs = timeoutMs;
  if (options.hookOutcome !== undefined) plan.hook = options.hookOutcome;
  if (!plan.flags.readOnly && tool.prepareApproval !== undefined) {
    try {
      const approval = await tool.prepareApproval(input, checks);
      plan.approval = {
        ...(approval.preview === undefined ? {} : { preview: approval.preview }),
        ...(approval.narrowToAllow === true ? { narrowToAllow: true } : {}),
      };
    } catch {
      // The ask stands, without a preview: a failing prepareApproval never allows silently.
    }
  }
  return plan;
}

/**
 * A call Prepare rejects after its PreToolUse hooks ran (an input a hook rewrote that fails validation) keeps their
 * context: the model reads it after the rejection, as it would after a failed or denied call (docs/SEMANTICS.md,
 * Hooks). The rejection itself, not the hooks' decision, is the outcome.
 */
function withPreHookContext(outcome: PreToolUseOutcome | undefined, plan: RejectedCallPlan): RejectedCallPlan {
  const context = outcome?.additionalContext ?? [];
  return context.length === 0 ? plan : { ...plan, modelContent: withHookContext(plan.modelContent, context) };
}

/** Whether a deny rule without content (`Bash`, `mcp__server`, `mcp__server__tool`) covers the tool. */
function deniedAsAWhole(denyRules: readonly string[] | undefined, toolName: string): boolean {
  return (denyRules ?? []).some((source) => {
    try {
      const rule = parseRule(source);
      return rule.content === undefined && ruleCoversTool(rule.toolName, toolName);
    } catch {
      return false;
    }
  });
}

/** The rule an `allow_always` answer remembers (see `ToolDefinition.rememberRule`). */
export function rememberRuleFor(tool: Tool, input: unknown, ruleContent: string | undefined): string {
  try {
    const custom = tool.rememberRule?.(input);
    if (custom !== undefined) return custom;
  } catch {
    // fall through to the default
  }
  if (ruleContent === undefined || ruleContent === '') return tool.name;
  switch (tool.ruleKind ?? 'text') {
    case 'command': {
      const words = ruleContent.trim().split(/\s+/);
      const first = words[0] ?? '';
      const second = words[1];
      const prefix =
        second !== undefined && SUBCOMMAND_TOOLS.has(first) && /^[A-Za-z][\w:.-]*$/.test(second)
          ? `${first} ${second}`
          : first;
      return `${tool.name}(${prefix}:*)`;
    }
    case 'url': {
      const host = /^[a-z][a-z0-9+.-]*:\/\/([^:/?#]+)/i.exec(ruleContent)?.[1];
      return host === undefined ? `${tool.name}(${ruleContent})` : `${tool.name}(domain:${host.toLowerCase()})`;
    }
    case 'path':
      // The file itself, not a pattern: a file named `**` must not remember `Write(<cwd>/**)`.
      return `${tool.name}(${ruleContent.replace(/[*?[\]{}()!+@\\]/g, '\\$&')})`;
    case 'text':
      return `${tool.name}(${ruleContent})`;
    default: {
      const exhaustive: never = tool.ruleKind as never;
      return exhaustive;
    }
  }
}

/** The context without its remembered real paths: every check resolves its path again. */
function withoutRememberedPaths(context: ToolPrepareContext): ToolPrepareContext {
  const { realPath: _remembered, ...fresh } = context;
  return fresh;
}
