// The schemas here sit behind `clientToolsSchemas()` instead of being exported: see src/contracts/schemas.ts.
import { z } from 'zod';

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
