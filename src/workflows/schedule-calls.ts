import { PAYLOAD_LIMITS } from '../contracts/defaults.js';
import type { PlannedCall } from '../contracts/pipeline.js';
import type { ToolCall } from '../contracts/tool-call.js';
import type { ToolResult } from '../contracts/tool-result.js';
import type { CallCompletion } from './results.js';

/** queued → executing → completed → yielded (docs/SEMANTICS.md, Grouping). */
export type CallState = 'queued' | 'executing' | 'completed' | 'yielded';

/** One call of a turn, whole or streaming, as the scheduler tracks it. */
export interface TurnCall {
  index: number;
  call: ToolCall;
  /** UTF-8 bytes of the call's input (`callInputBytes`), for the group byte budget. */
  inputBytes?: number;
  /** Workflow time (epoch ms). */
  addedAt: number;
  startedAt?: number;
  finishedAt?: number;
  /** Set once the batch that brought the call has been planned. */
  planned?: PlannedCall;
  state: CallState;
  /** The group the call ran in. */
  groupIndex?: number;
  /** The call's result before hand-out (aggregate budget, hook context). */
  completion?: CallCompletion;
  /** The result as handed out: final. */
  result?: ToolResult;
}

/** The group that runs now (or ran last): calls may join it while any of it still executes. */
export interface OpenGroup {
  index: number;
  size: number;
  /** Every member is concurrency-safe, so a safe call may join. */
  allSafe: boolean;
  /** UTF-8 bytes of the members' inputs (absent in groups opened before the byte budget existed). */
  bytes?: number;
}

/** Whether a planned call may share a group: concurrency-safe. Rejected calls are exclusive (fail closed). */
export function isConcurrentSafe(planned: PlannedCall): boolean {
  return planned.kind === 'planned' && planned.concurrentSafe;
}

/**
 * The one scheduling rule for whole and streaming turns (docs/SEMANTICS.md, Grouping): a queued call
 * starts a new group when nothing is executing; it joins the running group when it and every member are
 * concurrency-safe, the group has fewer than `maxConcurrency` members and the call's input keeps the group's inputs
 * within `maxGroupBytes` (`PAYLOAD_LIMITS.groupInputBytes`). The first call that cannot start blocks
 * every call behind it, so an exclusive call keeps its place in model order; an unplanned call blocks too (its
 * safety is not known yet).
 *
 * For a whole turn, whose calls are all known at once, this yields exactly `groupCalls`: consecutive safe calls in
 * groups of at most `maxConcurrency` members and `maxGroupBytes` of input (a new group waits for the previous one to finish), each unsafe call alone.
 */
export function startableCalls(options: {
  calls: readonly TurnCall[];
  group: OpenGroup | undefined;
  maxConcurrency: number;
  maxGroupBytes?: number;
}): {
  start: TurnCall[];
  newGroup: boolean;
} {
  const cap = Math.max(1, Math.trunc(options.maxConcurrency));
  const maxBytes = options.maxGroupBytes ?? PAYLOAD_LIMITS.groupInputBytes;
  const executing = options.calls.some((call) => call.state === 'executing');
  let joining =
    executing && options.group !== undefined
      ? { size: options.group.size, allSafe: options.group.allSafe, bytes: options.group.bytes ?? 0 }
      : undefined;
  const newGroup = joining === undefined;
  const start: TurnCall[] = [];
  for (const call of options.calls) {
    if (call.state !== 'queued') continue;
    if (call.planned === undefined) break;
    const safe = isConcurrentSafe(call.planned);
    const bytes = call.inputBytes ?? 0;
    if (joining === undefined) joining = { size: 0, allSafe: true, bytes: 0 };
    else if (!(
      safe &&
      joining.allSafe &&
      joining.size < cap &&
      (joining.size === 0 || joining.bytes + bytes <= maxBytes)
    ))
      break;
    start.push(call);
    joining.size += 1;
    joining.bytes += bytes;
    joining.allSafe = joining.allSafe && safe;
    if (!safe) break; // an exclusive call runs alone
  }
  return { start, newGroup: newGroup && start.length > 0 };
}

/** How many calls from the start of the turn have a result: results are handed out in call order, up to here. */
export function completedPrefix(calls: readonly TurnCall[]): number {
  let index = 0;
  while (index < calls.length && calls[index]?.completion !== undefined) index += 1;
  return index;
}
