// The calls in doubt a session keeps: what the ledger holds and carries across continue-as-new. How a person settles
// them (the `resolveInDoubt` update, the `callsInDoubt` query) is in src/workflows/doubt-resolution.ts.
import { approvalInputSummary } from '../contracts/approval.js';
import type { CallInDoubt, InDoubtOutcome } from '../contracts/calls-in-doubt.js';
import { utf8Length } from '../contracts/utf8-length.js';

/**
 * Marks histories in which a call that is not idempotent and lost its worker is also recorded as in doubt (an event,
 * query `callsInDoubt`); older histories replay without the record.
 */
export const CALLS_IN_DOUBT_PATCH = 'calls-in-doubt';

/**
 * Largest input (UTF-8 bytes of its JSON) a call in doubt keeps for a `retry`: the list crosses continue-as-new, whose
 * payload Temporal bounds. A larger call can be settled `ran` or `not-ran`; a `retry` of it is refused with the reason.
 */
export const IN_DOUBT_INPUT_MAX_BYTES = 16 * 1_024;

/** A call in doubt as the session keeps it: what query `callsInDoubt` lists, and the call itself for a `retry`. */
export interface HeldCallInDoubt extends CallInDoubt {
  /** The call's resolved input (absent: over `IN_DOUBT_INPUT_MAX_BYTES`, so it cannot be retried). */
  input?: unknown;
}

/** A settled call the session's next turn reports: the output a person gave (`ran`), or the call run again (`retry`). */
export interface InDoubtReport {
  outcome: Extract<InDoubtOutcome, 'ran' | 'retry'>;
  call: HeldCallInDoubt;
  output?: string;
}

/** What continue-as-new carries of calls in doubt. */
export interface CarriedCallsInDoubt {
  open: HeldCallInDoubt[];
  reports: InDoubtReport[];
}

/**
 * The session's calls in doubt (docs/SEMANTICS.md, Calls in doubt): listed until a person settles them, then, for `ran`
 * and `retry`, reported by the session's next turn. Carried across continue-as-new.
 */
export class CallsInDoubtLedger {
  readonly #open = new Map<string, HeldCallInDoubt>();
  readonly #reports: InDoubtReport[] = [];

  constructor(carried?: CarriedCallsInDoubt) {
    for (const call of carried?.open ?? []) this.#open.set(call.callId, call);
    this.#reports.push(...(carried?.reports ?? []));
  }

  /** Query `callsInDoubt`: oldest first, without the kept inputs. */
  list(): CallInDoubt[] {
    return [...this.#open.values()].map(
      ({ callId, turnId, toolName, inputSummary, inputDigest, idempotencyKey, startedAt }) => ({
        callId,
        turnId,
        toolName,
        inputSummary,
        inputDigest,
        idempotencyKey,
        startedAt,
      }),
    );
  }

  get(callId: string): HeldCallInDoubt | undefined {
    return this.#open.get(callId);
  }

  /** Records a call in doubt; its input is kept for a `retry` when small enough. */
  record(call: Omit<HeldCallInDoubt, 'inputSummary' | 'input'>, input: unknown): HeldCallInDoubt {
    let size = Number.POSITIVE_INFINITY;
    try {
      size = utf8Length(JSON.stringify(input) ?? '');
    } catch {
      size = Number.POSITIVE_INFINITY;
    }
    const held: HeldCallInDoubt = {
      ...call,
      inputSummary: approvalInputSummary(call.toolName, input),
      ...(size <= IN_DOUBT_INPUT_MAX_BYTES ? { input } : {}),
    };
    this.#open.set(call.callId, held);
    return held;
  }

  /** Removes a settled call from the list; `ran` and `retry` wait for the next turn to report them. */
  settle(call: HeldCallInDoubt, outcome: InDoubtOutcome, output: string | undefined): void {
    this.#open.delete(call.callId);
    if (outcome === 'not-ran') return;
    this.#reports.push({ outcome, call, ...(output === undefined ? {} : { output }) });
  }

  /**
   * The settled calls a new turn reports first, in the order they were settled: a `retry` as a call of the turn (it
   * runs through the whole pipeline under its original call id), a `ran` as a result already complete. A call id the
   * turn's own calls use waits for a later turn.
   */
  takeReports(turnCallIds: ReadonlySet<string>): InDoubtReport[] {
    const taken: InDoubtReport[] = [];
    for (let index = 0; index < this.#reports.length;) {
      const report = this.#reports[index];
      if (report !== undefined && !turnCallIds.has(report.call.callId)) {
        taken.push(report);
        this.#reports.splice(index, 1);
      } else index += 1;
    }
    return taken;
  }

  get pendingReports(): number {
    return this.#reports.length;
  }

  carry(): CarriedCallsInDoubt | undefined {
    if (this.#open.size === 0 && this.#reports.length === 0) return undefined;
    return { open: [...this.#open.values()], reports: [...this.#reports] };
  }
}
