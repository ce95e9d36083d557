/**
 * A deadline that pauses while the handler waits at an admission gate (docs/SEMANTICS.md, Timeouts and the deadline):
 * the timeout guards against a hung provider, not against our own queue, so queued time does not count and the
 * remaining budget is conserved. Resumable: a retry starts from the elapsed and queued times of the last heartbeat.
 */
export class ToolDeadline {
  readonly #budgetMs: number | undefined;
  readonly #onExpire: () => void;
  readonly #now: () => number;
  #activeBeforeMs: number;
  #queuedBeforeMs: number;
  /** When the current running (or paused) stretch began. */
  #since: number;
  #pauses = 0;
  #timer: NodeJS.Timeout | undefined;
  #expired = false;
  #disposed = false;

  constructor(options: {
    budgetMs: number | undefined;
    onExpire: () => void;
    resumed?: { activeMs: number; queuedMs: number };
    now?: () => number;
  }) {
    this.#budgetMs = options.budgetMs;
    this.#onExpire = options.onExpire;
    this.#now = options.now ?? Date.now;
    this.#activeBeforeMs = Math.max(0, options.resumed?.activeMs ?? 0);
    this.#queuedBeforeMs = Math.max(0, options.resumed?.queuedMs ?? 0);
    this.#since = this.#now();
    this.#arm();
  }

  /** Time spent working (deadline time), including earlier attempts. */
  get activeMs(): number {
    return this.#activeBeforeMs + (this.#pauses === 0 && !this.#disposed ? this.#now() - this.#since : 0);
  }

  /** Time spent waiting at admission gates, including earlier attempts. */
  get queuedMs(): number {
    return this.#queuedBeforeMs + (this.#pauses > 0 && !this.#disposed ? this.#now() - this.#since : 0);
  }

  /** Budget left, or undefined when the call has no deadline. */
  remainingMs(): number | undefined {
    return this.#budgetMs === undefined ? undefined : Math.max(0, this.#budgetMs - this.activeMs);
  }

  get expired(): boolean {
    return this.#expired;
  }

  /** Stops the clock (nested pauses allowed: concurrent waits at several gates). */
  pause(): void {
    if (this.#disposed) return;
    if (this.#pauses === 0) {
      const now = this.#now();
      this.#activeBeforeMs += now - this.#since;
      this.#since = now;
      clearTimeout(this.#timer);
    }
    this.#pauses += 1;
  }

  resume(): void {
    if (this.#disposed || this.#pauses === 0) return;
    this.#pauses -= 1;
    if (this.#pauses === 0) {
      const now = this.#now();
      this.#queuedBeforeMs += now - this.#since;
      this.#since = now;
      this.#arm();
    }
  }

  dispose(): void {
    if (this.#disposed) return;
    const now = this.#now();
    if (this.#pauses === 0) this.#activeBeforeMs += now - this.#since;
    else this.#queuedBeforeMs += now - this.#since;
    this.#disposed = true;
    clearTimeout(this.#timer);
  }

  #arm(): void {
    const remaining = this.remainingMs();
    if (remaining === undefined || this.#expired) return;
    this.#timer = setTimeout(() => {
      this.#expired = true;
      this.#onExpire();
    }, remaining);
  }
}
