import type { CallFlags, CallPlan, ReadyCallPlan, RejectedCallPlan } from '../contracts/call-plan.js';
import { errorCodes } from '../contracts/tool-result.js';
import type { ToolCall } from '../contracts/tool-call.js';
import { formatZodError } from '../contracts/tool-call.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import { texts } from '../contracts/texts.js';
import type { Tool, ToolPrepareContext } from '../tools/define-tool.js';
import type { ToolRegistry } from '../tools/registry.js';
import { inputDigest } from './digest.js';
import { resolveTimeoutMs } from './resolve-timeout.js';

const SUMMARY_MAX_CHARS = 160;

function rejected(call: ToolCall, stage: RejectedCallPlan['stage'], errorCode: string, modelContent: string): RejectedCallPlan {
  return { kind: 'rejected', callId: call.id, toolName: call.name, status: 'error', modelContent, errorCode, stage };
}

/** Evaluates a flag that may be a function of the input; a throwing classifier answers `fallback` (fail closed). */
function evaluateFlag<Input>(flag: boolean | ((input: Input) => boolean) | undefined, input: Input, fallback: boolean): boolean {
  if (flag === undefined) return fallback;
  if (typeof flag === 'boolean') return flag;
  try {
    return Boolean(flag(input));
  } catch {
    return false;
  }
}

/** Concurrency flags of a call (seed 000 `canRunInParallel`): destructive → exclusive; otherwise `concurrentSafe`. */
export function computeFlags(tool: Tool, input: unknown): CallFlags {
  const destructive = tool.destructive === true;
  const declaredReadOnly = evaluateFlag(tool.readOnly, input, false);
  const sideEffectScope = tool.sideEffectScope ?? (declaredReadOnly ? 'none' : 'workspace');
  const readOnly = declaredReadOnly && sideEffectScope === 'none';
  const concurrentSafe = !destructive && evaluateFlag(tool.concurrentSafe, input, false);
  return { concurrentSafe, readOnly, destructive, sideEffectScope, idempotent: tool.idempotent ?? readOnly };
}

function summarize(tool: Tool, input: unknown): string {
  let detail = '';
  try {
    detail = tool.summarize?.(input) ?? '';
  } catch {
    detail = '';
  }
  const line = (detail === '' ? tool.name : `${tool.name}: ${detail}`).replace(/\s+/g, ' ');
  return line.length > SUMMARY_MAX_CHARS ? `${line.slice(0, SUMMARY_MAX_CHARS - 1)}…` : line;
}

function parseInput(raw: unknown): { ok: true; value: unknown } | { ok: false; message: string } {
  if (typeof raw !== 'string') return { ok: true, value: raw ?? {} };
  try {
    return { ok: true, value: JSON.parse(raw) as unknown };
  } catch (error) {
    return { ok: false, message: `input is not valid JSON: ${projectErrorMessage(error)}` };
  }
}

/**
 * The front of the pipeline for one call (seed 000 `executeToolCall`, up to the hooks): lookup, normalisation,
 * schema validation, `validateInput`, `resolveInput`, then the flags, digest and deadline of the resolved input.
 */
export async function prepareCall(options: { registry: ToolRegistry; call: ToolCall; context: ToolPrepareContext }): Promise<CallPlan> {
  const { registry, call, context } = options;
  const tool = registry.lookup(call.name);
  if (tool === undefined) return rejected(call, 'lookup', errorCodes.toolNotFound, texts.toolNotFound(call.name));

  const parsedJson = parseInput(call.input);
  if (!parsedJson.ok) {
    return { ...rejected(call, 'validation', errorCodes.inputValidation, texts.inputValidationError(parsedJson.message)), toolName: tool.name };
  }
  const parsed = tool.inputSchema.safeParse(parsedJson.value);
  if (!parsed.success) {
    return {
      ...rejected(call, 'validation', errorCodes.inputValidation, texts.inputValidationError(formatZodError(parsed.error))),
      toolName: tool.name,
    };
  }

  let input: unknown = parsed.data;
  try {
    const validation = (await tool.validateInput?.(input, context)) ?? { ok: true };
    if (!validation.ok) {
      return {
        ...rejected(call, 'validation', validation.errorCode ?? errorCodes.businessFailure, texts.toolUseError(validation.message)),
        toolName: tool.name,
      };
    }
    input = (await tool.resolveInput?.(input, context)) ?? input;
  } catch (error) {
    return {
      ...rejected(call, 'validation', errorCodes.businessFailure, texts.toolUseError(projectErrorMessage(error))),
      toolName: tool.name,
    };
  }

  const plan: ReadyCallPlan = {
    kind: 'ready',
    callId: call.id,
    toolName: tool.name,
    input,
    inputDigest: inputDigest(input),
    flags: computeFlags(tool, input),
    summary: summarize(tool, input),
    interruptBehavior: tool.interruptBehavior ?? 'cancel',
    alwaysAsk: tool.alwaysAsk === true,
    stopTurnOnSuccess: tool.stopTurnOnSuccess === true,
    cancelSiblingsOnError: tool.cancelSiblingsOnError === true,
  };
  const timeoutMs = resolveTimeoutMs(tool, input);
  if (timeoutMs !== undefined) plan.timeoutMs = timeoutMs;
  try {
    const ruleContent = tool.ruleContent?.(input);
    if (ruleContent !== undefined) plan.ruleContent = ruleContent;
  } catch {
    // No rule content: only whole-tool rules match this call.
  }
  return plan;
}
