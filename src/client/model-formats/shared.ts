import { z } from 'zod';
import type { ArtifactStore } from '../../contracts/artifact-store.js';
import type { ContentBlock, ToolResult, TurnResult } from '../../contracts/tool-result.js';
import type { Tool } from '../../tools/define-tool.js';

/** The model APIs the adapters speak. */
export type ModelProvider = 'anthropic' | 'openai-chat' | 'openai-responses' | 'gemini' | 'ai-sdk';

export type JsonSchema = Record<string, unknown>;

/** A tool as a model sees it: name, description and the JSON Schema of its input. */
export interface ModelToolSchema {
  name: string;
  description: string;
  inputSchema: JsonSchema;
}

/** Where the adapters read an image's bytes: `SwitchyardClient.artifacts`, or any store the workers share. */
export type ArtifactReader = Pick<ArtifactStore, 'readBytes'>;

/** A tool that cannot be sent to a provider as it is; the message names the tool, the provider and the rule. */
export class ToolExportError extends Error {
  constructor(
    readonly toolName: string,
    readonly provider: ModelProvider,
    readonly rule: string,
  ) {
    super(`Tool "${toolName}" cannot be sent to ${provider}: ${rule}`);
    this.name = 'ToolExportError';
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** Drops `$schema` everywhere in a schema (a copy): providers refuse it or ignore it, and it is noise to the model. */
function withoutSchemaKeyword(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutSchemaKeyword);
  if (!isRecord(node)) return node;
  return Object.fromEntries(
    Object.entries(node).flatMap(([key, value]) => (key === '$schema' ? [] : [[key, withoutSchemaKeyword(value)]])),
  );
}

/**
 * The JSON Schema the model sees for a tool: the one Switchyard validates against (or an MCP tool's own), always a
 * fresh copy without `$schema`, so an adapter that changes it never changes what Switchyard validates with.
 */
export function toolInputJsonSchema(tool: Tool): JsonSchema {
  // Read directly (not through tools/mcp/mcp.ts) so the client never loads the MCP SDK.
  const mcpSchema = (tool as Tool & { mcpInputSchema?: unknown }).mcpInputSchema;
  const schema = isRecord(mcpSchema)
    ? mcpSchema
    : z.toJSONSchema(tool.inputSchema, { io: 'input', unrepresentable: 'any' });
  return withoutSchemaKeyword(structuredClone(schema)) as JsonSchema;
}

export function modelToolSchemas(tools: readonly Tool[]): ModelToolSchema[] {
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: toolInputJsonSchema(tool),
  }));
}

export function resultsOf(turn: TurnResult | readonly ToolResult[]): readonly ToolResult[] {
  return 'results' in turn ? turn.results : turn;
}

export type ImageContentBlock = Extract<ContentBlock, { type: 'image' }>;

export function imagesOf(result: ToolResult): ImageContentBlock[] {
  return (result.content ?? []).filter((block): block is ImageContentBlock => block.type === 'image');
}

export async function base64Of(block: ImageContentBlock, artifacts: ArtifactReader): Promise<string> {
  return Buffer.from(await artifacts.readBytes(block.artifact)).toString('base64');
}

export async function dataUrlOf(block: ImageContentBlock, artifacts: ArtifactReader): Promise<string> {
  return `data:${block.mediaType};base64,${await base64Of(block, artifacts)}`;
}

/** What OpenAI's text-only results put before a failed result's text (Chat and Responses have no error flag). */
export const errorPrefix = 'Error: ';

/**
 * A result's text for an API without an error flag (OpenAI Chat Completions and Responses): a failed result
 * (`isError`: error, denied, cancelled) starts with `Error: ` unless its text already says so with
 * `<tool_use_error>`, so a timeout or a denial never reads like ordinary output.
 */
export function textMarkingErrors(result: ToolResult): string {
  if (
    !result.isError ||
    result.modelContent.startsWith('<tool_use_error>') ||
    result.modelContent.startsWith(errorPrefix)
  )
    return result.modelContent;
  return `${errorPrefix}${result.modelContent}`;
}

/** Parses a model's JSON arguments; an empty string (a no-argument tool) is `{}`; invalid JSON stays the string. */
export function parseArguments(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export { isRecord };
