import { describe, expect, it } from 'vitest';
import { callsFromAnthropic, callsFromOpenAI, toAnthropicToolResults, toAnthropicTools, toOpenAITools, toOpenAIToolMessages } from '../../src/client/model-format.js';
import type { ToolResult } from '../../src/contracts/tool-result.js';
import { readTool } from '../../src/tools/read.js';

const result = (callId: string, isError: boolean): ToolResult => ({
  callId,
  toolName: 'Read',
  status: isError ? 'error' : 'success',
  modelContent: `content of ${callId}`,
  isError,
  timings: { totalMs: 1, permissionWaitMs: 0, queuedMs: 0 },
});

describe('model-format adapters', () => {
  it('exports the JSON Schema Switchyard validates against, for model requests', () => {
    const [anthropic] = toAnthropicTools([readTool]);
    expect(anthropic?.name).toBe('Read');
    expect(anthropic?.input_schema).toMatchObject({
      type: 'object',
      required: ['file_path'],
      additionalProperties: false,
      properties: { file_path: { type: 'string' }, offset: { type: 'integer' }, limit: { type: 'integer' } },
    });
    expect(anthropic?.input_schema).not.toHaveProperty('$schema');
    expect(toOpenAITools([readTool])[0]?.function.parameters).toEqual(anthropic?.input_schema);
  });

  it('reads calls from Anthropic and OpenAI replies', () => {
    expect(callsFromAnthropic([{ type: 'text' }, { type: 'tool_use', id: 'tu1', name: 'Read', input: { file_path: 'a' } }])).toEqual([{ id: 'tu1', name: 'Read', input: { file_path: 'a' } }]);
    expect(callsFromOpenAI([{ id: 'c1', function: { name: 'Read', arguments: '{"file_path":"a"}' } }])).toEqual([{ id: 'c1', name: 'Read', input: '{"file_path":"a"}' }]);
  });

  it('turns results into tool_result blocks and tool messages in call order', () => {
    const results = [result('a', false), result('b', true)];
    expect(toAnthropicToolResults(results)).toEqual([
      { type: 'tool_result', tool_use_id: 'a', content: 'content of a' },
      { type: 'tool_result', tool_use_id: 'b', content: 'content of b', is_error: true },
    ]);
    expect(toOpenAIToolMessages({ turnId: 't', results, stopped: false }).map((message) => message.tool_call_id)).toEqual(['a', 'b']);
  });
});
