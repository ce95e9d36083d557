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
  /**
   * The tool declared itself read-only, whatever its side-effect scope: it needs no approval in `default` mode even
   * when it changes session state (TodoWrite, submit_result) and so is not read-only for scheduling.
   */
  declaredReadOnly: boolean;
}

/** What the workflow needs to authorise and run one call; produced by Prepare just before the call's group runs. */
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
  /** How `ruleContent` is matched. */
  ruleKind: 'command' | 'path' | 'url' | 'text';
  /** The rule an `allow_always` answer remembers, e.g. `Bash(npm test:*)`. */
  rememberRule: string;
  /** From the tool's `prepareApproval`: a preview for the approver, or that a default ask is not needed. */
  approval?: { preview?: string; narrowToAllow?: boolean };
  /** The PreToolUse hooks' combined outcome. */
  hook?: PreToolUseOutcome;
  /** Some PermissionRequest hook matches this tool: an ask races it against the human. */
  hasPermissionRequestHooks: boolean;
  /** The tool reads the session's state, so its activity input carries it (`ToolDefinition.readsSessionState`). */
  readsSessionState: boolean;
  /** One line for the Web UI, e.g. `Bash: npm test`. */
  summary: string;
  /** Deadline in ms including cleanup grace; undefined means none. */
  timeoutMs?: number;
  interruptBehavior: InterruptBehavior;
  alwaysAsk: boolean;
  stopTurnOnSuccess: boolean;
  cancelSiblingsOnError: boolean;
  /** The tool edits files and its target is inside the session's cwd (what `acceptEdits` allows). */
  editsInsideCwd: boolean;
  /** What the permission chain needs beyond the rule content (the tool's `permissionFacts`). */
  permission?: PermissionFacts;
}

/**
 * Facts about one call that the permission chain needs beyond its rule content, computed by the tool at Prepare
 * (`ToolDefinition.permissionFacts`). A tool that throws there gets `{ deny }`: fail closed.
 */
export interface PermissionFacts {
  /** The call must not run whatever rules and modes say (deny wins; e.g. a cloud-metadata address). */
  deny?: { reason: string };
  /**
   * A strong ask, like an ask rule: no allow rule, remembered approval, hook allow or mode lifts it (protected paths
   * such as `.git/**`, a loopback address). `dontAsk` turns it into a deny; `bypassPermissions` still allows.
   */
  strongAsk?: { reason: string };
}

/** What the PreToolUse hooks decided for one call, combined (deny > ask > allow). */
export interface PreToolUseOutcome {
  decision?: 'allow' | 'deny' | 'ask';
  reason?: string;
  /** Context for the model, appended under `[Hook additional context]`. */
  additionalContext?: string[];
  /** A hook asked to stop the turn after this call (`continue: false`). */
  stopTurn?: { reason: string };
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
