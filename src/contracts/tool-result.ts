/** Terminal statuses a call can end in (wire contract). */
export const toolResultStatuses = ['success', 'error', 'cancelled', 'denied'] as const;
export type ToolResultStatus = (typeof toolResultStatuses)[number];

/** Every status a call passes through (docs/ARCHITECTURE.md, ToolResult). */
export type CallStatus = 'validating' | 'scheduled' | 'awaiting_approval' | 'executing' | ToolResultStatus;

/** How a result changes the course of the turn. */
export interface TurnControl {
  stopTurn: boolean;
  reason?: string;
}

export type ResultBudgetPolicy = 'truncate' | 'artifact';

export interface ResultBudgetInfo {
  truncated: boolean;
  originalBytes: number;
  modelBytes: number;
  policy: ResultBudgetPolicy;
  /** URI of the stored full output, when it was persisted. */
  artifact?: string;
}

/** What a UI shows for a result; closed union, bounded independently of the model budget. */
export type ToolDisplay =
  | { type: 'text'; text: string }
  | { type: 'bash_output'; stdout: string; stderr: string; exitCode: number | null; truncated: boolean }
  | { type: 'file_diff'; filePath: string; hunks: DiffHunk[]; truncated: boolean }
  | McpToolDisplay
  | BackgroundTaskDisplay
  | ImageDisplay
  | WebFetchDisplay
  | SearchDisplay;

/** v1.3: a call of an MCP server's tool: which server and tool, and the kinds of content blocks it answered with. */
export interface McpToolDisplay {
  type: 'mcp_tool';
  server: string;
  tool: string;
  /** The `type` of each content block of the answer, in order (`text`, `image`, `resource`…), at most 20. */
  contentKinds: string[];
  isError: boolean;
}

/**
 * v1.3: a background task seen by a call: `started` (Bash with `run_in_background`), `output` (TaskOutput while it
 * runs) or `finished` (TaskOutput after its end, TaskStop). `tail`: the last part of its output (bounded).
 */
export interface BackgroundTaskDisplay {
  type: 'background_task';
  phase: 'started' | 'output' | 'finished';
  taskId: string;
  command?: string;
  status?: string;
  exitCode?: number | null;
  tail?: string;
}

/** v1.3: an image a call produced (Read of an image file, an MCP image block): its bytes are in the artifact store. */
export interface ImageDisplay {
  type: 'image';
  mediaType: ImageMediaType;
  /** Bytes of the image. */
  bytes: number;
  /** `switchyard-artifact://…` reference of the stored image. */
  artifact: string;
  /** The file it was read from, when a file. */
  filePath?: string;
}

/** v1.3: a WebFetch: the host it reached, the HTTP status and the bytes of the body it read. */
export interface WebFetchDisplay {
  type: 'web_fetch';
  url: string;
  host: string;
  status: number;
  bytes: number;
  contentType?: string;
}

/** v1.3: a Glob or Grep: the pattern, how many files (and matches) it found, and the first few. */
export interface SearchDisplay {
  type: 'search';
  tool: 'Glob' | 'Grep';
  pattern: string;
  /** Files found (Glob) or files with a match (Grep). */
  files: number;
  /** Grep in `content` or `count` mode: matching lines. */
  matches?: number;
  /** The first results (paths, or `path:line: text`), at most `DISPLAY_LIMITS.searchFirstMatches`, each clipped. */
  firstMatches: string[];
  truncated: boolean;
}

export interface DiffHunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: string[];
}

export interface ToolResultTimings {
  totalMs: number;
  permissionWaitMs: number;
  queuedMs: number;
}

/** Image formats a result may carry: the four that both the Anthropic and the OpenAI APIs accept. */
export const imageMediaTypes = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;
export type ImageMediaType = (typeof imageMediaTypes)[number];

/**
 * Rich content of a result (wire contract v1.1), beside its text form `modelContent`. A closed union that grows by
 * adding members (a `document` block for PDFs is the next one), so a client switches on `type` and skips the rest.
 * - `text`: text for the model; when `content` is present its first block is the result's final text form.
 * - `image`: the bytes live in the artifact store under `artifact` (`switchyard-artifact://…`); history holds only
 *   this reference. `bytes` is the image's size.
 */
export type ContentBlock =
  { type: 'text'; text: string } | { type: 'image'; mediaType: ImageMediaType; artifact: string; bytes?: number };

/** One result per call, in call order (wire contract). */
export interface ToolResult {
  callId: string;
  toolName: string;
  status: ToolResultStatus;
  modelContent: string;
  /**
   * Rich content (v1.1), only for results with media: the text form first, then the images. `modelContent` stays
   * the text form (images as `[image: …]` lines), for clients that send text only.
   */
  content?: ContentBlock[];
  isError: boolean;
  errorCode?: string;
  display?: ToolDisplay;
  budget?: ResultBudgetInfo;
  timings: ToolResultTimings;
  turnControl?: TurnControl;
  /**
   * v1.1: the background task this call started (`Bash { run_in_background: true }`); read it with
   * `TaskOutput { task_id }`, stop it with `TaskStop { task_id }`.
   */
  backgroundTask?: { taskId: string };
  /** v1.2: whether the process this call started ran inside the OS sandbox; absent for calls that start none. */
  sandboxed?: boolean;
  /** When the call was added, started and finished (ISO, workflow time): time to first result can be measured. */
  timeline?: { addedAt: string; startedAt?: string; finishedAt: string };
}

/** Result of `addCalls`. */
export interface AddCallsResult {
  turnId: string;
  /** Calls in the turn so far. */
  total: number;
  done: boolean;
}

/** Result of `awaitResults`: the next results in call order, the cursor after them, and whether the turn ended. */
export interface AwaitResultsResult {
  results: ToolResult[];
  next: number;
  done: boolean;
}

/** What the session is doing right now (query `activeTurn`). */
export interface ActiveTurnView {
  turnId: string;
  streaming: boolean;
  /** Calls executing now (including those waiting for approval). */
  executing: string[];
  /** True when everything executing now is a `cancel` tool, so a UI may offer "Esc to cancel". */
  interruptible: boolean;
}

export interface TurnResult {
  turnId: string;
  results: ToolResult[];
  stopped: boolean;
  stopReason?: string;
}

/** Error codes a result may carry; open to tools' own codes, these are Switchyard's. */
export const errorCodes = {
  toolNotFound: 'tool_not_found',
  inputValidation: 'input_validation',
  businessFailure: 'tool_use_error',
  prepareFailed: 'prepare_failed',
  permissionDenied: 'permission_denied',
  hookBlocked: 'hook_blocked',
  timeout: 'timeout',
  cancelled: 'cancelled',
  /** Internal: a local attempt gave up its place (never in a result handed out). */
  relocated: 'relocated',
  interrupted: 'interrupted',
  handlerError: 'handler_error',
  outputSchema: 'output_schema',
  turnStopped: 'turn_stopped',
  siblingError: 'sibling_error',
  /** A call (or what it needs carried) is over a payload limit (`PAYLOAD_LIMITS`). */
  payloadTooLarge: 'payload_too_large',
} as const;
