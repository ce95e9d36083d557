import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { DISPLAY_LIMITS, EVENT_LIMITS, SESSION_LABEL_MAX_CHARS } from '../../src/contracts/defaults.js';
import { eventDisplay, resultPreview } from '../../src/contracts/event-display.js';
import { sessionOptionsSchema } from '../../src/contracts/schemas.js';
import { callRowsBlock, callRowsOf, displayBlock } from '../../src/console/call-rows.js';
import { boundedDisplay, searchDisplay } from '../../src/tools/support/displays.js';
import { ProgressLedger } from '../../src/workflows/call-progress.js';
import { renderCurrentDetails } from '../../src/workflows/details.js';
import { EventLog } from '../../src/workflows/event-log.js';
import { startExecuteToolSpan } from '../../src/activities/execute-tool-span.js';
import type { SessionEvent } from '../../src/contracts/events.js';
import type { ToolDisplay } from '../../src/contracts/tool-result.js';

describe('events a UI draws from: bounds', () => {
  it('previews at most EVENT_LIMITS.resultPreviewChars of the model text, never splitting a surrogate pair', () => {
    expect(resultPreview('short')).toEqual({ preview: 'short', previewTruncated: false });
    const long = `${'a'.repeat(EVENT_LIMITS.resultPreviewChars - 1)}😀tail`;
    const { preview, previewTruncated } = resultPreview(long);
    expect(previewTruncated).toBe(true);
    expect(preview.length).toBeLessThanOrEqual(EVENT_LIMITS.resultPreviewChars);
    expect(preview.endsWith('\ud83d')).toBe(false);
  });

  it("cuts a result's Bash output and diff for its event, and says so", () => {
    const bash = eventDisplay({
      type: 'bash_output',
      stdout: 'x'.repeat(150_000),
      stderr: 'e'.repeat(10),
      exitCode: 0,
      truncated: false,
    });
    expect(bash.type === 'bash_output' && bash.stdout.length).toBe(1_000);
    expect(bash.type === 'bash_output' && bash.truncated).toBe(true);
    const diff = eventDisplay({
      type: 'file_diff',
      filePath: 'a.txt',
      truncated: false,
      hunks: [
        {
          oldStart: 1,
          oldLines: 100,
          newStart: 1,
          newLines: 100,
          lines: Array.from({ length: 100 }, () => '+'.repeat(1_000)),
        },
      ],
    });
    expect(diff.type === 'file_diff' && diff.hunks[0]?.lines.length).toBe(40);
    expect(diff.type === 'file_diff' && diff.truncated).toBe(true);
    expect(JSON.stringify(diff).length).toBeLessThan(10_000);
  });

  it("bounds a custom tool's own v1.3 display in every free-text field", () => {
    const huge = 'h'.repeat(100_000);
    const bounded = [
      boundedDisplay({
        type: 'mcp_tool',
        server: huge,
        tool: huge,
        contentKinds: Array.from({ length: 1_000 }, () => huge),
        isError: false,
      }),
      boundedDisplay({
        type: 'background_task',
        phase: 'output',
        taskId: huge,
        command: huge,
        status: huge,
        tail: huge,
      }),
      boundedDisplay({ type: 'image', mediaType: 'image/png', bytes: 1, artifact: huge, filePath: huge }),
      boundedDisplay({ type: 'web_fetch', url: huge, host: huge, status: 200, bytes: 1, contentType: huge }),
      boundedDisplay({
        type: 'search',
        tool: 'Grep',
        pattern: huge,
        files: 1,
        firstMatches: Array.from({ length: 1_000 }, () => huge),
        truncated: false,
      }),
    ];
    for (const display of bounded) expect(JSON.stringify(display).length).toBeLessThan(8_000);
    const search = searchDisplay({ tool: 'Glob', pattern: '*', files: 9, results: ['1', '2', '3', '4', '5', '6'] });
    expect(search.firstMatches).toHaveLength(DISPLAY_LIMITS.searchFirstMatches);
    expect(search.truncated).toBe(true);
  });

  it('carries events over continue-as-new without their display, preview or progress output', () => {
    const log = new EventLog();
    const at = new Date(0);
    log.append(
      {
        type: 'ToolCallResult',
        turnId: 't',
        callId: 'c',
        toolName: 'Read',
        status: 'success',
        totalMs: 1,
        permissionWaitMs: 0,
        originalBytes: 1,
        modelBytes: 1,
        truncated: false,
        queuedMs: 0,
        display: { type: 'text', text: 'x' },
        preview: 'x',
        previewTruncated: false,
      },
      at,
    );
    log.append({ type: 'ToolCallProgress', turnId: 't', callId: 'c', output: 'tick', elapsedMs: 1_000 }, at);
    const carried = log.carry().events;
    expect(carried[0]).not.toHaveProperty('display');
    expect(carried[0]).not.toHaveProperty('preview');
    expect(carried[0]).toHaveProperty('queuedMs', 0);
    expect(carried[1]).not.toHaveProperty('output');
    // The live log keeps them.
    expect(log.read().events[0]).toHaveProperty('preview', 'x');
  });
});

describe('ToolCallProgress from progress signals', () => {
  const running = { turnId: 't', executing: (callId: string) => callId === 'c' };

  it('takes at most EVENT_LIMITS.progressEventsPerCall per call, with output cut to its tail', () => {
    const ledger = new ProgressLedger();
    const accepted = Array.from({ length: EVENT_LIMITS.progressEventsPerCall + 5 }, () =>
      ledger.accept({ turnId: 't', callId: 'c', output: 'o'.repeat(10_000), elapsedMs: 1_500 }, running),
    ).filter((event) => event !== undefined);
    expect(accepted).toHaveLength(EVENT_LIMITS.progressEventsPerCall);
    const first = accepted[0];
    expect(first?.type === 'ToolCallProgress' && first.output?.length).toBe(EVENT_LIMITS.progressOutputChars);
  });

  it('drops a signal for a call that is not executing, for another turn, or malformed', () => {
    const ledger = new ProgressLedger();
    expect(ledger.accept({ turnId: 't', callId: 'other', elapsedMs: 1 }, running)).toBeUndefined();
    expect(ledger.accept({ turnId: 'old', callId: 'c', elapsedMs: 1 }, running)).toBeUndefined();
    expect(ledger.accept(null as never, running)).toBeUndefined();
    expect(ledger.accept({ callId: 'c' } as never, running)).toBeUndefined();
    const odd = ledger.accept({ turnId: 't', callId: 'c', elapsedMs: Number.NaN }, running);
    expect(odd).toMatchObject({ type: 'ToolCallProgress', elapsedMs: 0 });
  });
});

describe('the execute_tool span (GenAI semantic conventions)', () => {
  it('names the span execute_tool {tool}, INTERNAL, with gen_ai.* and switchyard.* attributes', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const tracer = provider.getTracer('test');
    startExecuteToolSpan(tracer, {
      sessionId: 's',
      turnId: 't',
      callId: 'c1',
      toolName: 'Bash',
      permissionWaitMs: 1_250,
    }).end({
      status: 'error',
      errorCode: 'timeout',
      sandboxed: true,
      local: false,
      attempt: 1,
    });
    startExecuteToolSpan(tracer, { sessionId: 's', turnId: 't', callId: 'c2', toolName: 'mcp__notes__read' }).end({
      status: 'success',
      local: true,
      attempt: 1,
    });
    await provider.forceFlush();
    const [bash, mcp] = exporter.getFinishedSpans();
    expect(bash?.name).toBe('execute_tool Bash');
    expect(bash?.kind).toBe(SpanKind.INTERNAL);
    expect(bash?.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'Bash',
      'gen_ai.tool.call.id': 'c1',
      'gen_ai.tool.type': 'function',
      'switchyard.tool.status': 'error',
      'switchyard.error.code': 'timeout',
      'switchyard.sandboxed': true,
      'switchyard.approval.wait_ms': 1_250,
    });
    expect(bash?.status.code).toBe(SpanStatusCode.ERROR);
    expect(mcp?.attributes).toMatchObject({ 'gen_ai.tool.type': 'extension', 'switchyard.execution.local': true });
    expect(mcp?.status.code).toBe(SpanStatusCode.UNSET);
    // No wait given (an input recorded before the field existed): no attribute rather than a made-up 0.
    expect(mcp?.attributes['switchyard.approval.wait_ms']).toBeUndefined();
  });

  it('does nothing without a tracer', () => {
    expect(() =>
      startExecuteToolSpan(undefined, { sessionId: 's', turnId: 't', callId: 'c', toolName: 'Read' }).end({
        status: 'success',
        local: true,
        attempt: 1,
      }),
    ).not.toThrow();
  });
});

describe('session label', () => {
  it('takes a one-line label within the limit and refuses others', () => {
    expect(sessionOptionsSchema.safeParse({ label: 'Fix the login bug' }).success).toBe(true);
    expect(sessionOptionsSchema.safeParse({ label: '' }).success).toBe(false);
    expect(sessionOptionsSchema.safeParse({ label: 'a\nb' }).success).toBe(false);
    expect(sessionOptionsSchema.safeParse({ label: 'x'.repeat(SESSION_LABEL_MAX_CHARS + 1) }).success).toBe(false);
  });

  it('shows the label first in the Web UI details, as text (markdown in it does nothing)', () => {
    const details = renderCurrentDetails({
      identity: { sessionId: 's', cwd: '/w', permissionMode: 'default', label: 'Fix [it](http://x) *now*' },
      view: { runningTurnId: undefined, queuedTurns: 0, completedTurns: 0, pending: [] },
      now: new Date(0),
    });
    expect(details.split('\n')[0]).toBe('**Fix \\[it\\](http://x) \\*now\\***');
  });
});

describe('console rows from events alone', () => {
  it('draws every display kind, escaping what tools wrote', () => {
    const at = new Date(0).toISOString();
    const base = { at, turnId: 't' };
    const events: SessionEvent[] = [
      { ...base, seq: 0, type: 'ToolCallScheduled', callId: 'm', toolName: 'mcp__s__t', groupIndex: 0 },
      { ...base, seq: 1, type: 'ToolCallProgress', callId: 'm', elapsedMs: 1_200, output: '<b>live</b>' },
      { ...base, seq: 2, type: 'ToolCallScheduled', callId: 'w', toolName: 'WebFetch', groupIndex: 1 },
      {
        ...base,
        seq: 3,
        type: 'ToolCallResult',
        callId: 'w',
        toolName: 'WebFetch',
        status: 'success',
        totalMs: 5,
        permissionWaitMs: 0,
        originalBytes: 1,
        modelBytes: 1,
        truncated: false,
        queuedMs: 2,
        display: { type: 'web_fetch', url: 'https://example.com/<x>', host: 'example.com', status: 200, bytes: 10 },
      },
    ];
    const rows = callRowsOf(events, 't');
    expect(rows.map((row) => row.callId)).toEqual(['m', 'w']);
    const page = callRowsBlock(rows).html;
    expect(page).toContain('&lt;b&gt;live&lt;/b&gt;');
    expect(page).toContain('example.com/&lt;x&gt;');
    expect(page).not.toContain('<b>live</b>');
    const displays: ToolDisplay[] = [
      { type: 'text', text: 't' },
      { type: 'bash_output', stdout: 'o', stderr: 'e', exitCode: 1, truncated: false },
      { type: 'file_diff', filePath: 'f', hunks: [], truncated: false },
      { type: 'mcp_tool', server: 's', tool: 't', contentKinds: ['text'], isError: false },
      { type: 'background_task', phase: 'finished', taskId: 'bg_1', status: 'exited', exitCode: 0, tail: 'done' },
      { type: 'image', mediaType: 'image/png', bytes: 3, artifact: 'switchyard-artifact://s/i' },
      { type: 'web_fetch', url: 'u', host: 'h', status: 404, bytes: 0 },
      { type: 'search', tool: 'Grep', pattern: 'p', files: 0, firstMatches: [], truncated: false },
    ];
    for (const display of displays) expect(displayBlock(display).html.length).toBeGreaterThan(0);
  });
});
