import type { ToolCall } from '../../contracts/tool-call.js';
import type { ToolResult, TurnResult } from '../../contracts/tool-result.js';
import type { Tool } from '../../tools/define-tool.js';
import type { ArtifactReader, JsonSchema } from './shared.js';
import { dataUrlOf, imagesOf, modelToolSchemas, resultsOf, textMarkingErrors } from './shared.js';
import { checkToolSchema, toolNameMap } from './tool-names.js';
import { toStrictJsonSchema } from './strict-schema.js';

/** OpenAI Chat Completions: nested function tools, `tool_calls` in, `tool` messages out. */

export interface OpenAIChatTool {
  type: 'function';
  function: { name: string; description: string; parameters: JsonSchema; strict?: boolean };
}

/** OpenAI Chat Completions content parts of a user message. */
export type OpenAIUserContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

export type OpenAIToolMessage = { role: 'tool'; tool_call_id: string; content: string };
export type OpenAIUserMessage = { role: 'user'; content: OpenAIUserContentPart[] };

/**
 * Chat Completions `tools` (`{ type: 'function', function: { name, description, parameters } }`). With
 * `strict: true` each schema is rewritten on a copy to meet Structured Outputs' rules (see `toStrictJsonSchema`).
 */
export function toOpenAIChatTools(tools: readonly Tool[], options: { strict?: boolean } = {}): OpenAIChatTool[] {
  const names = toolNameMap(tools, 'openai-chat');
  return modelToolSchemas(tools).map((tool) => {
    checkToolSchema({ toolName: tool.name, schema: tool.inputSchema, provider: 'openai-chat' });
    const parameters =
      options.strict === true
        ? toStrictJsonSchema({ toolName: tool.name, schema: tool.inputSchema, provider: 'openai-chat' })
        : tool.inputSchema;
    return {
      type: 'function',
      function: {
        name: names.toModel(tool.name),
        description: tool.description,
        parameters,
        ...(options.strict === true ? { strict: true } : {}),
      },
    };
  });
}

/** Chat Completions `tools` (kept name; the Responses API wants {@link toOpenAIResponsesTools}). */
export const toOpenAITools = (tools: readonly Tool[]): OpenAIChatTool[] => toOpenAIChatTools(tools);

/** Tool calls from a Chat Completions message's `tool_calls` (arguments stay a JSON string: Switchyard parses it). */
export function callsFromOpenAI(
  toolCalls: ReadonlyArray<{ id: string; function: { name: string; arguments: string } }>,
  options: { tools?: readonly Tool[] } = {},
): ToolCall[] {
  const names = toolNameMap(options.tools, 'openai-chat');
  return toolCalls.map((call) => ({
    id: call.id,
    name: names.fromModel(call.function.name),
    input: call.function.arguments,
  }));
}

/**
 * OpenAI `tool` messages, in call order. A failed result's text starts with `Error: ` (Chat has no error flag).
 * Text only: a result with images gives its text form; use {@link toOpenAIMessagesWithImages} to send the images.
 */
export function toOpenAIToolMessages(turn: TurnResult | readonly ToolResult[]): OpenAIToolMessage[] {
  return resultsOf(turn).map((result) => ({
    role: 'tool',
    tool_call_id: result.callId,
    content: textMarkingErrors(result),
  }));
}

/**
 * OpenAI Chat Completions messages with images: one `tool` message per call in call order (its text form: a tool
 * message can carry text only), then, when any result has images, one `user` message with them as `image_url`
 * parts holding `data:<type>;base64,…` URLs, each result's images after a text part naming its call id. The user
 * message comes after all tool messages because the API wants the tool messages right after the assistant message
 * that made the calls. Images are read from the artifact store now.
 */
export async function toOpenAIMessagesWithImages(
  turn: TurnResult | readonly ToolResult[],
  options: { artifacts: ArtifactReader },
): Promise<Array<OpenAIToolMessage | OpenAIUserMessage>> {
  const results = resultsOf(turn);
  const messages: Array<OpenAIToolMessage | OpenAIUserMessage> = toOpenAIToolMessages(results);
  const parts: OpenAIUserContentPart[] = [];
  for (const result of results) {
    const images = imagesOf(result);
    if (images.length === 0) continue;
    parts.push({
      type: 'text',
      text: `Image${images.length === 1 ? '' : 's'} returned by tool call ${result.callId} (${result.toolName}):`,
    });
    for (const image of images)
      parts.push({ type: 'image_url', image_url: { url: await dataUrlOf(image, options.artifacts) } });
  }
  if (parts.length > 0) messages.push({ role: 'user', content: parts });
  return messages;
}
