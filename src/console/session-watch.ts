/**
 * The console's watches of session pages. Every viewer of one session page (a session, and the turn the page is
 * about) shares one watch: the session is looked at once every `checkMs` however many people have the page open, and
 * its data (five queries, each answered by a worker) is read once per change, not once per viewer. Each viewer still
 * renders the data for itself (what a viewer may decide depends on who they are).
 */
export interface SessionLook<Data> {
  /** What says the session changed; never rejects (a failed look is a mark of its own). */
  mark: Promise<string>;
  /** The page's data as of this look. */
  read: () => Promise<Data>;
}

export interface SessionWatchesOptions<Data> {
  /** How often a watched session is looked at. */
  checkMs: number;
  /** How often its data is read again even when the mark has not changed. */
  refreshMs: number;
  look: (sessionId: string, turnId: string | undefined) => SessionLook<Data>;
  /** A read that failed (the watch goes on, and the viewers keep what they had). */
  onError?: (error: unknown) => void;
}

interface Watch<Data> {
  viewers: Set<(data: Data) => void>;
  latest?: Data;
  ended: boolean;
  /** The watch's loop, settled once it has ended (no look of it is in flight then). */
  running?: Promise<void>;
  /** Ends the wait between two looks early (the last viewer left). */
  wake: () => void;
}

export class SessionWatches<Data> {
  readonly #options: SessionWatchesOptions<Data>;
  readonly #watches = new Map<string, Watch<Data>>();

  constructor(options: SessionWatchesOptions<Data>) {
    this.#options = options;
  }

  /** Sessions pages being watched (for tests and diagnostics). */
  get size(): number {
    return this.#watches.size;
  }

  /**
   * Calls `onData` with the page's data: at once when the watch has read it already, then after every change (and
   * every `refreshMs`), until the returned function is called. A viewer that throws is not called again.
   */
  subscribe(sessionId: string, turnId: string | undefined, onData: (data: Data) => void): () => void {
    const key = JSON.stringify([sessionId, turnId ?? null]);
    const existing = this.#watches.get(key);
    const starting = existing === undefined || existing.ended;
    const current: Watch<Data> = starting ? { viewers: new Set(), ended: false, wake: () => undefined } : existing;
    const viewer = (data: Data): void => {
      try {
        onData(data);
      } catch (error) {
        current.viewers.delete(viewer);
        this.#options.onError?.(error);
      }
    };
    current.viewers.add(viewer);
    if (starting) {
      this.#watches.set(key, current);
      current.running = this.#run(key, current, sessionId, turnId);
    }
    const latest = current.latest;
    if (latest !== undefined) queueMicrotask(() => current.viewers.has(viewer) && viewer(latest));
    return () => {
      current.viewers.delete(viewer);
      if (current.viewers.size === 0) current.wake();
    };
  }

  /** Ends every watch (their viewers hear nothing more) and returns once no look or read of theirs is in flight. */
  async close(): Promise<void> {
    const watches = [...this.#watches.values()];
    for (const watch of watches) {
      watch.viewers.clear();
      watch.wake();
    }
    await Promise.allSettled(watches.flatMap((watch) => (watch.running === undefined ? [] : [watch.running])));
  }

  async #run(key: string, watch: Watch<Data>, sessionId: string, turnId: string | undefined): Promise<void> {
    const { checkMs, refreshMs } = this.#options;
    let lastMark: string | undefined;
    let lastRead = 0;
    while (watch.viewers.size > 0) {
      try {
        const look = this.#options.look(sessionId, turnId);
        const mark = await look.mark;
        if (mark !== lastMark || Date.now() - lastRead >= refreshMs) {
          lastMark = mark;
          lastRead = Date.now();
          const data = await look.read();
          watch.latest = data;
          for (const viewer of [...watch.viewers]) viewer(data);
        }
      } catch (error) {
        this.#options.onError?.(error);
      }
      if (watch.viewers.size === 0) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, checkMs);
        watch.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    watch.ended = true;
    if (this.#watches.get(key) === watch) this.#watches.delete(key);
  }
}
