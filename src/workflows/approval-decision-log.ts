import { proxySinks } from '@temporalio/workflow';
import { INITIAL_POLICY_VERSION, approvalDecisionSource } from '../contracts/approval.js';
import type { ApprovalDecisionCounts, ApprovalDecisionRecord } from '../contracts/approval.js';
import type { SwitchyardSinks } from '../contracts/sinks.js';
import { newestWithinBytes } from './newest-within-bytes.js';

const { switchyardTelemetry } = proxySinks<SwitchyardSinks>();

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

/** A decision log entry as a run carries it (runs older than signed approvals carried no audit fields). */
export type CarriedApprovalDecision = Omit<ApprovalDecisionRecord, 'verified' | 'policyVersion'> &
  Partial<Pick<ApprovalDecisionRecord, 'verified' | 'policyVersion'>>;

/** A decision as its recorder gives it: the log numbers and stamps it. */
export type NewApprovalDecision = Omit<ApprovalDecisionRecord, 'seq' | 'at' | 'verified' | 'policyVersion'> & {
  verified?: boolean;
};

/**
 * The session's approval decision log (queries `approvalDecisions`, `approvalDecisionCounts`): every decision on a
 * waiting call and every ignored signal, numbered in one `seq` order. Accepted and ignored entries are kept apart, so
 * ignored signals never evict an accepted decision.
 */
export class ApprovalDecisionLog {
  /** Accepted decisions, oldest first (bounded only by `ACCEPTED_DECISIONS_RETAINED`). */
  readonly #accepted: ApprovalDecisionRecord[];
  /** The newest ignored signals, oldest first (`IGNORED_DECISIONS_RETAINED`). */
  readonly #ignored: ApprovalDecisionRecord[];
  #ignoredCount: number;
  #acceptedDropped: number;
  #nextSeq: number;

  constructor(carried?: {
    approvalDecisions?: CarriedApprovalDecision[];
    approvalDecisionCounts?: { ignored: number; acceptedDropped: number };
  }) {
    // Entries carried from a run older than signed approvals lack the audit fields: unverified, the first policy.
    // Older runs also lack `inputSummary` and `source`, and carried no counts: they are listed as they were.
    const carriedDecisions = (carried?.approvalDecisions ?? []).map((record) => ({
      ...record,
      verified: record.verified ?? false,
      policyVersion: record.policyVersion ?? INITIAL_POLICY_VERSION,
    }));
    this.#accepted = carriedDecisions.filter((record) => record.outcome === 'accepted');
    this.#ignored = carriedDecisions.filter((record) => record.outcome !== 'accepted');
    this.#ignoredCount = Math.max(carried?.approvalDecisionCounts?.ignored ?? 0, this.#ignored.length);
    this.#acceptedDropped = carried?.approvalDecisionCounts?.acceptedDropped ?? 0;
    this.#nextSeq = carriedDecisions.reduce((next, record) => Math.max(next, record.seq + 1), 0);
  }

  /** The accepted decisions and the newest ignored signals, in `seq` order (a fresh array). */
  list(): ApprovalDecisionRecord[] {
    return mergeBySeq(this.#accepted, this.#ignored);
  }

  counts(): ApprovalDecisionCounts {
    return {
      accepted: this.#accepted.length,
      acceptedDropped: this.#acceptedDropped,
      ignored: this.#ignoredCount,
      ignoredRetained: this.#ignored.length,
    };
  }

  /**
   * Appends an entry, numbering it and stamping it with workflow time and the policy version; telemetry (a pino line
   * and a span, `src/worker/telemetry.ts`) hears of it too. Unverified by default; an accepted decision's `source` is
   * derived from `by` unless given (`approvalDecisionSource`).
   */
  record(record: NewApprovalDecision, session: { sessionId: string; policyVersion: number }): void {
    const seq = this.#nextSeq;
    this.#nextSeq += 1;
    const now = Date.now();
    const entry: ApprovalDecisionRecord = {
      seq,
      at: new Date(now).toISOString(),
      ...record,
      verified: record.verified ?? false,
      policyVersion: session.policyVersion,
    };
    if (entry.outcome === 'accepted') {
      entry.source ??= approvalDecisionSource(entry.by);
      this.#accepted.push(entry);
      if (this.#accepted.length > ACCEPTED_DECISIONS_RETAINED) {
        this.#accepted.shift();
        this.#acceptedDropped += 1;
      }
    } else {
      this.#ignoredCount += 1;
      this.#ignored.push(entry);
      if (this.#ignored.length > IGNORED_DECISIONS_RETAINED) this.#ignored.shift();
    }
    switchyardTelemetry.approvalDecision({
      sessionId: session.sessionId,
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

  /**
   * What continue-as-new carries of the log: every ignored signal kept, and the newest accepted decisions within
   * `ACCEPTED_DECISIONS_CARRIED_BYTES` (all of them when the carry is never uploaded, `whole`).
   */
  carry(whole: boolean): {
    approvalDecisions: ApprovalDecisionRecord[];
    approvalDecisionCounts: { ignored: number; acceptedDropped: number };
  } {
    const accepted = whole ? [...this.#accepted] : newestWithinBytes(this.#accepted, ACCEPTED_DECISIONS_CARRIED_BYTES);
    return {
      approvalDecisions: mergeBySeq(accepted, this.#ignored),
      approvalDecisionCounts: {
        ignored: this.#ignoredCount,
        acceptedDropped: this.#acceptedDropped + this.#accepted.length - accepted.length,
      },
    };
  }
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
