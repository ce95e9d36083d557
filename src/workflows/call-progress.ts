import { EVENT_LIMITS } from '../contracts/defaults.js';
import type { ToolCallProgressSignal } from '../contracts/messages.js';
import type { NewSessionEvent } from '../contracts/events.js';

/** Calls whose progress count the ledger keeps before it forgets the oldest (calls end; their counts are not needed). */
const LEDGER_CALLS = 1_000;

/**
 * The `ToolCallProgress` events a session records from its calls' progress signals (v1.3). A signal counts only for a
 * call executing in the running turn; each call gets at most `EVENT_LIMITS.progressEventsPerCall` events, and their
 * text is clipped, whoever sent the signal: what a signal can add to the session's state is bounded. Pure.
 */
export class ProgressLedger {
  readonly #counts = new Map<string, number>();

  /** The event a signal becomes, or undefined when it is dropped. */
  accept(
    signal: ToolCallProgressSignal | undefined,
    running: { turnId: string | undefined; executing: (callId: string) => boolean },
  ): NewSessionEvent | undefined {
    if (signal === null || typeof signal !== 'object') return undefined;
    const { turnId, callId } = signal;
    if (typeof turnId !== 'string' || typeof callId !== 'string') return undefined;
    if (turnId !== running.turnId || !running.executing(callId)) return undefined;
    const key = `${turnId}/${callId}`;
    const count = this.#counts.get(key) ?? 0;
    if (count >= EVENT_LIMITS.progressEventsPerCall) return undefined;
    this.#counts.delete(key);
    this.#counts.set(key, count + 1);
    if (this.#counts.size > LEDGER_CALLS) {
      const oldest = this.#counts.keys().next().value;
      if (oldest !== undefined) this.#counts.delete(oldest);
    }
    const elapsed = Number(signal.elapsedMs);
    const event: NewSessionEvent = {
      type: 'ToolCallProgress',
      turnId,
      callId,
      elapsedMs: Number.isFinite(elapsed) && elapsed >= 0 ? Math.round(elapsed) : 0,
    };
    if (typeof signal.toolName === 'string') event.toolName = signal.toolName.slice(0, 200);
    if (typeof signal.output === 'string') event.output = signal.output.slice(-EVENT_LIMITS.progressOutputChars);
    if (typeof signal.message === 'string') event.message = signal.message.slice(0, EVENT_LIMITS.progressOutputChars);
    return event;
  }
}
