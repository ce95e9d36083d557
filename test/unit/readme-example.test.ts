import { readFile, readdir } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentLoop } from '../../examples/agent-loop.js';
import { scriptedModel } from '../../examples/scripted-model.js';
import { wordCountTool } from '../../examples/word-count-tool.js';
import { prepareCall } from '../../src/activities/prepare-call.js';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { ReadyCallPlan } from '../../src/contracts/call-plan.js';
import type { ToolCall } from '../../src/contracts/tool-call.js';
import type { TurnResult } from '../../src/contracts/tool-result.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { toolContext } from '../support/tool-context.js';

/** The `ts file=NAME` blocks of README.md and docs/*.md: files the reader writes into their project. */
async function fileBlocks(): Promise<Array<{ doc: string; file: string; code: string }>> {
  const docs = [
    'README.md',
    ...(await readdir('docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`),
  ];
  const blocks = await Promise.all(
    docs.map(async (doc) =>
      [...(await readFile(doc, 'utf8')).matchAll(/^```ts file=(\S+)\n([\s\S]*?)^```$/gm)].map(
        ([, file = '', code = '']) => ({ doc, file, code }),
      ),
    ),
  );
  return blocks.flat();
}

describe('README code blocks', () => {
  it('a `ts file=NAME` block whose NAME is in examples/ is that file, byte for byte (the stand-in model among them)', async () => {
    const blocks = await fileBlocks();
    const examples = new Set(await readdir('examples'));
    const shared = blocks.filter((block) => examples.has(block.file));
    expect(shared.map((block) => block.file)).toContain('scripted-model.ts');
    for (const block of shared)
      expect(block.code, `${block.doc}: ${block.file} differs from examples/${block.file}`).toBe(
        await readFile(path.join('examples', block.file), 'utf8'),
      );
  });
});

describe('the stand-in model of the README walkthrough', () => {
  it('answers the nth request with the nth reply (tool_use, then text), the same again for a repeated request', async () => {
    const model = scriptedModel([
      [{ type: 'tool_use', id: 't1', name: 'Read', input: { file_path: 'a' } }],
      [{ type: 'text', text: 'done' }],
    ]);
    const first = [{ role: 'user', content: 'go' }];
    expect(await model({ messages: first })).toEqual({
      content: [{ type: 'tool_use', id: 't1', name: 'Read', input: { file_path: 'a' } }],
      stop_reason: 'tool_use',
    });
    expect(await model({ messages: first })).toMatchObject({ stop_reason: 'tool_use' });
    const second = [...first, { role: 'assistant', content: [] }, { role: 'user', content: [] }];
    expect(await model({ messages: second })).toEqual({
      content: [{ type: 'text', text: 'done' }],
      stop_reason: 'end_turn',
    });
    const past = [...second, { role: 'assistant', content: [] }, { role: 'user', content: [] }];
    expect(await model({ messages: past })).toEqual({
      content: [{ type: 'text', text: 'Done.' }],
      stop_reason: 'end_turn',
    });
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
