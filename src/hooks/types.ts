/**
 * Hooks as functions: what library users hand the worker, and what command hooks from settings files become
 * (`command-hooks.ts`). The plain data that reaches the workflow is in `src/contracts/hook-decisions.ts`.
 */
import type {
  HookPermissionDecision,
  PermissionRequestHookInput,
  PermissionRequestHookResult,
  PreToolUseHookInput,
} from '../contracts/hook-decisions.js';

export type {
  PermissionRequestHookInput,
  PermissionRequestHookResult,
  PreToolUseHookInput,
} from '../contracts/hook-decisions.js';

/** What a hook run gets besides its input. */
export interface HookRunContext {
  /**
   * Fires when the turn is interrupted or the hook's activity is cancelled (a PermissionRequest race decided by the
   * human): stop, and kill what was started. Command hooks kill their process group.
   */
  signal: AbortSignal;
}

/** Claude Code's PreToolUse hook output, as an object. */
export interface PreToolUseHookResult {
  permissionDecision?: HookPermissionDecision;
  permissionDecisionReason?: string;
  /** Replaces the input; it is validated again before use. */
  updatedInput?: unknown;
  additionalContext?: string;
  /** `false` stops the turn after this call. */
  continue?: boolean;
  stopReason?: string;
}

export interface PreToolUseHook {
  /** Regular expression on the tool name (`Bash|Write`); default: every tool. */
  matcher?: string;
  run(
    input: PreToolUseHookInput,
    context?: HookRunContext,
  ): PreToolUseHookResult | undefined | Promise<PreToolUseHookResult | undefined>;
}

export interface PermissionRequestHook {
  matcher?: string;
  /** Names the hook in the decision log (`hook:<name>`); a command hook's is its command. */
  name?: string;
  run(
    input: PermissionRequestHookInput,
    context?: HookRunContext,
  ): PermissionRequestHookResult | undefined | Promise<PermissionRequestHookResult | undefined>;
}

/** PostToolUse: after a successful call; may add context for the model or stop the turn. */
export interface PostToolUseHookInput extends PreToolUseHookInput {
  /** The result's text for the model (after the result budget). */
  toolResponse: { content: string; isError: boolean };
  /**
   * The tool's own output, what Claude Code hands hooks as `tool_response`: Bash `{ stdout, stderr, interrupted,
   * isImage, exitCode }`, Write `{ type, filePath, content, structuredPatch, originalFile }`, Edit `{ filePath,
   * oldString, newString, replaceAll, structuredPatch, originalFile, userModified }`, Read `{ type, file }`, MCP tools
   * their content blocks; `toolResponse` for tools that give none (`ToolOutputObject.hookResponse`).
   */
  toolOutput: unknown;
}

/** PostToolUseFailure: after a failed, timed-out or cancelled call. */
export interface PostToolUseFailureHookInput extends PreToolUseHookInput {
  error: string;
  /** True when the call was cancelled (interrupt, sibling failure). */
  isInterrupt: boolean;
}

/** Claude Code's PostToolUse output, as an object. */
export interface PostToolUseHookResult {
  additionalContext?: string;
  /**
   * MCP tools only (Claude Code's semantics): replaces the tool's output before the model sees it, in the MCP
   * result's shape (content blocks, a `{ content }` result, or a string). Ignored for other tools.
   */
  updatedMCPToolOutput?: unknown;
  /** `false` stops the turn after this call. */
  continue?: boolean;
  stopReason?: string;
}

export interface PostToolUseHook {
  matcher?: string;
  /** Names the hook in the text that reports its failure (command hooks: the command). */
  name?: string;
  /**
   * A command hook (a process from settings or the session's options), which may take up to its own timeout: a call it
   * matches runs as a regular activity, never a local one (src/activities/prepare-calls.ts). In-process hooks given to
   * the worker run where the call runs.
   */
  commandHook?: true;
  /** `context.signal` fires when the call is cancelled or the post hooks run past the call's bound. */
  run(
    input: PostToolUseHookInput,
    context?: HookRunContext,
  ): PostToolUseHookResult | undefined | Promise<PostToolUseHookResult | undefined>;
}

export interface PostToolUseFailureHook {
  matcher?: string;
  /** Names the hook in the text that reports its failure (command hooks: the command). */
  name?: string;
  /** A command hook: see `PostToolUseHook.commandHook`. */
  commandHook?: true;
  run(
    input: PostToolUseFailureHookInput,
    context?: HookRunContext,
  ): PostToolUseHookResult | undefined | Promise<PostToolUseHookResult | undefined>;
}

export interface SwitchyardHooks {
  /** After a successful call (context for the model, `continue: false`). */
  postToolUse?: readonly PostToolUseHook[];
  /** After a failed, timed-out or cancelled call. */
  postToolUseFailure?: readonly PostToolUseFailureHook[];
  preToolUse?: readonly PreToolUseHook[];
  /** Race the human approver: the first decision (hook or `approval` signal) wins. */
  permissionRequest?: readonly PermissionRequestHook[];
}
