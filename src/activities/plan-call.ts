import type { CallFlags, RejectedCallPlan } from '../contracts/call-plan.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import { dropOptionalNulls } from '../contracts/optional-nulls.js';
import type { PlannedCall } from '../contracts/pipeline.js';
import { texts } from '../contracts/texts.js';
import type { ToolCall } from '../contracts/tool-call.js';
import { formatZodError } from '../contracts/tool-call.js';
import { errorCodes } from '../contracts/tool-result.js';
import type { Tool } from '../tools/define-tool.js';
import type { ToolRegistry } from '../tools/registry.js';

export function rejected(
  call: ToolCall,
  stage: RejectedCallPlan['stage'],
  errorCode: string,
  modelContent: string,
): RejectedCallPlan {
  return { kind: 'rejected', callId: call.id, toolName: call.name, status: 'error', modelContent, errorCode, stage };
}

/** Evaluates a flag that may be a function of the input; a throwing classifier answers false (fail closed). */
function evaluateFlag<Input>(options: {
  flag: boolean | ((input: Input) => boolean) | undefined;
  input: Input;
  fallback: boolean;
}): boolean {
  const { flag, input, fallback } = options;
  if (flag === undefined) return fallback;
  if (typeof flag === 'boolean') return flag;
  try {
    return Boolean(flag(input));
  } catch {
    return false;
  }
}

/** Call concurrency and safety flags (docs/SEMANTICS.md, Grouping): destructive → exclusive; else `concurrentSafe`. */
export function computeFlags(tool: Tool, input: unknown): CallFlags {
  const destructive = tool.destructive === true;
  const declaredReadOnly = evaluateFlag({ flag: tool.readOnly, input, fallback: false });
  const sideEffectScope = tool.sideEffectScope ?? (declaredReadOnly ? 'none' : 'workspace');
  const readOnly = declaredReadOnly && sideEffectScope === 'none';
  const concurrentSafe = !destructive && evaluateFlag({ flag: tool.concurrentSafe, input, fallback: false });
  return {
    concurrentSafe,
    readOnly,
    destructive,
    sideEffectScope,
    idempotent: tool.idempotent ?? readOnly,
    declaredReadOnly,
  };
}

function parseJsonInput(raw: unknown): { ok: true; value: unknown } | { ok: false; message: string } {
  if (typeof raw !== 'string') return { ok: true, value: raw ?? {} };
  try {
    return { ok: true, value: JSON.parse(raw) as unknown };
  } catch (error) {
    return { ok: false, message: `input is not valid JSON: ${projectErrorMessage(error)}` };
  }
}

type ParsedCall = { kind: 'parsed'; tool: Tool; input: unknown } | RejectedCallPlan;

/**
 * Plan's parse of each call, for the Prepare that the same Plan runs next on the same call object (its first group):
 * taken once, and only with the same registry, so the input is parsed once per Plan instead of twice. A call object
 * is the activity's own (decoded from its input), so no other activity ever sees an entry.
 */
const parsedByPlan = new WeakMap<ToolCall, { registry: ToolRegistry; parsed: ParsedCall }>();

/** Lookup (aliases resolved), JSON-string input parse and schema parse: what both Plan and Prepare start with. */
export function lookupAndParse(options: { registry: ToolRegistry; call: ToolCall }): ParsedCall {
  const kept = parsedByPlan.get(options.call);
  if (kept !== undefined) {
    parsedByPlan.delete(options.call);
    if (kept.registry === options.registry) return kept.parsed;
  }
  return parse(options);
}

function parse(options: { registry: ToolRegistry; call: ToolCall }): ParsedCall {
  const { registry, call } = options;
  const tool = registry.lookup(call.name);
  if (tool === undefined) return rejected(call, 'lookup', errorCodes.toolNotFound, texts.toolNotFound(call.name));
  const json = parseJsonInput(call.input);
  if (!json.ok)
    return {
      ...rejected(call, 'validation', errorCodes.inputValidation, texts.inputValidationError(json.message)),
      toolName: tool.name,
    };
  // A strict-mode model sends null for an optional field it leaves out: null there means absent.
  const mcpInputSchema = (tool as Tool & { mcpInputSchema?: unknown }).mcpInputSchema;
  const parsed = tool.inputSchema.safeParse(
    dropOptionalNulls({ schema: tool.inputSchema, jsonSchema: mcpInputSchema, input: json.value }),
  );
  if (!parsed.success) {
    return {
      ...rejected(
        call,
        'validation',
        errorCodes.inputValidation,
        texts.inputValidationError(formatZodError(parsed.error)),
      ),
      toolName: tool.name,
    };
  }
  return { kind: 'parsed', tool, input: parsed.data };
}

/**
 * Plan, for grouping only (the parsed input's concurrency flag, docs/SEMANTICS.md, Plan and Prepare): no file-system
 * check and no hook, so a call's group never depends on what an earlier call of the turn will change. Fail closed:
 * an unknown tool, an invalid input or a throwing classifier makes the call exclusive.
 */
export function planCall(options: { registry: ToolRegistry; call: ToolCall }): PlannedCall {
  const parsed = parse(options);
  parsedByPlan.set(options.call, { registry: options.registry, parsed });
  if (parsed.kind === 'rejected') return parsed;
  return {
    kind: 'planned',
    callId: options.call.id,
    toolName: parsed.tool.name,
    concurrentSafe: computeFlags(parsed.tool, parsed.input).concurrentSafe,
  };
}
