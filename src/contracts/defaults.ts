/**
 * Defaults, one table per concern, so they can be read at a glance. docs/SEMANTICS.md lists them (Defaults) and says
 * where Switchyard chose between ZCode's tool executor and Claude Code's orchestration (Deliberate choices).
 * Pure data: safe to import from workflow code.
 */

/** Task queue used when neither an option nor `SWITCHYARD_TASK_QUEUE` names one. */
export const DEFAULT_TASK_QUEUE = 'switchyard';

/** Namespace used when `TEMPORAL_NAMESPACE` is unset. */
export const DEFAULT_NAMESPACE = 'default';

/** Largest number of calls in one concurrent group (docs/SEMANTICS.md, Grouping). */
export const DEFAULT_MAX_CONCURRENCY = 10;

/**
 * Most calls one turn may carry (`SessionOptions.maxCallsPerTurn` overrides): more is rejected by the update
 * validator. A model reply with hundreds of calls is a runaway, and each call costs history.
 */
export const DEFAULT_MAX_CALLS_PER_TURN = 256;
/**
 * Largest request (UTF-8 bytes of the JSON of its calls) one `executeTurn` or `addCalls` update may carry. The
 * workflow task that accepts an update carries the request in the acceptance message and again in the activities it
 * schedules, and Temporal refuses a task completion over 4 MB (gRPC) and a payload over 2 MB: a larger request
 * would be accepted by the server and then fail every workflow task, wedging the session. So the update validator
 * rejects it first, and the request never reaches history.
 */
export const MAX_TURN_REQUEST_BYTES = 1024 * 1024;

/**
 * Payload budget of one call, end to end. Every activity input, result and marker carries a call's input at most once
 * (Prepare answers with references into the input instead of echoing it), so these bound every payload a turn makes:
 * - `callInputBytes`: the largest input one call may have (UTF-8 bytes of its JSON). The update validator and the
 *   client refuse a request with a larger one, naming the limit; write large content to a file in parts instead.
 * - `groupInputBytes`: the calls of one concurrent group together; a call that would take its group past it starts
 *   the next group (a call alone is never split). Bounds one Prepare and the activities a workflow task schedules.
 * - `preparedBytes`: what one Prepare may answer for its group beyond the inputs (permission facts, previews, hook
 *   context). A call whose share would pass it ends with an error result saying so; the others run.
 * - `callIdChars`, `callNameChars`: a call's id and tool name, which travel in every event and result.
 */
export const PAYLOAD_LIMITS = {
  callInputBytes: 256 * 1024,
  groupInputBytes: 512 * 1024,
  preparedBytes: 768 * 1024,
  callIdChars: 256,
  callNameChars: 256,
} as const;

/**
 * Longest text kept of a field a client or a signal sender supplies and the session logs or carries (an approval's
 * `requestId`, `by`, `reason`, an interrupt's `reason`, a policy change's `reason`): longer ones are clipped at the
 * handler's entry, so the decision log and the state carried across continue-as-new stay bounded whatever arrives.
 */
export const CARRIED_FIELD_MAX_CHARS = { id: 256, text: 2_000 } as const;

/** Executor default deadline when a tool declares none (docs/SEMANTICS.md, Timeouts and the deadline). */
export const DEFAULT_TOOL_TIMEOUT_MS = 300_000;

/** Per-turn aggregate budget for all tool results of one model message (docs/SEMANTICS.md, Aggregate budget). */
export const DEFAULT_AGGREGATE_BUDGET_CHARS = 200_000;

/** Characters of preview in a `<persisted-output>` envelope (docs/SEMANTICS.md, Persisted-output envelope). */
export const PERSISTED_PREVIEW_CHARS = 2_000;

/** Error messages for the model: depth of the cause chain and length cap (docs/SEMANTICS.md, Error projection). */
export const ERROR_PROJECTION = { maxCauseDepth: 12, maxChars: 500 } as const;

/** Bash timeouts (docs/SEMANTICS.md, Defaults); env `BASH_DEFAULT_TIMEOUT_MS`/`BASH_MAX_TIMEOUT_MS` override them. */
export const BASH_TIMEOUTS = { defaultMs: 120_000, maxMs: 600_000, cleanupGraceMs: 6_000 } as const;

/** Timeouts of the other built-in tools (docs/SEMANTICS.md, Defaults). */
export const TOOL_TIMEOUTS = {
  Read: { defaultMs: 30_000, maxMs: 150_000 },
  WebFetch: { defaultMs: 60_000, maxMs: 60_000 },
  mcp: { defaultMs: 30_000 },
  /** Like most built-ins in the reference table: 30 s (only TaskStop-like tools get 10 s). */
  TodoWrite: { defaultMs: 30_000, maxMs: 30_000 },
  /** TaskStop: 10 s. (TaskOutput has no deadline of its own: its `timeout` bounds its wait.) */
  TaskStop: { defaultMs: 10_000, maxMs: 10_000 },
  other: { defaultMs: 30_000 },
} as const;

/**
 * Read-only, idempotent calls with a deadline up to this run as local activities on the workflow's worker when it
 * also hosts the tools (the default single-worker set-up): Read, Glob, Grep, read-only Bash with a short `timeout`.
 */
export const DEFAULT_LOCAL_CALL_MAX_TIMEOUT_MS = 30_000;

/**
 * How long a local call may run on the workflow's worker before it moves to a regular activity. While a local call
 * runs, its workflow task stays open, so the session's queries and signals (an interrupt, an approval) wait for it:
 * this bounds that wait. A call still running after it is stopped (no hooks run) and runs again from the start as a
 * regular activity, which is safe because only idempotent read-only calls run locally.
 */
export const DEFAULT_LOCAL_CALL_BUDGET_MS = 1_000;

/** Per-tool result budgets (docs/SEMANTICS.md, Result budget): model bytes, over-budget policy, the end a cut keeps. */
export const RESULT_BUDGETS = {
  default: { maxModelBytes: 100_000, policy: 'truncate', keep: 'head' },
  Bash: { maxModelBytes: 30_000, policy: 'artifact', keep: 'tail' },
  Read: { maxModelBytes: 262_144, policy: 'truncate', keep: 'head' },
  Write: { maxModelBytes: 100_000, policy: 'truncate', keep: 'head' },
  Edit: { maxModelBytes: 100_000, policy: 'truncate', keep: 'head' },
  WebFetch: { maxModelBytes: 100_000, policy: 'artifact', keep: 'head' },
  Glob: { maxModelBytes: 100_000, policy: 'artifact', keep: 'head' },
  Grep: { maxModelBytes: 20_000, policy: 'artifact', keep: 'head' },
  mcp: { maxModelBytes: 50_000, policy: 'truncate', keep: 'head' },
  /**
   * TaskOutput keeps the tail, like Bash (docs/SEMANTICS.md, Deliberate choices): the
   * newest output and the task's status line, which comes last, are what the model needs.
   */
  TaskOutput: { maxModelBytes: 100_000, policy: 'artifact', keep: 'tail' },
} as const satisfies Record<string, { maxModelBytes: number; policy: 'truncate' | 'artifact'; keep: 'head' | 'tail' }>;

/** Display limits, outside the model budget (docs/SEMANTICS.md, Display). */
export const DISPLAY_LIMITS = {
  fileDiffHunks: 8,
  fileDiffLines: 160,
  bashOutputBytes: 150_000,
  /** v1.3 displays: first results a `search` display lists, characters of each, and of a background task's tail. */
  searchFirstMatches: 5,
  searchMatchChars: 200,
  backgroundTailChars: 1_000,
  /** Characters of a URL or a server/tool name in a display. */
  displayNameChars: 300,
} as const;

/** Longest `SessionOptions.label` (v1.3), in characters. */
export const SESSION_LABEL_MAX_CHARS = 120;

/**
 * v1.3 events a UI draws from: characters of the model text a `ToolCallResult` event previews, and the live output
 * of `ToolCallProgress` events (at most one a second per call, at most `progressEventsPerCall` per call).
 */
export const EVENT_LIMITS = {
  resultPreviewChars: 500,
  progressOutputChars: 500,
  progressEventsPerCall: 20,
  progressIntervalMs: 1_000,
} as const;

/** Events kept in one run before the session continues as new even if Temporal has not suggested it. */
export const DEFAULT_CONTINUE_AS_NEW_EVENTS = 2_000;

/**
 * Bash resource limits (SECURITY.md). `spoolBytes`: output bytes (stdout and stderr together) one Bash call may write
 * to its spool file; at the cap its process group is killed and the result says so. Env
 * `SWITCHYARD_BASH_MAX_SPOOL_BYTES` overrides.
 */
export const BASH_LIMITS = {
  spoolBytes: 64 * 1024 * 1024,
  /**
   * Longest command (UTF-8 bytes): the shell gets it as one argument, and Linux refuses an argument over 128 KiB
   * (`MAX_ARG_STRLEN`, the terminating NUL included), so a longer one is an input validation error naming the limit.
   */
  commandBytes: 128 * 1024 - 1,
} as const;

/** Artifact retention: `switchyard artifacts prune` deletes session artifact directories idle this long. */
export const ARTIFACT_RETENTION = { maxAgeMs: 7 * 24 * 60 * 60 * 1000 } as const;

/**
 * Work and size limits of the reading tools and the todo list (one call must neither hang the worker nor
 * exhaust its memory). Each may be changed per worker by the environment variable named in its comment, a positive
 * integer read at every call (like `BASH_DEFAULT_TIMEOUT_MS`).
 */
export const LIMITS = {
  /**
   * Largest file Read returns when the call gives neither `offset` nor `limit` (Claude Code's 256 KB); a larger file
   * is refused with a message suggesting `offset`/`limit`. With a range, Read streams and has no size limit.
   * Env `SWITCHYARD_READ_MAX_FILE_BYTES`.
   */
  readMaxFileBytes: 262_144,
  /**
   * Largest image a result carries to the model (Read of a PNG/JPEG/GIF/WebP file, an MCP tool's image): 3.75 MiB,
   * Claude Code's raw-size target, whose base64 form is the Anthropic API's 5 MiB per-image limit. Read refuses a
   * larger image with a message saying so; a larger MCP image is stored but reaches the model as a text line only.
   * Env `SWITCHYARD_IMAGE_MAX_BYTES`.
   */
  imageMaxBytes: 3_932_160,
  /**
   * Longest line, in characters, that Grep searches: longer lines are skipped and counted in a note, so one line never
   * holds more than this in memory. Env `SWITCHYARD_GREP_MAX_LINE_CHARS`.
   */
  grepMaxLineChars: 33_554_432,
  /**
   * Line characters × compiled pattern size Grep may spend on one line: the linear engine's worst case for one line,
   * which runs without yielding the event loop (about a second on a slow core); a line over it is skipped like an
   * over-long one. Env `SWITCHYARD_GREP_LINE_WORK`.
   */
  grepLineWork: 250_000_000,
  /** Longest Grep pattern, in characters (compiling is synchronous too). Env `SWITCHYARD_GREP_MAX_PATTERN_CHARS`. */
  grepMaxPatternChars: 10_000,
  /** Items in a TodoWrite list (the list rides along in every later activity input). Env `SWITCHYARD_TODO_MAX_ITEMS`. */
  todoMaxItems: 100,
  /** Characters of text (`content`, `activeForm`, `id`) in a TodoWrite list. Env `SWITCHYARD_TODO_MAX_CHARS`. */
  todoMaxChars: 20_000,
} as const;
