import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import { FileArtifactStore } from '../artifacts/file-artifact-store.js';
import { environmentSettings } from '../config/settings.js';
import type { ArtifactStore } from '../contracts/artifact-store.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import { createConsoleActions } from './console-actions.js';
import { ConsoleData } from './console-data.js';
import { ConsoleRoutes } from './console-routes.js';
import type { ConsoleUser } from './console-users.js';
import { escapeHtml } from './html.js';
import { HttpError, SECURITY_HEADERS, sendJson } from './http-helpers.js';
import { ConsoleSecurity, randomToken } from './security.js';
import { STREAM_CHECK_MS, STREAM_REFRESH_MS, SessionStreams } from './session-stream.js';

export { STREAM_CHECK_MS, STREAM_REFRESH_MS } from './session-stream.js';

/** Default port of `switchyard console` (next to the dev server's Web UI on 8233). */
export const DEFAULT_CONSOLE_PORT = 8234;

export interface ConsoleOptions {
  /** A Temporal client on the namespace to watch. */
  client: Client;
  /** Interface to bind; default 127.0.0.1. Anything else is reachable from other hosts: pass it on purpose. */
  host?: string;
  /** Default {@link DEFAULT_CONSOLE_PORT}; 0 picks a free port. */
  port?: number;
  /** Access token; default `SWITCHYARD_CONSOLE_TOKEN`, else a random one. */
  token?: string;
  /** Who decides with the shared token: the `by` of its approvals. Not used with `users`. */
  identity: string;
  /**
   * One login per person (the users file): each logs in with their own token (or through `userHeader`), decides as
   * their own name, and has their decisions signed with their own key when the file gives one. Replaces the shared
   * token.
   */
  users?: readonly ConsoleUser[];
  /**
   * A header a trusted reverse proxy sets to the logged-in person (`X-Forwarded-User`, `X-Auth-Request-Email`): only
   * set it when every request reaches the console through that proxy, which must strip the header from clients.
   */
  userHeader?: string;
  /** The Temporal Web UI's base URL (e.g. `http://127.0.0.1:8233`), for links to a session's workflow. */
  temporalUiUrl?: string;
  /** Where full outputs are read for artifact links; default the file store under `SWITCHYARD_DATA_DIR`. */
  artifacts?: ArtifactStore;
  /**
   * How often an open session page's stream asks Temporal whether the session changed, in ms (default
   * {@link STREAM_CHECK_MS}): one DescribeWorkflowExecution per open page, which the server answers alone (no worker,
   * no query). A change (a new history event, a new heartbeat, another run) is pushed to the page at once.
   */
  streamCheckMs?: number;
  /** The longest an open session page goes without a refresh of what it shows, in ms (default {@link STREAM_REFRESH_MS}). */
  streamRefreshMs?: number;
}

export interface RunningConsole {
  /** The console's address, without the token. */
  url: string;
  /** The address to open first: it carries the token, which the console turns into a cookie. */
  loginUrl: string;
  /** Stops serving; resolves once no request is still being answered (no call to Temporal outlives it). */
  close(): Promise<void>;
}

function positiveMs(value: number | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isFinite(value) || value <= 0)
    throw new TypeError(`${name} must be a positive number of ms, got ${value}`);
  return value;
}

/**
 * The approval console: a small web server (node:http, no dependency) that lists the sessions waiting for a human
 * across the namespace and lets one approve, deny or interrupt, with a session page (timeline, live tail, results,
 * decision log). Binds 127.0.0.1 by default; every request needs the token; state changes are JSON POSTs with CSRF
 * protection; every value from a session is escaped. What the pages show is read in `console-data.ts`, the session
 * stream served by `session-stream.ts`, the actions taken in `console-actions.ts`, the routes in `console-routes.ts`.
 */
export async function startConsole(options: ConsoleOptions): Promise<RunningConsole> {
  const host = options.host ?? '127.0.0.1';
  // What the caller left out comes from the environment, read once.
  let fromEnvironment: ReturnType<typeof environmentSettings> | undefined;
  const settings = () => (fromEnvironment ??= environmentSettings());
  const token = options.token ?? settings().console.token ?? randomToken();
  const { client, identity } = options;
  const users = options.users === undefined ? undefined : new Map(options.users.map((user) => [user.name, user]));
  const artifacts = options.artifacts ?? new FileArtifactStore(settings().worker.dataDir);
  const boundToLoopback = host === '127.0.0.1' || host === 'localhost' || host === '::1';
  const checkMs = positiveMs(options.streamCheckMs, 'streamCheckMs') ?? STREAM_CHECK_MS;
  const refreshMs = positiveMs(options.streamRefreshMs, 'streamRefreshMs') ?? STREAM_REFRESH_MS;
  let security: ConsoleSecurity | undefined;
  /** Requests being answered: `close` waits for them. */
  const inFlight = new Set<Promise<void>>();
  const data = new ConsoleData(client, {
    ...(options.temporalUiUrl === undefined ? {} : { temporalUiUrl: options.temporalUiUrl }),
  });
  const streams = new SessionStreams({ data, checkMs, refreshMs });
  const routes = new ConsoleRoutes({
    data,
    actions: createConsoleActions({ client, data, users }),
    streams,
    artifacts,
    users,
    boundToLoopback,
    security: () => security,
  });

  const server = createServer((request, response) => {
    const handled = routes.handle(request, response).catch((error: unknown) => {
      const status = error instanceof HttpError ? error.status : 500;
      const message = error instanceof HttpError ? error.message : `The console failed: ${projectErrorMessage(error)}`;
      if (response.headersSent) {
        response.end();
        return;
      }
      if (request.method === 'POST' || request.headers.accept?.includes('application/json') === true)
        sendJson(response, status, { message });
      else {
        response.writeHead(status, {
          ...SECURITY_HEADERS,
          'content-type': 'text/html; charset=utf-8',
          'content-security-policy': "default-src 'none'",
        });
        response.end(`<!doctype html><title>${status}</title><p>${escapeHtml(message)}</p>`);
      }
    });
    inFlight.add(handled);
    void handled.finally(() => inFlight.delete(handled));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEFAULT_CONSOLE_PORT, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  security = new ConsoleSecurity({
    port,
    ...(options.users === undefined
      ? { token, identity }
      : {
          logins: options.users.map((user) => ({
            user: user.name,
            ...(user.tokenSha256 === undefined ? {} : { tokenSha256: user.tokenSha256 }),
          })),
        }),
    ...(options.userHeader === undefined ? {} : { userHeader: options.userHeader }),
  });
  const shownHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  const url = `http://${shownHost}:${port}/`;
  return {
    url,
    // With a users file each person opens the console with their own token; there is no shared one to print.
    loginUrl: options.users === undefined ? `${url}?token=${encodeURIComponent(token)}` : url,
    // Returns once no request is still being answered, so no call to Temporal outlives it (a caller may close its
    // client next): the streams stop at once, and other requests finish their reads.
    close: async () => {
      streams.stopAll();
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await Promise.allSettled([...inFlight, streams.close()]);
    },
  };
}
