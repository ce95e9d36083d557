import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import { PERSISTED_OUTPUT_OPEN_TAG } from '../../src/contracts/persisted-output.js';
import { bashTool } from '../../src/tools/builtin/bash.js';
import { readTool } from '../../src/tools/builtin/read.js';
import { webFetchTool } from '../../src/tools/builtin/web-fetch.js';
import { connectMcpTools, mcpServersFromConfig } from '../../src/tools/mcp/mcp.js';
import type { McpTool } from '../../src/tools/mcp/mcp.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';

/** A 300 KB JSON document on one line: no newline for Read's per-line cut to page through. */
function oneLineJson(): string {
  const items = Array.from({ length: 9_000 }, (_, index) => ({ index, name: `item-${index}`, ok: index % 3 === 0 }));
  const json = JSON.stringify({ items });
  return json.length >= 300_000 ? json : JSON.stringify({ items, pad: 'p'.repeat(300_000 - json.length) });
}

/**
 * The model's way back to a stored output: successive Read calls, each in its own reply, each continuing at the
 * offset the previous answer's first line gives, until an answer says it reached the end.
 */
async function readBack(session: SessionHandle, reference: string): Promise<{ text: string; reads: number }> {
  let text = '';
  let offset: number | undefined;
  for (let reads = 1; reads <= 20; reads += 1) {
    const turn = await session.executeTurn({
      turnId: `read-${reads}-${reference.length}-${text.length}`,
      calls: [
        { id: `r${reads}`, name: 'Read', input: { file_path: reference, ...(offset === undefined ? {} : { offset }) } },
      ],
    });
    const answer = turn.results[0];
    expect(answer?.status).toBe('success');
    const content = answer?.modelContent ?? '';
    const newline = content.indexOf('\n');
    const note = content.slice(0, newline);
    expect(note).toMatch(/^\[Characters \d+-\d+ of \d+ of switchyard-artifact:\/\//);
    text += content.slice(newline + 1);
    const next = /Continue with offset (\d+)\.\]$/.exec(note);
    if (next === null) return { text, reads };
    offset = Number(next[1]);
  }
  throw new Error(`never reached the end of ${reference}`);
}

function referenceIn(modelContent: string): string {
  expect(modelContent.startsWith(PERSISTED_OUTPUT_OPEN_TAG)).toBe(true);
  const reference = /Full output saved to: (switchyard-artifact:\/\/\S+)/.exec(modelContent)?.[1];
  expect(reference).toBeDefined();
  return reference ?? '';
}

describe('a stored one-line output is reachable whole by the model (real server, real tools)', () => {
  let harness: Harness;
  let mcp: { tools: McpTool[]; close(): Promise<void> };
  let server: Server;
  let port: number;
  let cwd: string;
  const json = oneLineJson();

  beforeAll(async () => {
    cwd = await scratchDir();
    await writeFile(path.join(cwd, 'big.json'), json);
    server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end(json);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
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
    harness = await createHarness({ tools: [bashTool, readTool, webFetchTool, ...mcp.tools], defaultCwd: cwd });
  }, 60_000);
  afterAll(async () => {
    await harness.close();
    await mcp.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('Bash, WebFetch and an MCP call the aggregate budget replaced: each stored whole, read back whole in pieces', async () => {
    expect(json.length).toBeGreaterThanOrEqual(300_000);
    expect(json).not.toContain('\n');
    await harness.withWorker(async () => {
      const session = await harness.startSession({
        cwd,
        rules: {
          allow: ['Bash(cat:*)', 'WebFetch(domain:127.0.0.1)', 'mcp__notes__huge'],
        },
      });

      const bash = await session.executeTurn({
        turnId: 'bash',
        calls: [{ id: 'cat', name: 'Bash', input: { command: 'cat big.json' } }],
      });
      expect(bash.results[0]?.status).toBe('success');
      const fromBash = await readBack(session, referenceIn(bash.results[0]?.modelContent ?? ''));
      expect(fromBash.text).toBe(json);
      expect(fromBash.reads).toBeGreaterThan(1);

      const fetched = await session.executeTurn({
        turnId: 'fetch',
        calls: [{ id: 'f', name: 'WebFetch', input: { url: `http://127.0.0.1:${port}/big.json` } }],
      });
      expect(fetched.results[0]?.status).toBe('success');
      const fromFetch = await readBack(session, referenceIn(fetched.results[0]?.modelContent ?? ''));
      expect(fromFetch.text).toContain(json);

      // An MCP result is cut to its own budget; five of them in one reply pass the turn's aggregate budget, which
      // swaps the largest for envelopes of their whole, uncut outputs. (A call's input is capped far below 300 KB,
      // so the test server's `huge` tool makes the one-line answer.)
      const notes = await session.executeTurn({
        turnId: 'mcp',
        calls: Array.from({ length: 5 }, (_, index) => ({
          id: `h${index}`,
          name: 'mcp__notes__huge',
          input: { bytes: 300_000 + index },
        })),
      });
      expect(notes.results.map((entry) => entry.status)).toEqual(Array(5).fill('success'));
      const replaced = notes.results.find((entry) => entry.modelContent.startsWith(PERSISTED_OUTPUT_OPEN_TAG));
      expect(replaced).toBeDefined();
      const fromMcp = await readBack(session, referenceIn(replaced?.modelContent ?? ''));
      expect(fromMcp.text).toBe('x'.repeat(300_000 + Number(replaced?.callId.slice(1))));
    });
  }, 180_000);
});
