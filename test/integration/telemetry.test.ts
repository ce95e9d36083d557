import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
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

  it('records a span per tool call with the seed attributes, naming invented tools unknown', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const tracer = provider.getTracer('switchyard-test');
    await harness.withWorker(
      async () => {
        const session = await harness.startSession({ cwd, rules: { deny: ['Edit'] } });
        await session.executeTurn({
          turnId: 't',
          calls: [
            { id: 'ok', name: 'Read', input: { file_path: 'a.txt' } },
            { id: 'ghost', name: 'Hallucinated', input: {} },
            { id: 'no', name: 'Edit', input: { file_path: 'x.txt' } },
            { id: 'slow', name: 'Slow', input: {} },
          ],
        });
      },
      { tracer },
    );
    await provider.forceFlush();
    const spans = new Map(exporter.getFinishedSpans().map((span) => [span.attributes['gen_ai.tool.call.id'], span]));
    expect(spans.get('ok')?.name).toBe('tool.call Read');
    expect(spans.get('ok')?.attributes).toMatchObject({ 'switchyard.tool.status': 'success', 'switchyard.permission.outcome': 'none_needed', 'switchyard.output.truncated': false });
    expect(spans.get('ok')?.attributes['switchyard.output.bytes']).toBeGreaterThan(0);
    expect(spans.get('ghost')?.name).toBe('tool.call unknown');
    expect(spans.get('ghost')?.attributes).toMatchObject({ 'gen_ai.tool.name': 'unknown', 'switchyard.failure.stage': 'lookup', 'switchyard.error.category': 'not_found' });
    expect(spans.get('no')?.attributes).toMatchObject({ 'switchyard.permission.outcome': 'denied', 'switchyard.failure.stage': 'permission' });
    expect(spans.get('slow')?.attributes).toMatchObject({ 'switchyard.failure.stage': 'handler', 'switchyard.error.category': 'timeout' });
    // Temporal's side: the activity interceptor's spans, one per executed call.
    const activitySpans = exporter.getFinishedSpans().filter((span) => span.name === 'RunActivity:executeCall');
    expect(activitySpans).toHaveLength(2);
  });
});
