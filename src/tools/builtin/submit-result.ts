import { z } from 'zod';
import { defineTool } from '../define-tool.js';

const submitResultInputSchema = z.strictObject({
  // `z.unknown()` accepts `undefined`: a key present with no value must fail like a missing key.
  result: z
    .unknown()
    .refine((value) => value !== undefined, { message: 'result is required' })
    .describe('The final result of the task, any JSON value'),
});

/** The model content of a result: a string as it is, anything else as JSON. */
export function formatSubmittedResult(result: unknown): string {
  return typeof result === 'string' ? result : (JSON.stringify(result, null, 2) ?? String(result));
}

/**
 * Hands in the agent's final result and ends the turn. No deadline: it finishes at once, and a deadline could only
 * lose the result. Declared read-only (no approval); session scope, so it runs alone, after the calls before it.
 */
export const submitResultTool = defineTool({
  name: 'submit_result',
  description: 'Submits the final result of the task and ends the turn. Call it once, when the work is done.',
  inputSchema: submitResultInputSchema,
  concurrentSafe: false,
  readOnly: true,
  sideEffectScope: 'session',
  idempotent: true,
  stopTurnOnSuccess: true,
  timeout: { kind: 'none' },
  execute(input) {
    return Promise.resolve(formatSubmittedResult(input.result));
  },
});
