import type { ToolResultStatus } from './tool-result.js';

export type SideEffectScope = 'none' | 'session' | 'workspace' | 'external';
/** What a tool's rule content is matched as: `Bash(npm test)`, `Read(src/**)`, `WebFetch(domain:x)`, or plain text. */
export type RuleKind = 'command' | 'path' | 'url' | 'text';

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
  ruleKind: RuleKind;
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
  /** A client tool's call: once allowed, it parks until the client answers (`submitToolResult`) instead of running. */
  clientTool?: true;
  /**
   * Some PostToolUse or PostToolUseFailure command hook matches this tool (set only when the workflow asked,
   * `postHooksOffPath`):
   * the call never runs as a local activity, whose workflow task would stay open (holding every query and signal)
   * while the hook runs.
   */
  postToolUseHooks?: true;
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
  /**
   * A shell command split into its simple commands (Bash). Rules then judge every part: the call is allowed by rules
   * only if every part is, any part matching a deny (ask) rule denies (asks), and a command that is not a plain list
   * of simple commands (`parsed: false`) is never allowed by a rule other than `Bash` or the exact command.
   */
  commands?: CommandFacts;
  /**
   * What the call reads, for one read confinement across tools: absolute paths; bash glob patterns (`*`, `?`, `[`,
   * and `/**` for a tree read recursively); anything not absolute could not be located. A `Read(...)` deny rule that
   * matches one denies the call; a read outside cwd that no `Read(...)` allow rule names keeps a read-only call from
   * being allowed without approval.
   */
  readPaths?: string[];
  /**
   * For a file tool: the file its path really reaches, symlinks resolved (inside cwd spelled under the session's
   * cwd), when that differs from the path as written. Deny and ask rules match either; an allow rule or a remembered
   * approval must match both.
   */
  realPath?: string;
}

/** One simple command of a shell command, as rules see it. */
export interface CommandPartFacts {
  /**
   * The simple command normalised: words after quote removal (re-quoted only where a word needs it), single spaces,
   * without leading assignments of harmless variables and wrappers such as `timeout 5`, `nice`, `env`, `command`.
   */
  content: string;
  /** The part is read-only by itself, so it needs no rule (while its reads stay confined). */
  readOnly: boolean;
  /** The part runs a command it is given (`sudo`, `xargs`, `bash -c`, `eval`, `find -exec`…): only an exact rule allows it. */
  runner?: true;
}

/**
 * A shell command's simple commands. `otherSpellings`: what only deny and ask rules see: each part with its wrappers
 * and assignments, by the base name of a command given by path, `git` without its global options, and the commands
 * found inside substitutions, here-documents and groups or run by a runner. `parsed: false`: the command is not a
 * plain list of simple commands (`reason`), so its parts, found as well as possible, are for deny and ask rules only.
 */
export type CommandFacts =
  | { parsed: true; parts: CommandPartFacts[]; otherSpellings: string[] }
  | {
      parsed: false;
      reason: string;
      parts: CommandPartFacts[];
      otherSpellings: string[];
      /**
       * A form whose commands or reads no rule can be checked against (`$a -f x`, `rm${IFS}-f`, `echo … | sh`,
       * `cat $FILE`): when a deny rule for Bash or for reading is in force, the call is denied in every mode.
       */
      unanalysed?: string;
    };

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
