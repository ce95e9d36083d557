import { describe, expect, it } from 'vitest';
import { EVENT_LOG_RETAINED, EventLog } from '../../src/workflows/event-log.js';

const at = new Date('2026-12-06T00:00:00.000Z');
const fill = (log: EventLog, count: number) => {
  for (let index = 0; index < count; index++)
    log.append({ type: 'TurnStarted', turnId: `t${index}`, callIds: [], streaming: false }, at);
};
const seqs = (events: Array<{ seq: number }>) => events.map((event) => event.seq);

describe('the event log', () => {
  it('stamps each event with the time it was appended at (events of one activation share theirs)', () => {
    const log = new EventLog();
    const later = new Date(at.getTime() + 1);
    const stamps = [at, at, later, at].map(
      (time, index) => log.append({ type: 'TurnStarted', turnId: `t${index}`, callIds: [], streaming: false }, time).at,
    );
    expect(stamps).toEqual([at.toISOString(), at.toISOString(), later.toISOString(), at.toISOString()]);
  });

  it('keeps the newest EVENT_LOG_RETAINED events, whatever it still holds before a batch is dropped', () => {
    for (const total of [
      EVENT_LOG_RETAINED - 1,
      EVENT_LOG_RETAINED,
      EVENT_LOG_RETAINED + 1,
      1_249,
      1_250,
      1_251,
      3_333,
    ]) {
      const log = new EventLog();
      fill(log, total);
      const carried = log.carry();
      const oldest = Math.max(0, total - EVENT_LOG_RETAINED);
      expect(carried.next).toBe(total);
      expect(carried.events).toHaveLength(Math.min(total, EVENT_LOG_RETAINED));
      expect(carried.events[0]?.seq).toBe(oldest);
      expect(carried.events.at(-1)?.seq).toBe(total - 1);
      // A read from the start begins at the oldest retained event, never at one already dropped.
      const page = log.read(0, 10);
      expect(seqs(page.events)).toEqual(Array.from({ length: Math.min(10, total) }, (_, index) => oldest + index));
      expect(page.next).toBe(oldest + Math.min(10, total));
    }
  });

  it('reads by cursor, and carries the retained events and the next position across a new run', () => {
    const log = new EventLog();
    fill(log, 1_600);
    expect(seqs(log.read(1_590).events)).toEqual([
      1_590, 1_591, 1_592, 1_593, 1_594, 1_595, 1_596, 1_597, 1_598, 1_599,
    ]);
    expect(log.read(1_600)).toEqual({ events: [], next: 1_600 });
    expect(log.read(0).events).toHaveLength(500);
    const next = new EventLog(log.carry());
    fill(next, 1);
    expect(next.read(1_599).events.map((event) => [event.seq, event.turnId])).toEqual([
      [1_599, 't1599'],
      [1_600, 't0'],
    ]);
    expect(next.carry().events[0]?.seq).toBe(601);
    expect(next.appendedThisRun).toBe(1);
  });
});
