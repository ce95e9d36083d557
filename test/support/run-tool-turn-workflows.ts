// Workflows for test/integration/run-tool-turn.test.ts: `toolSession` beside a minimal user workflow that runs its
// turns with `runToolTurn`, in one bundle, so both run the same calls on the same worker.
import { runToolTurn } from '../../src/workflows/api.js';
import type { SessionOptions, ToolCall, TurnResult } from '../../src/workflows/api.js';

export { toolSession } from '../../src/workflows/tool-session.js';

/** Runs the given turns one after another in this workflow and returns their results. */
export async function toolTurns(input: {
  options: SessionOptions;
  turns: Array<{ turnId: string; calls: ToolCall[] }>;
}): Promise<TurnResult[]> {
  const results: TurnResult[] = [];
  for (const turn of input.turns)
    results.push(await runToolTurn(turn.calls, { ...input.options, turnId: turn.turnId }));
  return results;
}
