import { describe, expect, it } from 'vitest';
import {
  callsFromAiSdk,
  toAiSdkToolResults,
  toAiSdkToolResultsWithImages,
  toAiSdkTools,
} from '../../../src/client/model-formats/ai-sdk.js';
import { artifacts, dottedTool, failed, getWeatherTool, result, withImage } from './fixtures.js';

describe('Vercel AI SDK adapter', () => {
  it('exports tools keyed by name without execute, the schema a plain JSON Schema object or wrapped by jsonSchema()', () => {
    const tools = toAiSdkTools([getWeatherTool, dottedTool]);
    expect(Object.keys(tools)).toEqual(['get_weather', 'mcp_notes_search']);
    expect(tools.get_weather).toEqual({
      description: 'Get the current weather in a given location',
      inputSchema: expect.objectContaining({ type: 'object', required: ['location'] }),
    });
    expect(tools.get_weather).not.toHaveProperty('execute');
    // The SDK's `jsonSchema(schema)` wraps the plain object; any function of that shape works.
    const wrapped = toAiSdkTools([getWeatherTool], {
      jsonSchema: (schema) => ({ jsonSchema: schema, marker: 'wrapped' }),
    });
    expect(wrapped.get_weather?.inputSchema).toMatchObject({ marker: 'wrapped', jsonSchema: { type: 'object' } });
  });

  it('reads tool-call parts (AI SDK 5 shape: toolCallId, toolName, input)', () => {
    const content = [
      { type: 'text', text: 'Checking.' },
      { type: 'tool-call', toolCallId: '12345', toolName: 'get_weather', input: { location: 'Paris' } },
      { type: 'tool-call', toolCallId: '67890', toolName: 'mcp_notes_search', input: { query: 'x' } },
    ];
    expect(callsFromAiSdk(content, { tools: [getWeatherTool, dottedTool] })).toEqual([
      { id: '12345', name: 'get_weather', input: { location: 'Paris' } },
      { id: '67890', name: 'mcp.notes:search', input: { query: 'x' } },
    ]);
  });

  it('answers with tool-result parts: text output, or error-text for a failed result, under the name the model used', () => {
    const toolCalls = [{ type: 'tool-call', toolCallId: '67890', toolName: 'mcp_notes_search', input: {} }];
    expect(
      toAiSdkToolResults([result('12345'), { ...failed('67890', 'Permission denied'), toolName: 'mcp.notes:search' }], {
        toolCalls,
      }),
    ).toEqual([
      {
        type: 'tool-result',
        toolCallId: '12345',
        toolName: 'get_weather',
        output: { type: 'text', value: 'content of 12345' },
      },
      {
        type: 'tool-result',
        toolCallId: '67890',
        toolName: 'mcp_notes_search',
        output: { type: 'error-text', value: 'Permission denied' },
      },
    ]);
    expect(
      toAiSdkToolResults([{ ...result('1'), toolName: 'mcp.notes:search' }], { tools: [dottedTool] })[0]?.toolName,
    ).toBe('mcp_notes_search');
  });

  it('sends images as content output with media parts', async () => {
    expect((await toAiSdkToolResultsWithImages([withImage('call_1')], { artifacts }))[0]?.output).toEqual({
      type: 'content',
      value: [
        { type: 'text', text: withImage('call_1').modelContent },
        { type: 'media', data: '/9j/4AAQSkZJRg==', mediaType: 'image/jpeg' },
      ],
    });
  });
});
