import { describe, expect, it } from 'vitest';
import {
  callsFromAnthropic,
  callsFromOpenAI,
  toAnthropicToolResults,
  toAnthropicToolResultsWithImages,
  toAnthropicTools,
  toOpenAIMessagesWithImages,
  toOpenAITools,
  toOpenAIToolMessages,
} from 'temporal-switchyard';
import type { ToolResult } from '../../src/contracts/tool-result.js';
import { readTool } from '../../src/tools/builtin/read.js';

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
    expect(
      callsFromAnthropic([{ type: 'text' }, { type: 'tool_use', id: 'tu1', name: 'Read', input: { file_path: 'a' } }]),
    ).toEqual([{ id: 'tu1', name: 'Read', input: { file_path: 'a' } }]);
    expect(callsFromOpenAI([{ id: 'c1', function: { name: 'Read', arguments: '{"file_path":"a"}' } }])).toEqual([
      { id: 'c1', name: 'Read', input: '{"file_path":"a"}' },
    ]);
  });

  it('turns results into tool_result blocks and tool messages in call order', () => {
    const results = [result('a', false), result('b', true)];
    expect(toAnthropicToolResults(results)).toEqual([
      { type: 'tool_result', tool_use_id: 'a', content: 'content of a' },
      { type: 'tool_result', tool_use_id: 'b', content: 'content of b', is_error: true },
    ]);
    expect(
      toOpenAIToolMessages({ turnId: 't', results, stopped: false }).map((message) => message.tool_call_id),
    ).toEqual(['a', 'b']);
  });
});

describe('model-format adapters with images', () => {
  // The first bytes of a JFIF JPEG: their base64 is the `/9j/4AAQSkZJRg...` of the APIs' documented examples.
  const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46]);
  const uri = 'switchyard-artifact://s/toolu_01A09q90qw90lq917835lq9-tool-result-1';
  const reads: string[] = [];
  const artifacts = {
    readBytes: async (artifact: string): Promise<Uint8Array> => {
      reads.push(artifact);
      if (artifact !== uri) throw new Error(`Artifact not found: ${artifact}`);
      return jpeg;
    },
  };
  const withImage: ToolResult = {
    ...result('toolu_01A09q90qw90lq917835lq9', false),
    toolName: 'get_weather',
    modelContent: `15 degrees\n[image: image/jpeg, 10 bytes, ${uri}]`,
    content: [
      { type: 'text', text: '15 degrees' },
      { type: 'image', mediaType: 'image/jpeg', artifact: uri, bytes: 10 },
    ],
  };

  it('gives Anthropic a tool_result with text and a base64 image block, as in the Messages API tool-use example', async () => {
    expect(jpeg.toString('base64')).toBe('/9j/4AAQSkZJRg==');
    const blocks = await toAnthropicToolResultsWithImages([withImage, result('plain', true)], { artifacts });
    // Anthropic docs, "Handling tool results": a tool_result whose content is a text block and an image block.
    expect(blocks).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_01A09q90qw90lq917835lq9',
        content: [
          { type: 'text', text: '15 degrees' },
          { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQSkZJRg==' } },
        ],
      },
      { type: 'tool_result', tool_use_id: 'plain', content: 'content of plain', is_error: true },
    ]);
    expect(reads).toContain(uri);
    // The text-only adapter still works and sends the text form.
    expect(toAnthropicToolResults([withImage])[0]?.content).toBe(withImage.modelContent);
  });

  it('gives OpenAI the text in the tool message and the image in a following user message, as a data URL', async () => {
    const messages = await toOpenAIMessagesWithImages(
      { turnId: 't', results: [withImage, result('plain', false)], stopped: false },
      { artifacts },
    );
    // OpenAI docs: tool messages `{ role: 'tool', tool_call_id, content }` answer the calls; images go in a user
    // message as `{ type: 'image_url', image_url: { url: 'data:image/jpeg;base64,…' } }` (vision guide, base64 input).
    expect(messages).toEqual([
      { role: 'tool', tool_call_id: 'toolu_01A09q90qw90lq917835lq9', content: withImage.modelContent },
      { role: 'tool', tool_call_id: 'plain', content: 'content of plain' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Image returned by tool call toolu_01A09q90qw90lq917835lq9 (get_weather):' },
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQSkZJRg==' } },
        ],
      },
    ]);
    // Without images, no user message.
    expect(await toOpenAIMessagesWithImages([result('plain', false)], { artifacts })).toEqual([
      { role: 'tool', tool_call_id: 'plain', content: 'content of plain' },
    ]);
  });

  it('fails loudly when an image artifact is gone, instead of sending a result without it', async () => {
    const missing: ToolResult = {
      ...withImage,
      content: [{ type: 'image', mediaType: 'image/png', artifact: 'switchyard-artifact://s/gone' }],
    };
    await expect(toAnthropicToolResultsWithImages([missing], { artifacts })).rejects.toThrow('Artifact not found');
  });
});
