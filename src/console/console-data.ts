/**
 * What the console's pages show, read from Temporal (split out of src/console/console-server.ts): the sessions
 * waiting for a human across the namespace, the running sessions, and one session's page — its requests, events,
 * decision log (the audit), results, running turn and live calls.
 */
import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { sessionLabelOf } from '../client/session-metadata.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import { EVENTS_PAGE_LIMIT } from '../contracts/events.js';
import type { SessionEvent } from '../contracts/events.js';
import {
  activeTurnQuery,
  approvalDecisionsQuery,
  callsInDoubtQuery,
  eventsQuery,
  pendingApprovalsQuery,
  pendingApprovalsSearchAttribute,
  toolSessionWorkflowType,
  turnResultsQuery,
} from '../contracts/messages.js';
import { liveCalls } from './live-calls.js';
import type { homeSections, PendingEntry, SessionPageData, SessionRow } from './render.js';

/** How long a query may take before the page says the session is not answering. */
const QUERY_TIMEOUT_MS = 5_000;
/** Sessions listed (pending and running). */
const LIST_LIMIT = 100;

export function withTimeout<T>(promise: Promise<T>, what: string, ms = QUERY_TIMEOUT_MS): Promise<T> {
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
 * The console's reads; every query is bounded by `QUERY_TIMEOUT_MS`. The home page: requests waiting across the
 * namespace, running sessions; a session page: its description from Temporal's server, then its own queries.
 */
export class ConsoleData {
  readonly #client: Client;
  readonly #temporalUiUrl: string | undefined;

  constructor(client: Client, options: { temporalUiUrl?: string }) {
    this.#client = client;
    this.#temporalUiUrl = options.temporalUiUrl;
  }

  /** Runs one query of a session, bounded in time. */
  query<T>(sessionId: string, run: () => Promise<T>, what: string): Promise<T> {
    return withTimeout(run(), `session ${sessionId} (${what})`);
  }

  async #listPending(): Promise<{ pending: PendingEntry[]; problem?: string }> {
    const client = this.#client;
    // One visibility query for "which sessions wait for me", then each one's pending requests.
    const waiting: Array<Pick<PendingEntry, 'sessionId' | 'label' | 'agent'>> = [];
    for await (const execution of client.workflow.list({
      query: `${pendingApprovalsSearchAttribute} > 0 AND ExecutionStatus = "Running"`,
      pageSize: LIST_LIMIT,
    })) {
      // Who asks: the session's label (its memo) and agent (the task queue its worker serves), from the same list.
      waiting.push({ sessionId: execution.workflowId, agent: execution.taskQueue, ...sessionLabelOf(execution.memo) });
      if (waiting.length >= LIST_LIMIT) break;
    }
    const problems: string[] = [];
    const lists = await Promise.all(
      waiting.map(async (session) => {
        const { sessionId } = session;
        try {
          const requests = await this.query(
            sessionId,
            () => client.workflow.getHandle(sessionId).query(pendingApprovalsQuery),
            'pendingApprovals',
          );
          return requests.map((request): PendingEntry => ({ ...session, request }));
        } catch (error) {
          problems.push(projectErrorMessage(error));
          return [];
        }
      }),
    );
    return { pending: lists.flat(), ...(problems.length === 0 ? {} : { problem: problems.slice(0, 3).join(' · ') }) };
  }

  async #listSessions(pending: PendingEntry[]): Promise<SessionRow[]> {
    const rows: SessionRow[] = [];
    for await (const execution of this.#client.workflow.list({
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

  /** The home page: requests waiting across the namespace, running sessions. */
  async homeData(): Promise<Parameters<typeof homeSections>[0]> {
    try {
      const { pending, problem } = await this.#listPending();
      return { pending, sessions: await this.#listSessions(pending), ...(problem === undefined ? {} : { problem }) };
    } catch (error) {
      return { pending: [], sessions: [], problem: `Could not list sessions: ${projectErrorMessage(error)}` };
    }
  }

  async #readEvents(sessionId: string): Promise<SessionEvent[]> {
    const handle = this.#client.workflow.getHandle(sessionId);
    const events: SessionEvent[] = [];
    let since = 0;
    for (let page = 0; page < 10; page++) {
      const result = await this.query(sessionId, () => handle.query(eventsQuery, { since }), 'events');
      events.push(...result.events);
      // A short page is the last: no second query only to find nothing more.
      if (result.events.length < EVENTS_PAGE_LIMIT || result.next <= since) break;
      since = result.next;
    }
    return events;
  }

  /** The session's description from Temporal's server (no worker involved). */
  describeSession(sessionId: string): Promise<WorkflowExecutionDescription> {
    return withTimeout(this.#client.workflow.getHandle(sessionId).describe(), `session ${sessionId}`);
  }

  /** The session's own queries, each allowed to fail alone (the page shows what did answer). */
  async #readQueries(sessionId: string, data: SessionPageData): Promise<void> {
    const handle = this.#client.workflow.getHandle(sessionId);
    const settled = await Promise.allSettled([
      this.query(sessionId, () => handle.query(pendingApprovalsQuery), 'pendingApprovals'),
      this.#readEvents(sessionId),
      this.query(sessionId, () => handle.query(approvalDecisionsQuery), 'approvalDecisions'),
      this.query(sessionId, () => handle.query(turnResultsQuery, { limit: 20 }), 'turnResults'),
      this.query(sessionId, () => handle.query(activeTurnQuery), 'activeTurn'),
    ]);
    const [pending, events, decisions, turns, active] = settled;
    if (pending.status === 'fulfilled') data.pending = pending.value;
    if (events.status === 'fulfilled') data.events = events.value;
    if (decisions.status === 'fulfilled') data.decisions = decisions.value;
    if (turns.status === 'fulfilled') data.turns = turns.value;
    if (active.status === 'fulfilled') data.activeTurn = active.value;
    const failed = settled.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed !== undefined) data.problem = projectErrorMessage(failed.reason);
  }

  /** What a session page shows; `described` is a description just read, else it is read here. */
  async sessionData(
    sessionId: string,
    turnId: string | undefined,
    described?: Promise<WorkflowExecutionDescription>,
  ): Promise<SessionPageData> {
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
      description = await (described ?? this.describeSession(sessionId));
    } catch (error) {
      data.problem = `No such session, or Temporal did not answer: ${projectErrorMessage(error)}`;
      return data;
    }
    data.status = description.status.name;
    data.runId = description.runId;
    data.taskQueue = description.taskQueue;
    Object.assign(data, sessionLabelOf(description.memo));
    if (this.#temporalUiUrl !== undefined) {
      const namespace = this.#client.options.namespace;
      data.webUiUrl = `${this.#temporalUiUrl.replace(/\/$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(sessionId)}/${encodeURIComponent(description.runId)}/history`;
    }
    if (description.status.name !== 'RUNNING') {
      data.problem = `This session is ${description.status.name.toLowerCase()}; its queries need a running workflow or a worker to replay it.`;
    }
    await this.#readQueries(sessionId, data);
    data.live = liveCalls(description.raw.pendingActivities ?? [], data.activeTurn);
    // A worker older than calls in doubt does not know the query: the section stays empty, the page works.
    if (description.status.name === 'RUNNING')
      data.callsInDoubt = await this.#client.workflow
        .getHandle(sessionId)
        .query(callsInDoubtQuery)
        .catch(() => []);
    return data;
  }
}
