import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { z } from 'zod';
import { FileArtifactStore } from '../artifacts/file-artifact-store.js';
import { consoleTokenFromEnv, dataDirFromEnv } from '../config/environment.js';
import type { ApprovalDecisionRecord, ApprovalRequest, ApprovalSignal } from '../contracts/approval.js';
import { approvalDecisions, approvalSigningPayload } from '../contracts/approval.js';
import { isSessionApprover } from '../contracts/approvers-file.js';
import { signApproval } from '../activities/approval-signature.js';
import type { ConsoleUser } from './console-users.js';
import type { ArtifactStore } from '../contracts/artifact-store.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import { EVENTS_PAGE_LIMIT } from '../contracts/events.js';
import type { SessionEvent } from '../contracts/events.js';
import {
  activeTurnQuery,
  approvalDecisionsQuery,
  callsInDoubtQuery,
  approvalSignal,
  eventsQuery,
  interruptSignal,
  pendingApprovalsQuery,
  pendingApprovalsSearchAttribute,
  toolSessionWorkflowType,
  turnResultsQuery,
} from '../contracts/messages.js';
import type { ActiveTurnView } from '../contracts/tool-result.js';
import { escapeHtml } from './html.js';
import { HttpError, SECURITY_HEADERS, readJson, sendJson, sendPage, stringify } from './http-helpers.js';
import { liveCalls } from './live-calls.js';
import { describeDecision, homeBody, homeSections, page, sessionBody, sessionSections } from './render.js';
import { SessionWatches } from './session-watch.js';
import type { PageContext, PendingEntry, SessionPageData, SessionRow, Viewer } from './render.js';
import { sessionLabelOf } from '../cli/session-listing.js';
import { detectImageMediaType } from '../tools/support/image-media-type.js';
import { ConsoleSecurity, hostAllowed, randomToken } from './security.js';
import type { Authentication } from './security.js';

/** Default port of `switchyard console` (next to the dev server's Web UI on 8233). */
export const DEFAULT_CONSOLE_PORT = 8234;
/** How long a query may take before the page says the session is not answering. */
const QUERY_TIMEOUT_MS = 5_000;
/** How long a decision waits for the session to log what it did with it. */
const DECISION_CONFIRM_TIMEOUT_MS = 10_000;
/** Sessions listed (pending and running). */
const LIST_LIMIT = 100;
/** How long a decision the console signs counts (its `expiresAt`): long enough for the signal to arrive. */
const SIGNED_DECISION_VALID_MS = 5 * 60_000;
/** Default `streamCheckMs`. */
export const STREAM_CHECK_MS = 50;
/** Default `streamRefreshMs`. */
export const STREAM_REFRESH_MS = 1_500;
/** A comment line that keeps an idle stream open through proxies. */
const STREAM_KEEPALIVE_MS = 15_000;

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

const approvalRequestSchema = z.strictObject({
  sessionId: z.string().min(1).max(1_000),
  requestId: z.string().min(1).max(200),
  decision: z.enum(approvalDecisions),
  inputDigest: z.string().min(1).max(200),
  reason: z.string().max(2_000).optional(),
  // Accepted and ignored: who decides comes from the login, never from the page.
  by: z.unknown().optional(),
});
const interruptRequestSchema = z.strictObject({
  sessionId: z.string().min(1).max(1_000),
  reason: z.string().max(2_000).optional(),
});

function positiveMs(value: number | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isFinite(value) || value <= 0)
    throw new TypeError(`${name} must be a positive number of ms, got ${value}`);
  return value;
}

function withTimeout<T>(promise: Promise<T>, what: string, ms = QUERY_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not answer within ${ms / 1000} s (is a worker running on its task queue?)`)),
      ms,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The approval console: a small web server (node:http, no dependency) that lists the sessions waiting for a human
 * across the namespace and lets one approve, deny or interrupt, with a session page (timeline, live tail, results,
 * decision log). Binds 127.0.0.1 by default; every request needs the token; state changes are JSON POSTs with CSRF
 * protection; every value from a session is escaped.
 */
export async function startConsole(options: ConsoleOptions): Promise<RunningConsole> {
  const host = options.host ?? '127.0.0.1';
  const token = options.token ?? consoleTokenFromEnv() ?? randomToken();
  const { client, identity } = options;
  const users = options.users === undefined ? undefined : new Map(options.users.map((user) => [user.name, user]));
  const namespace = client.options.namespace;
  const artifacts = options.artifacts ?? new FileArtifactStore(dataDirFromEnv());
  const boundToLoopback = host === '127.0.0.1' || host === 'localhost' || host === '::1';
  const checkMs = positiveMs(options.streamCheckMs, 'streamCheckMs') ?? STREAM_CHECK_MS;
  const refreshMs = positiveMs(options.streamRefreshMs, 'streamRefreshMs') ?? STREAM_REFRESH_MS;
  let security: ConsoleSecurity | undefined;
  /** Requests being answered, and how to stop each open session stream: `close` waits for the first, calls the rest. */
  const inFlight = new Set<Promise<void>>();
  const streamStops = new Set<() => void>();

  const query = <T>(sessionId: string, run: () => Promise<T>, what: string): Promise<T> =>
    withTimeout(run(), `session ${sessionId} (${what})`);

  async function listPending(): Promise<{ pending: PendingEntry[]; problem?: string }> {
    // One visibility query for "which sessions wait for me", then each one's pending requests.
    const ids: string[] = [];
    for await (const execution of client.workflow.list({
      query: `${pendingApprovalsSearchAttribute} > 0 AND ExecutionStatus = "Running"`,
      pageSize: LIST_LIMIT,
    })) {
      ids.push(execution.workflowId);
      if (ids.length >= LIST_LIMIT) break;
    }
    const problems: string[] = [];
    const lists = await Promise.all(
      ids.map(async (sessionId) => {
        try {
          const requests = await query(
            sessionId,
            () => client.workflow.getHandle(sessionId).query(pendingApprovalsQuery),
            'pendingApprovals',
          );
          return requests.map((request): PendingEntry => ({ sessionId, request }));
        } catch (error) {
          problems.push(projectErrorMessage(error));
          return [];
        }
      }),
    );
    return { pending: lists.flat(), ...(problems.length === 0 ? {} : { problem: problems.slice(0, 3).join(' · ') }) };
  }

  async function listSessions(pending: PendingEntry[]): Promise<SessionRow[]> {
    const rows: SessionRow[] = [];
    for await (const execution of client.workflow.list({
      query: `WorkflowType = "${toolSessionWorkflowType}" AND ExecutionStatus = "Running"`,
      pageSize: 20,
    })) {
      rows.push({
        sessionId: execution.workflowId,
        startedAt: execution.startTime,
        pending: pending.filter((entry) => entry.sessionId === execution.workflowId).length,
        ...sessionLabelOf(execution.memo),
      });
      if (rows.length >= 20) break;
    }
    return rows;
  }

  async function homeData(): Promise<Parameters<typeof homeSections>[0]> {
    try {
      const { pending, problem } = await listPending();
      return { pending, sessions: await listSessions(pending), ...(problem === undefined ? {} : { problem }) };
    } catch (error) {
      return { pending: [], sessions: [], problem: `Could not list sessions: ${projectErrorMessage(error)}` };
    }
  }

  async function readEvents(sessionId: string): Promise<SessionEvent[]> {
    const handle = client.workflow.getHandle(sessionId);
    const events: SessionEvent[] = [];
    let since = 0;
    for (let page = 0; page < 10; page++) {
      const result = await query(sessionId, () => handle.query(eventsQuery, { since }), 'events');
      events.push(...result.events);
      // A short page is the last: no second query only to find nothing more.
      if (result.events.length < EVENTS_PAGE_LIMIT || result.next <= since) break;
      since = result.next;
    }
    return events;
  }

  /** The session's description from Temporal's server (no worker involved). */
  const describeSession = (sessionId: string): Promise<WorkflowExecutionDescription> =>
    withTimeout(client.workflow.getHandle(sessionId).describe(), `session ${sessionId}`);

  /** What a session page shows; `described` is a description just read, else it is read here. */
  async function sessionData(
    sessionId: string,
    turnId: string | undefined,
    described?: Promise<WorkflowExecutionDescription>,
  ): Promise<SessionPageData> {
    const handle = client.workflow.getHandle(sessionId);
    const data: SessionPageData = {
      sessionId,
      status: 'unknown',
      pending: [],
      events: [],
      decisions: [],
      turns: [],
      activeTurn: null,
      live: [],
    };
    if (turnId !== undefined) data.turnId = turnId;
    let description;
    try {
      description = await (described ?? describeSession(sessionId));
    } catch (error) {
      data.problem = `No such session, or Temporal did not answer: ${projectErrorMessage(error)}`;
      return data;
    }
    data.status = description.status.name;
    data.runId = description.runId;
    Object.assign(data, sessionLabelOf(description.memo));
    if (options.temporalUiUrl !== undefined) {
      data.webUiUrl = `${options.temporalUiUrl.replace(/\/$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(sessionId)}/${encodeURIComponent(description.runId)}/history`;
    }
    if (description.status.name !== 'RUNNING') {
      data.problem = `This session is ${description.status.name.toLowerCase()}; its queries need a running workflow or a worker to replay it.`;
    }
    const settled = await Promise.allSettled([
      query(sessionId, () => handle.query(pendingApprovalsQuery), 'pendingApprovals'),
      readEvents(sessionId),
      query(sessionId, () => handle.query(approvalDecisionsQuery), 'approvalDecisions'),
      query(sessionId, () => handle.query(turnResultsQuery, { limit: 20 }), 'turnResults'),
      query(sessionId, () => handle.query(activeTurnQuery), 'activeTurn'),
    ]);
    const [pending, events, decisions, turns, active] = settled;
    if (pending.status === 'fulfilled') data.pending = pending.value;
    if (events.status === 'fulfilled') data.events = events.value;
    if (decisions.status === 'fulfilled') data.decisions = decisions.value;
    if (turns.status === 'fulfilled') data.turns = turns.value;
    if (active.status === 'fulfilled') data.activeTurn = active.value;
    const failed = settled.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed !== undefined) data.problem = projectErrorMessage(failed.reason);
    data.live = liveCalls(description.raw.pendingActivities ?? [], data.activeTurn);
    // A worker older than calls in doubt does not know the query: the section stays empty, the page works.
    if (description.status.name === 'RUNNING')
      data.callsInDoubt = await handle.query(callsInDoubtQuery).catch(() => []);
    return data;
  }

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

  /** The session pages viewers have open, each looked at once per `checkMs` for all of them (see `SessionWatches`). */
  const watches = new SessionWatches<SessionPageData>({
    checkMs,
    refreshMs,
    look: (sessionId, turnId) => {
      const described = describeSession(sessionId);
      return {
        mark: described.then(changeMark, (error: unknown) => `problem:${projectErrorMessage(error)}`),
        read: () => sessionData(sessionId, turnId, described),
      };
    },
  });

  /**
   * A session page's live channel (server-sent events): the page's sections as JSON, pushed when the session changes
   * (checked every `streamCheckMs`, once for all viewers of the page) and at least every `streamRefreshMs`, until the
   * page goes away. Each message is the same JSON as a `/fragment/session/…` read.
   */
  async function streamSession(options: {
    request: IncomingMessage;
    response: ServerResponse;
    sessionId: string;
    turnId: string | undefined;
    render: () => PageContext;
  }): Promise<void> {
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
    streamStops.add(stop);
    let lastSections: string | undefined;
    let lastWrite = Date.now();
    const unsubscribe = watches.subscribe(sessionId, turnId, (data) => {
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
    streamStops.delete(stop);
    response.end();
  }

  /** The person behind a request, with the groups that say which requests they may decide. */
  function viewerOf(authentication: Exclude<Authentication, { kind: 'none' }>): Viewer {
    return { name: authentication.user, groups: users?.get(authentication.user)?.groups ?? [] };
  }

  function context(authentication: Exclude<Authentication, { kind: 'none' }>): PageContext {
    return {
      identity: authentication.user,
      viewer: viewerOf(authentication),
      csrfToken: security?.csrfTokenFor(authentication) ?? '',
      nonce: randomToken(),
      now: Date.now(),
    };
  }

  async function decide(
    body: unknown,
    viewer: Viewer,
  ): Promise<{ outcome: 'accepted' | 'ignored' | 'unconfirmed'; message: string; record?: ApprovalDecisionRecord }> {
    const parsed = approvalRequestSchema.safeParse(body);
    if (!parsed.success)
      throw new HttpError(
        400,
        `Invalid approval: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
      );
    const { sessionId, requestId, decision, inputDigest, reason } = parsed.data;
    const handle = client.workflow.getHandle(sessionId);
    // Hidden buttons are a courtesy; this is the check: a person who may not decide this request sends nothing.
    const request: ApprovalRequest | undefined = (
      await query(sessionId, () => handle.query(pendingApprovalsQuery), 'pendingApprovals')
    ).find((entry) => entry.requestId === requestId);
    if (
      request?.approvers !== undefined &&
      !isSessionApprover({ name: viewer.name, sessionApprovers: request.approvers, groups: viewer.groups })
    ) {
      throw new HttpError(
        403,
        `${viewer.name} is not one of this request's approvers (${request.approvers.join(', ') || 'none'}).`,
      );
    }
    const signal: ApprovalSignal = {
      requestId,
      decision,
      inputDigest,
      by: viewer.name,
      ...(reason === undefined || reason === '' ? {} : { reason }),
    };
    const signingKey = users?.get(viewer.name)?.signingKeyPem;
    if (signingKey !== undefined) {
      signal.expiresAt = new Date(Date.now() + SIGNED_DECISION_VALID_MS).toISOString();
      signal.signature = signApproval(approvalSigningPayload(sessionId, signal), signingKey);
    }
    const seen = async (): Promise<ApprovalDecisionRecord[]> =>
      (await query(sessionId, () => handle.query(approvalDecisionsQuery), 'approvalDecisions')).filter(
        (record) => record.requestId === requestId,
      );
    const before = (await seen()).length;
    await handle.signal(approvalSignal, signal);
    // The signal is delivered; only the session's decision log says whether it took effect.
    const deadline = Date.now() + DECISION_CONFIRM_TIMEOUT_MS;
    while (Date.now() < deadline) {
      const records = await seen().catch(() => []);
      const record = records[before];
      if (record !== undefined) return { outcome: record.outcome, message: describeDecision(record), record };
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return {
      outcome: 'unconfirmed',
      message: `Sent ${decision}, but the session has not logged it within ${DECISION_CONFIRM_TIMEOUT_MS / 1000} s (is its worker running?).`,
    };
  }

  async function interrupt(body: unknown, viewer: Viewer): Promise<{ message: string }> {
    const parsed = interruptRequestSchema.safeParse(body);
    if (!parsed.success) throw new HttpError(400, 'Invalid interrupt: needs { sessionId, reason? }');
    const handle = client.workflow.getHandle(parsed.data.sessionId);
    const active: ActiveTurnView | null = await query(
      parsed.data.sessionId,
      () => handle.query(activeTurnQuery),
      'activeTurn',
    );
    if (active === null) return { message: `Session ${parsed.data.sessionId} runs no turn: nothing to interrupt.` };
    await handle.signal(interruptSignal, {
      reason: parsed.data.reason ?? `interrupted from the console by ${viewer.name}`,
    });
    return { message: `Interrupt sent to turn ${active.turnId} of ${parsed.data.sessionId}.` };
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://console.invalid');
    if (security === undefined) throw new HttpError(503, 'starting');
    if (!hostAllowed(request.headers.host, { boundToLoopback }))
      throw new HttpError(421, 'This console answers only on its loopback address.');
    const given = url.searchParams.get('token');
    if (request.method === 'GET' && given !== null) {
      if (!security.tokenMatches(given))
        throw new HttpError(
          401,
          users === undefined
            ? 'Wrong token: open the URL `switchyard console` printed.'
            : 'Wrong token: open the console with your own token (?token=…).',
        );
      url.searchParams.delete('token');
      response.writeHead(303, {
        location: `${url.pathname}${url.search}`,
        'set-cookie': security.loginCookies(given),
        'cache-control': 'no-store',
      });
      response.end();
      return;
    }
    const authentication = security.authenticate(request);
    if (authentication.kind === 'none') {
      throw new HttpError(
        401,
        'This console needs its token: open the URL `switchyard console` printed (it ends in ?token=…), or send Authorization: Bearer <token>.',
      );
    }
    if (request.method === 'POST') {
      const refusal = security.refuseStateChange(request, authentication);
      if (refusal !== undefined) throw new HttpError(403, refusal);
      const body = await readJson(request);
      if (url.pathname === '/api/approval')
        return sendJson(response, 200, await decide(body, viewerOf(authentication)));
      if (url.pathname === '/api/interrupt')
        return sendJson(response, 200, await interrupt(body, viewerOf(authentication)));
      throw new HttpError(404, 'No such action.');
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') throw new HttpError(405, 'Method not allowed.');
    const pageContext = context(authentication);
    const streamMatch = /^\/stream\/session\/([^/]+)$/.exec(url.pathname);
    if (streamMatch !== null) {
      const sessionId = decodeURIComponent(streamMatch[1] ?? '');
      await streamSession({
        request,
        response,
        sessionId,
        turnId: url.searchParams.get('turn') ?? undefined,
        render: () => context(authentication),
      });
      return;
    }
    const live = request.headers.accept?.includes('application/json') === true;
    if (url.pathname === '/' || url.pathname === '/fragment/home') {
      const sections = homeSections(await homeData(), pageContext);
      if (live || url.pathname !== '/') return sendJson(response, 200, stringify(sections));
      return sendPage(
        response,
        pageContext,
        page({
          title: 'Switchyard console',
          context: pageContext,
          body: homeBody(sections),
          liveUrl: '/fragment/home',
        }),
      );
    }
    const sessionMatch = /^\/(session|fragment\/session)\/([^/]+)$/.exec(url.pathname);
    if (sessionMatch !== null) {
      const sessionId = decodeURIComponent(sessionMatch[2] ?? '');
      const turnId = url.searchParams.get('turn') ?? undefined;
      const sections = sessionSections(await sessionData(sessionId, turnId), pageContext);
      if (live || sessionMatch[1] !== 'session') return sendJson(response, 200, stringify(sections));
      const turnQuery = turnId === undefined ? '' : `?turn=${encodeURIComponent(turnId)}`;
      return sendPage(
        response,
        pageContext,
        page({
          title: `Session ${sessionId} · Switchyard console`,
          context: pageContext,
          body: sessionBody(sections),
          liveUrl: `/fragment/session/${encodeURIComponent(sessionId)}${turnQuery}`,
          streamUrl: `/stream/session/${encodeURIComponent(sessionId)}${turnQuery}`,
        }),
      );
    }
    if (url.pathname === '/artifact/image') {
      // An image result's bytes (v1.3 `image` display), served only as one of the four image types it was stored as.
      const uri = url.searchParams.get('uri') ?? '';
      let bytes: Uint8Array;
      try {
        bytes = await artifacts.readBytes(uri);
      } catch (error) {
        throw new HttpError(404, `No such artifact: ${projectErrorMessage(error)}`);
      }
      const mediaType = detectImageMediaType(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      if (mediaType === undefined) throw new HttpError(404, 'That artifact is not an image.');
      response.writeHead(200, {
        ...SECURITY_HEADERS,
        'content-type': mediaType,
        'content-security-policy': "sandbox; default-src 'none'",
      });
      response.end(bytes);
      return;
    }
    if (url.pathname === '/artifact') {
      const uri = url.searchParams.get('uri') ?? '';
      let content: string;
      try {
        content = await artifacts.read(uri);
      } catch (error) {
        throw new HttpError(404, `No such artifact: ${projectErrorMessage(error)}`);
      }
      response.writeHead(200, {
        ...SECURITY_HEADERS,
        'content-type': 'text/plain; charset=utf-8',
        'content-security-policy': "sandbox; default-src 'none'",
      });
      response.end(content);
      return;
    }
    throw new HttpError(404, 'Not found.');
  }

  const server = createServer((request, response) => {
    const handled = handle(request, response).catch((error: unknown) => {
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
      for (const stop of streamStops) stop();
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await Promise.allSettled([...inFlight, watches.close()]);
    },
  };
}
