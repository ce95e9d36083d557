import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SwitchyardClient } from '../../src/client/switchyard-client.js';
import { createHarness, scratchDir, uniqueName } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { historyText } from '../support/history-text.js';
import { installTraceContext } from '../support/trace-context.js';
import { testTools } from '../support/test-tools.js';

describe('telemetry of a real turn', () => {
  let harness: Harness;
  let cwd: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    await writeFile(path.join(cwd, 'a.txt'), 'a\n');
    harness = await createHarness({ tools: testTools(), defaultCwd: cwd });
  });
  afterAll(async () => harness.close());

  it('records a span per tool call with the documented attributes, naming invented tools unknown', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const tracer = provider.getTracer('switchyard-test');
    await harness.withWorker(
      async () => {
        const session = await harness.startSession({ cwd, rules: { deny: ['FakeEdit'] } });
        await session.executeTurn({
          turnId: 't',
          calls: [
            { id: 'ok', name: 'Read', input: { file_path: 'a.txt' } },
            { id: 'ghost', name: 'Hallucinated', input: {} },
            { id: 'no', name: 'FakeEdit', input: { file_path: 'x.txt' } },
            { id: 'slow', name: 'Slow', input: {} },
          ],
        });
      },
      { tracer },
    );
    await provider.forceFlush();
    const spans = new Map(exporter.getFinishedSpans().map((span) => [span.attributes['gen_ai.tool.call.id'], span]));
    expect(spans.get('ok')?.name).toBe('tool.call Read');
    expect(spans.get('ok')?.attributes).toMatchObject({
      'switchyard.tool.status': 'success',
      'switchyard.permission.outcome': 'none_needed',
      'switchyard.output.truncated': false,
    });
    expect(spans.get('ok')?.attributes['switchyard.output.bytes']).toBeGreaterThan(0);
    expect(spans.get('ghost')?.name).toBe('tool.call unknown');
    expect(spans.get('ghost')?.attributes).toMatchObject({
      'gen_ai.tool.name': 'unknown',
      'switchyard.failure.stage': 'lookup',
      'switchyard.error.category': 'not_found',
    });
    expect(spans.get('no')?.attributes).toMatchObject({
      'switchyard.permission.outcome': 'denied',
      'switchyard.failure.stage': 'permission',
    });
    expect(spans.get('slow')?.attributes).toMatchObject({
      'switchyard.failure.stage': 'handler',
      'switchyard.error.category': 'timeout',
    });
    // Temporal's side: the activity interceptor's spans. The Read, alone in the first group and allowed, ran inside
    // the turn's Plan (one `planCalls` span); the slow call ran as an activity of its own.
    const activitySpans = (name: string) => exporter.getFinishedSpans().filter((span) => span.name === name);
    expect(activitySpans('RunActivity:executeCall')).toHaveLength(1);
    expect(activitySpans('RunActivity:planCalls')).toHaveLength(1);
  });

  it("brings each activation's sink calls with its completion: no second trip to the workflow thread", async () => {
    // The SDK's thread client (not its documented API; the SDK's version is pinned), counted by request type.
    const threadClient = createRequire(import.meta.url)('@temporalio/worker/lib/workflow/threaded-vm')
      .WorkerThreadClient.prototype as { send(input: { type: string }): Promise<unknown> };
    const send = threadClient.send;
    const requests = new Map<string, number>();
    threadClient.send = function (this: unknown, input) {
      requests.set(input.type, (requests.get(input.type) ?? 0) + 1);
      return send.call(this, input);
    };
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    try {
      await harness.withWorker(
        async () => {
          const session = await harness.startSession({ cwd });
          await session.executeTurn({
            turnId: 't',
            calls: [{ id: 'ok', name: 'Read', input: { file_path: 'a.txt' } }],
          });
        },
        { tracer: provider.getTracer('switchyard-test') },
      );
    } finally {
      threadClient.send = send;
    }
    await provider.forceFlush();
    // The tool-call span travels through a sink call, so it arrived; and no activation asked for sink calls apart.
    expect(exporter.getFinishedSpans().map((span) => span.name)).toContain('tool.call Read');
    expect(requests.get('activate-workflow')).toBeGreaterThanOrEqual(2);
    expect(requests.get('extract-sink-calls') ?? 0).toBe(0);
  });

  describe('one traced turn, from a client that carries the trace context', () => {
    const turnId = 'traced-turn';
    let spans: ReadableSpan[] = [];
    let history = '';
    let uninstallTraceContext = (): void => {};
    beforeAll(async () => {
      uninstallTraceContext = installTraceContext();
      await writeFile(path.join(cwd, 'traced.txt'), 'traced file content\n');
      const exporter = new InMemorySpanExporter();
      const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
      const tracer = provider.getTracer('switchyard-test');
      // As docs/CONCEPTS.md's Telemetry section says: a tracer on the worker and on the client.
      const client = await SwitchyardClient.connect({
        address: harness.address,
        namespace: harness.namespace,
        taskQueue: harness.taskQueue,
        tracer,
      });
      const sessionId = uniqueName('traced');
      try {
        await harness.withWorker(
          async () => {
            await client.startSession(sessionId, { cwd });
            await client.session(sessionId).executeTurn({
              turnId,
              calls: [
                { id: 'read-a', name: 'Read', input: { file_path: 'traced.txt' } },
                { id: 'read-b', name: 'Read', input: { file_path: 'traced.txt', limit: 1 } },
              ],
            });
          },
          { tracer },
        );
      } finally {
        await client.client.connection.close();
      }
      await provider.forceFlush();
      spans = exporter.getFinishedSpans();
      history = historyText(await harness.client.session(sessionId).workflow.fetchHistory());
    });
    afterAll(() => uninstallTraceContext());
    // The workflow's whole-call spans (`tool.call …`); the activity's `execute_tool …` spans carry the same ids.
    const toolSpans = () =>
      spans.filter((span) => span.name.startsWith('tool.call ') && span.attributes['switchyard.turn.id'] === turnId);
    const activitySpans = () => spans.filter((span) => span.name === 'RunActivity:executeCall');
    const updateSpan = () => spans.find((span) => span.name === 'StartWorkflowUpdate:executeTurn');

    it("records the client's update span, the activity span of the Plan that ran both Reads and a tool-call span per call", () => {
      expect(
        toolSpans()
          .map((span) => span.attributes['gen_ai.tool.call.id'])
          .sort(),
      ).toEqual(['read-a', 'read-b']);
      // Both Reads are one allowed read-only group: the turn's Plan ran them, so no executeCall activity ran.
      expect(activitySpans()).toHaveLength(0);
      expect(spans.filter((span) => span.name === 'RunActivity:planCalls')).toHaveLength(1);
      expect(updateSpan(), spans.map((span) => span.name).join(', ')).toBeDefined();
    });

    it("keeps telemetry out of the session's history (it travels through a sink)", () => {
      // Payloads are decoded, so the search finds what history holds: the turn, the Read result, and the client's
      // trace header (the client does propagate the trace).
      expect(history).toContain(turnId);
      expect(history).toContain('traced file content');
      expect(history).toContain(`00-${updateSpan()?.spanContext().traceId}-`);
      for (const telemetryOnly of [
        'execute_tool',
        'gen_ai.',
        'switchyard.tool.status',
        'none_needed',
        'outputBytes',
        'tool.call Read',
      ]) {
        expect(history, telemetryOnly).not.toContain(telemetryOnly);
      }
      for (const span of toolSpans())
        expect(history, `tool-call span id ${span.spanContext().spanId}`).not.toContain(span.spanContext().spanId);
    });

    // The spans of one turn are separate traces (docs/CONCEPTS.md, Limits: the workflow does not carry the client's
    // trace header to its activities); what ties them is the session, turn and call attributes the docs name.
    it('ties every tool-call span of the turn to one session and turn by its attributes', () => {
      const sessions = new Set(toolSpans().map((span) => span.attributes['switchyard.session.id']));
      expect(sessions.size).toBe(1);
      expect([...sessions][0]).toEqual(expect.stringContaining('traced'));
      expect(toolSpans().map((span) => span.attributes['switchyard.turn.id'])).toEqual([turnId, turnId]);
    });
  });
});
