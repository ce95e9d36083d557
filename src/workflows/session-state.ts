import { log, workflowInfo } from '@temporalio/workflow';
import type { ApprovalDecisionCounts, ApprovalDecisionRecord } from '../contracts/approval.js';
import { utf8Length } from '../contracts/utf8-length.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import type { NewSessionEvent, SessionEvent } from '../contracts/events.js';
import { parseRule } from '../contracts/permission-rules.js';
import type { ParsedRule } from '../contracts/permission-rules.js';
import type { SessionContext } from '../contracts/pipeline.js';
import type { SessionOptions } from '../contracts/session.js';
import type { TurnResult } from '../contracts/tool-result.js';
import type { BackgroundTaskView } from '../contracts/background-tasks.js';
import { ApprovalDecisionLog } from './approval-decision-log.js';
import type { CarriedApprovalDecision, NewApprovalDecision } from './approval-decision-log.js';
import { ClientCallBoard } from './client-calls.js';
import { BackgroundTaskLedger } from './background-task-ledger.js';
import { CallsInDoubtLedger } from './doubt-ledger.js';
import type { CarriedCallsInDoubt } from './doubt-ledger.js';
import { EventLog } from './event-log.js';
import { newestWithinBytes } from './newest-within-bytes.js';
import { PolicyState } from './session-policy.js';
import type { CarriedPolicy } from './session-policy.js';

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
   * ignored signals (`IGNORED_DECISIONS_RETAINED`, both in `approval-decision-log.ts`). Runs older than the split
   * carried the newest 200 of both together.
   */
  approvalDecisions?: CarriedApprovalDecision[];
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
 * log, the approval decision log, remembered approvals, tool state (todos), the aggregate budget's replaced results,
 * completed turns.
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
  /** Calls in doubt until a person settles them (`src/workflows/doubt-ledger.ts`). */
  readonly callsInDoubt: CallsInDoubtLedger;
  /** Every decision on a waiting call and every ignored signal (queries `approvalDecisions`, `approvalDecisionCounts`). */
  readonly #decisionLog: ApprovalDecisionLog;
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
    this.#decisionLog = new ApprovalDecisionLog(carried);
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
    return this.#decisionLog.list();
  }

  /** Query `approvalDecisionCounts`. */
  approvalDecisionCounts(): ApprovalDecisionCounts {
    return this.#decisionLog.counts();
  }

  recordDecided(requestId: string): void {
    this.decidedRequestIds.push(requestId);
    if (this.decidedRequestIds.length > DECIDED_REQUESTS_RETAINED) this.decidedRequestIds.shift();
  }

  /** Appends to the approval decision log (`approval-decision-log.ts`), stamped with the policy version. */
  recordApprovalDecision(record: NewApprovalDecision): void {
    this.#decisionLog.record(record, { sessionId: this.sessionId, policyVersion: this.policy.version });
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
    const rest: Omit<CarriedSessionState, 'completedTurns'> = {
      events: this.events.carry(),
      rememberedRules: this.remembered.map((rule) => rule.source),
      sessionState: { ...this.#toolState },
      decidedRequestIds: this.decidedRequestIds.slice(-DECIDED_REQUESTS_RETAINED),
      replacedResults: [...this.replacedResults].slice(-REPLACED_RESULTS_RETAINED),
      reportedUntrustedSettings: [...this.reportedUntrustedSettings],
      backgroundTasks: this.backgroundTasks.carry(),
      ...this.#decisionLog.carry(targetBytes === Number.POSITIVE_INFINITY),
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
