import { Writable } from 'node:stream';
import { SpanStatusCode } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import {
  createToolCallTelemetry,
  createTracingFromEnv,
  errorCategoryOf,
  recordApprovalDecision,
  stageOf,
  type ToolCallTelemetryStart,
} from '../../src/worker/telemetry.js';

/** A tracer whose finished spans land in memory. */
function memoryTracing(): { exporter: InMemorySpanExporter; provider: BasicTracerProvider } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, provider };
}

/** A pino logger writing JSON lines to memory, and the parsed lines so far. */
function memoryLogger(): { logger: pino.Logger; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      chunks.push(chunk.toString());
      callback();
    },
  });
  const logger = pino({ level: 'info' }, stream);
  const lines = (): Record<string, unknown>[] =>
    chunks
      .join('')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { logger, lines };
}

function onlySpan(exporter: InMemorySpanExporter): ReadableSpan {
  const spans = exporter.getFinishedSpans();
  expect(spans).toHaveLength(1);
  const span = spans[0];
  if (span === undefined) throw new Error('no span');
  return span;
}

const start: ToolCallTelemetryStart = { sessionId: 's-1', turnId: 't-1', callId: 'c-1', toolName: 'Read', known: true };

/** pino numeric levels. */
const INFO = 30;
const WARN = 40;

describe('tool call spans', () => {
  it('records a successful call with every attribute and no error status', () => {
    const { exporter, provider } = memoryTracing();
    const telemetry = createToolCallTelemetry({ tracer: provider.getTracer('test') });
    telemetry.started(start).end({ status: 'success', permission: 'approved', outputBytes: 1234, truncated: true });

    const span = onlySpan(exporter);
    expect(span.name).toBe('tool.call Read');
    expect(span.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'Read',
      'gen_ai.tool.call.id': 'c-1',
      'switchyard.session.id': 's-1',
      'switchyard.turn.id': 't-1',
      'switchyard.tool.status': 'success',
      'switchyard.permission.outcome': 'approved',
      'switchyard.output.bytes': 1234,
      'switchyard.output.truncated': true,
    });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(span.ended).toBe(true);
  });

  it('records a failed handler call with its stage, category and an ERROR status', () => {
    const { exporter, provider } = memoryTracing();
    const telemetry = createToolCallTelemetry({ tracer: provider.getTracer('test') });
    telemetry.started(start).end({
      status: 'error',
      permission: 'none_needed',
      outputBytes: 42,
      truncated: false,
      stage: 'handler',
      errorCategory: 'timeout',
    });

    const span = onlySpan(exporter);
    expect(span.attributes['switchyard.tool.status']).toBe('error');
    expect(span.attributes['switchyard.permission.outcome']).toBe('none_needed');
    expect(span.attributes['switchyard.output.bytes']).toBe(42);
    expect(span.attributes['switchyard.output.truncated']).toBe(false);
    expect(span.attributes['switchyard.failure.stage']).toBe('handler');
    expect(span.attributes['switchyard.error.category']).toBe('timeout');
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'timeout' });
  });

  it('records a denied call as an ERROR with the permission stage', () => {
    const { exporter, provider } = memoryTracing();
    const telemetry = createToolCallTelemetry({ tracer: provider.getTracer('test') });
    telemetry.started(start).end({
      status: 'denied',
      permission: 'denied',
      outputBytes: 0,
      truncated: false,
      stage: 'permission',
      errorCategory: 'permission',
    });

    const span = onlySpan(exporter);
    expect(span.attributes['switchyard.permission.outcome']).toBe('denied');
    expect(span.attributes['switchyard.failure.stage']).toBe('permission');
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('names a tool the model invented `unknown` in the span', () => {
    const { exporter, provider } = memoryTracing();
    const telemetry = createToolCallTelemetry({ tracer: provider.getTracer('test') });
    telemetry.started({ ...start, toolName: 'MadeUpTool', known: false }).end({
      status: 'error',
      permission: 'none_needed',
      outputBytes: 0,
      truncated: false,
      stage: 'lookup',
      errorCategory: 'not_found',
    });

    const span = onlySpan(exporter);
    expect(span.name).toBe('tool.call unknown');
    expect(span.attributes['gen_ai.tool.name']).toBe('unknown');
    expect(JSON.stringify({ name: span.name, attributes: span.attributes })).not.toContain('MadeUpTool');
  });

  it('records only the first end when end is called twice', () => {
    const { exporter, provider } = memoryTracing();
    const { logger, lines } = memoryLogger();
    const recorder = createToolCallTelemetry({ tracer: provider.getTracer('test'), logger }).started(start);
    recorder.end({ status: 'success', permission: 'none_needed', outputBytes: 1, truncated: false });
    recorder.end({ status: 'error', permission: 'none_needed', outputBytes: 1, truncated: false, stage: 'handler' });

    expect(onlySpan(exporter).attributes['switchyard.tool.status']).toBe('success');
    expect(lines().map((line) => line.event)).toEqual(['tool.call.started', 'tool.call.completed']);
  });

  it('creates no span and does not throw without a tracer', () => {
    const { exporter } = memoryTracing();
    const telemetry = createToolCallTelemetry({});
    expect(() =>
      telemetry
        .started(start)
        .end({ status: 'error', permission: 'none_needed', outputBytes: 0, truncated: false, stage: 'handler' }),
    ).not.toThrow();
    expect(exporter.getFinishedSpans()).toHaveLength(0);
  });
});

describe('tool call log events', () => {
  it('logs tool.call.started then tool.call.completed with the fields', () => {
    const { logger, lines } = memoryLogger();
    const telemetry = createToolCallTelemetry({ logger });
    const recorder = telemetry.started(start);
    expect(lines()).toHaveLength(1);
    recorder.end({ status: 'success', permission: 'approved', outputBytes: 10, truncated: false, durationMs: 5 });

    const [started, completed] = lines();
    expect(lines()).toHaveLength(2);
    expect(started).toMatchObject({
      level: INFO,
      event: 'tool.call.started',
      msg: 'tool.call.started',
      sessionId: 's-1',
      turnId: 't-1',
      callId: 'c-1',
      toolName: 'Read',
    });
    expect(completed).toMatchObject({
      level: INFO,
      event: 'tool.call.completed',
      msg: 'tool.call.completed',
      sessionId: 's-1',
      turnId: 't-1',
      callId: 'c-1',
      toolName: 'Read',
      status: 'success',
      permission: 'approved',
      outputBytes: 10,
      truncated: false,
      durationMs: 5,
    });
    expect(completed).not.toHaveProperty('stage');
    expect(completed).not.toHaveProperty('errorCategory');
  });

  it('logs tool.call.failed at warn with the stage and category', () => {
    const { logger, lines } = memoryLogger();
    createToolCallTelemetry({ logger }).started(start).end({
      status: 'error',
      permission: 'none_needed',
      outputBytes: 3,
      truncated: false,
      stage: 'handler',
      errorCategory: 'business',
    });

    const events = lines();
    expect(events.map((line) => line.event)).toEqual(['tool.call.started', 'tool.call.failed']);
    expect(events[1]).toMatchObject({
      level: WARN,
      msg: 'tool.call.failed',
      callId: 'c-1',
      toolName: 'Read',
      status: 'error',
      stage: 'handler',
      errorCategory: 'business',
      outputBytes: 3,
    });
  });

  it('logs tool.call.not_found for an invented tool, keeping its real name in the log', () => {
    const { logger, lines } = memoryLogger();
    createToolCallTelemetry({ logger })
      .started({ ...start, toolName: 'MadeUpTool', known: false })
      .end({
        status: 'error',
        permission: 'none_needed',
        outputBytes: 0,
        truncated: false,
        stage: 'lookup',
        errorCategory: 'not_found',
      });

    const events = lines();
    expect(events.map((line) => line.event)).toEqual(['tool.call.started', 'tool.call.not_found']);
    expect(events[0]).toMatchObject({ toolName: 'MadeUpTool' });
    expect(events[1]).toMatchObject({
      level: WARN,
      msg: 'tool.call.not_found',
      toolName: 'MadeUpTool',
      stage: 'lookup',
      errorCategory: 'not_found',
    });
  });

  it('logs a known tool failing at another stage as tool.call.failed, not not_found', () => {
    const { logger, lines } = memoryLogger();
    createToolCallTelemetry({ logger }).started(start).end({
      status: 'error',
      permission: 'none_needed',
      outputBytes: 0,
      truncated: false,
      stage: 'validation',
      errorCategory: 'validation',
    });

    expect(lines().map((line) => line.event)).toEqual(['tool.call.started', 'tool.call.failed']);
  });
});

describe('errorCategoryOf', () => {
  it.each([
    ['tool_not_found', 'error', 'not_found'],
    ['input_validation', 'error', 'validation'],
    ['tool_use_error', 'error', 'business'],
    ['quota_exceeded', 'error', 'business'],
    ['permission_denied', 'denied', 'permission'],
    ['hook_blocked', 'denied', 'permission'],
    ['timeout', 'error', 'timeout'],
    ['cancelled', 'cancelled', 'cancelled'],
    ['turn_stopped', 'cancelled', 'cancelled'],
    ['interrupted', 'error', 'interrupted'],
    ['output_schema', 'error', 'output_schema'],
    ['handler_error', 'error', 'internal'],
    ['prepare_failed', 'error', 'internal'],
    [undefined, 'error', 'internal'],
    [undefined, 'cancelled', 'cancelled'],
    [undefined, 'denied', 'permission'],
    [undefined, 'success', 'none'],
  ])('maps %s (%s) to %s', (code, status, category) => {
    expect(errorCategoryOf(code, status)).toBe(category);
  });
});

describe('stageOf', () => {
  it.each([
    ['tool_not_found', 'error', 'lookup'],
    ['input_validation', 'error', 'validation'],
    ['permission_denied', 'denied', 'permission'],
    ['hook_blocked', 'denied', 'permission'],
    ['output_schema', 'error', 'serialization'],
    ['tool_use_error', 'error', 'handler'],
    ['handler_error', 'error', 'handler'],
    ['timeout', 'error', 'handler'],
    ['cancelled', 'cancelled', 'handler'],
    [undefined, 'denied', 'permission'],
    [undefined, 'success', undefined],
  ])('maps %s (%s) to %s', (code, status, stage) => {
    expect(stageOf(code, status)).toBe(stage);
  });
});

describe('createTracingFromEnv', () => {
  it('is off unless SWITCHYARD_OTEL_CONSOLE=1', async () => {
    const off = createTracingFromEnv({});
    expect(off.tracer).toBeUndefined();
    await off.shutdown();
    expect(createTracingFromEnv({ SWITCHYARD_OTEL_CONSOLE: '0' }).tracer).toBeUndefined();
  });

  it('gives a working tracer with SWITCHYARD_OTEL_CONSOLE=1', async () => {
    const on = createTracingFromEnv({ SWITCHYARD_OTEL_CONSOLE: '1' });
    expect(on.tracer).toBeDefined();
    const span = on.tracer?.startSpan('probe');
    // A recording span proves a real SDK tracer, not the API's no-op one.
    expect(span?.isRecording()).toBe(true);
    await on.shutdown();
  });
});

describe('approval decision telemetry', () => {
  it('is a pino line and a span whose attributes say who decided what, on which digest, and whether it verified', () => {
    const { exporter, provider } = memoryTracing();
    const { logger, lines } = memoryLogger();
    const at = Date.parse('2026-01-31T12:00:00Z');
    const base = {
      sessionId: 's1',
      requestId: 'r1',
      callId: 'c1',
      toolName: 'Bash',
      inputDigest: 'abc',
      decision: 'allow',
      by: 'alice',
      policyVersion: 1,
      at,
    };
    recordApprovalDecision(
      { tracer: provider.getTracer('test'), logger },
      { ...base, verified: true, outcome: 'accepted' },
    );
    recordApprovalDecision(
      { logger },
      { ...base, by: 'mallory', verified: false, outcome: 'ignored', ignoredBecause: 'unknown_approver' },
    );
    const span = onlySpan(exporter);
    expect(span.name).toBe('approval.decision');
    expect(span.attributes).toMatchObject({
      'switchyard.session.id': 's1',
      'switchyard.approval.request_id': 'r1',
      'gen_ai.tool.call.id': 'c1',
      'gen_ai.tool.name': 'Bash',
      'switchyard.approval.input_digest': 'abc',
      'switchyard.approval.decision': 'allow',
      'switchyard.approval.by': 'alice',
      'switchyard.approval.verified': true,
      'switchyard.approval.outcome': 'accepted',
      'switchyard.approval.policy_version': 1,
    });
    expect(lines()).toMatchObject([
      {
        level: 30,
        event: 'approval.decision',
        by: 'alice',
        verified: true,
        outcome: 'accepted',
        at: '2026-01-31T12:00:00.000Z',
      },
      {
        level: 40,
        event: 'approval.decision',
        by: 'mallory',
        verified: false,
        outcome: 'ignored',
        ignoredBecause: 'unknown_approver',
      },
    ]);
  });
});
