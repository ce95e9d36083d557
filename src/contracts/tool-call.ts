// The schemas here sit behind `toolCallSchemas()` instead of being exported: see src/contracts/schemas.ts.
import { z } from 'zod';
import { PAYLOAD_LIMITS } from './defaults.js';
import { utf8Length } from './utf8-length.js';

/** One tool call as the model produced it. `input` may be an object or a JSON string. */
const toolCallSchema = z.object({
  id: z.string().min(1, 'call id must be a non-empty string'),
  name: z.string(),
  input: z.unknown(),
});
export type ToolCall = z.infer<typeof toolCallSchema>;

function rejectDuplicateIds(calls: readonly ToolCall[], context: z.RefinementCtx): void {
  const seen = new Set<string>();
  calls.forEach((call, index) => {
    if (seen.has(call.id)) {
      context.addIssue({ code: 'custom', message: `duplicate call id "${call.id}"`, path: ['calls', index, 'id'] });
    }
    seen.add(call.id);
  });
}

/** Input of the `executeTurn` update. */
const executeTurnRequestSchema = z
  .object({
    turnId: z.string().min(1, 'turnId must be a non-empty string'),
    calls: z.array(toolCallSchema),
  })
  .superRefine((request, context) => rejectDuplicateIds(request.calls, context));
export type ExecuteTurnRequest = z.infer<typeof executeTurnRequestSchema>;

/**
 * Why `request` is not a valid `executeTurn` request (the schema's message), or undefined when it is. The update's
 * validator runs on the workflow thread for every turn: a request of the usual shape is recognised without the
 * schema, and anything else goes through it, so what is accepted and every message stay the schema's.
 */
export function executeTurnRequestProblem(request: unknown): string | undefined {
  if (isPlainTurnRequest(request)) return undefined;
  const parsed = executeTurnRequestSchema.safeParse(request);
  return parsed.success ? undefined : formatZodError(parsed.error);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The schema's rules, checked directly: a non-empty `turnId`; calls with a non-empty id, distinct, a name, and an
 * `input` key (of any value, `undefined` included).
 */
function isPlainTurnRequest(request: unknown): boolean {
  if (!isRecord(request) || typeof request.turnId !== 'string' || request.turnId.length === 0) return false;
  const { calls } = request;
  if (!Array.isArray(calls)) return false;
  const ids = new Set<string>();
  for (const call of calls as unknown[]) {
    if (!isRecord(call) || typeof call.id !== 'string' || call.id.length === 0 || typeof call.name !== 'string')
      return false;
    if (!Object.hasOwn(call, 'input')) return false;
    ids.add(call.id);
  }
  return ids.size === calls.length;
}

/** UTF-8 bytes of a call's input as it travels (a JSON string counts as itself); 0 when it cannot be serialized. */
export function callInputBytes(call: Pick<ToolCall, 'input'>): number {
  const { input } = call;
  if (input === undefined) return 0;
  if (typeof input === 'string') return utf8Length(input);
  try {
    return utf8Length(JSON.stringify(input) ?? '');
  } catch {
    return 0;
  }
}

/**
 * Why a request's calls are too large to accept (see `MAX_TURN_REQUEST_BYTES` and `PAYLOAD_LIMITS`), or undefined when
 * they fit: the whole request, each call's input, each call's id and tool name.
 */
export function oversizeRequestReason(
  calls: readonly ToolCall[],
  limitBytes: number,
  limits: Pick<typeof PAYLOAD_LIMITS, 'callInputBytes' | 'callIdChars' | 'callNameChars'> = PAYLOAD_LIMITS,
): string | undefined {
  // One serialization of each call (workflow time is precious with a 1 MiB request): the request is `[` + calls
  // joined by `,` + `]`, and a call whose whole JSON fits the per-call limit has an input that fits too.
  const items: unknown[] = Array.isArray(calls) ? (calls as unknown[]) : [calls];
  const sizes: number[] = [];
  try {
    for (const item of items) sizes.push(utf8Length(JSON.stringify(item) ?? 'null'));
  } catch (error) {
    return `calls cannot be serialized (${error instanceof Error ? error.message : String(error)})`;
  }
  const bytes = Array.isArray(calls)
    ? sizes.reduce((sum, size) => sum + size, 0) + Math.max(2, items.length + 1)
    : (sizes[0] ?? 0);
  if (bytes > limitBytes)
    return `calls are ${bytes} bytes of JSON, over the ${limitBytes}-byte limit per request; store large content in a file and pass its path`;
  if (!Array.isArray(calls)) return undefined;
  for (const [index, call] of items.entries()) {
    if (call === null || typeof call !== 'object') continue;
    const { id, name, input } = call as Partial<ToolCall>;
    const label = typeof id === 'string' ? `call "${id.slice(0, 40)}${id.length > 40 ? '…' : ''}"` : 'a call';
    if (typeof id === 'string' && id.length > limits.callIdChars)
      return `${label} has an id of ${id.length} characters, over the ${limits.callIdChars}-character limit`;
    if (typeof name === 'string' && name.length > limits.callNameChars)
      return `${label} names a tool of ${name.length} characters, over the ${limits.callNameChars}-character limit`;
    if ((sizes[index] ?? 0) <= limits.callInputBytes) continue;
    const inputBytes = callInputBytes({ input });
    if (inputBytes > limits.callInputBytes) {
      return `${label} has an input of ${inputBytes} bytes, over the ${limits.callInputBytes}-byte limit per call; write large content to a file in parts (several smaller calls) and pass its path`;
    }
  }
  return undefined;
}

/** Formats a zod error as one line for an update rejection or a model-facing message. */
export function formatZodError(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.length > 0 ? issue.path.join('.') : '(root)';
      return `${path}: ${issue.message}`;
    })
    .join('; ');
}

/** Input of the `addCalls` update: opens a streaming turn on first use; `done` says the model's reply is complete. */
const addCallsRequestSchema = z
  .object({
    turnId: z.string().min(1, 'turnId must be a non-empty string'),
    calls: z.array(toolCallSchema),
    done: z.boolean().optional(),
  })
  .superRefine((request, context) => rejectDuplicateIds(request.calls, context));
export type AddCallsRequest = z.infer<typeof addCallsRequestSchema>;

/** Input of the `awaitResults` update: long-polls the results past `since`, in call order. */
const awaitResultsRequestSchema = z.object({
  turnId: z.string().min(1, 'turnId must be a non-empty string'),
  since: z.number().int().min(0).optional(),
});
export type AwaitResultsRequest = z.infer<typeof awaitResultsRequestSchema>;

const schemas = {
  call: toolCallSchema,
  executeTurn: executeTurnRequestSchema,
  addCalls: addCallsRequestSchema,
  awaitResults: awaitResultsRequestSchema,
};

/** This module's schemas: one tool call, and the payloads of the `executeTurn`, `addCalls` and `awaitResults` updates. */
export function toolCallSchemas(): typeof schemas {
  return schemas;
}
