import type { Sinks } from '@temporalio/workflow';

/** What the workflow reports about one call; telemetry only, never in history (a workflow sink). */
export interface ToolCallTelemetryRecord {
  sessionId: string;
  turnId: string;
  callId: string;
  toolName: string;
  /** False for a tool name the model invented: recorded as `unknown` in spans. */
  known: boolean;
  /** Epoch ms (workflow time) when the call's pipeline began. */
  startedAt: number;
}

export interface ToolCallTelemetryEndRecord extends ToolCallTelemetryRecord {
  status: 'success' | 'error' | 'cancelled' | 'denied';
  errorCode?: string;
  permission: 'none_needed' | 'approved' | 'denied';
  outputBytes: number;
  truncated: boolean;
  durationMs: number;
  /** v1.3: how long the call waited for approval (ms); on the span as `switchyard.approval.wait_ms`. */
  permissionWaitMs?: number;
  /** v1.3: whether its process ran in the OS sandbox, when it started one. */
  sandboxed?: boolean;
}

/** One entry of a session's approval decision log, as telemetry sees it (the log's record plus the session). */
export interface ApprovalDecisionTelemetryRecord {
  sessionId: string;
  requestId: string;
  callId?: string;
  toolName?: string;
  inputDigest?: string;
  decision?: string;
  by?: string;
  verified: boolean;
  outcome: 'accepted' | 'ignored';
  ignoredBecause?: string;
  /** Who decided (`ApprovalDecisionRecord.source`), for accepted decisions. */
  source?: string;
  /** What the call runs, bounded (`approvalInputSummary`). */
  inputSummary?: string;
  policyVersion: number;
  /** Epoch ms (workflow time) of the decision. */
  at: number;
}

/** Sinks the worker provides to `toolSession`; they are not called during replay. */
export interface SwitchyardSinks extends Sinks {
  switchyardTelemetry: {
    toolCallStarted(record: ToolCallTelemetryRecord): void;
    toolCallEnded(record: ToolCallTelemetryEndRecord): void;
    approvalDecision(record: ApprovalDecisionTelemetryRecord): void;
  };
}
