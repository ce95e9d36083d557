import { log, proxySinks, workflowInfo } from '@temporalio/workflow';
import { INITIAL_POLICY_VERSION, approvalDecisionSource } from '../contracts/approval.js';
import type { ApprovalDecisionCounts, ApprovalDecisionRecord } from '../contracts/approval.js';
import type { SwitchyardSinks } from '../contracts/sinks.js';
import { utf8Length } from '../contracts/utf8-length.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import type { NewSessionEvent, SessionEvent } from '../contracts/events.js';
import { parseRule } from '../contracts/permission-rules.js';
import type { ParsedRule } from '../contracts/permission-rules.js';
import type { SessionContext } from '../contracts/pipeline.js';
import type { SessionOptions } from '../contracts/session.js';
import type { TurnResult } from '../contracts/tool-result.js';
import type { BackgroundTaskView } from '../contracts/background-tasks.js';
import { ClientCallBoard } from './client-calls.js';
import { BackgroundTaskLedger } from './background-task-ledger.js';
import { CallsInDoubtLedger } from './calls-in-doubt.js';
import type { CarriedCallsInDoubt } from './calls-in-doubt.js';
import { EventLog } from './event-log.js';
import { PolicyState } from './session-policy.js';
import type { CarriedPolicy } from './session-policy.js';

const { switchyardTelemetry } = proxySinks<SwitchyardSinks>();

/** Completed turns remembered for re-attachment by turnId. */
const COMPLETED_TURNS_RETAINED = 50;
/**
 * At most this many bytes of completed turns (JSON) cross a continue-as-new: Temporal refuses a payload over 2 MB,
 * and a Read alone may return 256 KB, so 50 turns of large results would make the session's continue-as-new fail and
 * wedge it. Older turns than those carried can no longer be re-attached by turnId.
 */
export const CARRIED_TURNS_MAX_BYTES = 1_048_576;
/**
 * What the whole carried state (JSON, the session's options beside it) aims to stay under: Temporal's SDK logs a
 * warning (`TMPRL1103`) for every upload of payloads over 512 KiB, and busy sessions carried about 650 KB (50 turns of
 * four Reads and 1,000 events), so each continue-as-new put a warning in the worker's log. The completed turns get
 * the room the rest leaves, newest first; the newest turn is carried whatever its size up to
 * `CARRIED_TURNS_MAX_BYTES`, since it is the one a client that lost its answer retries.
 */
export const CARRIED_STATE_TARGET_BYTES = 448 * 1_024;
/** Answered approval ids remembered, so a second answer is reported as `already_decided`. */
export const DECIDED_REQUESTS_RETAINED = 500;
/**
 * Ignored `approval` signals listed by the decision log (query `approvalDecisions`): the newest. Anyone who can reach the
 * server can send signals, so ignored ones are bounded apart from accepted ones and only ever evict each other; each
 * one is counted (`ApprovalDecisionCounts.ignored`).
 */
export const IGNORED_DECISIONS_RETAINED = 100;
/**
 * Accepted decisions a session keeps, for its whole life and across continue-as-new: only a sender who can decide a
 * waiting call (an approver's signature, the session's evaluator or hooks, a policy change) adds one, at most one per
 * waiting call. Bounded only so the state carried across continue-as-new stays under Temporal's 2 MB payload limit:
 * past `ACCEPTED_DECISIONS_RETAINED` entries, or `ACCEPTED_DECISIONS_CARRIED_BYTES` of them in the carry, the oldest
 * accepted ones are dropped and counted (`ApprovalDecisionCounts.acceptedDropped`); ignored signals never drop one.
 */
export const ACCEPTED_DECISIONS_RETAINED = 1_000;
/** See `ACCEPTED_DECISIONS_RETAINED`: a typical entry is about 500 bytes, the largest (clipped fields) about 3 KB. */
export const ACCEPTED_DECISIONS_CARRIED_BYTES = 512 * 1_024;
/** Replaced-result keys kept (a key is `<turnId>/<callId>`). */
const REPLACED_RESULTS_RETAINED = 5_000;

/** State carried across continue-as-new. */
export interface CarriedSessionState {
  events: { events: SessionEvent[]; next: number };
  completedTurns: TurnResult[];
  rememberedRules: string[];
  sessionState: Record<string, unknown>;
  decidedRequestIds: string[];
  /** `<turnId>/<callId>` of results the aggregate budget replaced: they stay replaced. */
  replacedResults: string[];
  /** Untrusted workspace settings files already reported by a `WorkspaceSettingsUntrusted` event. */
  reportedUntrustedSettings?: string[];
  /** v1.1: the session's background tasks as last seen. */
  backgroundTasks?: BackgroundTaskView[];
  /**
   * The decision log, in `seq` order: every accepted decision kept (`ACCEPTED_DECISIONS_RETAINED`) and the newest
   * ignored signals (`IGNORED_DECISIONS_RETAINED`). Runs older than the split carried the newest 200 of both together.
   */
  approvalDecisions?: Array<
    Omit<ApprovalDecisionRecord, 'verified' | 'policyVersion'> &
      Partial<Pick<ApprovalDecisionRecord, 'verified' | 'policyVersion'>>
  >;
  /** Ignored signals counted so far, and accepted decisions dropped past their bound (absent: none counted yet). */
  approvalDecisionCounts?: { ignored: number; acceptedDropped: number };
  /** The session's policy when `setPolicy` changed it, and its session-wide limit counts. */
  policy?: CarriedPolicy;
  /** v1.3: calls in doubt not yet settled, and settled ones the next turn reports (absent: none). */
  callsInDoubt?: CarriedCallsInDoubt;
}

/** What one finished call asks the session to change (its context modifier). */
export interface SessionChanges {
  stateChanges?: Record<string, unknown>;
  rememberRule?: string;
}

export interface SessionRules {
  allow: ParsedRule[];
  ask: ParsedRule[];
  deny: ParsedRule[];
}

/**
 * Everything a session keeps between turns, and what continue-as-new carries: options and parsed rules, the event
 * log, remembered approvals, tool state (todos), the aggregate budget's replaced results, completed turns.
 */
export class SessionState {
  readonly options: SessionOptions;
  readonly sessionId: string;
  readonly events: EventLog;
  /** The session's own policy tier (rules, mode, version), shadow rules and limits. */
  readonly policy: PolicyState;
  /** A start-input rule that does not parse: every call becomes an error instead of a failed workflow task. */
  readonly ruleError: string | undefined;
  readonly remembered: ParsedRule[];
  readonly completedTurns: Map<string, TurnResult>;
  readonly decidedRequestIds: string[];
  readonly replacedResults: Set<string>;
  readonly reportedUntrustedSettings: Set<string>;
  readonly backgroundTasks: BackgroundTaskLedger;
  /** Calls in doubt until a person settles them (`src/workflows/calls-in-doubt.ts`). */
  readonly callsInDoubt: CallsInDoubtLedger;
  /** Accepted decisions, oldest first (bounded only by `ACCEPTED_DECISIONS_RETAINED`). */
  readonly #acceptedDecisions: ApprovalDecisionRecord[];
  /** The newest ignored signals, oldest first (`IGNORED_DECISIONS_RETAINED`). */
  readonly #ignoredDecisions: ApprovalDecisionRecord[];
  #ignoredCount: number;
  #acceptedDropped: number;
  #nextDecisionSeq: number;
  /** Client-tool calls waiting for the client (not carried: a session continues as new only between turns). */
  readonly clientCalls: ClientCallBoard;
  #toolState: Record<string, unknown>;

  constructor(options: SessionOptions, carried?: CarriedSessionState) {
    this.options = options;
    this.sessionId = options.sessionId ?? workflowInfo().workflowId;
    this.clientCalls = new ClientCallBoard({
      sessionId: this.sessionId,
      localStore: options.toolTaskQueue === undefined,
    });
    this.events = new EventLog(carried?.events);
    this.completedTurns = new Map((carried?.completedTurns ?? []).map((turn) => [turn.turnId, turn]));
    this.#toolState = { ...(carried?.sessionState ?? {}) };
    this.decidedRequestIds = [...(carried?.decidedRequestIds ?? [])];
    this.replacedResults = new Set(carried?.replacedResults ?? []);
    this.reportedUntrustedSettings = new Set(carried?.reportedUntrustedSettings ?? []);
    this.backgroundTasks = new BackgroundTaskLedger(carried?.backgroundTasks);
    this.callsInDoubt = new CallsInDoubtLedger(carried?.callsInDoubt);
    // Entries carried from a run older than signed approvals lack the audit fields: unverified, the first policy.
    // Older runs also lack `inputSummary` and `source`, and carried no counts: they are listed as they were.
    const carriedDecisions = (carried?.approvalDecisions ?? []).map((record) => ({
      ...record,
      verified: record.verified ?? false,
      policyVersion: record.policyVersion ?? INITIAL_POLICY_VERSION,
    }));
    this.#acceptedDecisions = carriedDecisions.filter((record) => record.outcome === 'accepted');
    this.#ignoredDecisions = carriedDecisions.filter((record) => record.outcome !== 'accepted');
    this.#ignoredCount = Math.max(carried?.approvalDecisionCounts?.ignored ?? 0, this.#ignoredDecisions.length);
    this.#acceptedDropped = carried?.approvalDecisionCounts?.acceptedDropped ?? 0;
    this.#nextDecisionSeq = carriedDecisions.reduce((next, record) => Math.max(next, record.seq + 1), 0);
    let ruleError: string | undefined;
    const parse = (list: readonly string[] | undefined): ParsedRule[] =>
      (list ?? []).flatMap((rule) => {
        try {
          return [parseRule(rule)];
        } catch (error) {
          ruleError ??= projectErrorMessage(error);
          return [];
        }
      });
    this.policy = new PolicyState(options, carried?.policy);
    this.remembered = parse(carried?.rememberedRules);
    this.ruleError = this.policy.ruleError ?? ruleError;
  }

  /** The session's rules as they stand (`setPolicy` replaces them). */
  get rules(): SessionRules {
    return this.policy.rules;
  }

  /** Calls of this run whose process ran outside the OS sandbox (the worker had none), for the Web UI details. */
  unsandboxed: { calls: number; lastReason: string } | undefined;

  noteUnsandboxed(reason: string): void {
    this.unsandboxed = { calls: (this.unsandboxed?.calls ?? 0) + 1, lastReason: reason };
  }

  get toolState(): Readonly<Record<string, unknown>> {
    return this.#toolState;
  }

  emit(event: NewSessionEvent): void {
    this.events.append(event, new Date());
  }

  /** What every activity of this session needs to know about it. */
  context(): SessionContext {
    const { options } = this;
    const context: SessionContext = { sessionId: this.sessionId };
    if (options.cwd !== undefined) context.cwd = options.cwd;
    const rules = this.policy.ruleTexts;
    if (rules.allow !== undefined) context.allowRules = rules.allow;
    if (rules.deny !== undefined) context.denyRules = rules.deny;
    if (options.readBeforeEdit === true) context.readBeforeEdit = true;
    if (options.hooks !== undefined) context.sessionHooks = options.hooks;
    if (options.trustWorkspaceSettings === true) context.trustWorkspaceSettings = true;
    if (options.sandbox !== undefined) context.sandbox = options.sandbox;
    if (options.clientTools !== undefined && options.clientTools.length > 0) context.clientTools = options.clientTools;
    return context;
  }

  /** Applies calls' session changes (state keys, remembered rules) in the order given. */
  apply(changes: readonly SessionChanges[]): void {
    for (const change of changes) {
      if (change.stateChanges !== undefined) this.#toolState = { ...this.#toolState, ...change.stateChanges };
      if (change.rememberRule !== undefined && !this.remembered.some((rule) => rule.source === change.rememberRule)) {
        try {
          this.remembered.push(parseRule(change.rememberRule));
        } catch (error) {
          log.warn('could not remember rule', { rule: change.rememberRule, error: projectErrorMessage(error) });
        }
      }
    }
  }

  /**
   * Query `approvalDecisions`: the accepted decisions and the newest ignored signals, in `seq` order (a fresh array).
   */
  get approvalDecisions(): ApprovalDecisionRecord[] {
    return mergeBySeq(this.#acceptedDecisions, this.#ignoredDecisions);
  }

  /** Query `approvalDecisionCounts`. */
  approvalDecisionCounts(): ApprovalDecisionCounts {
    return {
      accepted: this.#acceptedDecisions.length,
      acceptedDropped: this.#acceptedDropped,
      ignored: this.#ignoredCount,
      ignoredRetained: this.#ignoredDecisions.length,
    };
  }

  recordDecided(requestId: string): void {
    this.decidedRequestIds.push(requestId);
    if (this.decidedRequestIds.length > DECIDED_REQUESTS_RETAINED) this.decidedRequestIds.shift();
  }

  /**
   * Appends to the approval decision log, numbering the entry and stamping it with workflow time and the policy
   * version; telemetry (a pino line and a span, `src/worker/telemetry.ts`) hears of it too. Unverified by default; an
   * accepted decision's `source` is derived from `by` unless given (`approvalDecisionSource`). Accepted and ignored
   * entries are kept apart, so ignored signals never evict an accepted decision.
   */
  recordApprovalDecision(
    record: Omit<ApprovalDecisionRecord, 'seq' | 'at' | 'verified' | 'policyVersion'> & { verified?: boolean },
  ): void {
    const seq = this.#nextDecisionSeq;
    this.#nextDecisionSeq += 1;
    const now = Date.now();
    const entry: ApprovalDecisionRecord = {
      seq,
      at: new Date(now).toISOString(),
      ...record,
      verified: record.verified ?? false,
      policyVersion: this.policy.version,
    };
    if (entry.outcome === 'accepted') {
      entry.source ??= approvalDecisionSource(entry.by);
      this.#acceptedDecisions.push(entry);
      if (this.#acceptedDecisions.length > ACCEPTED_DECISIONS_RETAINED) {
        this.#acceptedDecisions.shift();
        this.#acceptedDropped += 1;
      }
    } else {
      this.#ignoredCount += 1;
      this.#ignoredDecisions.push(entry);
      if (this.#ignoredDecisions.length > IGNORED_DECISIONS_RETAINED) this.#ignoredDecisions.shift();
    }
    switchyardTelemetry.approvalDecision({
      sessionId: this.sessionId,
      requestId: entry.requestId,
      verified: entry.verified,
      outcome: entry.outcome,
      policyVersion: entry.policyVersion,
      at: now,
      ...(entry.callId === undefined ? {} : { callId: entry.callId }),
      ...(entry.toolName === undefined ? {} : { toolName: entry.toolName }),
      ...(entry.inputDigest === undefined ? {} : { inputDigest: entry.inputDigest }),
      ...(entry.decision === undefined ? {} : { decision: entry.decision }),
      ...(entry.by === undefined ? {} : { by: entry.by }),
      ...(entry.ignoredBecause === undefined ? {} : { ignoredBecause: entry.ignoredBecause }),
      ...(entry.source === undefined ? {} : { source: entry.source }),
      ...(entry.inputSummary === undefined ? {} : { inputSummary: entry.inputSummary }),
    });
  }

  recordCompletedTurn(result: TurnResult): void {
    this.completedTurns.set(result.turnId, result);
    if (this.completedTurns.size > COMPLETED_TURNS_RETAINED) {
      const oldest = this.completedTurns.keys().next().value;
      if (oldest !== undefined) this.completedTurns.delete(oldest);
    }
  }

  /** Reports settings files the worker did not load because the workspace is not trusted, once each per session. */
  reportUntrustedSettings(turnId: string, files: readonly string[] | undefined): void {
    const fresh = (files ?? []).filter((file) => !this.reportedUntrustedSettings.has(file));
    if (fresh.length === 0) return;
    for (const file of fresh) this.reportedUntrustedSettings.add(file);
    this.emit({ type: 'WorkspaceSettingsUntrusted', turnId, files: fresh });
  }

  /**
   * The state the next run starts from. `besideBytes`: what travels beside it in the same upload (the session's
   * options, at continue-as-new), counted against `targetBytes` (default `CARRIED_STATE_TARGET_BYTES`; a carry that
   * is never uploaded, such as an executor rebuilt within its run, passes `Infinity` and keeps up to
   * `CARRIED_TURNS_MAX_BYTES` of turns).
   */
  carry(besideBytes = 0, targetBytes = CARRIED_STATE_TARGET_BYTES): CarriedSessionState {
    const accepted =
      targetBytes === Number.POSITIVE_INFINITY
        ? [...this.#acceptedDecisions]
        : newestWithinBytes(this.#acceptedDecisions, ACCEPTED_DECISIONS_CARRIED_BYTES);
    const rest: Omit<CarriedSessionState, 'completedTurns'> = {
      events: this.events.carry(),
      rememberedRules: this.remembered.map((rule) => rule.source),
      sessionState: { ...this.#toolState },
      decidedRequestIds: this.decidedRequestIds.slice(-DECIDED_REQUESTS_RETAINED),
      replacedResults: [...this.replacedResults].slice(-REPLACED_RESULTS_RETAINED),
      reportedUntrustedSettings: [...this.reportedUntrustedSettings],
      backgroundTasks: this.backgroundTasks.carry(),
      approvalDecisions: mergeBySeq(accepted, this.#ignoredDecisions),
      approvalDecisionCounts: {
        ignored: this.#ignoredCount,
        acceptedDropped: this.#acceptedDropped + this.#acceptedDecisions.length - accepted.length,
      },
      ...(Object.keys(this.policy.carry()).length === 0 ? {} : { policy: this.policy.carry() }),
      ...(this.callsInDoubt.carry() === undefined ? {} : { callsInDoubt: this.callsInDoubt.carry() }),
    };
    const room =
      targetBytes === Number.POSITIVE_INFINITY
        ? targetBytes
        : targetBytes - besideBytes - utf8Length(JSON.stringify(rest));
    return { ...rest, completedTurns: carriedTurns([...this.completedTurns.values()], room) };
  }
}

/**
 * The completed turns a continue-as-new carries: the newest of the last `COMPLETED_TURNS_RETAINED` that fit in
 * `roomBytes` together, and at least the newest one when it alone is within `CARRIED_TURNS_MAX_BYTES`.
 */
export function carriedTurns<T>(turns: readonly T[], roomBytes: number): T[] {
  const retained = turns.slice(-COMPLETED_TURNS_RETAINED);
  const fitting = newestWithinBytes(retained, Math.min(Math.max(roomBytes, 0), CARRIED_TURNS_MAX_BYTES));
  if (fitting.length > 0 || retained.length === 0) return fitting;
  return newestWithinBytes(retained.slice(-1), CARRIED_TURNS_MAX_BYTES);
}

/** Two lists each in `seq` order, merged into one in `seq` order. */
function mergeBySeq(first: readonly ApprovalDecisionRecord[], second: readonly ApprovalDecisionRecord[]) {
  const merged: ApprovalDecisionRecord[] = [];
  let i = 0;
  let j = 0;
  while (i < first.length || j < second.length) {
    const a = first[i];
    const b = second[j];
    if (b === undefined || (a !== undefined && a.seq <= b.seq)) {
      merged.push(a as ApprovalDecisionRecord);
      i += 1;
    } else {
      merged.push(b);
      j += 1;
    }
  }
  return merged;
}

/** The newest items whose JSON fits in `maxBytes` together, in their original order (a single item over it: none). */
export function newestWithinBytes<T>(items: readonly T[], maxBytes: number): T[] {
  let used = 0;
  let first = items.length;
  while (first > 0) {
    const size = utf8Length(JSON.stringify(items[first - 1]));
    if (used + size > maxBytes) break;
    used += size;
    first -= 1;
  }
  return items.slice(first);
}
