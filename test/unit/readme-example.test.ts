import { readFile, readdir } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentLoop } from '../../examples/agent-loop.js';
import { wordCountTool } from '../../examples/word-count-tool.js';
import { prepareCall } from '../../src/activities/prepare-call.js';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { ReadyCallPlan } from '../../src/contracts/call-plan.js';
import type { ToolCall } from '../../src/contracts/tool-call.js';
import type { TurnResult } from '../../src/contracts/tool-result.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { toolContext } from '../support/tool-context.js';

/** The README's ```ts blocks; a block whose info string is `ts fragment` is a piece of a larger program. */
async function readmeTypeScriptBlocks(): Promise<string[]> {
  const readme = await readFile('README.md', 'utf8');
  return [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? '');
}

describe('README code blocks', () => {
  it('every ```ts block is a file in examples/, byte for byte (or is marked `ts fragment`)', async () => {
    const blocks = await readmeTypeScriptBlocks();
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    const examples = await Promise.all(
      (await readdir('examples'))
        .filter((name) => name.endsWith('.ts'))
        .map(async (name) => ({ name, text: await readFile(path.join('examples', name), 'utf8') })),
    );
    for (const block of blocks) {
      const file = examples.find((example) => example.text === block);
      expect(
        file,
        `README block starting ${JSON.stringify(block.slice(0, 80))} matches no file in examples/`,
      ).toBeDefined();
    }
    expect(blocks.some((block) => block.includes('export const wordCountTool'))).toBe(true);
    expect(blocks.some((block) => block.includes('export async function agentLoop'))).toBe(true);
  });
});

describe('the README custom tool example', () => {
  const registry = new ToolRegistry([wordCountTool]);
  const prepare = (input: unknown) =>
    prepareCall({
      registry,
      call: { id: 'c', name: 'WordCount', input },
      context: { sessionId: 's', cwd: '/tmp', allowRules: [], denyRules: [] },
    });

  it('plans a concurrent, read-only call and counts words', async () => {
    const plan = await prepare({ text: 'three little words' });
    expect(plan).toMatchObject({
      kind: 'ready',
      flags: { concurrentSafe: true, readOnly: true },
      summary: 'WordCount: 18 characters',
      timeoutMs: 5_000,
    });
    expect(await wordCountTool.execute((plan as ReadyCallPlan).input, toolContext({ cwd: '/tmp' }))).toBe('3 words');
  });

  it('rejects bad input and reports a business failure', async () => {
    expect((await prepare({ text: 3 })).kind).toBe('rejected');
    await expect(wordCountTool.execute({ text: '   ' }, toolContext({ cwd: '/tmp' }))).rejects.toThrow(
      'The text has no words.',
    );
  });
});

describe('the README agent loop', () => {
  it("sends the tools, runs the model's tool_use blocks as one turn, returns the results and then the answer", async () => {
    // A scripted Messages API: a tool_use reply, then the final text. A stand-in session records the turn (the
    // integration suite runs real sessions; here the loop's own code is what is under test).
    const requests: Array<{ tools: Array<{ name: string }>; messages: Array<{ role: string; content: unknown }> }> = [];
    const replies = [
      {
        stop_reason: 'tool_use',
        content: [
          { type: 'text', text: 'Counting.' },
          { type: 'tool_use', id: 'toolu_1', name: 'WordCount', input: { text: 'a b c' } },
        ],
      },
      { stop_reason: 'end_turn', content: [{ type: 'text', text: 'Three words.' }] },
    ];
    const server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        requests.push(JSON.parse(body) as (typeof requests)[number]);
        response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify(replies[requests.length - 1]));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const turns: Array<{ turnId: string; calls: ToolCall[] }> = [];
    const session = {
      async executeTurn(request: { turnId: string; calls: ToolCall[] }): Promise<TurnResult> {
        turns.push(request);
        return {
          turnId: request.turnId,
          stopped: false,
          results: request.calls.map((call) => ({
            callId: call.id,
            toolName: call.name,
            status: 'success',
            modelContent: '3 words',
            isError: false,
          })),
        } as unknown as TurnResult;
      },
    } as unknown as SessionHandle;
    try {
      const answer = await agentLoop({
        session,
        tools: [wordCountTool],
        prompt: 'count a b c',
        apiKey: 'test',
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      });
      expect(answer).toBe('Three words.');
      expect(requests[0]?.tools.map((tool) => tool.name)).toEqual(['WordCount']);
      expect(turns).toEqual([
        { turnId: 'turn-1', calls: [{ id: 'toolu_1', name: 'WordCount', input: { text: 'a b c' } }] },
      ]);
      expect(requests[1]?.messages.at(-1)).toEqual({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '3 words' }],
      });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
