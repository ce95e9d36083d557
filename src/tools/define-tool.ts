import type { z } from 'zod';
import type { InterruptBehavior, PermissionFacts, SideEffectScope } from '../contracts/call-plan.js';
import type { ImageMediaType, ResultBudgetPolicy, ToolDisplay, TurnControl } from '../contracts/tool-result.js';
import type { ArtifactStore } from '../contracts/artifact-store.js';
import type { PersistedOutputEnvelopeInput } from '../contracts/persisted-output.js';
import type { BackgroundTaskReport } from '../contracts/background-tasks.js';
import type { ToolProgressReport } from '../contracts/progress.js';
import type { RuleKind } from '../contracts/call-plan.js';
import type { SandboxOptions } from '../contracts/session.js';

/** How long a call may run (docs/SEMANTICS.md, Timeouts and the deadline). */
export interface TimeoutPolicy {
  /** `none`: no deadline at all (agent-like tools, `submit_result`). Default `deadline`. */
  kind?: 'deadline' | 'none';
  /** Default deadline; falls back to the executor default of 300000 ms. */
  defaultMs?: number;
  /** Cap on any requested deadline. */
  maxMs?: number;
  /** Whether the input's `timeout_ms` or `timeout` field may set the deadline. Default false. */
  allowCallOverride?: boolean;
  /**
   * The deadline this input needs (a large page range, a long download), before any override or default; capped at
   * `maxMs` like any request. `undefined`, a value that is not a positive number, or a throw: the next rule decides.
   */
  resolveBudgetMs?: (input: unknown) => number | undefined;
  /** Extra time after the deadline for the tool's own cleanup. Default 0. */
  cleanupGraceMs?: number;
}

/** How much of the output goes to the model, and what happens to the rest (docs/SEMANTICS.md, Result budget). */
export interface ResultBudget {
  maxModelBytes: number;
  /** Defaults to `maxModelBytes`; the smaller of the two applies. */
  maxInlineBytes?: number;
  policy: ResultBudgetPolicy;
  /** Which end of the output a truncation or preview keeps. */
  keep: 'head' | 'tail';
}

export type ValidationOutcome = { ok: true } | { ok: false; message: string; errorCode?: string };

/** What tools see before execution (classification, validation, resolution). */
export interface ToolPrepareContext {
  sessionId: string;
  /** Absolute working directory of the session. */
  cwd: string;
  /**
   * The session's allow rules (`Read(/etc/hosts)`, `Write(/tmp/**)`): a file tool may use a path outside cwd only
   * when one of them names it explicitly (see `checkToolPath`).
   */
  allowRules: readonly string[];
  /**
   * The session's deny rules (`Read(.env)`): tools that read many files (Grep, Glob) skip what a `Read(...)` deny rule
   * names, so one read confinement holds for every reading tool.
   */
  denyRules: readonly string[];
  /** The session's sandbox options as given (`SessionOptions.sandbox`); see `src/tools/sandbox/`. */
  sandbox?: SandboxOptions;
  /**
   * Resolves a path's real path, like `fs.promises.realpath`. In a Prepare that runs no PreToolUse hook it remembers
   * its answers for the calls of that Prepare (validation and permission facts then resolve each path once); absent,
   * use `realpath` itself.
   */
  realPath?: (path: string) => Promise<string>;
}

/** What a tool's `execute` receives. */
export interface ToolExecutionContext extends Omit<ToolPrepareContext, 'allowRules' | 'realPath'> {
  /** The session's allow rules, for a check of what a call reaches at execution (see `openFileProblem`). */
  allowRules?: readonly string[];
  callId: string;
  turnId: string;
  /** Fires on turn interrupt, on the deadline, and on cancellation delivered by heartbeat. */
  signal: AbortSignal;
  /**
   * Reports progress: a string (or `message`) in the tool's own words, `outputTail` for the tail of its output so far.
   * Each report replaces the last; it travels in heartbeat details (`SessionHandle.progress()`), never in history.
   */
  reportProgress(progress: string | ToolProgressReport): void;
  /**
   * The session's state (todo list, …) as it was when the call's group started; empty unless the tool declares
   * `readsSessionState` (so state does not ride along in every activity input).
   */
  sessionState: Readonly<Record<string, unknown>>;
  /** Edit and Write refuse an existing file the session has not read since it changed (`SessionOptions.readBeforeEdit`). */
  readBeforeEdit?: boolean;
  /** 1 on the first attempt; higher when an idempotent call is retried after a lost worker. */
  attempt: number;
  /**
   * `<sessionId>:<callId>:<attempt>`: names this execution, so a tool with effects outside the machine (a payment, a
   * message, a deploy) can pass it on and let the far side drop a repeat. A call in doubt that a person settles with
   * `retry` runs again with the same key (docs/SEMANTICS.md, Calls in doubt). Bash commands see it as
   * `SWITCHYARD_IDEMPOTENCY_KEY`, MCP servers as `_meta.idempotencyKey` of `tools/call`.
   */
  idempotencyKey: string;
  /** The call's deadline: `remainingMs()` is undefined for tools without one. Retries keep the remaining budget. */
  deadline: { remainingMs(): number | undefined; readonly activeMs: number; readonly queuedMs: number };
  /**
   * Waits for a permit of an admission gate (`model`, `network`, or one the worker defines), then runs `work`
   * holding it. The wait does not count against the deadline.
   */
  admit<T>(gate: string, work: () => Promise<T>): Promise<T>;
  /** Where full outputs go; a tool may store its own files here. */
  artifacts: ArtifactStore | undefined;
  /**
   * The worker's data directory (`SWITCHYARD_DATA_DIR`), for files that outlive one call: background tasks keep their
   * records and output under `<dataDir>/background`. Absent in contexts made without a worker (unit tests).
   */
  dataDir?: string;
}

/** An image a tool returns: its bytes, which the executor stores as an artifact (they never enter history). */
export interface ToolOutputImage {
  /** Checked against the bytes' magic numbers; the detected type wins, and bytes of no supported format become a text line. */
  mediaType: ImageMediaType;
  data: Uint8Array;
}

export interface ToolOutputObject {
  /** The text for the model ('' when the output is only images). */
  content: string;
  /**
   * Images for the model, after the text. The executor stores each in the artifact store; the result gets an image
   * block per image (`ToolResult.content`) and a line `[image: <type>, <bytes> bytes, <uri>]` per image in its text
   * form. Images are not counted against the result budget or the turn's aggregate budget (only their text lines
   * are); one over `LIMITS.imageMaxBytes` reaches the model as its text line only.
   */
  images?: ToolOutputImage[];
  /** A result that is an error for the model even though the handler returned normally. */
  isError?: boolean;
  errorCode?: string;
  display?: ToolDisplay;
  turnControl?: TurnControl;
  /**
   * The full output in a file the tool wrote, for outputs too large to hold in memory; `content` then holds what
   * fits (its head or tail, per the budget's `keep`). The file is moved into the artifact store when the output is
   * over budget, and deleted otherwise.
   */
  spool?: { path: string; bytes: number };
  /** Structured output, checked against the tool's `outputSchema`. */
  data?: unknown;
  /**
   * The tool's own output for PostToolUse hooks (`tool_response` on a command hook's stdin), in the shape Claude Code
   * gives its hooks, so a script written for Claude Code reads the same fields (Bash `stdout`, Write `filePath`…).
   * Never in history and never sent to the model. Default `{ content, isError }` with the model's text.
   */
  hookResponse?: unknown;
  /**
   * Session-state keys to set (the call's "context modifier"): applied by the workflow at once for an exclusive
   * call, and for a concurrent group after the whole group, in call order.
   */
  sessionState?: Record<string, unknown>;
  /**
   * A background task this call started (Bash `run_in_background`) or observed (TaskOutput, TaskStop): the session
   * records it (query `backgroundTasks`, events `BackgroundTaskStarted` / `BackgroundTaskEnded`).
   */
  backgroundTask?: BackgroundTaskReport;
  /** The call started a process: whether it ran in the OS sandbox (`ToolResult.sandboxed`). */
  sandboxed?: boolean;
  /** With `sandboxed: false` where the session wanted a sandbox: why it could not have one. */
  unsandboxedReason?: string;
}
export type ToolOutput = string | ToolOutputObject;

/** A tool definition; build one with `defineTool`. */
export interface ToolDefinition<Input> {
  name: string;
  /** Other names the model may use (deprecated names, other CLIs' names). */
  aliases?: readonly string[];
  description: string;
  inputSchema: z.ZodType<Input>;
  /** Checks `data` of the output; a mismatch is a non-retryable failure (`Tool output failed runtimeOutputSchema validation`). */
  outputSchema?: z.ZodType;
  /** Never concurrent when true. Default false. */
  destructive?: boolean;
  /** Whether the call may share a group; a function of the input, or a value. Default false (fail closed). */
  concurrentSafe?: boolean | ((input: Input) => boolean);
  /** Read-only tools need no approval in `default` mode. Default false. */
  readOnly?: boolean | ((input: Input) => boolean);
  /** Default `none` for read-only tools, `workspace` otherwise. */
  sideEffectScope?: SideEffectScope;
  /** May run again after a lost worker. Default: same as read-only. */
  idempotent?: boolean;
  /** Whether the tool edits files (for `acceptEdits`). Default false. */
  editsFiles?: boolean;
  timeout?: TimeoutPolicy;
  resultBudget?: ResultBudget;
  /** `cancel` (default): an interrupt cancels the call; `block`: it runs to completion. */
  interruptBehavior?: InterruptBehavior;
  /** Always ask a human, whatever the rules and hooks say (deny still wins). */
  alwaysAsk?: boolean;
  /** A successful call ends the turn (e.g. `submit_result`). */
  stopTurnOnSuccess?: boolean;
  /** The tool reads `context.sessionState`; without this its activity input does not carry the state. Default false. */
  readsSessionState?: boolean;
  /** A failure cancels running siblings of the same tool in its group (Bash). */
  cancelSiblingsOnError?: boolean;
  /**
   * MCP tools: turns a PostToolUse hook's `updatedMCPToolOutput` into this tool's output, which then replaces the
   * original (result budget and images as for any output). Tools without it ignore that field (Claude Code lets
   * hooks replace MCP tools' outputs only).
   */
  outputFromHook?(updatedOutput: unknown): ToolOutput;
  /** Writes the model's content for an output that was persisted, instead of the generic `<persisted-output>` envelope. */
  formatPersistedModelContent?(envelope: PersistedOutputEnvelopeInput & { uri: string }): string;
  /**
   * @deprecated Ignored: an interrupted call gets Claude Code's reject message (`texts.rejectMessage`), whatever the
   * tool, and a call cancelled by a failing sibling gets `Cancelled: parallel tool call … errored`.
   */
  cancelledMessage?: string;
  /** What permission rules match, e.g. the command for `Bash(npm run test:*)`, the path for `Read(src/**)`. */
  ruleContent?(input: Input): string | undefined;
  /** How rule content is matched: `command` (prefix rules `x:*`), `path` (globs), `url` (`domain:`), `text`. Default `text`. */
  ruleKind?: RuleKind;
  /**
   * The rule an `allow_always` answer remembers. Default: `Tool(<command prefix>:*)` for command tools,
   * `Tool(<path>)` for path tools, `Tool(<content>)` otherwise, `Tool` without rule content.
   */
  rememberRule?(input: Input): string;
  /**
   * Runs when a call may need approval: returns a preview for the approver and/or says that a default ask is not
   * needed (`narrowToAllow`). It cannot lift an explicit ask rule or `alwaysAsk`; if it throws, the ask stands
   * without a preview.
   */
  prepareApproval?(
    input: Input,
    context: ToolPrepareContext,
  ): Promise<{ preview?: string; narrowToAllow?: boolean }> | { preview?: string; narrowToAllow?: boolean };
  /**
   * Facts for the permission chain beyond `ruleContent` (see `PermissionFacts`), from the resolved input. Runs at
   * Prepare, just before the call's group; if it throws, the call is denied (fail closed).
   */
  permissionFacts?(input: Input, context: ToolPrepareContext): PermissionFacts | Promise<PermissionFacts>;
  /** One line for the Web UI, after the tool name: `Bash: npm test`. */
  summarize?(input: Input): string;
  /** Semantic checks after the schema; a failure is a `<tool_use_error>` for the model. */
  validateInput?(input: Input, context: ToolPrepareContext): ValidationOutcome | Promise<ValidationOutcome>;
  /** Turns the input into execution facts (absolute paths…) before hooks, rules, approval and the handler. */
  resolveInput?(input: Input, context: ToolPrepareContext): Input | Promise<Input>;
  execute(input: Input, context: ToolExecutionContext): Promise<ToolOutput>;
}

/** A registered tool, its input type erased. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the registry holds tools of every input type
export type Tool = ToolDefinition<any>;

/**
 * Defines a tool; the input type follows from the zod schema. `execute` gets `context.idempotencyKey`
 * (`<sessionId>:<callId>:<attempt>`): a tool whose effect must not happen twice passes it to whatever it changes, so
 * that the retry a person orders for a call in doubt (same key) is dropped there if the first run took effect.
 */
export function defineTool<Schema extends z.ZodType>(
  definition: ToolDefinition<z.infer<Schema>> & { inputSchema: Schema },
): Tool {
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(definition.name)) {
    throw new TypeError(`Invalid tool name "${definition.name}": use 1-64 letters, digits, "_", ".", ":" or "-"`);
  }
  return definition;
}

/** A business failure: the model sees its message wrapped in `<tool_use_error>`. */
export class ToolUseError extends Error {
  override readonly name = 'ToolUseError';
  constructor(
    message: string,
    readonly code: string = 'tool_use_error',
  ) {
    super(message);
  }
}
