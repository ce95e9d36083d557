import type { CallFlags } from './call-plan.js';
import type { ApprovalDecision, ApprovalIgnoredReason } from './approval.js';
import type { BackgroundTaskEndReason, BackgroundTaskStatus } from './background-tasks.js';
import type { ResultBudgetPolicy, ToolDisplay, ToolResultStatus } from './tool-result.js';

interface EventBase {
  /** Position in the session's event log; `events({ since })` returns events with `seq >= since`. */
  seq: number;
  /** ISO timestamp (workflow time). */
  at: string;
  turnId: string;
}

/** The session's append-only event log (query `events`); event types in docs/ARCHITECTURE.md, Events. */
export type SessionEvent =
  | (EventBase & { type: 'TurnStarted'; callIds: string[]; streaming: boolean })
  | (EventBase & {
      type: 'ToolCallScheduled';
      callId: string;
      toolName: string;
      groupIndex: number;
      /**
       * The whole grouping of the turn, as lists of call ids: on the first `ToolCallScheduled` of a whole turn only
       * (once per turn, not per call). Streaming turns group as calls arrive, so they carry only `groupIndex`.
       */
      groups?: string[][];
    })
  | (EventBase & {
      type: 'PermissionRequested';
      callId: string;
      requestId: string;
      toolName: string;
      reason?: string;
      policyVersion?: number;
    })
  | (EventBase & {
      type: 'PermissionResolved';
      callId: string;
      requestId?: string;
      decision: ApprovalDecision | 'allow';
      source: 'rule' | 'mode' | 'hook' | 'user' | 'remembered' | 'tool' | 'policy' | 'evaluator';
      by?: string;
      /** The session policy's version the decision was made under. */
      policyVersion?: number;
    })
  | (EventBase & {
      type: 'PermissionDenied';
      callId: string;
      requestId?: string;
      reason: string;
      source: string;
      by?: string;
      policyVersion?: number;
    })
  | (EventBase & {
      /** A `setPolicy` update changed the session's rules or mode; `released`/`denied`: waiting calls it decided. */
      type: 'PolicyChanged';
      policyVersion: number;
      by?: string;
      /** Whether the change was signed by `by` and the signature checked out (sessions with approvers require it). */
      verified?: boolean;
      /** The hex SHA-256 of the change's canonical JSON, for a signed change (docs/APPROVALS.md). */
      policyDigest?: string;
      reason?: string;
      released: string[];
      denied: string[];
    })
  | (EventBase & {
      /** The shadow rules would have decided this call differently; nothing was enforced from them. */
      type: 'PolicyShadowDecision';
      callId: string;
      toolName: string;
      enforced: 'allow' | 'ask' | 'deny';
      shadow: 'allow' | 'ask' | 'deny';
      shadowReason: string;
      policyVersion: number;
    })
  | (EventBase & {
      type: 'ToolCallStarted';
      callId: string;
      toolName: string;
      readOnly: boolean;
      sideEffectScope: CallFlags['sideEffectScope'];
    })
  | (EventBase & {
      type: 'ToolCallResult';
      callId: string;
      toolName: string;
      status: ToolResultStatus;
      totalMs: number;
      /** Time spent waiting for approval (`permissionWaitMs` travels with the result event). */
      permissionWaitMs: number;
      /** Bytes of the tool's whole output, and of what the model gets (docs/SEMANTICS.md, Result budget). */
      originalBytes: number;
      modelBytes: number;
      /** Whether the result budget cut the output, by which policy, and where the full output was stored. */
      truncated: boolean;
      policy?: ResultBudgetPolicy;
      artifact?: string;
      /** v1.3: what a UI shows for the result (the result's own `display`), when it has one. */
      display?: ToolDisplay;
      /** v1.3: time the call waited for a slot (an admission gate) before it ran. */
      queuedMs?: number;
      /** v1.3: the start of the model text, at most `EVENT_LIMITS.resultPreviewChars` characters. */
      preview?: string;
      /** v1.3: whether `preview` is shorter than the model text. */
      previewTruncated?: boolean;
    })
  | (EventBase & {
      /**
       * v1.3: live output of a running call: the tail of its output so far (`output`, at most
       * `EVENT_LIMITS.progressOutputChars`) and how long it has run. At most one a second per call and at most
       * `EVENT_LIMITS.progressEventsPerCall` per call; calls shorter than a second have none (docs/SEMANTICS.md).
       */
      type: 'ToolCallProgress';
      callId: string;
      toolName?: string;
      output?: string;
      message?: string;
      elapsedMs: number;
    })
  | (EventBase & {
      /**
       * The turn's aggregate budget replaced a successful result after its `ToolCallResult`: the sizes and policy of
       * what the model gets now (the `<persisted-output>` envelope, or a shorter cut when the output was not stored).
       * Emitted once per replaced result, when the result is handed out.
       */
      type: 'ToolCallResultReplaced';
      callId: string;
      toolName: string;
      originalBytes: number;
      modelBytes: number;
      truncated: boolean;
      policy: ResultBudgetPolicy;
      artifact?: string;
    })
  | (EventBase & {
      type: 'ToolCallError';
      callId: string;
      toolName: string;
      status: ToolResultStatus;
      errorCode?: string;
      message: string;
    })
  | (EventBase & { type: 'ToolBatchComplete'; groupIndex: number; succeeded: number; failed: number })
  | (EventBase & { type: 'TurnCompleted'; stopped: boolean; stopReason?: string; resultCount: number })
  | (EventBase & {
      type: 'WorkspaceSettingsUntrusted';
      /** Settings files inside the workspace whose hooks were not loaded (`SessionOptions.trustWorkspaceSettings`). */
      files: string[];
    })
  | (EventBase & {
      /** v1.1: a Bash call with `run_in_background` started a task (`turnId`/`callId`: that call). */
      type: 'BackgroundTaskStarted';
      callId: string;
      taskId: string;
      command: string;
    })
  | (EventBase & {
      /**
       * v1.1: the session saw a background task end: a TaskOutput or TaskStop call observed it (`reason` `observed` /
       * `stopped`, `turnId`/`callId`: that call), or the session's end stopped it (`session_ended`, `turnId`: the turn
       * that started it, no `callId`).
       */
      type: 'BackgroundTaskEnded';
      callId?: string;
      taskId: string;
      status: Exclude<BackgroundTaskStatus, 'running'>;
      exitCode?: number | null;
      reason: BackgroundTaskEndReason;
    })
  | (EventBase & {
      /** A call of a client tool passed permission and waits for the client (`submitToolResult`). */
      type: 'ClientToolRequested';
      callId: string;
      toolName: string;
    })
  | (EventBase & {
      /**
       * A call that is not idempotent lost its worker while it ran: it ended `interrupted` and is listed by query
       * `callsInDoubt` until a person settles it (docs/SEMANTICS.md, Calls in doubt). `turnId`: the call's turn.
       */
      type: 'CallInDoubt';
      callId: string;
      toolName: string;
      inputSummary: string;
      inputDigest: string;
      idempotencyKey: string;
      startedAt: string;
    })
  | (EventBase & {
      /** A person settled a call in doubt (`resolveInDoubt`); `turnId`: the call's turn. */
      type: 'CallInDoubtResolved';
      callId: string;
      toolName: string;
      outcome: 'ran' | 'not-ran' | 'retry';
      by: string;
      /** Whether the resolution was signed by `by` and the signature checked out. */
      verified: boolean;
    })
  | (EventBase & {
      type: 'ApprovalIgnored';
      requestId: string;
      reason: Exclude<ApprovalIgnoredReason, 'hook_answered_first'>;
      detail?: string;
    });

export type SessionEventType = SessionEvent['type'];

/** An event before the log assigns its position and time. */
export type NewSessionEvent = SessionEvent extends infer E
  ? E extends SessionEvent
    ? Omit<E, 'seq' | 'at'>
    : never
  : never;

/** Most events one `events` query returns; a shorter page is the last one. */
export const EVENTS_PAGE_LIMIT = 500;

export interface EventsPage {
  events: SessionEvent[];
  next: number;
}
