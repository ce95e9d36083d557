import type { ToolCall } from '../../contracts/tool-call.js';
import type { ImageMediaType, ToolResult, TurnResult } from '../../contracts/tool-result.js';
import type { Tool } from '../../tools/define-tool.js';
import type { ArtifactReader, JsonSchema } from './shared.js';
import { base64Of, imagesOf, modelToolSchemas, resultsOf } from './shared.js';
import { checkToolSchema, toolNameMap } from './tool-names.js';

/** Gemini API (generateContent): `functionDeclarations` out, `functionCall` parts in, `functionResponse` parts out. */

export interface GeminiFunctionDeclaration {
  name: string;
  description: string;
  parametersJsonSchema: JsonSchema;
}

export interface GeminiFunctionCall {
  id?: string;
  name?: string;
  args?: Record<string, unknown>;
}

/** A part of a model `Content` (only `functionCall` parts are read). */
export interface GeminiPart {
  functionCall?: GeminiFunctionCall;
  [key: string]: unknown;
}

export interface GeminiFunctionResponsePart {
  functionResponse: {
    id?: string;
    name: string;
    response: { output: string } | { error: string };
    /** Multimodal function responses: the result's images as inline data. */
    parts?: Array<{ inlineData: { mimeType: ImageMediaType; data: string } }>;
  };
}

/**
 * Gemini `tools`: one tool holding every declaration, `[{ functionDeclarations: [{ name, description,
 * parametersJsonSchema }] }]` (`parametersJsonSchema` takes JSON Schema as it is, unlike the OpenAPI-subset
 * `parameters`).
 */
export function toGeminiTools(tools: readonly Tool[]): [{ functionDeclarations: GeminiFunctionDeclaration[] }] {
  const names = toolNameMap(tools, 'gemini');
  const functionDeclarations = modelToolSchemas(tools).map((tool) => {
    checkToolSchema({ toolName: tool.name, schema: tool.inputSchema, provider: 'gemini' });
    return { name: names.toModel(tool.name), description: tool.description, parametersJsonSchema: tool.inputSchema };
  });
  return [{ functionDeclarations }];
}

let generated = 0;

/** A call id for a `functionCall` without one (some backends omit it): unique in this process and across restarts. */
function generatedCallId(): string {
  generated += 1;
  return `gemini_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 10)}_${generated}`;
}

/**
 * Tool calls from the parts of a candidate's `content` (`functionCall` parts; text and thoughts are skipped). A call
 * without an `id` gets a generated unique one. Keep the parts: {@link toGeminiFunctionResponses} answers them.
 */
export function callsFromGemini(parts: readonly GeminiPart[], options: { tools?: readonly Tool[] } = {}): ToolCall[] {
  const names = toolNameMap(options.tools, 'gemini');
  return functionCallsOf(parts).map((call) => ({
    id: call.id ?? generatedCallId(),
    name: names.fromModel(call.name ?? ''),
    input: call.args ?? {},
  }));
}

function functionCallsOf(parts: readonly GeminiPart[]): GeminiFunctionCall[] {
  return parts.flatMap((part) => (part.functionCall === undefined ? [] : [part.functionCall]));
}

function responseOf(result: ToolResult, call: GeminiFunctionCall): GeminiFunctionResponsePart['functionResponse'] {
  return {
    ...(call.id === undefined ? {} : { id: call.id }),
    name: call.name ?? '',
    response: result.isError ? { error: result.modelContent } : { output: result.modelContent },
  };
}

function pairedCalls(
  turn: TurnResult | readonly ToolResult[],
  parts: readonly GeminiPart[],
): Array<[ToolResult, GeminiFunctionCall]> {
  const results = resultsOf(turn);
  const calls = functionCallsOf(parts);
  if (calls.length !== results.length)
    throw new Error(
      `Gemini function responses: ${results.length} results for ${calls.length} functionCall parts; pass the parts the calls came from`,
    );
  return results.map((result, index) => [result, calls[index] ?? {}]);
}

/**
 * `functionResponse` parts for the next `user` content, one per call in call order: `{ id?, name, response: {
 * output } }`, or `{ error }` for a failed result. `name` is the name the model called and `id` is echoed when the
 * model sent one, so pass the model's parts (`functionCalls`), the same ones given to {@link callsFromGemini}.
 */
export function toGeminiFunctionResponses(
  turn: TurnResult | readonly ToolResult[],
  options: { functionCalls: readonly GeminiPart[] },
): GeminiFunctionResponsePart[] {
  return pairedCalls(turn, options.functionCalls).map(([result, call]) => ({
    functionResponse: responseOf(result, call),
  }));
}

/**
 * As {@link toGeminiFunctionResponses}, with each result's images as `functionResponse.parts` of `inlineData`
 * (Gemini's multimodal function responses), read from the artifact store now.
 */
export async function toGeminiFunctionResponsesWithImages(
  turn: TurnResult | readonly ToolResult[],
  options: { functionCalls: readonly GeminiPart[]; artifacts: ArtifactReader },
): Promise<GeminiFunctionResponsePart[]> {
  return Promise.all(
    pairedCalls(turn, options.functionCalls).map(async ([result, call]): Promise<GeminiFunctionResponsePart> => {
      const images = imagesOf(result);
      if (images.length === 0) return { functionResponse: responseOf(result, call) };
      const parts = await Promise.all(
        images.map(async (image) => ({
          inlineData: { mimeType: image.mediaType, data: await base64Of(image, options.artifacts) },
        })),
      );
      return { functionResponse: { ...responseOf(result, call), parts } };
    }),
  );
}
