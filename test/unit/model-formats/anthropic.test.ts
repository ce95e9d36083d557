import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  callsFromAnthropic,
  toAnthropicToolResults,
  toAnthropicToolResultsWithImages,
  toAnthropicTools,
} from '../../../src/client/model-formats/anthropic.js';
import { anthropicToolStream } from '../../../src/client/model-formats/anthropic-stream.js';
import type { AnthropicStreamEvent } from '../../../src/client/model-formats/anthropic-stream.js';
import { ToolExportError } from '../../../src/client/model-formats/shared.js';
import { defineTool } from '../../../src/tools/define-tool.js';
import { builtinTools } from '../../../src/tools/builtin.js';
import {
  artifacts,
  dottedTool,
  failed,
  getTimeTool,
  getWeatherTool,
  recordingTurn,
  result,
  withImage,
} from './fixtures.js';

describe('Anthropic Messages adapter', () => {
  it('exports tools as { name, description, input_schema } with the schema Switchyard validates against', () => {
    const [weather] = toAnthropicTools([getWeatherTool]);
    expect(weather).toEqual({
      name: 'get_weather',
      description: 'Get the current weather in a given location',
      input_schema: {
        type: 'object',
        properties: {
          location: { type: 'string', minLength: 1, description: 'The city and state, e.g. San Francisco, CA' },
          unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
        },
        required: ['location'],
        additionalProperties: false,
      },
    });
    // Every built-in tool passes Anthropic's checks (object root, property keys such as Grep's `-i`).
    expect(toAnthropicTools(builtinTools()).map((tool) => tool.name)).toContain('Grep');
  });

  it('reads parallel tool_use blocks from a reply shaped like the docs example, skipping text', () => {
    // Anthropic docs, "Parallel tool use": a text block, then two tool_use blocks.
    const content = [
      { type: 'text', text: "I'll check the weather and the time." },
      {
        type: 'tool_use',
        id: 'toolu_01A09q90qw90lq917835lq9',
        name: 'get_weather',
        input: { location: 'San Francisco, CA', unit: 'celsius' },
      },
      { type: 'tool_use', id: 'toolu_01B09q90qw90lq917835lq9', name: 'get_time', input: {} },
    ];
    expect(callsFromAnthropic(content)).toEqual([
      {
        id: 'toolu_01A09q90qw90lq917835lq9',
        name: 'get_weather',
        input: { location: 'San Francisco, CA', unit: 'celsius' },
      },
      { id: 'toolu_01B09q90qw90lq917835lq9', name: 'get_time', input: {} },
    ]);
  });

  it('answers with tool_result blocks in call order, errors flagged with is_error', () => {
    expect(
      toAnthropicToolResults([result('toolu_1'), failed('toolu_2', 'Tool execution timed out after 5000ms')]),
    ).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_1', content: 'content of toolu_1' },
      { type: 'tool_result', tool_use_id: 'toolu_2', content: 'Tool execution timed out after 5000ms', is_error: true },
    ]);
  });

  it('sends images as base64 image blocks inside the tool_result', async () => {
    expect(await toAnthropicToolResultsWithImages([withImage('toolu_1')], { artifacts })).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_1',
        content: [
          { type: 'text', text: '15 degrees' },
          { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQSkZJRg==' } },
        ],
      },
    ]);
  });

  it('renames a tool whose name Anthropic refuses and maps the calls back', () => {
    const tools = [dottedTool, getWeatherTool];
    const exported = toAnthropicTools(tools);
    expect(exported.map((tool) => tool.name)).toEqual(['mcp_notes_search', 'get_weather']);
    const calls = callsFromAnthropic(
      [{ type: 'tool_use', id: 'toolu_1', name: 'mcp_notes_search', input: { query: 'q' } }],
      { tools },
    );
    expect(calls).toEqual([{ id: 'toolu_1', name: 'mcp.notes:search', input: { query: 'q' } }]);
    // Without the tools, names pass unchanged.
    expect(
      callsFromAnthropic([{ type: 'tool_use', id: 'toolu_1', name: 'mcp_notes_search', input: {} }])[0]?.name,
    ).toBe('mcp_notes_search');
  });

  it('shortens a name longer than 64 characters and keeps two such names apart', () => {
    const long = (suffix: string) =>
      defineTool({
        name: `${'a'.repeat(60)}.${suffix}`,
        description: 'x',
        inputSchema: z.strictObject({}),
        execute: async () => '',
      });
    const tools = [long('one'), long('two')];
    const names = toAnthropicTools(tools).map((tool) => tool.name);
    expect(names.every((name) => /^[a-zA-Z0-9_-]{1,64}$/.test(name))).toBe(true);
    expect(new Set(names).size).toBe(2);
    expect(
      callsFromAnthropic([{ type: 'tool_use', id: 't', name: names[1] ?? '', input: {} }], { tools })[0]?.name,
    ).toBe(tools[1]?.name);
  });

  it('cleans an MCP schema on a copy and refuses a property key Anthropic rejects, naming the tool and the rule', () => {
    const mcpSchema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { title: { type: 'string' } },
      required: ['title'],
    };
    const mcp = Object.assign(
      defineTool({
        name: 'mcp__notes__add',
        description: 'Add a note',
        inputSchema: z.record(z.string(), z.unknown()),
        execute: async () => '',
      }),
      { mcpInputSchema: mcpSchema },
    );
    const [exported] = toAnthropicTools([mcp]);
    expect(exported?.input_schema).toEqual({
      type: 'object',
      properties: { title: { type: 'string' } },
      required: ['title'],
    });
    expect(exported?.input_schema).not.toBe(mcpSchema);
    (exported?.input_schema.properties as Record<string, unknown>).title = 'changed';
    expect(mcpSchema.properties.title).toEqual({ type: 'string' });
    expect(mcpSchema.$schema).toBeDefined();

    const bad = Object.assign(
      defineTool({
        name: 'mcp__notes__bad',
        description: 'x',
        inputSchema: z.record(z.string(), z.unknown()),
        execute: async () => '',
      }),
      {
        mcpInputSchema: { type: 'object', properties: { 'note title': { type: 'string' } } },
      },
    );
    expect(() => toAnthropicTools([bad])).toThrow(ToolExportError);
    expect(() => toAnthropicTools([bad])).toThrow(
      'Tool "mcp__notes__bad" cannot be sent to anthropic: property key "note title" at $.properties must match ^[a-zA-Z0-9_.-]{1,64}$',
    );
    const notObject = Object.assign(
      defineTool({
        name: 'mcp__notes__raw',
        description: 'x',
        inputSchema: z.record(z.string(), z.unknown()),
        execute: async () => '',
      }),
      { mcpInputSchema: { type: 'string' } },
    );
    expect(() => toAnthropicTools([notObject])).toThrow(
      'Tool "mcp__notes__raw" cannot be sent to anthropic: the input schema must have "type": "object" at its root',
    );
  });
});

/** The documented streaming example (Anthropic docs, "Streaming": tool use), as SSE data objects. */
function documentedToolUseStream(): AnthropicStreamEvent[] {
  const json = ['', '{"location":', ' "San', ' Francisc', 'o,', ' CA"', ', ', '"unit": "fah', 'renheit"}'];
  return [
    { type: 'message_start' },
    { type: 'content_block_start', index: 0, content_block: { type: 'text' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta' } },
    { type: 'content_block_stop', index: 0 },
    {
      type: 'content_block_start',
      index: 1,
      content_block: { type: 'tool_use', id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', input: {} },
    },
    ...json.map((partial_json) => ({
      type: 'content_block_delta',
      index: 1,
      delta: { type: 'input_json_delta', partial_json },
    })),
    { type: 'content_block_stop', index: 1 },
    { type: 'message_delta', delta: { stop_reason: 'tool_use' } },
    { type: 'message_stop' },
  ];
}

describe('Anthropic stream assembler', () => {
  it('adds a tool_use block at its content_block_stop and ends the turn at message_stop', async () => {
    const turn = recordingTurn();
    const tools = anthropicToolStream({ turn });
    const events = documentedToolUseStream();
    const stopIndex = events.findIndex((event) => event.type === 'content_block_stop' && event.index === 1);
    for (const [index, event] of events.entries()) {
      await tools.push(event);
      if (index === stopIndex - 1) expect(turn.added).toEqual([]);
    }
    expect(turn.log).toEqual(['add toolu_01T1x1fJ34qAmk2tNTrN7Up6', 'end']);
    expect(turn.added[0]).toEqual({
      id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
      name: 'get_weather',
      input: { location: 'San Francisco, CA', unit: 'fahrenheit' },
    });
    expect(tools.stopReason).toBe('tool_use');
    expect((await tools.results()).map((r) => r.callId)).toEqual(['toolu_01T1x1fJ34qAmk2tNTrN7Up6']);
  });

  it('gives a no-argument tool that streams partial_json "" the input {}', async () => {
    const turn = recordingTurn();
    const tools = anthropicToolStream({ turn });
    for (const event of [
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: 'toolu_time', name: 'get_time', input: {} },
      },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use' } },
      { type: 'message_stop' },
    ]) {
      await tools.push(event);
    }
    expect(turn.added).toEqual([{ id: 'toolu_time', name: 'get_time', input: {} }]);
    expect(getTimeTool.inputSchema.safeParse(turn.added[0]?.input).success).toBe(true);
  });

  it('adds parallel calls one by one as each block stops, before the next one has streamed', async () => {
    const turn = recordingTurn();
    const tools = anthropicToolStream({ turn });
    const block = (index: number, id: string, json: string[]): AnthropicStreamEvent[] => [
      { type: 'content_block_start', index, content_block: { type: 'tool_use', id, name: 'get_weather', input: {} } },
      ...json.map((partial_json) => ({
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json },
      })),
      { type: 'content_block_stop', index },
    ];
    for (const event of block(0, 'toolu_a', ['{"location": "Paris"}'])) await tools.push(event);
    expect(turn.log).toEqual(['add toolu_a']);
    for (const event of block(1, 'toolu_b', ['{"location"', ': "Rome"}'])) await tools.push(event);
    expect(turn.log).toEqual(['add toolu_a', 'add toolu_b']);
    await tools.push({ type: 'message_delta', delta: { stop_reason: 'tool_use' } });
    await tools.push({ type: 'message_stop' });
    expect(turn.log).toEqual(['add toolu_a', 'add toolu_b', 'end']);
  });

  it('gives a call cut off at max_tokens a clear error result and still ends the turn', async () => {
    const turn = recordingTurn();
    const tools = anthropicToolStream({ turn, tools: [getWeatherTool] });
    for (const event of [
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: 'toolu_ok', name: 'get_weather', input: {} },
      },
      {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json: '{"location": "Oslo"}' },
      },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 'toolu_cut', name: 'get_weather', input: {} },
      },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"location": "Ber' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', delta: { stop_reason: 'max_tokens' } },
      { type: 'message_stop' },
    ]) {
      await tools.push(event);
    }
    expect(turn.log).toEqual(['add toolu_ok', 'end']);
    const results = await tools.results();
    expect(results.map((r) => [r.callId, r.status, r.isError])).toEqual([
      ['toolu_ok', 'success', false],
      ['toolu_cut', 'error', true],
    ]);
    expect(results[1]?.modelContent).toBe(
      '<tool_use_error>The get_weather call was cut off before its input was complete (the model stopped: max_tokens); it did not run. Call it again, with a shorter input if it was long.</tool_use_error>',
    );
    expect(toAnthropicToolResults(results)[1]).toMatchObject({ tool_use_id: 'toolu_cut', is_error: true });
  });

  it('ends the turn when the stream breaks off mid-block, with the open call cut off', async () => {
    const turn = recordingTurn();
    const tools = anthropicToolStream({ turn });
    await tools.push({
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: 'toolu_open', name: 'get_weather', input: {} },
    });
    await tools.push({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'input_json_delta', partial_json: '{"loc' },
    });
    await tools.finish();
    expect(turn.log).toEqual([]); // nothing ran, so no turn was opened on the session
    expect((await tools.results())[0]?.modelContent).toContain(
      'cut off before its input was complete (the model stopped: the stream ended)',
    );
  });

  it('hands a malformed block that is not the last one on as it is, so Switchyard reports the invalid JSON', async () => {
    const turn = recordingTurn();
    const tools = anthropicToolStream({ turn });
    for (const event of [
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: 'toolu_bad', name: 'get_weather', input: {} },
      },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"location": ' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 'toolu_good', name: 'get_time', input: {} },
      },
      { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use' } },
      { type: 'message_stop' },
    ]) {
      await tools.push(event);
    }
    expect(turn.added).toEqual([
      { id: 'toolu_bad', name: 'get_weather', input: '{"location": ' },
      { id: 'toolu_good', name: 'get_time', input: {} },
    ]);
  });

  it('maps a renamed tool back as the stream completes it', async () => {
    const turn = recordingTurn();
    const tools = anthropicToolStream({ turn, tools: [dottedTool] });
    await tools.push({
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: 'toolu_n', name: 'mcp_notes_search', input: {} },
    });
    await tools.push({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'input_json_delta', partial_json: '{"query":"x"}' },
    });
    await tools.push({ type: 'content_block_stop', index: 0 });
    expect(turn.added[0]?.name).toBe('mcp.notes:search');
  });
});
