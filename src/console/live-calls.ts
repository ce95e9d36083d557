/**
 * The running calls of a session, read from its workflow's pending activities (split out of
 * src/console/console-server.ts).
 */
import { defaultPayloadConverter } from '@temporalio/common';
import type { ExecutionHeartbeat } from '../contracts/pipeline.js';
import type { ActiveTurnView } from '../contracts/tool-result.js';
import type { LiveCall } from './render.js';

interface RawPendingActivity {
  activityId?: string | null;
  activityType?: { name?: string | null } | null;
  attempt?: number | null;
  state?: number | string | null;
  lastHeartbeatTime?: { seconds?: unknown; nanos?: number | null } | null;
  heartbeatDetails?: { payloads?: unknown[] | null } | null;
}

const ACTIVITY_STATES: Record<number, string> = {
  1: 'scheduled',
  2: 'started',
  3: 'cancel requested',
  4: 'paused',
  5: 'pause requested',
};

/** Running calls from the workflow's pending activities: their last heartbeat holds the output tail. */
export function liveCalls(pendingActivities: readonly RawPendingActivity[], active: ActiveTurnView | null): LiveCall[] {
  const executing = pendingActivities.filter((activity) => activity.activityType?.name === 'executeCall');
  return executing.map((activity) => {
    const call: LiveCall = {
      activityId: activity.activityId ?? '',
      attempt: activity.attempt ?? 1,
      state:
        typeof activity.state === 'number'
          ? (ACTIVITY_STATES[activity.state] ?? `state ${activity.state}`)
          : String(activity.state ?? ''),
    };
    // With one call executing, the activity is that call's.
    if (executing.length === 1 && active?.executing.length === 1) call.callId = active.executing[0];
    const seconds = Number(activity.lastHeartbeatTime?.seconds ?? 0);
    if (seconds > 0) call.lastHeartbeatAt = new Date(seconds * 1000).toISOString();
    const payload = activity.heartbeatDetails?.payloads?.[0];
    if (payload !== undefined && payload !== null) {
      try {
        const details = defaultPayloadConverter.fromPayload<ExecutionHeartbeat>(
          payload as Parameters<typeof defaultPayloadConverter.fromPayload>[0],
        );
        call.activeMs = details.activeMs;
        // The heartbeat names its call (several calls may run at once); its tail is the output, else the message.
        if (details.callId !== undefined) call.callId = details.callId;
        const shown = details.progress?.outputTail ?? details.progress?.message;
        if (shown !== undefined) call.progress = shown;
      } catch {
        // details in another shape: no tail
      }
    }
    return call;
  });
}
