import type { LocalCallsPolicy, CallOutcome, PreparedCalls } from '../contracts/pipeline.js';
import type { OpenGroup, TurnCall } from './schedule-calls.js';
import type { SessionChanges } from './session-state.js';
import { SiblingGroup } from './sibling-group.js';

/** One turn as the scheduler runs it. A whole turn is a streaming turn whose calls all arrive at once, `done`. */
export interface Turn {
  turnId: string;
  kind: 'whole' | 'streaming';
  calls: TurnCall[];
  /** No more calls will be added (the model's reply is complete, or the turn was interrupted). */
  done: boolean;
  /** Every result has been handed out and the turn's result is final. */
  ended: boolean;
  stopReason?: string;
  /** The session's effective working directory, from Prepare. */
  cwd?: string;
  maxConcurrency?: number;
  group?: OpenGroup;
  siblings: SiblingGroup;
  /** Session changes of calls that finished while others still ran: applied, in call order, when none runs. */
  pendingChanges: Array<{ index: number; changes: SessionChanges }>;
  /** Results before this index are final (handed out). */
  handedOut: number;
  handedOutChars: number;
  /** The first group, prepared by Plan (whole turns). */
  firstGroup?: PreparedCalls;
  /** The first group's outcomes when Plan also ran it (see `PlanCallsInput.runFirstGroup`), and when Plan began. */
  ranFirstGroup?: RanGroup;
  /** The groups after the first that Plan prepared and ran too, in order (see `PlanCallsInput.runFollowingGroups`). */
  ranGroups?: Array<{ prepared: PreparedCalls; ran: RanGroup }>;
  /** Short read-only calls run as local activities (from Plan: the worker hosts the tools). */
  localCalls?: LocalCallsPolicy;
}

/** Outcomes of calls Plan ran, by call id, and the workflow time Plan began (those calls' start). */
export interface RanGroup {
  since: number;
  outcomes: Record<string, CallOutcome>;
}

/** A turn with no calls yet. */
export function createTurn(options: { turnId: string; kind: Turn['kind'] }): Turn {
  return {
    turnId: options.turnId,
    kind: options.kind,
    calls: [],
    done: false,
    ended: false,
    siblings: new SiblingGroup(),
    pendingChanges: [],
    handedOut: 0,
    handedOutChars: 0,
  };
}
