/** A result as the aggregate budget sees it. */
export interface BudgetedResult {
  /** Unique within the session: `<turnId>/<callId>`. */
  key: string;
  modelContent: string;
  /** The envelope that may replace the content, when the worker prepared one. */
  replacement?: { envelope: string; artifact?: string };
}

export interface AggregateBudgetOutcome {
  /** Keys whose content is the envelope from now on. */
  replaced: Set<string>;
  /** Keys replaced by this evaluation (not before). */
  newlyReplaced: string[];
  /** The turn's total so far, earlier hand-outs included. */
  totalChars: number;
}

/**
 * The per-message aggregate budget (docs/SEMANTICS.md, Aggregate budget), one algorithm for whole and streaming turns:
 * results replaced before stay replaced (prompt-cache stability, `ContentReplacementState`); while the total is over
 * budget, the largest remaining result that has an envelope is replaced by it.
 *
 * `results` are the results being handed out now; `charsAlreadyHandedOut` is what earlier hand-outs of the same turn
 * added (those can no longer change). A whole turn hands everything out at once, so its largest results go first;
 * a streaming turn hands results out as the caller takes them, so only those taken together compete.
 * Pure: the workflow keeps `alreadyReplaced` in its state, across continue-as-new.
 */
export function applyAggregateBudget(options: {
  results: readonly BudgetedResult[];
  budgetChars: number;
  alreadyReplaced: ReadonlySet<string>;
  /** Characters of this turn's results handed out before (default 0). */
  charsAlreadyHandedOut?: number;
}): AggregateBudgetOutcome {
  const replaced = new Set<string>();
  const sizeOf = (result: BudgetedResult): number =>
    replaced.has(result.key) && result.replacement !== undefined
      ? result.replacement.envelope.length
      : result.modelContent.length;
  for (const result of options.results) {
    if (options.alreadyReplaced.has(result.key) && result.replacement !== undefined) replaced.add(result.key);
  }
  let total = (options.charsAlreadyHandedOut ?? 0) + options.results.reduce((sum, result) => sum + sizeOf(result), 0);
  const newlyReplaced: string[] = [];
  const candidates = options.results
    .filter(
      (result) =>
        !replaced.has(result.key) &&
        result.replacement !== undefined &&
        result.replacement.envelope.length < result.modelContent.length,
    )
    .sort((a, b) => b.modelContent.length - a.modelContent.length || a.key.localeCompare(b.key));
  for (const candidate of candidates) {
    if (total <= options.budgetChars) break;
    replaced.add(candidate.key);
    newlyReplaced.push(candidate.key);
    total -= candidate.modelContent.length - (candidate.replacement?.envelope.length ?? 0);
  }
  return { replaced, newlyReplaced, totalChars: total };
}
