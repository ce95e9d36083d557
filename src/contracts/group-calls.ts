/** A call as the grouping sees it: its id and whether it may share a group. */
export interface GroupableCall {
  id: string;
  concurrentSafe: boolean;
}

/**
 * Greedy grouping in model order (docs/SEMANTICS.md, Grouping): consecutive
 * concurrency-safe calls share a group of at most `maxConcurrency`; an unsafe call closes the open group and
 * runs alone. Returns groups of call ids.
 */
export function groupCalls(calls: readonly GroupableCall[], maxConcurrency: number): string[][] {
  const cap = Math.max(1, Math.trunc(maxConcurrency));
  const groups: string[][] = [];
  let open: string[] | undefined;
  for (const call of calls) {
    if (!call.concurrentSafe) {
      open = undefined;
      groups.push([call.id]);
      continue;
    }
    if (open === undefined || open.length >= cap) {
      open = [];
      groups.push(open);
    }
    open.push(call.id);
  }
  return groups;
}
