import { DEFAULT_AGGREGATE_BUDGET_CHARS } from '../contracts/defaults.js';
import { withHookContext } from '../contracts/hook-context.js';
import type { ToolResult } from '../contracts/tool-result.js';
import { utf8Length } from '../contracts/utf8-length.js';
import { applyAggregateBudget } from './aggregate-budget.js';
import type { CallCompletion } from './results.js';
import { withTextForm } from './results.js';
import type { TurnCall } from './schedule-calls.js';
import type { SessionState } from './session-state.js';
import type { Turn } from './turn.js';

/**
 * Makes a turn's results final up to `upTo`, in call order, through the aggregate budget (replaced stays replaced),
 * then joins hook context (so it survives an envelope).
 */
export function handOutResults(state: SessionState, turn: Turn, upTo: number): void {
  if (upTo <= turn.handedOut) return;
  const batch = turn.calls.slice(turn.handedOut, upTo);
  const keyOf = (entry: TurnCall): string => `${turn.turnId}/${entry.call.id}`;
  const outcome = applyAggregateBudget({
    results: batch.map((entry) => {
      const completion = completionOf(entry);
      return {
        key: keyOf(entry),
        modelContent: completion.result.modelContent,
        ...(completion.replacement === undefined ? {} : { replacement: completion.replacement }),
      };
    }),
    budgetChars: state.options.aggregateBudgetChars ?? DEFAULT_AGGREGATE_BUDGET_CHARS,
    alreadyReplaced: state.replacedResults,
    charsAlreadyHandedOut: turn.handedOutChars,
  });
  for (const key of outcome.replaced) state.replacedResults.add(key);
  const newlyReplaced = new Set(outcome.newlyReplaced);
  for (const entry of batch) {
    const { result, replacement, hookContext } = completionOf(entry);
    let final: ToolResult = result;
    if (replacement !== undefined && outcome.replaced.has(keyOf(entry))) {
      const originalBytes = result.budget?.originalBytes ?? utf8Length(result.modelContent);
      // An envelope of the stored whole output, or (no store) a shorter cut.
      const budget: NonNullable<ToolResult['budget']> =
        replacement.artifact === undefined
          ? { truncated: true, originalBytes, modelBytes: utf8Length(replacement.envelope), policy: 'truncate' }
          : {
              truncated: true,
              originalBytes,
              modelBytes: utf8Length(replacement.envelope),
              policy: 'artifact',
              artifact: replacement.artifact,
            };
      final = { ...result, modelContent: replacement.envelope, budget };
      // `ToolCallResult` told the sizes when the call finished; the sizes the model gets follow.
      if (newlyReplaced.has(keyOf(entry))) {
        state.emit({
          type: 'ToolCallResultReplaced',
          turnId: turn.turnId,
          callId: result.callId,
          toolName: result.toolName,
          ...budget,
        });
      }
    }
    turn.handedOutChars += final.modelContent.length;
    const timeline: NonNullable<ToolResult['timeline']> = {
      addedAt: new Date(entry.addedAt).toISOString(),
      finishedAt: new Date(entry.finishedAt ?? Date.now()).toISOString(),
    };
    if (entry.startedAt !== undefined) timeline.startedAt = new Date(entry.startedAt).toISOString();
    const modelContent = withHookContext(final.modelContent, hookContext ?? []);
    entry.result = {
      ...final,
      modelContent,
      ...(final.content === undefined ? {} : { content: withTextForm(final.content, modelContent) }),
      timeline,
    };
  }
  turn.handedOut = upTo;
}

function completionOf(entry: TurnCall): CallCompletion {
  if (entry.completion === undefined) throw new Error(`unreachable: call ${entry.call.id} has no result to hand out`);
  return entry.completion;
}
