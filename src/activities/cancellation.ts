import { Context } from '@temporalio/activity';

/** How often an activity that runs hooks or an evaluator heartbeats, so a cancellation reaches it (the SDK throttles the sends). */
export const HOOK_HEARTBEAT_INTERVAL_MS = 1_000;

/**
 * The running activity's cancellation as an AbortSignal for hooks; with `heartbeatEveryMs`, heartbeats until
 * `stopHeartbeats` (a remote activity learns of its cancellation only from a heartbeat's answer). Outside an
 * activity (unit tests) the signal never fires.
 */
export function cancellationOf(options: { heartbeatEveryMs?: number } = {}): {
  signal: AbortSignal;
  stopHeartbeats: () => void;
} {
  let activity: Context;
  try {
    activity = Context.current();
  } catch {
    return { signal: new AbortController().signal, stopHeartbeats: () => {} };
  }
  if (options.heartbeatEveryMs === undefined || activity.info.isLocal)
    return { signal: activity.cancellationSignal, stopHeartbeats: () => {} };
  activity.heartbeat();
  const timer = setInterval(() => activity.heartbeat(), options.heartbeatEveryMs);
  return { signal: activity.cancellationSignal, stopHeartbeats: () => clearInterval(timer) };
}
