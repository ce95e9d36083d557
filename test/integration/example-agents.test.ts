import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAiSdkAgent } from '../../examples/agent-ai-sdk.js';
import type { GenerateText } from '../../examples/agent-ai-sdk.js';
import { runAnthropicAgent } from '../../examples/agent-anthropic.js';
import { runGeminiAgent } from '../../examples/agent-gemini.js';
import { runOpenAIChatAgent } from '../../examples/agent-openai-chat.js';
import { runOpenAIResponsesAgent } from '../../examples/agent-openai-responses.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';

/** What the scripted model answers to the n-th request (0-based) on a path: a JSON body or SSE events. */
type Reply = { json: unknown } | { events: Array<{ event?: string; data: unknown }> };

/**
 * A scripted model server: answers each API's path from a script, in the API's wire format, and records the
 * requests, so a test can check what the example loop sent back (tool results keyed and shaped as the API wants).
 */
async function scriptedModelServer(
  script: Record<string, Reply[]>,
): Promise<{ baseUrl: string; requests: Record<string, Array<Record<string, unknown>>>; close(): Promise<void> }> {
  const requests: Record<string, Array<Record<string, unknown>>> = {};
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const url = request.url ?? '';
      const seen = (requests[url] ??= []);
      seen.push(JSON.parse(body) as Record<string, unknown>);
      const reply = script[url]?.[seen.length - 1];
      if (reply === undefined) {
        response.writeHead(500).end(`no scripted reply for request ${seen.length} to ${url}`);
        return;
      }
      if ('json' in reply) {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply.json));
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const event of reply.events) {
        response.write(
          `${event.event === undefined ? '' : `event: ${event.event}\n`}data: ${typeof event.data === 'string' ? event.data : JSON.stringify(event.data)}\n\n`,
        );
      }
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const anthropicEvent = (data: { type: string } & Record<string, unknown>) => ({ event: data.type, data });

describe('example agent loops against a scripted model server', () => {
  let harness: Harness;
  let cwd: string;
  const tools = builtinTools();
  beforeAll(async () => {
    cwd = await scratchDir();
    await writeFile(path.join(cwd, 'notes.txt'), 'alpha\nbeta\n');
    harness = await createHarness({ tools, defaultCwd: cwd });
  });
  afterAll(async () => harness.close());

  it('Anthropic: streams two parallel tool_use blocks, runs them, sends tool_result blocks', async () => {
    const toolUse = (index: number, id: string, name: string, json: string) => [
      anthropicEvent({ type: 'content_block_start', index, content_block: { type: 'tool_use', id, name, input: {} } }),
      anthropicEvent({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: '' } }),
      ...(json.match(/.{1,5}/g) ?? []).map((partial_json) =>
        anthropicEvent({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } }),
      ),
      anthropicEvent({ type: 'content_block_stop', index }),
    ];
    const server = await scriptedModelServer({
      '/v1/messages': [
        {
          events: [
            anthropicEvent({
              type: 'message_start',
              message: { id: 'msg_1', role: 'assistant', content: [], stop_reason: null },
            }),
            anthropicEvent({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
            anthropicEvent({
              type: 'content_block_delta',
              index: 0,
              delta: { type: 'text_delta', text: 'Let me look.' },
            }),
            anthropicEvent({ type: 'content_block_stop', index: 0 }),
            ...toolUse(1, 'toolu_01', 'Read', '{"file_path": "notes.txt"}'),
            ...toolUse(2, 'toolu_02', 'Glob', '{"pattern": "*.txt"}'),
            anthropicEvent({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null } }),
            anthropicEvent({ type: 'message_stop' }),
          ],
        },
        {
          events: [
            anthropicEvent({
              type: 'message_start',
              message: { id: 'msg_2', role: 'assistant', content: [], stop_reason: null },
            }),
            anthropicEvent({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
            anthropicEvent({
              type: 'content_block_delta',
              index: 0,
              delta: { type: 'text_delta', text: 'The notes say alpha.' },
            }),
            anthropicEvent({ type: 'content_block_stop', index: 0 }),
            anthropicEvent({ type: 'message_delta', delta: { stop_reason: 'end_turn' } }),
            anthropicEvent({ type: 'message_stop' }),
          ],
        },
      ],
    });
    try {
      const outcome = await harness.withWorker(async () =>
        runAnthropicAgent({
          session: await harness.startSession({ cwd }),
          tools,
          prompt: 'What do the notes say?',
          apiKey: 'test',
          baseUrl: server.baseUrl,
        }),
      );
      expect(outcome).toEqual({ text: 'The notes say alpha.', steps: 2 });
      const [first, second] = server.requests['/v1/messages'] ?? [];
      expect(first).toMatchObject({
        stream: true,
        tools: expect.arrayContaining([
          expect.objectContaining({ name: 'Read', input_schema: expect.objectContaining({ type: 'object' }) }),
        ]),
      });
      const messages = second?.messages as Array<{ role: string; content: unknown }>;
      expect(messages[1]).toEqual({
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_use', id: 'toolu_01', name: 'Read', input: { file_path: 'notes.txt' } },
          { type: 'tool_use', id: 'toolu_02', name: 'Glob', input: { pattern: '*.txt' } },
        ],
      });
      expect(messages[2]).toEqual({
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_01', content: expect.stringContaining('alpha') },
          { type: 'tool_result', tool_use_id: 'toolu_02', content: expect.stringContaining('notes.txt') },
        ],
      });
    } finally {
      await server.close();
    }
  });

  it('OpenAI Chat: streams delta.tool_calls, sends tool messages (a failed call says it failed)', async () => {
    const chunk = (delta: unknown, finish_reason: string | null = null) => ({
      data: { object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason }] },
    });
    const server = await scriptedModelServer({
      '/v1/chat/completions': [
        {
          events: [
            chunk({
              role: 'assistant',
              content: null,
              tool_calls: [{ index: 0, id: 'call_read', type: 'function', function: { name: 'Read', arguments: '' } }],
            }),
            chunk({
              tool_calls: [{ index: 0, id: null, type: null, function: { name: null, arguments: '{"file_path":' } }],
            }),
            chunk({
              tool_calls: [{ index: 0, id: null, type: null, function: { name: null, arguments: '"notes.txt"}' } }],
            }),
            chunk({
              tool_calls: [
                {
                  index: 1,
                  id: 'call_missing',
                  type: 'function',
                  function: { name: 'Read', arguments: '{"file_path":"missing.txt"}' },
                },
              ],
            }),
            chunk({}, 'tool_calls'),
            { data: '[DONE]' },
          ],
        },
        {
          events: [
            chunk({ role: 'assistant', content: 'alpha, and one file is missing.' }),
            chunk({}, 'stop'),
            { data: '[DONE]' },
          ],
        },
      ],
    });
    try {
      const outcome = await harness.withWorker(async () =>
        runOpenAIChatAgent({
          session: await harness.startSession({ cwd }),
          tools,
          prompt: 'Read the notes',
          apiKey: 'test',
          baseUrl: server.baseUrl,
        }),
      );
      expect(outcome).toEqual({ text: 'alpha, and one file is missing.', steps: 2 });
      const messages = (server.requests['/v1/chat/completions']?.[1]?.messages ?? []) as Array<Record<string, unknown>>;
      expect(messages[1]).toMatchObject({
        role: 'assistant',
        tool_calls: [
          { id: 'call_read', function: { name: 'Read', arguments: '{"file_path":"notes.txt"}' } },
          { id: 'call_missing' },
        ],
      });
      expect(messages[2]).toEqual({
        role: 'tool',
        tool_call_id: 'call_read',
        content: expect.stringContaining('alpha'),
      });
      expect(messages[3]).toMatchObject({ role: 'tool', tool_call_id: 'call_missing' });
      expect(messages[3]?.content).toMatch(/^<tool_use_error>File does not exist: /);
    } finally {
      await server.close();
    }
  });

  it('OpenAI Responses: function_call items (strict-mode nulls) in, function_call_output keyed by call_id out', async () => {
    const readArguments = '{"file_path":"notes.txt","offset":null,"limit":null}';
    const server = await scriptedModelServer({
      '/v1/responses': [
        {
          json: {
            id: 'resp_1',
            output: [{ type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'Read', arguments: readArguments }],
          },
        },
        {
          json: {
            id: 'resp_2',
            output: [
              {
                type: 'message',
                id: 'msg_1',
                role: 'assistant',
                content: [{ type: 'output_text', text: 'alpha and beta' }],
              },
            ],
          },
        },
      ],
    });
    try {
      const outcome = await harness.withWorker(async () =>
        runOpenAIResponsesAgent({
          session: await harness.startSession({ cwd }),
          tools,
          prompt: 'Read the notes',
          apiKey: 'test',
          baseUrl: server.baseUrl,
        }),
      );
      expect(outcome).toEqual({ text: 'alpha and beta', steps: 2 });
      const [first, second] = server.requests['/v1/responses'] ?? [];
      expect((first?.tools as unknown[])[0]).toMatchObject({
        type: 'function',
        name: expect.any(String),
        strict: false,
      });
      expect((second?.input as unknown[]).at(-1)).toEqual({
        type: 'function_call_output',
        call_id: 'call_1',
        output: expect.stringContaining('alpha'),
      });
    } finally {
      await server.close();
    }
  });

  it('Gemini: functionCall without an id in, functionResponse with the called name out', async () => {
    const model = 'gemini-2.5-flash';
    const server = await scriptedModelServer({
      [`/v1beta/models/${model}:generateContent`]: [
        {
          json: {
            candidates: [
              {
                content: {
                  role: 'model',
                  parts: [{ functionCall: { name: 'Read', args: { file_path: 'notes.txt' } } }],
                },
              },
            ],
          },
        },
        { json: { candidates: [{ content: { role: 'model', parts: [{ text: 'alpha' }] } }] } },
      ],
    });
    try {
      const outcome = await harness.withWorker(async () =>
        runGeminiAgent({
          session: await harness.startSession({ cwd }),
          tools,
          prompt: 'Read the notes',
          apiKey: 'test',
          baseUrl: server.baseUrl,
          model,
        }),
      );
      expect(outcome).toEqual({ text: 'alpha', steps: 2 });
      const [first, second] = server.requests[`/v1beta/models/${model}:generateContent`] ?? [];
      expect((first?.tools as Array<{ functionDeclarations: unknown[] }>)[0]?.functionDeclarations[0]).toMatchObject({
        parametersJsonSchema: { type: 'object' },
      });
      expect((second?.contents as unknown[]).at(-1)).toEqual({
        role: 'user',
        parts: [{ functionResponse: { name: 'Read', response: { output: expect.stringContaining('alpha') } } }],
      });
    } finally {
      await server.close();
    }
  });

  it('AI SDK: tool-call parts in, tool-result parts out (generateText stands in for the SDK, over the scripted server)', async () => {
    const server = await scriptedModelServer({
      '/ai-sdk/generate': [
        {
          json: {
            text: '',
            toolCalls: [
              { type: 'tool-call', toolCallId: 'call_1', toolName: 'Read', input: { file_path: 'notes.txt' } },
            ],
            response: {
              messages: [
                {
                  role: 'assistant',
                  content: [
                    { type: 'tool-call', toolCallId: 'call_1', toolName: 'Read', input: { file_path: 'notes.txt' } },
                  ],
                },
              ],
            },
          },
        },
        {
          json: {
            text: 'alpha',
            toolCalls: [],
            response: { messages: [{ role: 'assistant', content: [{ type: 'text', text: 'alpha' }] }] },
          },
        },
      ],
    });
    const generateText: GenerateText = async (request) =>
      (
        await fetch(`${server.baseUrl}/ai-sdk/generate`, {
          method: 'POST',
          body: JSON.stringify({ tools: request.tools, messages: request.messages }),
        })
      ).json() as ReturnType<GenerateText>;
    try {
      const outcome = await harness.withWorker(async () =>
        runAiSdkAgent({
          session: await harness.startSession({ cwd }),
          tools,
          prompt: 'Read the notes',
          generateText,
          model: 'scripted',
        }),
      );
      expect(outcome).toEqual({ text: 'alpha', steps: 2 });
      const [first, second] = server.requests['/ai-sdk/generate'] ?? [];
      expect((first?.tools as Record<string, unknown>).Read).toMatchObject({
        description: expect.any(String),
        inputSchema: { type: 'object' },
      });
      expect((second?.messages as unknown[]).at(-1)).toEqual({
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'call_1',
            toolName: 'Read',
            output: { type: 'text', value: expect.stringContaining('alpha') },
          },
        ],
      });
    } finally {
      await server.close();
    }
  });
});
