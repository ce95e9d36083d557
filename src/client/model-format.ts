import { z } from 'zod';
import type { ToolCall } from '../contracts/tool-call.js';
import type { ToolResult, TurnResult } from '../contracts/tool-result.js';
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

/** Anthropic `tool_result` blocks for the next user message, in call order. */
export function toAnthropicToolResults(turn: TurnResult | readonly ToolResult[]): Array<{ type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean }> {
  const results = 'results' in turn ? turn.results : turn;
  return results.map((result) => ({ type: 'tool_result', tool_use_id: result.callId, content: result.modelContent, ...(result.isError ? { is_error: true } : {}) }));
}

/** OpenAI `tool` messages, in call order. */
export function toOpenAIToolMessages(turn: TurnResult | readonly ToolResult[]): Array<{ role: 'tool'; tool_call_id: string; content: string }> {
  const results = 'results' in turn ? turn.results : turn;
  return results.map((result) => ({ role: 'tool', tool_call_id: result.callId, content: result.modelContent }));
}
