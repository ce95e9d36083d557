import type { ToolCall } from '../../contracts/tool-call.js';
import type { ImageMediaType, ToolResult, TurnResult } from '../../contracts/tool-result.js';
import type { Tool } from '../../tools/define-tool.js';
import type { ArtifactReader, JsonSchema } from './shared.js';
import { base64Of, modelToolSchemas, resultsOf } from './shared.js';
import { checkToolSchema, toolNameMap } from './tool-names.js';

/** Anthropic Messages API: `tools`, `tool_use` blocks in, `tool_result` blocks out. */

export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: JsonSchema;
}

export interface AnthropicTextBlock {
  type: 'text';
  text: string;
}

/** Anthropic Messages `image` content block with a base64 source. */
export interface AnthropicImageBlock {
  type: 'image';
  source: { type: 'base64'; media_type: ImageMediaType; data: string };
}

export interface AnthropicToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string | Array<AnthropicTextBlock | AnthropicImageBlock>;
  is_error?: boolean;
}

/** A block of an assistant message as the API returns it (only `tool_use` blocks are read). */
export interface AnthropicContentBlock {
  type: string;
  id?: string;
  name?: string;
  input?: unknown;
}

/**
 * Anthropic `tools`: each schema a copy, checked (object root, property keys Anthropic accepts); a name Anthropic
 * refuses (`mcp.server:tool`) gets a safe one that {@link callsFromAnthropic} maps back when given the same tools.
 */
export function toAnthropicTools(tools: readonly Tool[]): AnthropicTool[] {
  const names = toolNameMap(tools, 'anthropic');
  return modelToolSchemas(tools).map((tool) => {
    checkToolSchema({ toolName: tool.name, schema: tool.inputSchema, provider: 'anthropic' });
    return { name: names.toModel(tool.name), description: tool.description, input_schema: tool.inputSchema };
  });
}

/** Tool calls from Anthropic `tool_use` content blocks (other blocks are skipped); pass `tools` to map safe names back. */
export function callsFromAnthropic(
  content: readonly AnthropicContentBlock[],
  options: { tools?: readonly Tool[] } = {},
): ToolCall[] {
  const names = toolNameMap(options.tools, 'anthropic');
  return content
    .filter((block) => block.type === 'tool_use')
    .map((block) => ({ id: block.id ?? '', name: names.fromModel(block.name ?? ''), input: block.input ?? {} }));
}

/**
 * Anthropic `tool_result` blocks for the next user message, in call order. Text only: a result with images gives
 * its text form (`[image: …]` lines); use {@link toAnthropicToolResultsWithImages} to send the images.
 */
export function toAnthropicToolResults(
  turn: TurnResult | readonly ToolResult[],
): Array<{ type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean }> {
  return resultsOf(turn).map((result) => ({
    type: 'tool_result',
    tool_use_id: result.callId,
    content: result.modelContent,
    ...(result.isError ? { is_error: true } : {}),
  }));
}

/**
 * Anthropic `tool_result` blocks with their images (Messages API: a `tool_result`'s `content` may be a list of
 * `text` and `image` blocks, the image as `{ type: 'base64', media_type, data }`). The bytes are read from the
 * artifact store now, so they never travel through Temporal. Results without images are as in
 * {@link toAnthropicToolResults}; empty text blocks are left out (the API refuses them).
 */
export async function toAnthropicToolResultsWithImages(
  turn: TurnResult | readonly ToolResult[],
  options: { artifacts: ArtifactReader },
): Promise<AnthropicToolResultBlock[]> {
  return Promise.all(
    resultsOf(turn).map(async (result): Promise<AnthropicToolResultBlock> => {
      const error = result.isError ? { is_error: true } : {};
      if (result.content === undefined)
        return { type: 'tool_result', tool_use_id: result.callId, content: result.modelContent, ...error };
      const content = await Promise.all(
        result.content.map(async (block): Promise<AnthropicTextBlock | AnthropicImageBlock | undefined> => {
          switch (block.type) {
            case 'text':
              return block.text === '' ? undefined : { type: 'text', text: block.text };
            case 'image':
              return {
                type: 'image',
                source: { type: 'base64', media_type: block.mediaType, data: await base64Of(block, options.artifacts) },
              };
            default: {
              const exhaustive: never = block;
              return exhaustive;
            }
          }
        }),
      );
      return {
        type: 'tool_result',
        tool_use_id: result.callId,
        content: content.filter((block) => block !== undefined),
        ...error,
      };
    }),
  );
}
