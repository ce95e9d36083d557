import { EVENTS_PAGE_LIMIT } from '../contracts/events.js';
import type { EventsPage, NewSessionEvent, SessionEvent } from '../contracts/events.js';

/** Events kept in workflow state; older ones are dropped (their positions stay taken). */
export const EVENT_LOG_RETAINED = 1_000;

/** How many events past EVENT_LOG_RETAINED the log holds before it drops the older ones at once. */
const TRIM_BATCH = 250;

/** Append-only session event log, read by cursor. Pure: positions survive continue-as-new through `carry`. */
export class EventLog {
  #events: SessionEvent[];
  #next: number;
  #appendedThisRun = 0;
  /** The last `at` written, as a time and as text: the events of one activation share their workflow time. */
  #atMs = Number.NaN;
  #atText = '';

  constructor(carried?: { events: SessionEvent[]; next: number }) {
    this.#events = carried?.events ?? [];
    this.#next = carried?.next ?? 0;
  }

  append(event: NewSessionEvent, at: Date): SessionEvent {
    const ms = at.getTime();
    if (ms !== this.#atMs) {
      this.#atMs = ms;
      this.#atText = at.toISOString();
    }
    const full = { ...event, seq: this.#next, at: this.#atText } as SessionEvent;
    this.#next += 1;
    this.#appendedThisRun += 1;
    this.#events.push(full);
    // Older events go in batches: dropping one per append moved the whole array each time (a long session appends
    // several events per call). What is kept beyond the newest EVENT_LOG_RETAINED is never read or carried.
    if (this.#events.length >= EVENT_LOG_RETAINED + TRIM_BATCH)
      this.#events.splice(0, this.#events.length - EVENT_LOG_RETAINED);
    return full;
  }

  /** The newest EVENT_LOG_RETAINED events, oldest first. */
  #retained(): SessionEvent[] {
    const excess = this.#events.length - EVENT_LOG_RETAINED;
    return excess > 0 ? this.#events.slice(excess) : this.#events;
  }

  /** Events with `seq >= since` (all retained ones when `since` is omitted) and the cursor for the next read. */
  read(since = 0, limit = EVENTS_PAGE_LIMIT): EventsPage {
    const events = this.#retained()
      .filter((event) => event.seq >= since)
      .slice(0, limit);
    const last = events.at(-1);
    return { events, next: last === undefined ? Math.max(since, this.#next) : last.seq + 1 };
  }

  get appendedThisRun(): number {
    return this.#appendedThisRun;
  }

  /**
   * The retained events for the next run, without what only a live UI draws from (a result's `display` and `preview`,
   * progress output): the carried input stays the size it was before those fields existed.
   */
  carry(): { events: SessionEvent[]; next: number } {
    return { events: this.#retained().map(lightened), next: this.#next };
  }
}

/** An event without its UI-only fields (v1.3), as continue-as-new carries it. */
function lightened(event: SessionEvent): SessionEvent {
  if (event.type === 'ToolCallResult' && (event.display !== undefined || event.preview !== undefined)) {
    const { display: _display, preview: _preview, previewTruncated: _cut, ...rest } = event;
    return rest;
  }
  if (event.type === 'ToolCallProgress' && (event.output !== undefined || event.message !== undefined)) {
    const { output: _output, message: _message, ...rest } = event;
    return rest;
  }
  return event;
}
