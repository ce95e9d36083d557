import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AdmissionGate } from '../../src/activities/admission-gate.js';
import { ToolDeadline } from '../../src/activities/tool-deadline.js';

describe('ToolDeadline', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('expires after its budget of active time', () => {
    const onExpire = vi.fn();
    const deadline = new ToolDeadline({ budgetMs: 1_000, onExpire });
    vi.advanceTimersByTime(999);
    expect(onExpire).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(onExpire).toHaveBeenCalledOnce();
    expect(deadline.expired).toBe(true);
  });

  it('does not count time paused at an admission gate, and conserves the remaining budget', () => {
    const onExpire = vi.fn();
    const deadline = new ToolDeadline({ budgetMs: 1_000, onExpire });
    vi.advanceTimersByTime(400);
    deadline.pause();
    vi.advanceTimersByTime(5_000);
    expect(onExpire).not.toHaveBeenCalled();
    expect(deadline.remainingMs()).toBe(600);
    deadline.resume();
    expect(deadline.queuedMs).toBe(5_000);
    vi.advanceTimersByTime(599);
    expect(onExpire).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(onExpire).toHaveBeenCalledOnce();
    expect(deadline.activeMs).toBe(1_000);
  });

  it('handles nested pauses: the clock restarts only when the last wait ends', () => {
    const deadline = new ToolDeadline({ budgetMs: 1_000, onExpire: vi.fn() });
    deadline.pause();
    deadline.pause();
    vi.advanceTimersByTime(100);
    deadline.resume();
    vi.advanceTimersByTime(100);
    expect(deadline.activeMs).toBe(0);
    deadline.resume();
    vi.advanceTimersByTime(100);
    expect(deadline).toMatchObject({ activeMs: 100, queuedMs: 200 });
  });

  it('resumes from a heartbeat: a retry gets only what is left', () => {
    const onExpire = vi.fn();
    const deadline = new ToolDeadline({ budgetMs: 1_000, onExpire, resumed: { activeMs: 700, queuedMs: 50 } });
    expect(deadline.remainingMs()).toBe(300);
    vi.advanceTimersByTime(300);
    expect(onExpire).toHaveBeenCalledOnce();
    expect(deadline.queuedMs).toBe(50);
  });

  it('never expires without a budget', () => {
    const onExpire = vi.fn();
    const deadline = new ToolDeadline({ budgetMs: undefined, onExpire });
    vi.advanceTimersByTime(10_000_000);
    expect(onExpire).not.toHaveBeenCalled();
    expect(deadline.remainingMs()).toBeUndefined();
    deadline.dispose();
    expect(deadline.activeMs).toBe(10_000_000);
  });
});

describe('AdmissionGate', () => {
  it('admits up to its permits and hands a released permit to the next waiter in order', async () => {
    const gate = new AdmissionGate('model', 1);
    const release1 = await gate.acquire();
    const order: string[] = [];
    const second = gate.acquire().then((release) => {
      order.push('second');
      return release;
    });
    const third = gate.acquire().then((release) => {
      order.push('third');
      return release;
    });
    expect(gate.queued).toBe(2);
    release1();
    const release2 = await second;
    expect(order).toEqual(['second']);
    release2();
    (await third)();
    expect(order).toEqual(['second', 'third']);
    expect(gate.inUse).toBe(0);
  });

  it('stops waiting when the call is aborted', async () => {
    const gate = new AdmissionGate('model', 1);
    await gate.acquire();
    const controller = new AbortController();
    const waiting = gate.acquire(controller.signal);
    controller.abort(new Error('interrupted'));
    await expect(waiting).rejects.toThrow('interrupted');
    expect(gate.queued).toBe(0);
  });

  it('rejects a gate without permits', () => {
    expect(() => new AdmissionGate('x', 0)).toThrow(/positive whole number/);
  });
});
