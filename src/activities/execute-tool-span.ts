// The `execute_tool` span of one tool execution, started by the `executeCall` activity (regular or local). The
// worker's other telemetry (the whole call's `tool.call` span, approval decisions) is in src/worker/telemetry.ts.
import { SpanKind, SpanStatusCode, type Attributes, type Tracer } from '@opentelemetry/api';
import type { ToolResultStatus } from '../contracts/tool-result.js';

/** What the `execute_tool` span of one execution says when it ends. */
export interface ExecuteToolSpanEnd {
  status: ToolResultStatus;
  errorCode?: string;
  sandboxed?: boolean;
  /** The call ran in a local activity of the workflow's worker (short read-only calls). */
  local: boolean;
  attempt: number;
}

/**
 * The GenAI semantic conventions' span of one tool execution: `execute_tool {gen_ai.tool.name}`, kind INTERNAL, with
 * `gen_ai.operation.name=execute_tool`, `gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.type` (`extension`
 * for an MCP server's tool, `function` otherwise), and Switchyard's own facts under `switchyard.`. Started by the
 * `executeCall` activity (regular or local) as the tool starts, never by workflow code: a replay runs no activity, so
 * it emits nothing twice; a retried execution is a second span with its own `switchyard.attempt`. Without a tracer,
 * nothing. The whole call's span (permission, approval wait) is the workflow's `tool.call` span, sent by a sink.
 */
export function startExecuteToolSpan(
  tracer: Tracer | undefined,
  call: {
    sessionId: string;
    turnId: string;
    callId: string;
    toolName: string;
    /** How long the call waited for its approval (`switchyard.approval.wait_ms`), when the workflow said. */
    permissionWaitMs?: number;
  },
): { end(end: ExecuteToolSpanEnd): void } {
  if (tracer === undefined) return { end: () => {} };
  const span = tracer.startSpan(`execute_tool ${call.toolName}`, {
    kind: SpanKind.INTERNAL,
    attributes: {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': call.toolName,
      'gen_ai.tool.call.id': call.callId,
      'gen_ai.tool.type': call.toolName.startsWith('mcp__') ? 'extension' : 'function',
      'switchyard.session.id': call.sessionId,
      'switchyard.turn.id': call.turnId,
      ...(call.permissionWaitMs === undefined ? {} : { 'switchyard.approval.wait_ms': call.permissionWaitMs }),
    },
  });
  let ended = false;
  return {
    end(end) {
      if (ended) return;
      ended = true;
      const attributes: Attributes = {
        'switchyard.tool.status': end.status,
        'switchyard.execution.local': end.local,
        'switchyard.attempt': end.attempt,
      };
      if (end.errorCode !== undefined) {
        attributes['switchyard.error.code'] = end.errorCode;
        attributes['error.type'] = end.errorCode;
      }
      if (end.sandboxed !== undefined) attributes['switchyard.sandboxed'] = end.sandboxed;
      span.setAttributes(attributes);
      if (end.status !== 'success')
        span.setStatus({ code: SpanStatusCode.ERROR, message: end.errorCode ?? end.status });
      span.end();
    },
  };
}
