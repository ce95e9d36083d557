import { z } from 'zod';
import type { ToolCall } from '../contracts/tool-call.js';
import type { ArtifactStore } from '../contracts/artifact-store.js';
import type { ContentBlock, ImageMediaType, ToolResult, TurnResult } from '../contracts/tool-result.js';
import type { Tool } from '../tools/define-tool.js';

/** A tool as a model sees it: name, description and the JSON Schema of its input. */
export interface ModelToolSchema {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** The JSON Schema the model sees for a tool: the same schema Switchyard validates against (or an MCP tool's own). */
export function toolInputJsonSchema(tool: Tool): Record<string, unknown> {
  const mcpSchema = (tool as Tool & { mcpInputSchema?: unknown }).mcpInputSchema;
  if (mcpSchema !== null && typeof mcpSchema === 'object') return mcpSchema as Record<string, unknown>;
  const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.inputSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return schema;
}

export function modelToolSchemas(tools: readonly Tool[]): ModelToolSchema[] {
  return tools.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: toolInputJsonSchema(tool) }));
}

/** Anthropic Messages API `tools`. */
export function toAnthropicTools(tools: readonly Tool[]): Array<{ name: string; description: string; input_schema: Record<string, unknown> }> {
  return modelToolSchemas(tools).map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.inputSchema }));
}

/** OpenAI Chat Completions / Responses `tools` (function tools). */
export function toOpenAITools(tools: readonly Tool[]): Array<{ type: 'function'; function: { name: string; description: string; parameters: Record<string, unknown> } }> {
  return modelToolSchemas(tools).map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.inputSchema } }));
}

/** Tool calls from Anthropic `tool_use` content blocks (other blocks are skipped). */
export function callsFromAnthropic(content: ReadonlyArray<{ type: string; id?: string; name?: string; input?: unknown }>): ToolCall[] {
  return content.filter((block) => block.type === 'tool_use').map((block) => ({ id: block.id ?? '', name: block.name ?? '', input: block.input ?? {} }));
}

/** Tool calls from OpenAI `tool_calls` (arguments stay a JSON string: Switchyard parses and validates it). */
export function callsFromOpenAI(toolCalls: ReadonlyArray<{ id: string; function: { name: string; arguments: string } }>): ToolCall[] {
  return toolCalls.map((call) => ({ id: call.id, name: call.function.name, input: call.function.arguments }));
}

/**
 * Anthropic `tool_result` blocks for the next user message, in call order. Text only: a result with images gives
 * its text form (`[image: …]` lines); use {@link toAnthropicToolResultsWithImages} to send the images.
 */
export function toAnthropicToolResults(turn: TurnResult | readonly ToolResult[]): Array<{ type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean }> {
  const results = 'results' in turn ? turn.results : turn;
  return results.map((result) => ({ type: 'tool_result', tool_use_id: result.callId, content: result.modelContent, ...(result.isError ? { is_error: true } : {}) }));
}

/**
 * OpenAI `tool` messages, in call order. Text only: a result with images gives its text form (`[image: …]` lines);
 * use {@link toOpenAIMessagesWithImages} to send the images.
 */
export function toOpenAIToolMessages(turn: TurnResult | readonly ToolResult[]): Array<{ role: 'tool'; tool_call_id: string; content: string }> {
  const results = 'results' in turn ? turn.results : turn;
  return results.map((result) => ({ role: 'tool', tool_call_id: result.callId, content: result.modelContent }));
}

/** Where the adapters read an image's bytes: `SwitchyardClient.artifacts`, or any store the workers share. */
export type ArtifactReader = Pick<ArtifactStore, 'readBytes'>;

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

/** OpenAI Chat Completions content parts of a user message. */
export type OpenAIUserContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

export type OpenAIToolMessage = { role: 'tool'; tool_call_id: string; content: string };
export type OpenAIUserMessage = { role: 'user'; content: OpenAIUserContentPart[] };

function resultsOf(turn: TurnResult | readonly ToolResult[]): readonly ToolResult[] {
  return 'results' in turn ? turn.results : turn;
}

type ImageContentBlock = Extract<ContentBlock, { type: 'image' }>;

async function base64Of(block: ImageContentBlock, artifacts: ArtifactReader): Promise<string> {
  return Buffer.from(await artifacts.readBytes(block.artifact)).toString('base64');
}

/**
 * Anthropic `tool_result` blocks with their images (Messages API: a `tool_result`'s `content` may be a list of
 * `text` and `image` blocks, the image as `{ type: 'base64', media_type, data }`). The bytes are read from the
 * artifact store now, so they never travel through Temporal. Results without images are as in
 * {@link toAnthropicToolResults}; empty text blocks are left out (the API refuses them).
 */
export async function toAnthropicToolResultsWithImages(turn: TurnResult | readonly ToolResult[], options: { artifacts: ArtifactReader }): Promise<AnthropicToolResultBlock[]> {
  return Promise.all(
    resultsOf(turn).map(async (result): Promise<AnthropicToolResultBlock> => {
      const error = result.isError ? { is_error: true } : {};
      if (result.content === undefined) return { type: 'tool_result', tool_use_id: result.callId, content: result.modelContent, ...error };
      const content = await Promise.all(
        result.content.map(async (block): Promise<AnthropicTextBlock | AnthropicImageBlock | undefined> => {
          switch (block.type) {
            case 'text':
              return block.text === '' ? undefined : { type: 'text', text: block.text };
            case 'image':
              return { type: 'image', source: { type: 'base64', media_type: block.mediaType, data: await base64Of(block, options.artifacts) } };
            default: {
              const exhaustive: never = block;
              return exhaustive;
            }
          }
        }),
      );
      return { type: 'tool_result', tool_use_id: result.callId, content: content.filter((block) => block !== undefined), ...error };
    }),
  );
}

/**
 * OpenAI Chat Completions messages with images: one `tool` message per call in call order (its text form: a tool
 * message can carry text only), then, when any result has images, one `user` message with them as `image_url`
 * parts holding `data:<type>;base64,…` URLs, each result's images after a text part naming its call id. The user
 * message comes after all tool messages because the API wants the tool messages right after the assistant message
 * that made the calls. Images are read from the artifact store now.
 */
export async function toOpenAIMessagesWithImages(turn: TurnResult | readonly ToolResult[], options: { artifacts: ArtifactReader }): Promise<Array<OpenAIToolMessage | OpenAIUserMessage>> {
  const results = resultsOf(turn);
  const messages: Array<OpenAIToolMessage | OpenAIUserMessage> = toOpenAIToolMessages(results);
  const parts: OpenAIUserContentPart[] = [];
  for (const result of results) {
    const images = (result.content ?? []).filter((block): block is ImageContentBlock => block.type === 'image');
    if (images.length === 0) continue;
    parts.push({ type: 'text', text: `Image${images.length === 1 ? '' : 's'} returned by tool call ${result.callId} (${result.toolName}):` });
    for (const image of images) {
      parts.push({ type: 'image_url', image_url: { url: `data:${image.mediaType};base64,${await base64Of(image, options.artifacts)}` } });
    }
  }
  if (parts.length > 0) messages.push({ role: 'user', content: parts });
  return messages;
}
