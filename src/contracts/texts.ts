/**
 * Exact model-facing texts from the seeds. They are part of the contract: tests compare against these.
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
  defaultCancelled: 'Tool call was cancelled.',
  interruptedMayHavePartlyRun: (toolName: string) =>
    `${toolName} was interrupted because its worker stopped; it may have partly run. It was not restarted automatically.`,
} as const;
