/**
 * A session page's live channel (split out of src/console/console-server.ts): server-sent events carrying the page's
 * sections, pushed when the session changes, from one shared watch per open page (`SessionWatches`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WorkflowExecutionDescription } from '@temporalio/client';
import { projectErrorMessage } from '../contracts/error-projection.js';
import type { ConsoleData } from './console-data.js';
import { SECURITY_HEADERS, stringify } from './http-helpers.js';
import { sessionSections } from './render.js';
import type { PageContext, SessionPageData } from './render.js';
import { SessionWatches } from './session-watch.js';

/** Default `streamCheckMs`. */
export const STREAM_CHECK_MS = 50;
/** Default `streamRefreshMs`. */
export const STREAM_REFRESH_MS = 1_500;
/** A comment line that keeps an idle stream open through proxies. */
const STREAM_KEEPALIVE_MS = 15_000;

/**
 * What says a session changed, from Temporal's server alone: the run, its status and history length, and the last
 * heartbeat of each running activity (a call's output tail travels in heartbeats, not in history).
 */
function changeMark(description: WorkflowExecutionDescription): string {
  const heartbeats = (description.raw.pendingActivities ?? []).map((activity) =>
    [
      activity.activityId,
      activity.attempt,
      Number(activity.lastHeartbeatTime?.seconds ?? 0),
      activity.lastHeartbeatTime?.nanos,
    ].join(':'),
  );
  return [description.runId, description.status.name, description.historyLength, ...heartbeats].join('|');
}

export interface StreamRequest {
  request: IncomingMessage;
  response: ServerResponse;
  sessionId: string;
  turnId: string | undefined;
  render: () => PageContext;
}

/** The open session streams and the watches behind them. */
export class SessionStreams {
  /** The session pages viewers have open, each looked at once per `checkMs` for all of them (see `SessionWatches`). */
  readonly #watches: SessionWatches<SessionPageData>;
  /** How to stop each open stream. */
  readonly #stops = new Set<() => void>();

  constructor(options: { data: ConsoleData; checkMs: number; refreshMs: number }) {
    const { data } = options;
    this.#watches = new SessionWatches<SessionPageData>({
      checkMs: options.checkMs,
      refreshMs: options.refreshMs,
      look: (sessionId, turnId) => {
        const described = data.describeSession(sessionId);
        return {
          mark: described.then(changeMark, (error: unknown) => `problem:${projectErrorMessage(error)}`),
          read: () => data.sessionData(sessionId, turnId, described),
        };
      },
    });
  }

  /**
   * Serves one stream: the page's sections as JSON, pushed when the session changes (checked every `streamCheckMs`,
   * once for all viewers of the page) and at least every `streamRefreshMs`, until the page goes away. Each message is
   * the same JSON as a `/fragment/session/…` read.
   */
  async stream(options: StreamRequest): Promise<void> {
    const { request, response, sessionId, turnId } = options;
    response.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': 'text/event-stream; charset=utf-8',
      'x-accel-buffering': 'no',
    });
    response.write('retry: 2000\n\n');
    let open = true;
    let stop = (): void => undefined;
    const closed = new Promise<void>((resolve) => {
      stop = () => {
        open = false;
        resolve();
      };
      request.once('close', stop);
    });
    this.#stops.add(stop);
    let lastSections: string | undefined;
    let lastWrite = Date.now();
    const unsubscribe = this.#watches.subscribe(sessionId, turnId, (data) => {
      if (!open) return;
      try {
        const sections = JSON.stringify(stringify(sessionSections(data, options.render())));
        if (sections === lastSections) return;
        lastSections = sections;
        response.write(`data: ${sections}\n\n`);
        lastWrite = Date.now();
      } catch {
        // A page that cannot be rendered ends its stream; the browser opens it again (`retry`).
        stop();
      }
    });
    while (open) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        closed,
        new Promise((resolve) => {
          timer = setTimeout(resolve, STREAM_KEEPALIVE_MS - (Date.now() - lastWrite));
        }),
      ]);
      clearTimeout(timer);
      if (open && Date.now() - lastWrite >= STREAM_KEEPALIVE_MS) {
        response.write(': keep-alive\n\n');
        lastWrite = Date.now();
      }
    }
    unsubscribe();
    this.#stops.delete(stop);
    response.end();
  }

  /** Ends every open stream at once (each request then finishes). */
  stopAll(): void {
    for (const stop of this.#stops) stop();
  }

  /** Resolves once no watch has a look in flight. */
  close(): Promise<void> {
    return this.#watches.close();
  }
}
