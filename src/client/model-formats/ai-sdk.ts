import type { ToolCall } from '../../contracts/tool-call.js';
import type { ImageMediaType, ToolResult, TurnResult } from '../../contracts/tool-result.js';
import type { Tool } from '../../tools/define-tool.js';
import type { ArtifactReader, JsonSchema } from './shared.js';
import { base64Of, imagesOf, modelToolSchemas, resultsOf } from './shared.js';
import { checkToolSchema, toolNameMap } from './tool-names.js';

/** Vercel AI SDK (v5 message shapes): tools without `execute`, `tool-call` parts in, `tool-result` parts out. */

export interface AiSdkToolDefinition<Schema> {
  description: string;
  inputSchema: Schema;
}

/** A `tool-call` content part (assistant message content, or `result.toolCalls` of `generateText`). */
export interface AiSdkToolCallPart {
  type: string;
  toolCallId?: string;
  toolName?: string;
  input?: unknown;
}

export type AiSdkToolResultOutput =
  | { type: 'text'; value: string }
  | { type: 'error-text'; value: string }
  | {
      type: 'content';
      value: Array<{ type: 'text'; text: string } | { type: 'media'; data: string; mediaType: ImageMediaType }>;
    };

export interface AiSdkToolResultPart {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  output: AiSdkToolResultOutput;
}

/**
 * AI SDK `tools` for `generateText` / `streamText`, keyed by name, with no `execute` (Switchyard runs the calls).
 * `inputSchema` is the JSON Schema as a plain object; pass the SDK's `jsonSchema` helper to get its schema object
 * (`toAiSdkTools(tools, { jsonSchema })`), so the adapter needs no SDK at run time.
 */
export function toAiSdkTools(tools: readonly Tool[]): Record<string, AiSdkToolDefinition<JsonSchema>>;
export function toAiSdkTools<Schema>(
  tools: readonly Tool[],
  options: { jsonSchema: (schema: JsonSchema) => Schema },
): Record<string, AiSdkToolDefinition<Schema>>;
export function toAiSdkTools<Schema>(
  tools: readonly Tool[],
  options: { jsonSchema?: (schema: JsonSchema) => Schema } = {},
): Record<string, AiSdkToolDefinition<Schema | JsonSchema>> {
  const names = toolNameMap(tools, 'ai-sdk');
  return Object.fromEntries(
    modelToolSchemas(tools).map((tool) => {
      checkToolSchema({ toolName: tool.name, schema: tool.inputSchema, provider: 'ai-sdk' });
      const inputSchema = options.jsonSchema === undefined ? tool.inputSchema : options.jsonSchema(tool.inputSchema);
      return [names.toModel(tool.name), { description: tool.description, inputSchema }];
    }),
  );
}

/** Tool calls from `tool-call` parts (other parts are skipped); pass `tools` to map safe names back. */
export function callsFromAiSdk(
  parts: readonly AiSdkToolCallPart[],
  options: { tools?: readonly Tool[] } = {},
): ToolCall[] {
  const names = toolNameMap(options.tools, 'ai-sdk');
  return parts
    .filter((part) => part.type === 'tool-call')
    .map((part) => ({
      id: part.toolCallId ?? '',
      name: names.fromModel(part.toolName ?? ''),
      input: part.input ?? {},
    }));
}

function toolNameFor(
  result: ToolResult,
  options: { tools?: readonly Tool[]; toolCalls?: readonly AiSdkToolCallPart[] },
): string {
  const called = options.toolCalls?.find((part) => part.toolCallId === result.callId)?.toolName;
  return called ?? toolNameMap(options.tools, 'ai-sdk').toModel(result.toolName);
}

/**
 * `tool-result` parts for the next `{ role: 'tool', content }` message, in call order: `output` is `{ type: 'text',
 * value }`, or `{ type: 'error-text', value }` for a failed result. `toolName` is the name the model called when
 * `toolCalls` (its `tool-call` parts) are given, else the exported name of the tool.
 */
export function toAiSdkToolResults(
  turn: TurnResult | readonly ToolResult[],
  options: { tools?: readonly Tool[]; toolCalls?: readonly AiSdkToolCallPart[] } = {},
): AiSdkToolResultPart[] {
  return resultsOf(turn).map((result) => ({
    type: 'tool-result',
    toolCallId: result.callId,
    toolName: toolNameFor(result, options),
    output: result.isError
      ? { type: 'error-text', value: result.modelContent }
      : { type: 'text', value: result.modelContent },
  }));
}

/**
 * As {@link toAiSdkToolResults}, with a successful result's images: `output` becomes `{ type: 'content', value: [{
 * type: 'text', text }, { type: 'media', data, mediaType }] }`, the bytes read from the artifact store now.
 */
export async function toAiSdkToolResultsWithImages(
  turn: TurnResult | readonly ToolResult[],
  options: { artifacts: ArtifactReader; tools?: readonly Tool[]; toolCalls?: readonly AiSdkToolCallPart[] },
): Promise<AiSdkToolResultPart[]> {
  const textParts = toAiSdkToolResults(turn, options);
  return Promise.all(
    resultsOf(turn).map(async (result, index): Promise<AiSdkToolResultPart> => {
      const part = textParts[index] as AiSdkToolResultPart;
      const images = imagesOf(result);
      if (images.length === 0 || result.isError) return part;
      const media = await Promise.all(
        images.map(async (image) => ({
          type: 'media' as const,
          data: await base64Of(image, options.artifacts),
          mediaType: image.mediaType,
        })),
      );
      return { ...part, output: { type: 'content', value: [{ type: 'text', text: result.modelContent }, ...media] } };
    }),
  );
}
