import { describe, expect, it } from 'vitest';
import {
  callsFromOpenAI,
  toOpenAIChatTools,
  toOpenAIMessagesWithImages,
  toOpenAIToolMessages,
  toOpenAITools,
} from '../../../src/client/model-formats/openai-chat.js';
import { openAIChatToolStream } from '../../../src/client/model-formats/openai-chat-stream.js';
import type { OpenAIChatStreamChunk } from '../../../src/client/model-formats/openai-chat-stream.js';
import { artifacts, dottedTool, failed, getWeatherTool, recordingTurn, result, withImage } from './fixtures.js';

describe('OpenAI Chat Completions adapter', () => {
  it('exports nested function tools; strict is opt-in and rewrites a copy of the schema', () => {
    const [tool] = toOpenAIChatTools([getWeatherTool]);
    expect(tool).toMatchObject({
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'Get the current weather in a given location',
        parameters: { type: 'object', required: ['location'] },
      },
    });
    expect(tool?.function).not.toHaveProperty('strict');
    expect(toOpenAITools([getWeatherTool])).toEqual([tool]);
    const [strict] = toOpenAIChatTools([getWeatherTool], { strict: true });
    expect(strict?.function.strict).toBe(true);
    expect(strict?.function.parameters).toEqual({
      type: 'object',
      properties: {
        location: { type: 'string', description: 'The city and state, e.g. San Francisco, CA' },
        unit: { type: ['string', 'null'], enum: ['celsius', 'fahrenheit', null] },
      },
      required: ['location', 'unit'],
      additionalProperties: false,
    });
  });

  it('reads parallel tool_calls as in the function-calling guide (arguments stay a JSON string)', () => {
    const toolCalls = [
      {
        id: 'call_12345xyz',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"location":"Paris, France"}' },
      },
      {
        id: 'call_67890abc',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"location":"Bogotá, Colombia"}' },
      },
    ];
    expect(callsFromOpenAI(toolCalls)).toEqual([
      { id: 'call_12345xyz', name: 'get_weather', input: '{"location":"Paris, France"}' },
      { id: 'call_67890abc', name: 'get_weather', input: '{"location":"Bogotá, Colombia"}' },
    ]);
    expect(
      callsFromOpenAI([{ id: 'call_1', function: { name: 'mcp_notes_search', arguments: '{}' } }], {
        tools: [dottedTool],
      })[0]?.name,
    ).toBe('mcp.notes:search');
  });

  it('marks a failed result in the tool message text, since Chat has no error flag', () => {
    expect(
      toOpenAIToolMessages([
        result('call_1'),
        failed('call_2', 'Tool execution timed out after 5000ms'),
        failed('call_3', '<tool_use_error>InputValidationError: x</tool_use_error>'),
      ]),
    ).toEqual([
      { role: 'tool', tool_call_id: 'call_1', content: 'content of call_1' },
      { role: 'tool', tool_call_id: 'call_2', content: 'Error: Tool execution timed out after 5000ms' },
      { role: 'tool', tool_call_id: 'call_3', content: '<tool_use_error>InputValidationError: x</tool_use_error>' },
    ]);
  });

  it('sends images in a user message after the tool messages', async () => {
    const messages = await toOpenAIMessagesWithImages([withImage('call_1')], { artifacts });
    expect(messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'Image returned by tool call call_1 (get_weather):' },
        { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQSkZJRg==' } },
      ],
    });
  });
});

/** Chunks shaped like the function-calling guide's streaming example: later fragments carry `id: null`, `name: null`. */
function chunk(
  toolCalls: NonNullable<NonNullable<NonNullable<OpenAIChatStreamChunk['choices']>[number]['delta']>['tool_calls']>,
  finishReason: string | null = null,
): OpenAIChatStreamChunk {
  return { choices: [{ index: 0, delta: { tool_calls: toolCalls }, finish_reason: finishReason }] };
}
const first = (index: number, id: string, name: string) =>
  chunk([{ index, id, type: 'function', function: { name, arguments: '' } }]);
const piece = (index: number, text: string) =>
  chunk([{ index, id: null, type: null, function: { name: null, arguments: text } }]);
const finish = (reason: string): OpenAIChatStreamChunk => ({
  choices: [{ index: 0, delta: {}, finish_reason: reason }],
});

describe('Chat Completions stream assembler', () => {
  it('joins delta.tool_calls fragments by index and adds each call when the next starts', async () => {
    const turn = recordingTurn();
    const tools = openAIChatToolStream({ turn });
    for (const event of [
      first(0, 'call_DdmO9pD3xa9XTPNJ32zg2hcA', 'get_weather'),
      piece(0, '{"'),
      piece(0, 'location'),
      piece(0, '":"'),
      piece(0, 'Paris'),
      piece(0, ', France"}'),
    ])
      await tools.push(event);
    expect(turn.added).toEqual([]);
    await tools.push(first(1, 'call_second', 'get_weather'));
    expect(turn.log).toEqual(['add call_DdmO9pD3xa9XTPNJ32zg2hcA']);
    await tools.push(piece(1, '{"location":"Rome"}'));
    await tools.push(finish('tool_calls'));
    expect(turn.log).toEqual(['add call_DdmO9pD3xa9XTPNJ32zg2hcA', 'add call_second', 'end']);
    expect(turn.added.map((call) => call.input)).toEqual([{ location: 'Paris, France' }, { location: 'Rome' }]);
    expect((await tools.results()).map((r) => r.callId)).toEqual(['call_DdmO9pD3xa9XTPNJ32zg2hcA', 'call_second']);
  });

  it('takes a no-argument call and a chunk holding two calls at once', async () => {
    const turn = recordingTurn();
    const tools = openAIChatToolStream({ turn });
    await tools.push(
      chunk([
        { index: 0, id: 'call_a', type: 'function', function: { name: 'get_time', arguments: '{}' } },
        { index: 1, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } },
      ]),
    );
    await tools.push(finish('tool_calls'));
    expect(turn.added).toEqual([
      { id: 'call_a', name: 'get_time', input: {} },
      { id: 'call_b', name: 'get_time', input: {} },
    ]);
  });

  it('gives a call cut off at finish_reason "length" an error result and ends the turn', async () => {
    const turn = recordingTurn();
    const tools = openAIChatToolStream({ turn });
    for (const event of [
      first(0, 'call_ok', 'get_weather'),
      piece(0, '{"location":"Oslo"}'),
      first(1, 'call_cut', 'get_weather'),
      piece(1, '{"location":"Os'),
    ])
      await tools.push(event);
    await tools.push(finish('length'));
    expect(turn.log).toEqual(['add call_ok', 'end']);
    const results = await tools.results();
    expect(results.map((r) => [r.callId, r.isError])).toEqual([
      ['call_ok', false],
      ['call_cut', true],
    ]);
    expect(toOpenAIToolMessages(results)[1]?.content).toMatch(/^<tool_use_error>The get_weather call was cut off/);
    expect(results[1]?.modelContent).toContain('(the model stopped: length)');
  });
});
