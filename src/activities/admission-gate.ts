/**
 * A semaphore that tools pass before a model or network request. The time spent waiting here does not count
 * against the call's deadline (see `ToolDeadline`).
 */
export class AdmissionGate {
  readonly name: string;
  readonly permits: number;
  #inUse = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(name: string, permits: number) {
    if (!Number.isInteger(permits) || permits < 1)
      throw new RangeError(`Admission gate "${name}" needs a positive whole number of permits, got ${permits}`);
    this.name = name;
    this.permits = permits;
  }

  get inUse(): number {
    return this.#inUse;
  }

  get queued(): number {
    return this.#waiting.length;
  }

  /** Waits for a permit; returns its release function. Rejects when `signal` aborts first. */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.#inUse < this.permits) {
      this.#inUse += 1;
      return this.#releaser();
    }
    await new Promise<void>((resolve, reject) => {
      const grant = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = (): void => {
        const index = this.#waiting.indexOf(grant);
        if (index >= 0) this.#waiting.splice(index, 1);
        reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted while waiting for admission'));
      };
      this.#waiting.push(grant);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    return this.#releaser();
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      if (next === undefined) this.#inUse -= 1;
      else next(); // the permit passes straight to the next waiter
    };
  }
}

/** Default gates: `model` for requests to a model provider, `network` for other outbound requests. */
export const DEFAULT_ADMISSION_GATES: Readonly<Record<string, number>> = { model: 4, network: 16 };
