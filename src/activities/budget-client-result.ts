import { CLIENT_TOOL_RESULT_BUDGET } from '../contracts/client-tools.js';
import type { BudgetClientResultInput, BudgetedClientResult } from '../contracts/client-tools.js';
import type { ArtifactStore } from '../contracts/artifact-store.js';
import type { Warn } from './dependencies.js';
import { serializeOutput } from './serialize-output.js';

/**
 * The `budgetClientResult` local activity: a client tool's answer through the result budget, like any tool's output
 * (`serializeOutput`). Past `CLIENT_TOOL_RESULT_BUDGET` the whole answer goes to the artifact store and the model gets
 * the `<persisted-output>` envelope with its reference, which Read opens; without a store (or when it fails) the head
 * is kept with a truncation notice. A local activity because its input, the answer, is never written to history: only
 * what it returns is (the workflow task that would carry the answer back in a turn's result could be over Temporal's
 * limits).
 */
export function createBudgetClientResult(options: { artifacts: ArtifactStore | undefined; warn: Warn }) {
  const { artifacts, warn } = options;
  return async function budgetClientResult(input: BudgetClientResultInput): Promise<BudgetedClientResult> {
    const { sessionId, callId, toolName, content } = input;
    return await serializeOutput({
      tool: { name: toolName, resultBudget: CLIENT_TOOL_RESULT_BUDGET },
      content,
      ...(artifacts === undefined ? {} : { store: artifacts }),
      sessionId,
      callId,
      onStoreError: (error) =>
        warn('could not store a client tool result; it is truncated instead', {
          sessionId,
          callId,
          toolName,
          error: error instanceof Error ? error.message : String(error),
        }),
    });
  };
}
