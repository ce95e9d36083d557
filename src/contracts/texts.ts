/**
 * Exact model-facing texts (docs/SEMANTICS.md, Model-facing texts). They are part of the contract: tests compare
 * against these.
 * Pure: safe to import from workflow code.
 */

export const texts = {
  toolNotFound: (name: string) => `Tool not found: ${name}`,
  inputValidationError: (message: string) => `<tool_use_error>InputValidationError: ${message}</tool_use_error>`,
  toolUseError: (message: string) => `<tool_use_error>${message}</tool_use_error>`,
  timedOut: (ms: number) => `Tool execution timed out after ${ms}ms`,
  emptyOutput: (toolName: string) => `(${toolName} completed with no output)`,
  turnStopCancelled: 'Tool cancelled because a previous tool result requested a turn stop.',
  preToolUseBlocked: 'Blocked by PreToolUse hook',
  outputSchemaFailed: 'Tool output failed runtimeOutputSchema validation',
  hookContextHeader: '[Hook additional context]',
  /**
   * Claude Code's REJECT_MESSAGE (docs/SEMANTICS.md, Interrupt): the one text of every interrupted `cancel` call —
   * cancelled while it ran, while it waited for approval, or before it started. The interrupt's reason stays in
   * `TurnResult.stopReason`.
   */
  rejectMessage:
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.",
  approvalDenied: (toolName: string, reason?: string) =>
    `The user denied permission to use ${toolName}.${reason ? ` Reason: ${reason}` : ''}`,
  approvalTimedOut: (toolName: string, ms: number) =>
    `Permission to use ${toolName} was denied: no approval arrived within ${ms}ms (approvalTimeoutMs).`,
  invalidSessionRules: (message: string) =>
    `This session's permission rules are invalid, so no tool may run: ${message}. Start a new session with valid rules.`,
  /** Edit or Write of a file the session has not read since it changed (`SessionOptions.readBeforeEdit`). */
  fileNotReadYet: 'File has not been read yet. Read it first before writing to it.',
  siblingErrored: (description: string) => `Cancelled: parallel tool call ${description} errored`,
  clientToolTimedOut: (toolName: string, ms: number) =>
    `${toolName} got no result from the client within ${ms}ms (clientToolTimeoutMs); it may still run on the client.`,
  interruptedMayHavePartlyRun: (toolName: string) =>
    `${toolName} was interrupted because its worker stopped; it may have partly run. It was not restarted automatically.`,
} as const;

/**
 * Text a tool returned that Switchyard did not write (an MCP server's answer), with Switchyard's own envelopes
 * neutralised: `<persisted-output>` and `<tool_use_error>` (opening or closing, any case) lose their `<`, written
 * `&lt;` instead, so the model can tell a tool's imitation from Switchyard's own texts. Linear in the text.
 */
export function neutralizeEnvelopes(text: string): string {
  return text.replace(/<(?=\/?(?:persisted-output|tool_use_error)\b)/gi, '&lt;');
}
