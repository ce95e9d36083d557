import type { ToolExecutionContext } from '../../src/tools/define-tool.js';

/** An execution context for calling a tool's `execute` directly in unit tests. */
export function toolContext(overrides: Partial<ToolExecutionContext> & { cwd: string }): ToolExecutionContext {
  return {
    sessionId: 's',
    callId: 'c',
    turnId: 't',
    signal: new AbortController().signal,
    reportProgress() {},
    sessionState: {},
    attempt: 1,
    idempotencyKey: 's:c:1',
    deadline: { remainingMs: () => undefined, activeMs: 0, queuedMs: 0 },
    admit: (_gate, work) => work(),
    artifacts: undefined,
    denyRules: [],
    ...overrides,
  };
}
