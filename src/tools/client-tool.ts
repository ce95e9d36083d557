import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType, JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation';
import { z } from 'zod';
import type { ClientToolSpec } from '../contracts/client-tools.js';
import type { Tool, ValidationOutcome } from './define-tool.js';
import { defineTool } from './define-tool.js';
import { ToolRegistry } from './registry.js';

/** A tool the client runs: the worker validates its input and the workflow parks its call; `execute` never runs. */
export type ClientTool = Tool & { clientTool: true; mcpInputSchema: Record<string, unknown> };

export function isClientTool(tool: Tool): tool is ClientTool {
  return (tool as Partial<ClientTool>).clientTool === true;
}

const SUMMARY_MAX_CHARS = 120;

/** The check of a client tool's input against its JSON Schema (compiled on first use; an uncompilable schema checks nothing). */
function jsonSchemaValidator(schema: Record<string, unknown>): (input: Record<string, unknown>) => ValidationOutcome {
  let validate: JsonSchemaValidator<unknown> | 'unchecked' | undefined;
  return (input) => {
    if (validate === undefined) {
      try {
        validate = new AjvJsonSchemaValidator().getValidator(schema as JsonSchemaType);
      } catch {
        validate = 'unchecked';
      }
    }
    if (validate === 'unchecked') return { ok: true };
    const result = validate(input);
    return result.valid
      ? { ok: true }
      : { ok: false, message: `InputValidationError: ${result.errorMessage}`, errorCode: 'input_validation' };
  };
}

/** The Switchyard tool for a declared client tool. */
export function clientToolDefinition(spec: ClientToolSpec): ClientTool {
  const readOnly = spec.readOnly === true;
  const tool = defineTool({
    name: spec.name,
    description: spec.description,
    inputSchema: z.record(z.string(), z.unknown()),
    readOnly,
    concurrentSafe: readOnly,
    sideEffectScope: readOnly ? 'none' : 'external',
    idempotent: false,
    // Rules name client tools whole: `ClickButton`.
    ruleKind: 'text',
    // The client may take as long as it needs: the wait is not execution time.
    timeout: { kind: 'none' },
    summarize(input) {
      const json = JSON.stringify(input);
      return json.length > SUMMARY_MAX_CHARS ? `${json.slice(0, SUMMARY_MAX_CHARS - 1)}…` : json;
    },
    validateInput: jsonSchemaValidator(spec.inputSchema),
    execute() {
      return Promise.reject(new Error(`${spec.name} is a client tool: the client runs it (submitToolResult)`));
    },
  });
  return Object.assign(tool, { clientTool: true as const, mcpInputSchema: spec.inputSchema });
}

/** Registries with a session's client tools, per worker registry and declaration: a session compiles its schemas once. */
const overlays = new WeakMap<ToolRegistry, Map<string, ToolRegistry>>();
const MAX_OVERLAYS = 256;

/**
 * The registry a session's calls look tools up in: the worker's, plus the session's client tools (a worker tool of the
 * same name wins, so a client cannot shadow a built-in's checks).
 */
export function registryWithClientTools(
  base: ToolRegistry,
  specs: readonly ClientToolSpec[] | undefined,
): ToolRegistry {
  if (specs === undefined || specs.length === 0) return base;
  let cache = overlays.get(base);
  if (cache === undefined) {
    cache = new Map();
    overlays.set(base, cache);
  }
  const key = JSON.stringify(specs);
  let registry = cache.get(key);
  if (registry === undefined) {
    const added = specs.filter((spec) => base.lookup(spec.name) === undefined).map(clientToolDefinition);
    registry = new ToolRegistry([...base.list(), ...added]);
    if (cache.size >= MAX_OVERLAYS) cache.delete(cache.keys().next().value as string);
    cache.set(key, registry);
  }
  return registry;
}
