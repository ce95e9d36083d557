import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathSegment } from '../../src/artifacts/file-artifact-store.js';
import { toAnthropicToolResultsWithImages, toOpenAIMessagesWithImages } from 'temporal-switchyard';
import { LIMITS } from '../../src/contracts/defaults.js';
import type { ContentBlock, ToolResult } from '../../src/contracts/tool-result.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { connectMcpTools, mcpServersFromConfig } from '../../src/tools/mcp/mcp.js';
import type { McpTool } from '../../src/tools/mcp/mcp.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { historyText } from '../support/history-text.js';
import { noisePng } from '../support/png.js';

type ImageContentBlock = Extract<ContentBlock, { type: 'image' }>;

function imageOf(result: ToolResult | undefined): ImageContentBlock | undefined {
  return result?.content?.find((block): block is ImageContentBlock => block.type === 'image');
}

/** Images as results: the bytes go to the artifact store, history holds only the reference. */
describe('images as results (real Read and MCP tools, real Temporal server)', () => {
  let harness: Harness;
  let mcp: { tools: McpTool[]; close(): Promise<void> };
  let cwd: string;
  beforeAll(async () => {
    cwd = await scratchDir();
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
  });
  afterAll(async () => {
    await harness.close();
    await mcp.close();
  });

  it('Read of a 500 KB PNG returns an image block whose artifact holds the file, and the turn adds under 40 KB to history', async () => {
    const png = noisePng(500_000);
    await writeFile(path.join(cwd, 'shot.png'), png);
    const { result, before, after } = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      await session.executeTurn({ turnId: 'warm-up', calls: [] });
      const before = await session.workflow.fetchHistory();
      const turn = await session.executeTurn({
        turnId: 'look',
        calls: [{ id: 'read-png', name: 'Read', input: { file_path: 'shot.png' } }],
      });
      return { result: turn.results[0], before, after: await session.workflow.fetchHistory() };
    });

    expect(result?.status).toBe('success');
    const image = imageOf(result);
    expect(image).toMatchObject({ type: 'image', mediaType: 'image/png', bytes: png.length });
    expect(image?.artifact).toMatch(/^switchyard-artifact:\/\//);
    expect(Buffer.from(await harness.client.artifacts.readBytes(image?.artifact ?? '')).equals(png)).toBe(true);
    // The text form: the model content and the first block agree; image bytes are not text.
    expect(result?.modelContent).toBe(`[image: image/png, ${png.length} bytes, ${image?.artifact}]`);
    expect(result?.content?.[0]).toEqual({ type: 'text', text: result?.modelContent });
    // 500 KB is over Read's 262,144-byte result budget: only text counts, so nothing was truncated.
    expect(result?.budget).toBeUndefined();

    const added = historyText(after).length - historyText(before).length;
    expect(added).toBeGreaterThan(0);
    expect(added).toBeLessThan(40_000);
    // No piece of the image, raw or base64, is anywhere in history.
    const slice = png.subarray(30_000, 30_300).toString('base64');
    expect(historyText(after)).not.toContain(slice);
    expect(JSON.stringify(after)).not.toContain(slice);

    // The adapters read the artifact when they build the request: the model gets the file's bytes.
    const [anthropic] = await toAnthropicToolResultsWithImages([result as ToolResult], {
      artifacts: harness.client.artifacts,
    });
    const anthropicImage = Array.isArray(anthropic?.content)
      ? anthropic.content.find((block) => block.type === 'image')
      : undefined;
    expect(anthropicImage?.type === 'image' && Buffer.from(anthropicImage.source.data, 'base64').equals(png)).toBe(
      true,
    );
    const openai = await toOpenAIMessagesWithImages([result as ToolResult], { artifacts: harness.client.artifacts });
    expect(openai.map((message) => message.role)).toEqual(['tool', 'user']);
    const imagePart =
      openai[1]?.role === 'user' ? openai[1].content.find((part) => part.type === 'image_url') : undefined;
    expect(imagePart?.type === 'image_url' && imagePart.image_url.url).toBe(
      `data:image/png;base64,${png.toString('base64')}`,
    );
  });

  it('keeps the text block equal to the model content when a PostToolUse hook adds context, the image after it', async () => {
    await writeFile(path.join(cwd, 'small.png'), noisePng(5_000));
    const result = await harness.withWorker(
      async () => {
        const session = await harness.startSession({ cwd });
        return (
          await session.executeTurn({
            turnId: 't',
            calls: [{ id: 'read-small', name: 'Read', input: { file_path: 'small.png' } }],
          })
        ).results[0];
      },
      { hooks: { postToolUse: [{ matcher: 'Read', run: () => ({ additionalContext: 'the image is noise' }) }] } },
    );
    const image = imageOf(result);
    expect(result?.modelContent).toBe(
      `[image: image/png, ${image?.bytes} bytes, ${image?.artifact}]\n\n[Hook additional context]\n1. the image is noise`,
    );
    expect(result?.content).toEqual([{ type: 'text', text: result?.modelContent }, image]);
  });

  it('refuses an image over the size limit with a clear error, and stores nothing', async () => {
    const png = noisePng(LIMITS.imageMaxBytes + 100_000);
    await writeFile(path.join(cwd, 'huge.png'), png);
    const { result, sessionId } = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      const turn = await session.executeTurn({
        turnId: 't',
        calls: [{ id: 'read-huge', name: 'Read', input: { file_path: 'huge.png' } }],
      });
      return { result: turn.results[0], sessionId: session.sessionId };
    });
    expect(result).toMatchObject({ status: 'error', isError: true, errorCode: 'image_too_large' });
    expect(result?.modelContent).toMatch(
      /^<tool_use_error>Image file \(image\/png, 3\.8 MB\) exceeds the maximum image size Read returns \(3\.8 MB, the model APIs refuse larger images\)/,
    );
    expect(result?.content).toBeUndefined();
    const sessionsWithArtifacts = await readdir(path.join(harness.dataDir, 'artifacts')).catch(() => []);
    expect(sessionsWithArtifacts).not.toContain(pathSegment(sessionId));
  });

  it("turns an MCP tool's image content into an image block holding the bytes the server sent", async () => {
    const result = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
      return (
        await session.executeTurn({
          turnId: 't',
          calls: [{ id: 'shot', name: 'mcp__notes__screenshot', input: { bytes: 20_000 } }],
        })
      ).results[0];
    });
    expect(result?.status).toBe('success');
    const image = imageOf(result);
    expect(image).toMatchObject({ type: 'image', mediaType: 'image/png' });
    const stored = Buffer.from(await harness.client.artifacts.readBytes(image?.artifact ?? ''));
    const sha256 = /^sha256 ([0-9a-f]{64})\n/.exec(result?.modelContent ?? '')?.[1];
    expect(createHash('sha256').update(stored).digest('hex')).toBe(sha256);
    expect(result?.modelContent).toBe(
      `sha256 ${sha256}\n[image: image/png, ${stored.length} bytes, ${image?.artifact}]`,
    );
    expect(result?.content).toEqual([{ type: 'text', text: result?.modelContent }, image]);
    // The artifact is a file of the worker's data directory.
    expect((await readFile(harness.client.artifacts.locate(image?.artifact ?? ''))).equals(stored)).toBe(true);
  });
});
