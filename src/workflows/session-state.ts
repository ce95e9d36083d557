import { log, proxySinks, workflowInfo } from '@temporalio/workflow';
import { INITIAL_POLICY_VERSION } from '../contracts/approval.js';
import type { ApprovalDecisionRecord } from '../contracts/approval.js';
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
/** Entries of the approval decision log kept (query `approvalDecisions`). */
export const APPROVAL_DECISIONS_RETAINED = 200;
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
  /** What the session did with each `approval` signal, newest last (bounded). */
  approvalDecisions?: Array<
    Omit<ApprovalDecisionRecord, 'verified' | 'policyVersion'> &
      Partial<Pick<ApprovalDecisionRecord, 'verified' | 'policyVersion'>>
  >;
  /** The session's policy when `setPolicy` changed it, and its session-wide limit counts. */
  policy?: CarriedPolicy;
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
  readonly approvalDecisions: ApprovalDecisionRecord[];
  /** Client-tool calls waiting for the client (not carried: a session continues as new only between turns). */
  readonly clientCalls = new ClientCallBoard();
  #toolState: Record<string, unknown>;

  constructor(options: SessionOptions, carried?: CarriedSessionState) {
    this.options = options;
    this.sessionId = options.sessionId ?? workflowInfo().workflowId;
    this.events = new EventLog(carried?.events);
    this.completedTurns = new Map((carried?.completedTurns ?? []).map((turn) => [turn.turnId, turn]));
    this.#toolState = { ...(carried?.sessionState ?? {}) };
    this.decidedRequestIds = [...(carried?.decidedRequestIds ?? [])];
    this.replacedResults = new Set(carried?.replacedResults ?? []);
    this.reportedUntrustedSettings = new Set(carried?.reportedUntrustedSettings ?? []);
    this.backgroundTasks = new BackgroundTaskLedger(carried?.backgroundTasks);
    // Entries carried from a run older than signed approvals lack the audit fields: unverified, the first policy.
    this.approvalDecisions = (carried?.approvalDecisions ?? []).map((record) => ({
      ...record,
      verified: record.verified ?? false,
      policyVersion: record.policyVersion ?? INITIAL_POLICY_VERSION,
    }));
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

  recordDecided(requestId: string): void {
    this.decidedRequestIds.push(requestId);
    if (this.decidedRequestIds.length > DECIDED_REQUESTS_RETAINED) this.decidedRequestIds.shift();
  }

  /**
   * Appends to the approval decision log, numbering the entry and stamping it with workflow time and the policy
   * version; telemetry (a pino line and a span, `src/worker/telemetry.ts`) hears of it too. Unverified by default.
   */
  recordApprovalDecision(
    record: Omit<ApprovalDecisionRecord, 'seq' | 'at' | 'verified' | 'policyVersion'> & { verified?: boolean },
  ): void {
    const seq = (this.approvalDecisions.at(-1)?.seq ?? -1) + 1;
    const now = Date.now();
    const entry: ApprovalDecisionRecord = {
      seq,
      at: new Date(now).toISOString(),
      ...record,
      verified: record.verified ?? false,
      policyVersion: this.policy.version,
    };
    this.approvalDecisions.push(entry);
    if (this.approvalDecisions.length > APPROVAL_DECISIONS_RETAINED) this.approvalDecisions.shift();
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
    const rest: Omit<CarriedSessionState, 'completedTurns'> = {
      events: this.events.carry(),
      rememberedRules: this.remembered.map((rule) => rule.source),
      sessionState: { ...this.#toolState },
      decidedRequestIds: this.decidedRequestIds.slice(-DECIDED_REQUESTS_RETAINED),
      replacedResults: [...this.replacedResults].slice(-REPLACED_RESULTS_RETAINED),
      reportedUntrustedSettings: [...this.reportedUntrustedSettings],
      backgroundTasks: this.backgroundTasks.carry(),
      approvalDecisions: this.approvalDecisions.slice(-APPROVAL_DECISIONS_RETAINED),
      ...(Object.keys(this.policy.carry()).length === 0 ? {} : { policy: this.policy.carry() }),
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
