/**
 * The adapter from an MCP tool to a Switchyard tool (split out of src/tools/mcp/mcp.ts): naming, flags from the
 * server's annotations, argument validation against the tool's JSON Schema, and the model's output for a result.
 */
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType, JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation';
import type { ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { RE2JS } from 're2js';
import { z } from 'zod';
import { RESULT_BUDGETS, TOOL_TIMEOUTS } from '../../contracts/defaults.js';
import { neutralizeEnvelopes } from '../../contracts/texts.js';
import { defineTool } from '../define-tool.js';
import type { Tool, ToolOutput, ToolOutputImage, ValidationOutcome } from '../define-tool.js';
import { detectImageMediaType } from '../support/image-media-type.js';
import { mcpToolDisplay } from '../support/displays.js';
import type { McpCallResult, McpConnection, McpToolInfo } from './mcp-connection.js';

/** A Switchyard tool backed by an MCP tool; `mcpInputSchema` is the server's JSON Schema, for model adapters. */
export type McpTool = Tool & { mcpInputSchema: unknown };

/** ajv-formats is CommonJS: its default export is the function. */
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** Extra time the SDK's own request timeout leaves to the executor's deadline, which should fire first. */
const SDK_TIMEOUT_SLACK_MS = 1_000;
const SUMMARY_MAX_CHARS = 80;

/** A name part as Claude Code writes it: anything but letters, digits, `_` and `-` becomes `_`. */
export function normalizeNamePart(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_');
}

/** The Switchyard name of an MCP tool: `mcp__<server>__<tool>`. */
export function mcpToolName(serverName: string, toolName: string): string {
  return `mcp__${normalizeNamePart(serverName)}__${normalizeNamePart(toolName)}`;
}

/** The JSON Schema a model should see for a tool: the MCP server's own for MCP tools, undefined for others. */
export function jsonSchemaOf(tool: Tool): unknown {
  return (tool as Partial<McpTool>).mcpInputSchema;
}

/**
 * Ajv's regular-expression engine for `pattern` and `patternProperties`: re2js, which matches in time linear in the
 * input. A server's schema and the model's arguments are both untrusted, and a backtracking engine (JavaScript's own)
 * takes time exponential in the input for patterns such as `^(a+)+$`, holding the worker's event loop. A pattern RE2
 * cannot compile (a back-reference, a look-ahead) is not checked here: it accepts every string, and the server, which
 * validates its own arguments, still does.
 */
const linearRegExp = Object.assign(
  (pattern: string, flags: string): { test(text: string): boolean; toString(): string } => {
    let compiled: RE2JS | undefined;
    try {
      compiled = RE2JS.compile(pattern);
    } catch {
      compiled = undefined;
    }
    return {
      test: (text) => compiled === undefined || compiled.matcher(text).find(),
      toString: () => `re2:${flags}:${pattern}`,
    };
  },
  { code: 'linearRegExp' },
);

/** An Ajv like the MCP SDK's own (formats checked, all errors reported), with the linear engine for patterns. */
function linearAjv(): Ajv {
  const ajv = new Ajv({
    strict: false,
    validateFormats: true,
    validateSchema: false,
    allErrors: true,
    code: { regExp: linearRegExp },
  });
  addFormats(ajv);
  return ajv;
}

/** One Ajv per server: schemas of different servers that reuse an `$id` must not meet in Ajv's cache. */
const validatorsByConnection = new WeakMap<McpConnection, AjvJsonSchemaValidator>();

/**
 * The check of a tool's arguments against its `inputSchema`, with the MCP SDK's Ajv validator (the one its client
 * uses for output schemas: formats checked, all errors reported) on an Ajv whose patterns run on re2js (see
 * `linearRegExp`). Compiled on first use. A schema Ajv cannot compile (a `$ref` it cannot resolve…) is left to the
 * server, which reports bad arguments as an error result.
 */
export function mcpArgumentsValidator(
  connection: McpConnection,
  schema: McpToolInfo['inputSchema'],
): (input: Record<string, unknown>) => ValidationOutcome {
  let validate: JsonSchemaValidator<unknown> | 'unchecked' | undefined;
  return (input) => {
    if (validate === undefined) {
      let validator = validatorsByConnection.get(connection);
      if (validator === undefined) {
        validator = new AjvJsonSchemaValidator(linearAjv());
        validatorsByConnection.set(connection, validator);
      }
      try {
        validate = validator.getValidator(schema as JsonSchemaType);
      } catch {
        validate = 'unchecked';
      }
    }
    if (validate === 'unchecked') return { ok: true };
    const result = validate(input);
    if (result.valid) return { ok: true };
    // Ajv's own wording: `data` is the arguments object, `data/text` its property `text`.
    return { ok: false, message: `InputValidationError: ${result.errorMessage}`, errorCode: 'input_validation' };
  };
}

function formatBlock(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
      return `[image: ${block.mimeType}, ${Buffer.byteLength(block.data, 'base64')} bytes]`;
    case 'audio':
      return `[audio: ${block.mimeType}, ${Buffer.byteLength(block.data, 'base64')} bytes]`;
    case 'resource':
      return `[resource: ${block.resource.uri}]`;
    case 'resource_link':
      return `[resource: ${block.uri}]`;
    default: {
      const unknown: { type?: unknown } = block;
      return `[${String(unknown.type)}]`;
    }
  }
}

/**
 * The model's output for a `tools/call` result: text as is; an image in a format the model APIs accept (told by its
 * bytes) as an image the executor stores as an artifact, after the text; other media as one-line placeholders; an
 * error result stays one.
 */
export function formatMcpResult(result: McpCallResult): ToolOutput {
  const parts: string[] = [];
  const images: ToolOutputImage[] = [];
  for (const block of result.content) {
    const image = block.type === 'image' ? decodeImage(block) : undefined;
    if (image === undefined) parts.push(formatBlock(block));
    else images.push(image);
  }
  const hasText = result.content.some((block) => block.type === 'text');
  if (!hasText && result.structuredContent !== undefined) parts.unshift(JSON.stringify(result.structuredContent));
  // The server's text, not Switchyard's: imitations of Switchyard's envelopes are neutralised.
  const content = neutralizeEnvelopes(parts.join('\n'));
  if (result.isError === true) {
    const message =
      content === '' && images.length === 0 ? 'The MCP tool reported an error without a message.' : content;
    return { content: message, isError: true, errorCode: 'mcp_error', ...(images.length === 0 ? {} : { images }) };
  }
  return images.length === 0 ? content : { content, images };
}

/**
 * A PostToolUse hook's `updatedMCPToolOutput` as the tool's output: content blocks, a `tools/call` result
 * (`{ content, isError? }`), or a string; anything else throws (the hook's replacement is then ignored).
 */
export function outputFromUpdatedMcpOutput(updated: unknown): ToolOutput {
  if (typeof updated === 'string') return updated;
  const result = Array.isArray(updated)
    ? { content: updated as unknown[] }
    : (updated as { content?: unknown; isError?: unknown } | null);
  if (result === null || typeof result !== 'object' || !Array.isArray(result.content)) {
    throw new TypeError('updatedMCPToolOutput must be a string, an array of MCP content blocks, or { content: [...] }');
  }
  for (const block of result.content as unknown[]) {
    const { type, text } = (block ?? {}) as { type?: unknown; text?: unknown };
    if (typeof type !== 'string') throw new TypeError('updatedMCPToolOutput has a content block without a type');
    if (type === 'text' && typeof text !== 'string')
      throw new TypeError('updatedMCPToolOutput has a text block without text');
  }
  return formatMcpResult({
    content: result.content as McpCallResult['content'],
    ...(result.isError === true ? { isError: true } : {}),
  });
}

/** An MCP image block as image bytes, when they are a format the model APIs accept; undefined otherwise. */
function decodeImage(block: Extract<ContentBlock, { type: 'image' }>): ToolOutputImage | undefined {
  const data = Buffer.from(block.data, 'base64');
  const mediaType = detectImageMediaType(data);
  return mediaType === undefined ? undefined : { mediaType, data };
}

/** The Switchyard tool for one MCP tool (exported for tests). */
export function mcpTool(connection: McpConnection, info: McpToolInfo): McpTool {
  const annotations = info.annotations ?? {};
  // The rule, literally: only an explicit `destructiveHint: true` makes a tool destructive.
  const destructive = annotations.destructiveHint === true;
  const readOnly = annotations.readOnlyHint === true && !destructive;
  const idempotent = annotations.idempotentHint === true;
  const tool = defineTool({
    name: mcpToolName(connection.serverName, info.name),
    description: info.description ?? info.title ?? `Tool "${info.name}" of MCP server "${connection.serverName}"`,
    inputSchema: z.record(z.string(), z.unknown()),
    concurrentSafe: (readOnly || idempotent) && !destructive,
    readOnly,
    destructive,
    idempotent,
    sideEffectScope: readOnly ? 'none' : 'external',
    timeout: { defaultMs: connection.config.timeoutMs ?? TOOL_TIMEOUTS.mcp.defaultMs },
    resultBudget: RESULT_BUDGETS.mcp,
    // Rules name MCP tools whole (`mcp__server__tool`): no rule content.
    ruleKind: 'text',
    summarize(input) {
      const json = JSON.stringify(input);
      return json.length > SUMMARY_MAX_CHARS ? `${json.slice(0, SUMMARY_MAX_CHARS - 1)}…` : json;
    },
    validateInput: mcpArgumentsValidator(connection, info.inputSchema),
    async execute(input, context) {
      // Leave the executor's deadline to fire first, with its own timeout message.
      const remainingMs = context.deadline.remainingMs();
      const timeoutMs = remainingMs === undefined ? undefined : Math.max(1, remainingMs) + SDK_TIMEOUT_SLACK_MS;
      const result = await connection.callTool(info.name, input, context.signal, {
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
        idempotencyKey: context.idempotencyKey,
      });
      const output = formatMcpResult(result);
      // What a UI draws (v1.3): the server, the tool and the kinds of blocks it answered with.
      const display = mcpToolDisplay({
        server: connection.serverName,
        tool: info.name,
        content: result.content,
        isError: result.isError === true,
      });
      // PostToolUse hooks get the MCP result's content blocks, as in Claude Code.
      return typeof output === 'string'
        ? { content: output, hookResponse: result.content, display }
        : { ...output, hookResponse: result.content, display };
    },
    outputFromHook: outputFromUpdatedMcpOutput,
  });
  return Object.assign(tool, { mcpInputSchema: info.inputSchema });
}
