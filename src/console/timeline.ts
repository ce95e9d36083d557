import type { SessionEvent } from '../contracts/events.js';
import type { CallStatus } from '../contracts/tool-result.js';

/** One call of a turn as the timeline draws it: a bar from scheduled to finished, its approval wait shaded. */
export interface TimelineCall {
  callId: string;
  toolName: string;
  groupIndex: number;
  status: CallStatus;
  scheduledAt: number;
  startedAt?: number;
  finishedAt?: number;
  approval?: { from: number; to?: number };
  /** Read-only calls run in parallel groups; the rest run alone. */
  readOnly?: boolean;
  /** A client tool's call that waits for the client's answer (`submitToolResult`). */
  waitingForClient?: boolean;
}

export interface TimelineLane {
  groupIndex: number;
  calls: TimelineCall[];
}

export interface TurnTimeline {
  turnId: string;
  startedAt: number;
  /** When the turn completed; absent while it runs. */
  completedAt?: number;
  stopped?: boolean;
  lanes: TimelineLane[];
}

/** Turn ids in the order their turns started, from a session's events. */
export function turnIdsOf(events: readonly SessionEvent[]): string[] {
  const ids: string[] = [];
  for (const event of events) if (event.type === 'TurnStarted' && !ids.includes(event.turnId)) ids.push(event.turnId);
  return ids;
}

/**
 * Builds one turn's timeline from the session's `events`: groups become lanes (by `groupIndex`), calls become bars
 * from `ToolCallScheduled` to their result, the span from `PermissionRequested` to its answer is the approval wait.
 */
export function buildTurnTimeline(events: readonly SessionEvent[], turnId: string): TurnTimeline | undefined {
  const calls = new Map<string, TimelineCall>();
  let startedAt: number | undefined;
  let completedAt: number | undefined;
  let stopped: boolean | undefined;
  for (const event of events) {
    if (event.turnId !== turnId) continue;
    const at = Date.parse(event.at);
    switch (event.type) {
      case 'TurnStarted':
        startedAt = at;
        break;
      case 'ToolCallScheduled':
        calls.set(event.callId, {
          callId: event.callId,
          toolName: event.toolName,
          groupIndex: event.groupIndex,
          status: 'scheduled',
          scheduledAt: at,
        });
        break;
      case 'PermissionRequested': {
        const call = calls.get(event.callId);
        if (call !== undefined) {
          call.status = 'awaiting_approval';
          call.approval = { from: at };
        }
        break;
      }
      case 'PermissionResolved':
      case 'PermissionDenied': {
        const call = calls.get(event.callId);
        if (call?.approval !== undefined && call.approval.to === undefined) call.approval.to = at;
        if (call !== undefined && event.type === 'PermissionResolved' && call.status === 'awaiting_approval')
          call.status = 'scheduled';
        break;
      }
      case 'ToolCallStarted': {
        const call = calls.get(event.callId);
        if (call !== undefined) {
          call.status = 'executing';
          call.startedAt = at;
          call.readOnly = event.readOnly;
        }
        break;
      }
      case 'ToolCallResult':
      case 'ToolCallError': {
        const call = calls.get(event.callId);
        if (call !== undefined) {
          call.status = event.status;
          call.finishedAt = at;
          delete call.waitingForClient;
          if (call.approval !== undefined && call.approval.to === undefined) call.approval.to = at;
        }
        break;
      }
      case 'ClientToolRequested': {
        const call = calls.get(event.callId);
        if (call !== undefined) call.waitingForClient = true;
        break;
      }
      case 'TurnCompleted':
        completedAt = at;
        stopped = event.stopped;
        break;
      case 'ToolBatchComplete':
      case 'WorkspaceSettingsUntrusted':
      case 'ApprovalIgnored':
      case 'BackgroundTaskStarted':
      case 'BackgroundTaskEnded':
      case 'PolicyChanged':
      case 'PolicyShadowDecision':
      case 'ToolCallResultReplaced':
      case 'ToolCallProgress':
      case 'CallInDoubt':
      case 'CallInDoubtResolved':
        break;
      default: {
        const exhaustive: never = event;
        throw new Error(`unknown event ${String((exhaustive as { type: string }).type)}`);
      }
    }
  }
  if (startedAt === undefined && calls.size === 0) return undefined;
  const lanes = new Map<number, TimelineLane>();
  for (const call of calls.values()) {
    const lane = lanes.get(call.groupIndex) ?? { groupIndex: call.groupIndex, calls: [] };
    lane.calls.push(call);
    lanes.set(call.groupIndex, lane);
  }
  const first = Math.min(...[...calls.values()].map((call) => call.scheduledAt));
  const timeline: TurnTimeline = {
    turnId,
    startedAt: startedAt ?? first,
    lanes: [...lanes.values()].sort((a, b) => a.groupIndex - b.groupIndex),
  };
  if (completedAt !== undefined) timeline.completedAt = completedAt;
  if (stopped !== undefined) timeline.stopped = stopped;
  return timeline;
}
