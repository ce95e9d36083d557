// The schemas here sit behind `clientToolsSchemas()` instead of being exported: see src/contracts/schemas.ts.
import { z } from 'zod';
import { PERSISTED_PREVIEW_CHARS } from './defaults.js';
import type { ResultBudgetInfo } from './tool-result.js';
import { utf8Length } from './utf8-length.js';

/** Tool names: 1-64 letters, digits, `_`, `.`, `:` or `-` (as for every Switchyard tool). */
const toolNamePattern = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * A tool the client runs itself (a browser action, an app-side tool): declared in `SessionOptions.clientTools`. Its
 * calls go through the whole pipeline up to execution (JSON Schema validation, PreToolUse hooks, permission rules,
 * approval), then park until the client answers with the `submitToolResult` update.
 */
const clientToolSpecSchema = z.strictObject({
  name: z.string().regex(toolNamePattern, 'use 1-64 letters, digits, "_", ".", ":" or "-"'),
  description: z.string(),
  /** JSON Schema of the input (an object schema); the call's input is checked against it before anything else. */
  inputSchema: z.record(z.string(), z.unknown()),
  /** Read-only: shares a group with other read-only calls and needs no approval in `default` mode. Default false. */
  readOnly: z.boolean().optional(),
});
export type ClientToolSpec = z.infer<typeof clientToolSpecSchema>;

/** Update `submitToolResult`: the client's answer to a parked call. */
const submitToolResultRequestSchema = z.strictObject({
  callId: z.string().min(1),
  /** The text the model gets. */
  content: z.string(),
  /** The client's tool failed: the model gets `content` as an error result. */
  isError: z.boolean().optional(),
});
export type SubmitToolResultRequest = z.infer<typeof submitToolResultRequestSchema>;

/**
 * Largest `submitToolResult` request (UTF-8 bytes of its JSON). Temporal refuses a payload over 2 MB (2,097,152 bytes):
 * a larger answer could never be accepted, and one the server did take would fail every workflow task after it. The
 * client refuses a larger one before sending and the update validator rejects it, each naming this limit; a client
 * with more to hand back writes it somewhere the model can read and answers with where.
 */
export const SUBMIT_TOOL_RESULT_MAX_BYTES = 2_000_000;

/**
 * The result budget of a client tool's answer (docs/SEMANTICS.md, Result budget): past `maxModelBytes`, the whole
 * answer is stored as an artifact and the model gets the `<persisted-output>` envelope, whose reference Read opens.
 */
export const CLIENT_TOOL_RESULT_BUDGET = { maxModelBytes: 100_000, policy: 'artifact', keep: 'head' } as const;

/**
 * Answers longer than this (characters) go through the `budgetClientResult` local activity, which applies
 * `CLIENT_TOOL_RESULT_BUDGET` and prepares the envelope the turn's aggregate budget may swap in (as for every tool's
 * output of this size); shorter ones are the result as they are.
 */
export const CLIENT_RESULT_BUDGET_MIN_CHARS = 2 * PERSISTED_PREVIEW_CHARS;

/** Why a `submitToolResult` request is too large to send, or undefined when it fits. */
export function oversizeToolResultReason(
  request: Pick<SubmitToolResultRequest, 'callId' | 'content'>,
  maxBytes: number = SUBMIT_TOOL_RESULT_MAX_BYTES,
): string | undefined {
  // Cheap first: the content's characters bound its bytes from below and (times 3) from above.
  if (request.content.length * 3 + request.callId.length * 3 + 64 <= maxBytes) return undefined;
  const bytes = utf8Length(JSON.stringify(request));
  if (bytes <= maxBytes) return undefined;
  return `the result for call "${request.callId}" is ${groupDigits(bytes)} bytes, over the limit of ${groupDigits(maxBytes)} bytes for one submitToolResult (Temporal refuses a payload over 2 MB); write the content somewhere the model can read and answer with where it is`;
}

/** `2000000` as `2,000,000` (no `Intl`: pure, for workflow code). */
function groupDigits(value: number): string {
  return String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Input of the `budgetClientResult` local activity (never in history: a local activity's input is not recorded). */
export interface BudgetClientResultInput {
  sessionId: string;
  callId: string;
  toolName: string;
  content: string;
}

/** What the model gets of a client tool's answer: the answer, or the envelope of its stored whole. */
export interface BudgetedClientResult {
  modelContent: string;
  budget?: ResultBudgetInfo;
  /** An envelope the turn's aggregate budget may swap in for `modelContent`. */
  aggregateReplacement?: { envelope: string; artifact?: string };
}

export interface SubmitToolResultResult {
  callId: string;
  accepted: true;
}

/** A call waiting for its client (query `pendingClientCalls`). */
export interface PendingClientCall {
  callId: string;
  turnId: string;
  toolName: string;
  /** The validated input, what the client's tool should run with. */
  input: unknown;
  /** ISO timestamp (workflow time). */
  requestedAt: string;
}

const schemas = { spec: clientToolSpecSchema, submitToolResult: submitToolResultRequestSchema };

/** This module's schemas: a client tool's declaration and the `submitToolResult` update's payload. */
export function clientToolsSchemas(): typeof schemas {
  return schemas;
}
