import { SpanKind, SpanStatusCode, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, ConsoleSpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Logger } from 'pino';
import { environmentSettings } from '../config/settings.js';
import type { Environment } from '../config/settings.js';
import { errorCodes } from '../contracts/tool-result.js';
import type { ToolResultStatus } from '../contracts/tool-result.js';
import type { ApprovalDecisionTelemetryRecord } from '../contracts/sinks.js';

/** Where a failed tool call broke: the span's `switchyard.failure.stage`. */
export type ToolCallStage = 'lookup' | 'validation' | 'permission' | 'handler' | 'serialization' | 'PostToolUse';

/** How the permission check ended: no check needed, approved (by rule or human), or denied. */
export type PermissionOutcome = 'none_needed' | 'approved' | 'denied';

/** What is known when a call starts. `known: false` means the model invented the tool name. */
export interface ToolCallTelemetryStart {
  sessionId: string;
  turnId: string;
  callId: string;
  toolName: string;
  known: boolean;
  /** Epoch ms the call began (default now): the workflow reports calls after the fact. */
  startTime?: number;
}

/** How a call ended; `stage` and `errorCategory` are set for non-success statuses. */
export interface ToolCallTelemetryEnd {
  status: ToolResultStatus;
  permission: PermissionOutcome;
  outputBytes: number;
  truncated: boolean;
  stage?: ToolCallStage;
  errorCategory?: string;
  durationMs?: number;
  /** v1.3: the approval wait (`switchyard.approval.wait_ms`) and whether the process was sandboxed. */
  permissionWaitMs?: number;
  sandboxed?: boolean;
}

/** Starts recording one tool call. */
export interface ToolCallTelemetry {
  started(start: ToolCallTelemetryStart): ToolCallRecorder;
}

/** Finishes recording one tool call; only the first `end` counts. */
export interface ToolCallRecorder {
  end(end: ToolCallTelemetryEnd): void;
}

// Span name for a tool the model invented: keeps span names low-cardinality and model-written text out of traces.
const UNKNOWN_TOOL_NAME = 'unknown';

/** Instrumentation scope of Switchyard's spans. */
const TRACER_NAME = 'switchyard';

/**
 * Telemetry for tool calls: a span per call when a `tracer` is given (tracing is off otherwise) and pino events
 * `tool.call.started` / `tool.call.completed` / `tool.call.failed` / `tool.call.not_found` when a `logger` is given.
 * In spans a tool the model invented is named `unknown`; logs keep the real name for debugging.
 */
export function createToolCallTelemetry(options: { tracer?: Tracer; logger?: Logger }): ToolCallTelemetry {
  const { tracer, logger } = options;
  return {
    started(start) {
      const { sessionId, turnId, callId, toolName, known } = start;
      logger?.info({ event: 'tool.call.started', sessionId, turnId, callId, toolName }, 'tool.call.started');
      const spanToolName = known ? toolName : UNKNOWN_TOOL_NAME;
      // Called from the workflow sink, outside any span: each tool-call span is the root of its own trace (docs/CONCEPTS.md, Limits).
      const span: Span | undefined = tracer?.startSpan(`tool.call ${spanToolName}`, {
        kind: SpanKind.INTERNAL,
        ...(start.startTime === undefined ? {} : { startTime: start.startTime }),
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': spanToolName,
          'gen_ai.tool.call.id': callId,
          'switchyard.session.id': sessionId,
          'switchyard.turn.id': turnId,
        },
      });
      let ended = false;
      return {
        end(end) {
          // A second end would double-log and re-end an ended span (the SDK warns); the first outcome wins.
          if (ended) return;
          ended = true;
          const failure = end.status !== 'success';
          const fields = {
            sessionId,
            turnId,
            callId,
            toolName,
            status: end.status,
            permission: end.permission,
            outputBytes: end.outputBytes,
            truncated: end.truncated,
            ...(end.stage === undefined ? {} : { stage: end.stage }),
            ...(end.errorCategory === undefined ? {} : { errorCategory: end.errorCategory }),
            ...(end.durationMs === undefined ? {} : { durationMs: end.durationMs }),
          };
          if (!failure) logger?.info({ event: 'tool.call.completed', ...fields }, 'tool.call.completed');
          else if (end.stage === 'lookup' && !known)
            logger?.warn({ event: 'tool.call.not_found', ...fields }, 'tool.call.not_found');
          else logger?.warn({ event: 'tool.call.failed', ...fields }, 'tool.call.failed');
          if (span === undefined) return;
          const attributes: Attributes = {
            'switchyard.tool.status': end.status,
            'switchyard.permission.outcome': end.permission,
            'switchyard.output.bytes': end.outputBytes,
            'switchyard.output.truncated': end.truncated,
          };
          if (end.stage !== undefined) attributes['switchyard.failure.stage'] = end.stage;
          if (end.errorCategory !== undefined) attributes['switchyard.error.category'] = end.errorCategory;
          if (end.permissionWaitMs !== undefined) attributes['switchyard.approval.wait_ms'] = end.permissionWaitMs;
          if (end.sandboxed !== undefined) attributes['switchyard.sandboxed'] = end.sandboxed;
          span.setAttributes(attributes);
          // Success leaves the status unset: OTel asks instrumentation not to set OK on its own.
          if (failure) span.setStatus({ code: SpanStatusCode.ERROR, message: end.errorCategory ?? end.status });
          span.end();
        },
      };
    },
  };
}

/**
 * One approval decision (taken or ignored) as a pino line `approval.decision` (info when taken, warn when ignored) and,
 * with a tracer, a zero-length span `approval.decision` whose `switchyard.approval.*` attributes say who decided
 * what, about which call and input digest, whether the signature verified, and why an ignored one was ignored.
 */
export function recordApprovalDecision(
  options: { tracer?: Tracer; logger?: Logger },
  record: ApprovalDecisionTelemetryRecord,
): void {
  const { tracer, logger } = options;
  const fields = { event: 'approval.decision', ...record, at: new Date(record.at).toISOString() };
  if (record.outcome === 'accepted') logger?.info(fields, 'approval.decision');
  else logger?.warn(fields, 'approval.decision');
  if (tracer === undefined) return;
  const attributes: Attributes = {
    'switchyard.session.id': record.sessionId,
    'switchyard.approval.request_id': record.requestId,
    'switchyard.approval.outcome': record.outcome,
    'switchyard.approval.verified': record.verified,
    'switchyard.approval.policy_version': record.policyVersion,
  };
  const optional: Array<[string, string | undefined]> = [
    ['gen_ai.tool.call.id', record.callId],
    ['gen_ai.tool.name', record.toolName],
    ['switchyard.approval.input_digest', record.inputDigest],
    ['switchyard.approval.decision', record.decision],
    ['switchyard.approval.by', record.by],
    ['switchyard.approval.ignored_because', record.ignoredBecause],
  ];
  for (const [key, value] of optional) if (value !== undefined) attributes[key] = value;
  tracer.startSpan('approval.decision', { kind: SpanKind.INTERNAL, startTime: record.at, attributes }).end(record.at);
}

/** Switchyard's own codes, so any other code can be recognised as a tool's business code (`ToolUseError`). */
const switchyardCodes: ReadonlySet<string> = new Set(Object.values(errorCodes));

/**
 * Error category of a result for telemetry: `not_found`, `validation`, `business`, `permission`, `timeout`,
 * `cancelled`, `interrupted`, `output_schema` or `internal`. A code Switchyard does not define is a tool's own
 * business code. Without a code the status decides (`cancelled`, `denied` → `permission`); a success is `none`.
 */
export function errorCategoryOf(errorCode: string | undefined, status: string): string {
  switch (errorCode) {
    case errorCodes.toolNotFound:
      return 'not_found';
    case errorCodes.inputValidation:
      return 'validation';
    case errorCodes.businessFailure:
      return 'business';
    case errorCodes.permissionDenied:
    case errorCodes.hookBlocked:
      return 'permission';
    case errorCodes.timeout:
      return 'timeout';
    case errorCodes.cancelled:
    case errorCodes.turnStopped:
      return 'cancelled';
    case errorCodes.interrupted:
      return 'interrupted';
    case errorCodes.outputSchema:
      return 'output_schema';
    case undefined:
      if (status === 'success') return 'none';
      if (status === 'cancelled') return 'cancelled';
      if (status === 'denied') return 'permission';
      return 'internal';
    default:
      return switchyardCodes.has(errorCode) ? 'internal' : 'business';
  }
}

/**
 * Stage a failed call broke at, from its code: `tool_not_found` → lookup, `input_validation` → validation,
 * `permission_denied` / `hook_blocked` (or a `denied` status) → permission, `output_schema` → serialization, any
 * other error or cancellation → handler; a success → undefined. The code cannot tell a blocking PostToolUse hook
 * from a PreToolUse one, so callers that know pass `PostToolUse` themselves.
 */
export function stageOf(errorCode: string | undefined, status: string): ToolCallStage | undefined {
  if (status === 'success') return undefined;
  switch (errorCode) {
    case errorCodes.toolNotFound:
      return 'lookup';
    case errorCodes.inputValidation:
      return 'validation';
    case errorCodes.permissionDenied:
    case errorCodes.hookBlocked:
      return 'permission';
    case errorCodes.outputSchema:
      return 'serialization';
    case undefined:
      return status === 'denied' ? 'permission' : 'handler';
    default:
      return 'handler';
  }
}

/**
 * Tracing from the environment: on only with `SWITCHYARD_OTEL_CONSOLE=1`, which prints spans to stdout through a
 * `ConsoleSpanExporter` (for local debugging). Otherwise there is no tracer and tracing stays off. To send spans
 * elsewhere, build your own provider and exporter and pass its tracer to `createToolCallTelemetry` (and to the
 * Temporal OpenTelemetry interceptors). Call `shutdown` on exit to flush.
 */
export function createTracingFromEnv(env?: Environment): {
  tracer?: Tracer;
  shutdown(): Promise<void>;
} {
  // Without `env`, the process's, through the settings function every entry point uses (src/config/settings.ts).
  if (!environmentSettings(env).consoleTracing) return { shutdown: async () => {} };
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new ConsoleSpanExporter())] });
  return { tracer: provider.getTracer(TRACER_NAME), shutdown: () => provider.shutdown() };
}
