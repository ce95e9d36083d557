/**
 * Whether a call stops its turn, and why: one pure decision over every source that may ask, used by Execute (the
 * tool's output and the PostToolUse hooks) and by the workflow (the PreToolUse hooks, then the turn's stop reason).
 * The decision is composable: the workflow hands back in what Execute decided, so each place passes only the sources
 * it knows. Pure: no Node modules.
 */
import type { TurnControl } from './tool-result.js';

/** A hook's `continue: false` without a `stopReason`. */
export const HOOK_STOP_REASONS = {
  preToolUse: 'A PreToolUse hook stopped the turn.',
  postToolUse: 'A PostToolUse hook stopped the turn.',
} as const;

/** A tool's stop without a reason of its own. */
export function toolStopReason(toolName: string): string {
  return `${toolName} requested a turn stop`;
}

export interface TurnControlSources {
  toolName: string;
  /** What the call's outcome says already: the tool's own `turnControl`, or what Execute decided. It may say "go on". */
  current?: TurnControl | undefined;
  /** The tool stops its turn on success (`stopTurnOnSuccess`) and its output is no error. */
  stopOnSuccess?: boolean;
  /** A PostToolUse (or PostToolUseFailure) hook asked to stop. */
  postToolUse?: { reason: string } | undefined;
  /** A PreToolUse hook asked to stop. */
  preToolUse?: { reason: string } | undefined;
}

/**
 * The call's turn control, strongest first:
 * 1. what the outcome says already, when it says anything (a tool that answers `stopTurn: false` is not stopped by
 *    `stopTurnOnSuccess` or by a PreToolUse hook), else the tool's `stopTurnOnSuccess` after a success;
 * 2. a PostToolUse hook's stop, unless the call stops the turn already (it overrides a tool's "go on");
 * 3. a PreToolUse hook's stop, when nothing above said anything.
 */
export function turnControlOf(sources: TurnControlSources): TurnControl | undefined {
  let control =
    sources.current ??
    (sources.stopOnSuccess === true ? { stopTurn: true, reason: toolStopReason(sources.toolName) } : undefined);
  if (sources.postToolUse !== undefined && control?.stopTurn !== true)
    control = { stopTurn: true, reason: sources.postToolUse.reason };
  if (control === undefined && sources.preToolUse !== undefined)
    control = { stopTurn: true, reason: sources.preToolUse.reason };
  return control;
}

/** Why a finished call stops its turn, or undefined when it does not. */
export function turnStopReason(result: {
  toolName: string;
  turnControl?: TurnControl | undefined;
}): string | undefined {
  if (result.turnControl?.stopTurn !== true) return undefined;
  return result.turnControl.reason ?? toolStopReason(result.toolName);
}
