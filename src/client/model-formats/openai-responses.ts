import type { ToolCall } from '../../contracts/tool-call.js';
import type { ToolResult, TurnResult } from '../../contracts/tool-result.js';
import type { Tool } from '../../tools/define-tool.js';
import type { ArtifactReader, JsonSchema } from './shared.js';
import { dataUrlOf, imagesOf, modelToolSchemas, resultsOf, textMarkingErrors } from './shared.js';
import { toStrictJsonSchema } from './strict-schema.js';
import { checkToolSchema, toolNameMap } from './tool-names.js';

/** OpenAI Responses API: flat function tools, `function_call` items in, `function_call_output` items out. */

export interface OpenAIResponsesTool {
  type: 'function';
  name: string;
  description: string;
  parameters: JsonSchema;
  strict: boolean;
}

/** An output item of a response (only `function_call` items are read). */
export interface OpenAIResponsesOutputItem {
  type: string;
  id?: string;
  call_id?: string;
  name?: string;
  arguments?: string;
}

export type OpenAIResponsesOutputContent =
  { type: 'input_text'; text: string } | { type: 'input_image'; image_url: string };

export interface OpenAIFunctionCallOutput {
  type: 'function_call_output';
  call_id: string;
  output: string | OpenAIResponsesOutputContent[];
}

/**
 * Responses `tools`, flat: `{ type: 'function', name, description, parameters, strict }`. `strict` is `false` by
 * default and always sent: when it is left out the API makes the schema strict itself, which turns every optional
 * field into a required one. For strict mode use {@link toOpenAIResponsesStrictTools}.
 */
export function toOpenAIResponsesTools(tools: readonly Tool[]): OpenAIResponsesTool[] {
  const names = toolNameMap(tools, 'openai-responses');
  return modelToolSchemas(tools).map((tool) => {
    checkToolSchema({ toolName: tool.name, schema: tool.inputSchema, provider: 'openai-responses' });
    return {
      type: 'function',
      name: names.toModel(tool.name),
      description: tool.description,
      parameters: tool.inputSchema,
      strict: false,
    };
  });
}

/**
 * Responses `tools` in strict mode (`strict: true`), each schema rewritten on a copy to meet every strict rule
 * (`toStrictJsonSchema`): the model's arguments always parse, and the `null`s it sends for optional fields are
 * dropped by Switchyard before validation.
 */
export function toOpenAIResponsesStrictTools(tools: readonly Tool[]): OpenAIResponsesTool[] {
  return toOpenAIResponsesTools(tools).map((tool, index) => ({
    ...tool,
    parameters: toStrictJsonSchema({ toolName: tools[index]?.name ?? tool.name, schema: tool.parameters }),
    strict: true,
  }));
}

/**
 * Tool calls from a response's `output` items (`function_call` items; messages and reasoning are skipped). The
 * call id is the item's `call_id` (`call_…`), which `function_call_output` must echo, not its `id` (`fc_…`).
 */
export function callsFromOpenAIResponses(
  output: readonly OpenAIResponsesOutputItem[],
  options: { tools?: readonly Tool[] } = {},
): ToolCall[] {
  const names = toolNameMap(options.tools, 'openai-responses');
  return output
    .filter((item) => item.type === 'function_call')
    .map((item) => ({
      id: item.call_id ?? item.id ?? '',
      name: names.fromModel(item.name ?? ''),
      input: item.arguments ?? '',
    }));
}

/**
 * `function_call_output` input items for the next request, in call order, keyed by `call_id`. A failed result's
 * text starts with `Error: ` (Responses has no error flag). Text only; {@link toOpenAIResponsesOutputsWithImages}
 * sends images too.
 */
export function toOpenAIResponsesOutputs(turn: TurnResult | readonly ToolResult[]): OpenAIFunctionCallOutput[] {
  return resultsOf(turn).map((result) => ({
    type: 'function_call_output',
    call_id: result.callId,
    output: textMarkingErrors(result),
  }));
}

/**
 * `function_call_output` items with images: a result with images gets an `output` list of `input_text` (its text
 * form) and `input_image` parts (`data:` URLs read from the artifact store now); the others are as in
 * {@link toOpenAIResponsesOutputs}.
 */
export async function toOpenAIResponsesOutputsWithImages(
  turn: TurnResult | readonly ToolResult[],
  options: { artifacts: ArtifactReader },
): Promise<OpenAIFunctionCallOutput[]> {
  return Promise.all(
    resultsOf(turn).map(async (result): Promise<OpenAIFunctionCallOutput> => {
      const images = imagesOf(result);
      if (images.length === 0)
        return { type: 'function_call_output', call_id: result.callId, output: textMarkingErrors(result) };
      const output: OpenAIResponsesOutputContent[] = [{ type: 'input_text', text: textMarkingErrors(result) }];
      for (const image of images)
        output.push({ type: 'input_image', image_url: await dataUrlOf(image, options.artifacts) });
      return { type: 'function_call_output', call_id: result.callId, output };
    }),
  );
}
