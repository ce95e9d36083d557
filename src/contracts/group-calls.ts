import { PAYLOAD_LIMITS } from './defaults.js';

/** A call as the grouping sees it: its id and whether it may share a group. */
export interface GroupableCall {
  id: string;
  concurrentSafe: boolean;
  /** UTF-8 bytes of the call's input (`callInputBytes`), for the group byte budget; absent counts as 0. */
  bytes?: number;
}

/**
 * Greedy grouping in model order (docs/SEMANTICS.md, Grouping): consecutive
 * concurrency-safe calls share a group of at most `maxConcurrency`; an unsafe call closes the open group and
 * runs alone. A group also closes before a call that would take its inputs past `maxGroupBytes` (a call alone is never
 * split). Returns groups of call ids.
 */
export function groupCalls(
  calls: readonly GroupableCall[],
  maxConcurrency: number,
  maxGroupBytes: number = PAYLOAD_LIMITS.groupInputBytes,
): string[][] {
  const cap = Math.max(1, Math.trunc(maxConcurrency));
  let openBytes = 0;
  const groups: string[][] = [];
  let open: string[] | undefined;
  for (const call of calls) {
    if (!call.concurrentSafe) {
      open = undefined;
      groups.push([call.id]);
      continue;
    }
    const bytes = call.bytes ?? 0;
    if (open === undefined || open.length >= cap || (open.length > 0 && openBytes + bytes > maxGroupBytes)) {
      open = [];
      openBytes = 0;
      groups.push(open);
    }
    open.push(call.id);
    openBytes += bytes;
  }
  return groups;
}
