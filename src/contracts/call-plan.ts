import type { ToolResultStatus } from './tool-result.js';

export type SideEffectScope = 'none' | 'session' | 'workspace' | 'external';
export type InterruptBehavior = 'cancel' | 'block';

/** Concurrency and safety flags of one call, computed from its resolved input by the activity that owns the tool. */
export interface CallFlags {
  concurrentSafe: boolean;
  readOnly: boolean;
  destructive: boolean;
  sideEffectScope: SideEffectScope;
  idempotent: boolean;
}

/** What the workflow needs to schedule, authorise and run one call; produced by the `prepareTurn` activity. */
export type CallPlan = ReadyCallPlan | RejectedCallPlan;

export interface ReadyCallPlan {
  kind: 'ready';
  callId: string;
  /** Canonical tool name (aliases resolved). */
  toolName: string;
  /** The resolved input: what hooks, rules, the approver and the handler all see. */
  input: unknown;
  /** sha256 of the canonical JSON of `input`. */
  inputDigest: string;
  flags: CallFlags;
  /** Content matched by permission rules, e.g. the command for Bash, the path for file tools. */
  ruleContent?: string;
  /** One line for the Web UI, e.g. `Bash: npm test`. */
  summary: string;
  /** Deadline in ms including cleanup grace; undefined means none. */
  timeoutMs?: number;
  interruptBehavior: InterruptBehavior;
  alwaysAsk: boolean;
  stopTurnOnSuccess: boolean;
  cancelSiblingsOnError: boolean;
  /** File tools: is the target inside the session's cwd (for `acceptEdits`). */
  editsInsideCwd?: boolean;
}

/** A call that ended before scheduling: unknown tool, invalid input, business validation failure. */
export interface RejectedCallPlan {
  kind: 'rejected';
  callId: string;
  toolName: string;
  status: ToolResultStatus;
  modelContent: string;
  errorCode: string;
  /** The pipeline stage that rejected it (telemetry). */
  stage: 'lookup' | 'validation';
}
