/**
 * What of hooks crosses into the workflow: the vocabulary of their decisions and the PermissionRequest hooks' input
 * and answer (an activity's input and output, recorded in history). The hooks themselves live in `src/hooks/`.
 * Pure: no Node modules.
 */

/** A PreToolUse hook's permission answer (Claude Code's `permissionDecision`). */
export type HookPermissionDecision = 'allow' | 'deny' | 'ask';

/** A PermissionRequest hook's answer (Claude Code's `decision.behavior`). */
export type PermissionRequestBehavior = 'allow' | 'deny';

/** What every hook event tells a hook about the call. */
export interface PreToolUseHookInput {
  sessionId: string;
  cwd: string;
  toolName: string;
  toolInput: unknown;
  toolUseId: string;
}

export interface PermissionRequestHookInput extends PreToolUseHookInput {
  requestId: string;
  /** Why the call needs approval. */
  reason: string;
}

/** A PermissionRequest hook's decision; undefined leaves the decision to the human. */
export interface PermissionRequestHookResult {
  behavior: PermissionRequestBehavior;
  message?: string;
  /** Which hook decided (a command hook's command), for the decision log's `hook:<command>`. */
  hook?: string;
}
