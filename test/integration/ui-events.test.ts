import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listSessions } from '../../src/cli/session-listing.js';
import { FileArtifactStore } from '../../src/artifacts/file-artifact-store.js';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { SessionEvent } from '../../src/contracts/events.js';
import { EVENT_LIMITS } from '../../src/contracts/defaults.js';
import type { ToolDisplay } from '../../src/contracts/tool-result.js';
import { startConsole } from '../../src/console/console-server.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { connectMcpTools, mcpServersFromConfig } from '../../src/tools/mcp/mcp.js';
import type { McpTool } from '../../src/tools/mcp/mcp.js';
import { createHarness, scratchDir, uniqueName } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { launchTestBrowser } from '../support/test-browser.js';
import { waitFor } from '../support/wait-for.js';

/** A 16×16 red PNG (a real image: Read detects it by its bytes). */
const RED_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAFklEQVR4nGO4YGBAEmIY1TCqYfhqAAA+XjAQexaBIwAAAABJRU5ErkJggg==',
  'base64',
);

type ResultEvent = Extract<SessionEvent, { type: 'ToolCallResult' }>;
type ProgressEvent = Extract<SessionEvent, { type: 'ToolCallProgress' }>;

const resultOf = (events: SessionEvent[], callId: string): ResultEvent | undefined =>
  events.find((event): event is ResultEvent => event.type === 'ToolCallResult' && event.callId === callId);
const displayOf = (events: SessionEvent[], callId: string): ToolDisplay | undefined =>
  resultOf(events, callId)?.display;

/** v1.3: an event stream a UI can draw every call from, through real sessions and the real built-in tools. */
describe('events a UI can draw from (real tools, real Temporal server)', () => {
  let harness: Harness;
  let mcp: { tools: McpTool[]; close(): Promise<void> };
  let cwd: string;
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  let worker: Awaited<ReturnType<Harness['startWorker']>> | undefined;
  let session: SessionHandle;
  let events: SessionEvent[] = [];
  let taskId = '';

  beforeAll(async () => {
    cwd = await scratchDir();
    await mkdir(path.join(cwd, 'src'));
    await writeFile(path.join(cwd, 'red.png'), RED_PNG);
    for (const name of ['a', 'b', 'c', 'd', 'e', 'f', 'g'])
      await writeFile(path.join(cwd, 'src', `${name}.ts`), `export const ${name} = 'needle ${name}';\n`);
    mcp = await connectMcpTools(
      mcpServersFromConfig({
        mcpServers: {
          notes: {
            command: process.execPath,
            args: ['--import', 'tsx', path.resolve('test/support/mcp-test-server.ts')],
            cwd: path.resolve('.'),
          },
        },
      }),
    );
    harness = await createHarness({ tools: [...builtinTools(), ...mcp.tools], defaultCwd: cwd });
    worker = await harness.startWorker({ tracer: provider.getTracer('switchyard-test') });
    session = await harness.client.startSession(uniqueName('ui-events'), {
      cwd,
      permissionMode: 'bypassPermissions',
      label: 'Draw every row',
    });
    const backgroundTask = { command: 'echo started-task; sleep 0.2; echo task-done', run_in_background: true };
    const tickingLoop = 'for i in $(seq 1 10); do echo "tick $i"; sleep 0.3; done; touch looped';
    await session.executeTurn({
      turnId: 'draw',
      calls: [
        { id: 'glob', name: 'Glob', input: { pattern: 'src/*.ts' } },
        { id: 'grep', name: 'Grep', input: { pattern: 'needle', output_mode: 'content' } },
        { id: 'image', name: 'Read', input: { file_path: 'red.png' } },
        { id: 'mcp', name: 'mcp__notes__media', input: {} },
        { id: 'bg', name: 'Bash', input: backgroundTask },
      ],
    });
    taskId =
      (await session.events()).events.flatMap((event) =>
        event.type === 'BackgroundTaskStarted' ? [event.taskId] : [],
      )[0] ?? '';
    await session.executeTurn({
      turnId: 'watch',
      calls: [
        { id: 'out', name: 'TaskOutput', input: { task_id: taskId, block: true, timeout: 10_000 } },
        // Live output: a loop printing every 0.3 s for about 3 s, as a regular activity (Bash is not read-only here).
        { id: 'loop', name: 'Bash', input: { command: tickingLoop } },
      ],
    });
    events = (await session.events()).events;
  }, 120_000);

  afterAll(async () => {
    await session?.workflow.terminate('ui-events test done').catch(() => undefined);
    worker?.worker.shutdown();
    await worker?.done;
    await harness?.close();
    await mcp?.close();
  });

  it('ToolCallResult carries the display, queuedMs and a bounded preview of the model text', () => {
    const glob = resultOf(events, 'glob');
    expect(glob?.queuedMs).toBeTypeOf('number');
    expect(glob?.preview).toContain('src/');
    expect(glob?.previewTruncated).toBe(false);
    for (const event of events)
      if (event.type === 'ToolCallResult')
        expect(event.preview?.length ?? 0).toBeLessThanOrEqual(EVENT_LIMITS.resultPreviewChars);
  });

  it('Glob and Grep give a search display: pattern, counts and the first matches', () => {
    expect(displayOf(events, 'glob')).toMatchObject({
      type: 'search',
      tool: 'Glob',
      // The pattern as Glob runs it, below the directory it names (`path: src`).
      pattern: '*.ts',
      files: 7,
      truncated: true,
    });
    const grep = displayOf(events, 'grep');
    expect(grep).toMatchObject({
      type: 'search',
      tool: 'Grep',
      pattern: 'needle',
      files: 7,
      matches: 7,
      truncated: true,
    });
    expect(grep?.type === 'search' ? grep.firstMatches : []).toHaveLength(5);
    expect(grep?.type === 'search' ? grep.firstMatches[0] : '').toMatch(/^src\/[a-g]\.ts:export const/);
  });

  it('Read of an image gives an image display with its media type, size and artifact', () => {
    expect(displayOf(events, 'image')).toMatchObject({
      type: 'image',
      mediaType: 'image/png',
      bytes: RED_PNG.byteLength,
      filePath: 'red.png',
      artifact: expect.stringMatching(/^switchyard-artifact:\/\//),
    });
  });

  it('an MCP call gives an mcp_tool display: server, tool and content kinds', () => {
    expect(displayOf(events, 'mcp')).toEqual({
      type: 'mcp_tool',
      server: 'notes',
      tool: 'media',
      contentKinds: ['image', 'audio', 'resource', 'resource_link'],
      isError: false,
    });
  });

  it('a background task gives background_task displays: started, then finished with its tail', () => {
    expect(taskId).not.toBe('');
    expect(displayOf(events, 'bg')).toMatchObject({ type: 'background_task', phase: 'started', taskId });
    const out = displayOf(events, 'out');
    expect(out).toMatchObject({ type: 'background_task', phase: 'finished', taskId, status: 'exited', exitCode: 0 });
    expect(out?.type === 'background_task' ? out.tail : '').toContain('task-done');
  });

  it('a long Bash call sends coalesced ToolCallProgress events with its live output', () => {
    const progress = events.filter(
      (event): event is ProgressEvent => event.type === 'ToolCallProgress' && event.callId === 'loop',
    );
    // About 3 s at most one a second, none in the first second: between 1 and 4.
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress.length).toBeLessThanOrEqual(4);
    expect(progress.some((event) => event.output?.includes('tick') === true)).toBe(true);
    for (const event of progress)
      expect(event.output?.length ?? 0).toBeLessThanOrEqual(EVENT_LIMITS.progressOutputChars);
    // Each comes before the call's result.
    const resultSeq = resultOf(events, 'loop')?.seq ?? -1;
    expect(progress.every((event) => event.seq < resultSeq)).toBe(true);
  });

  it('a progress signal from outside for a call that is not running adds nothing', async () => {
    await session.workflow.signal('toolCallProgress', {
      turnId: 'watch',
      callId: 'loop',
      output: 'forged',
      elapsedMs: 1,
    });
    await session.workflow.signal('toolCallProgress', { turnId: 'nope', callId: 'x', output: 'forged', elapsedMs: 1 });
    const after = (await session.events()).events;
    expect(after.filter((event) => event.type === 'ToolCallProgress' && event.output === 'forged')).toHaveLength(0);
  });

  it('records an execute_tool span per execution with the GenAI attributes, from the activity', async () => {
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans().filter((span) => span.name.startsWith('execute_tool '));
    const byCall = new Map(spans.map((span) => [span.attributes['gen_ai.tool.call.id'], span]));
    expect(byCall.get('loop')?.name).toBe('execute_tool Bash');
    expect(byCall.get('loop')?.kind).toBe(0); // SpanKind.INTERNAL
    expect(byCall.get('loop')?.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'Bash',
      'gen_ai.tool.type': 'function',
      'switchyard.tool.status': 'success',
      'switchyard.session.id': session.sessionId,
      'switchyard.turn.id': 'watch',
    });
    expect(typeof byCall.get('loop')?.attributes['switchyard.sandboxed']).toBe('boolean');
    expect(byCall.get('mcp')?.attributes).toMatchObject({
      'gen_ai.tool.name': 'mcp__notes__media',
      'gen_ai.tool.type': 'extension',
    });
    // The workflow's whole-call span carries the approval wait and the sandbox flag beside it.
    const whole = exporter
      .getFinishedSpans()
      .find((span) => span.name === 'tool.call Bash' && span.attributes['gen_ai.tool.call.id'] === 'loop');
    expect(typeof whole?.attributes['switchyard.approval.wait_ms']).toBe('number');
    expect(typeof whole?.attributes['switchyard.sandboxed']).toBe('boolean');
    // One span per execution: a call that ran once has one.
    expect(spans.filter((span) => span.attributes['gen_ai.tool.call.id'] === 'loop')).toHaveLength(1);
    // Allowed without asking (bypassPermissions): the execution's span says it waited for no approval.
    expect(byCall.get('loop')?.attributes['switchyard.approval.wait_ms']).toBe(0);
  });

  it("carries the call's approval wait on the execute_tool span of an approved call", async () => {
    const asking = await harness.client.startSession(uniqueName('ui-events-approval'), { cwd });
    const turn = asking.executeTurn({
      turnId: 'ask',
      calls: [{ id: 'approved', name: 'Bash', input: { command: 'echo approved > approved.txt' } }],
    });
    const [request] = await waitFor(
      () => asking.pendingApprovals(),
      (list) => list.length === 1,
      { what: 'the approval request' },
    );
    if (request === undefined) throw new Error('no approval request');
    await asking.approve({ requestId: request.requestId, decision: 'allow', inputDigest: request.inputDigest });
    const result = await turn;
    expect(result.results[0]?.status).toBe('success');
    await provider.forceFlush();
    const span = exporter
      .getFinishedSpans()
      .find((entry) => entry.name === 'execute_tool Bash' && entry.attributes['gen_ai.tool.call.id'] === 'approved');
    const waitMs = span?.attributes['switchyard.approval.wait_ms'];
    expect(typeof waitMs).toBe('number');
    expect(waitMs as number).toBeGreaterThan(0);
    // The same wait the workflow measured for the call's whole span.
    const whole = exporter
      .getFinishedSpans()
      .find((entry) => entry.name === 'tool.call Bash' && entry.attributes['gen_ai.tool.call.id'] === 'approved');
    expect(waitMs).toBe(whole?.attributes['switchyard.approval.wait_ms']);
  });

  it('shows the label in `sessions`, in the Web UI summary and in the current details', async () => {
    const listed = await listSessions(harness.client, { limit: 100 });
    expect(listed.find((entry) => entry.sessionId === session.sessionId)?.label).toBe('Draw every row');
    const described = await session.workflow.describe();
    expect(await described.staticSummary()).toContain('Draw every row');
    const metadata = (await session.workflow.query('__temporal_workflow_metadata')) as {
      currentDetails?: string;
    };
    expect(metadata.currentDetails).toContain('Draw every row');
  });

  it('refuses a label with a line break or over the limit, before the session starts', async () => {
    await expect(harness.client.startSession(uniqueName('bad-label'), { label: 'two\nlines' })).rejects.toThrow(
      /label/,
    );
    await expect(harness.client.startSession(uniqueName('bad-label'), { label: 'x'.repeat(500) })).rejects.toThrow(
      /label/,
    );
  });

  describe('the console draws the rows from the event stream alone (real browser)', () => {
    let browser: Browser;
    let console_: Awaited<ReturnType<typeof startConsole>>;
    beforeAll(async () => {
      console_ = await startConsole({
        client: harness.client.client,
        port: 0,
        token: 'test-token-ui-events-0123456789',
        identity: 'test-operator',
        artifacts: new FileArtifactStore(harness.dataDir),
        streamRefreshMs: 600_000,
      });
      browser = await launchTestBrowser();
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
      await console_?.close();
    });

    it('shows an MCP call, a background task with its output, an image and live output of a call', async () => {
      const context = await browser.newContext({ viewport: { width: 1180, height: 900 } });
      const page = await context.newPage();
      await page.goto(console_.loginUrl);
      await page.goto(new URL('/', console_.url).href);
      await expect.poll(() => page.locator('.session-label').first().textContent()).toBe('Draw every row');
      await page.goto(new URL(`/session/${encodeURIComponent(session.sessionId)}?turn=draw`, console_.url).href);
      const calls = page.locator('#calls');
      await expect.poll(() => calls.locator('[data-call="mcp"] .mcp-server').textContent()).toBe('notes');
      expect(await calls.locator('[data-call="mcp"] .mcp-tool').textContent()).toBe('media');
      expect(await calls.locator('[data-call="mcp"] .chip').allTextContents()).toEqual([
        'image',
        'audio',
        'resource',
        'resource_link',
      ]);
      expect(await calls.locator('[data-call="bg"] .task-phase').textContent()).toBe('started');
      const image = calls.locator('[data-call="image"] img.result-image');
      await expect
        .poll(() => image.evaluate((element) => (element as unknown as { naturalWidth: number }).naturalWidth))
        .toBe(16);
      expect(await calls.locator('[data-call="grep"]').getAttribute('data-display')).toBe('search');
      expect(await page.locator('h1 .session-label').textContent()).toBe('Draw every row');
      const screenshots = path.resolve('docs/images');
      await mkdir(screenshots, { recursive: true });
      await page.screenshot({ path: path.join(screenshots, 'console-events.png'), fullPage: true });
      await page.goto(new URL(`/session/${encodeURIComponent(session.sessionId)}?turn=watch`, console_.url).href);
      await expect.poll(() => page.locator('#calls [data-call="out"] .task-tail').textContent()).toContain('task-done');
      expect(await page.locator('#calls [data-call="out"] .task-phase').textContent()).toBe('finished');
      await page.screenshot({ path: path.join(screenshots, 'console-background-task.png'), fullPage: true });
      await context.close();
    });
  });
});
