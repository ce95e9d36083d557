import type { EventsPage, NewSessionEvent, SessionEvent } from '../contracts/events.js';

/** Events kept in workflow state; older ones are dropped (their positions stay taken). */
export const EVENT_LOG_RETAINED = 1_000;

/** Append-only session event log, read by cursor. Pure: positions survive continue-as-new through `carry`. */
export class EventLog {
  #events: SessionEvent[];
  #next: number;
  #appendedThisRun = 0;

  constructor(carried?: { events: SessionEvent[]; next: number }) {
    this.#events = carried?.events ?? [];
    this.#next = carried?.next ?? 0;
  }

  append(event: NewSessionEvent, at: Date): SessionEvent {
    const full = { ...event, seq: this.#next, at: at.toISOString() } as SessionEvent;
    this.#next += 1;
    this.#appendedThisRun += 1;
    this.#events.push(full);
    if (this.#events.length > EVENT_LOG_RETAINED) this.#events.splice(0, this.#events.length - EVENT_LOG_RETAINED);
    return full;
  }

  /** Events with `seq >= since` (all retained ones when `since` is omitted) and the cursor for the next read. */
  read(since = 0, limit = 500): EventsPage {
    const events = this.#events.filter((event) => event.seq >= since).slice(0, limit);
    const last = events.at(-1);
    return { events, next: last === undefined ? Math.max(since, this.#next) : last.seq + 1 };
  }

  get appendedThisRun(): number {
    return this.#appendedThisRun;
  }

  carry(): { events: SessionEvent[]; next: number } {
    return { events: [...this.#events], next: this.#next };
  }
}
