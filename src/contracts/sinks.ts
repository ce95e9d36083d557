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
}

/** Sinks the worker provides to `toolSession`; they are not called during replay. */
export interface SwitchyardSinks extends Sinks {
  switchyardTelemetry: {
    toolCallStarted(record: ToolCallTelemetryRecord): void;
    toolCallEnded(record: ToolCallTelemetryEndRecord): void;
  };
}
