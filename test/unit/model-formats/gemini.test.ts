import { describe, expect, it } from 'vitest';
import {
  callsFromGemini,
  toGeminiFunctionResponses,
  toGeminiFunctionResponsesWithImages,
  toGeminiTools,
} from '../../../src/client/model-formats/gemini.js';
import type { GeminiPart } from '../../../src/client/model-formats/gemini.js';
import { builtinTools } from '../../../src/tools/builtin.js';
import { artifacts, dottedTool, failed, getWeatherTool, result, withImage } from './fixtures.js';

describe('Gemini adapter', () => {
  it('exports one tool with functionDeclarations carrying parametersJsonSchema', () => {
    const [tool] = toGeminiTools([getWeatherTool, dottedTool]);
    expect(tool.functionDeclarations.map((declaration) => declaration.name)).toEqual([
      'get_weather',
      'mcp.notes:search',
    ]);
    expect(tool.functionDeclarations[0]).toEqual({
      name: 'get_weather',
      description: 'Get the current weather in a given location',
      parametersJsonSchema: expect.objectContaining({ type: 'object', required: ['location'] }),
    });
    expect(toGeminiTools(builtinTools())[0].functionDeclarations).toHaveLength(builtinTools().length);
  });

  it('reads parallel functionCall parts as in the docs, generating unique ids where the backend sent none', () => {
    // Gemini docs, "Parallel function calling": three functionCall parts without ids.
    const parts: GeminiPart[] = [
      { text: 'Let us get the party started.' },
      { functionCall: { name: 'power_disco_ball', args: { power: true } } },
      { functionCall: { name: 'start_music', args: { energetic: true, loud: true } } },
      { functionCall: { name: 'dim_lights', args: { brightness: 0.5 } } },
    ];
    const calls = callsFromGemini(parts);
    expect(calls.map((call) => [call.name, call.input])).toEqual([
      ['power_disco_ball', { power: true }],
      ['start_music', { energetic: true, loud: true }],
      ['dim_lights', { brightness: 0.5 }],
    ]);
    const ids = [...calls, ...callsFromGemini(parts)].map((call) => call.id);
    expect(new Set(ids).size).toBe(6);
    expect(ids.every((id) => id.length > 0)).toBe(true);
    expect(
      callsFromGemini([{ functionCall: { id: 'abc123', name: 'get_weather', args: { location: 'Paris' } } }])[0]?.id,
    ).toBe('abc123');
  });

  it('answers with functionResponse parts: the name the model called, its id when it sent one, output or error', () => {
    const parts: GeminiPart[] = [
      { functionCall: { id: 'fc_1', name: 'get_weather', args: { location: 'Paris' } } },
      { functionCall: { name: 'BashOutput', args: { task_id: 't' } } },
    ];
    const calls = callsFromGemini(parts);
    // The session resolved the alias: its result names the canonical tool, the response the name the model used.
    const results = [
      result(calls[0]?.id ?? ''),
      { ...failed(calls[1]?.id ?? '', 'No background task t'), toolName: 'TaskOutput' },
    ];
    expect(toGeminiFunctionResponses(results, { functionCalls: parts })).toEqual([
      { functionResponse: { id: 'fc_1', name: 'get_weather', response: { output: 'content of fc_1' } } },
      { functionResponse: { name: 'BashOutput', response: { error: 'No background task t' } } },
    ]);
    expect(() => toGeminiFunctionResponses(results, { functionCalls: parts.slice(1) })).toThrow(
      '2 results for 1 functionCall parts',
    );
  });

  it('sends images as inlineData parts of the functionResponse', async () => {
    const parts: GeminiPart[] = [{ functionCall: { id: 'call_1', name: 'get_weather', args: {} } }];
    expect(
      await toGeminiFunctionResponsesWithImages([withImage('call_1')], { functionCalls: parts, artifacts }),
    ).toEqual([
      {
        functionResponse: {
          id: 'call_1',
          name: 'get_weather',
          response: { output: withImage('call_1').modelContent },
          parts: [{ inlineData: { mimeType: 'image/jpeg', data: '/9j/4AAQSkZJRg==' } }],
        },
      },
    ]);
  });
});
