import { Client, Connection, WithStartWorkflowOperation } from '@temporalio/client';
import type { WorkflowHandle } from '@temporalio/client';
import { FileArtifactStore, dataDirFromEnv } from '../activities/artifact-store.js';
import type { ArtifactStore } from '../activities/artifact-store.js';
import type { ApprovalRequest, ApprovalSignal } from '../contracts/approval.js';
import { DEFAULT_NAMESPACE, DEFAULT_TASK_QUEUE } from '../contracts/defaults.js';
import type { EventsPage } from '../contracts/events.js';
import {
  approvalSignal,
  eventsQuery,
  executeTurnUpdate,
  interruptSignal,
  pendingApprovalsQuery,
  toolSessionWorkflowType,
} from '../contracts/messages.js';
import type { SessionOptions } from '../contracts/session.js';
import { sessionOptionsSchema } from '../contracts/session.js';
import { formatZodError } from '../contracts/tool-call.js';
import { parseRule } from '../workflows/permission-rules.js';

/** Rejects bad session options before a session starts (the workflow tolerates them, but every call would fail). */
export function validateSessionOptions(options: SessionOptions): SessionOptions {
  const parsed = sessionOptionsSchema.safeParse(options);
  if (!parsed.success) throw new TypeError(`Invalid session options: ${formatZodError(parsed.error)}`);
  for (const list of [options.rules?.allow, options.rules?.ask, options.rules?.deny]) {
    for (const rule of list ?? []) parseRule(rule);
  }
  return options;
}
import type { ToolCall } from '../contracts/tool-call.js';
import type { TurnResult } from '../contracts/tool-result.js';

export interface SwitchyardClientOptions {
  client: Client;
  /** Default `switchyard`. */
  taskQueue?: string;
  /** Where `readArtifact` looks; default the file store under `SWITCHYARD_DATA_DIR` (the workers' store). */
  artifacts?: ArtifactStore;
}

/** Typed access to sessions; any other Temporal client can do the same through the wire contract. */
export class SwitchyardClient {
  readonly client: Client;
  readonly taskQueue: string;
  readonly artifacts: ArtifactStore;

  constructor(options: SwitchyardClientOptions) {
    this.client = options.client;
    this.taskQueue = options.taskQueue ?? DEFAULT_TASK_QUEUE;
    this.artifacts = options.artifacts ?? new FileArtifactStore(dataDirFromEnv());
  }

  /** The full output behind a result's `budget.artifact` URI (`switchyard-artifact://<session>/<id>`). */
  readArtifact(uri: string): Promise<string> {
    return this.artifacts.read(uri);
  }

  /** Connects to `address` (default `TEMPORAL_ADDRESS` or `localhost:7233`). */
  static async connect(options: { address?: string; namespace?: string; taskQueue?: string } = {}): Promise<SwitchyardClient> {
    const connection = await Connection.connect({ address: options.address ?? process.env.TEMPORAL_ADDRESS ?? 'localhost:7233' });
    const client = new Client({ connection, namespace: options.namespace ?? process.env.TEMPORAL_NAMESPACE ?? DEFAULT_NAMESPACE });
    return new SwitchyardClient({ client, ...(options.taskQueue === undefined ? {} : { taskQueue: options.taskQueue }) });
  }

  /** Starts a session whose workflow id is `sessionId`. */
  async startSession(sessionId: string, options: SessionOptions = {}): Promise<SessionHandle> {
    await this.client.workflow.start(toolSessionWorkflowType, {
      workflowId: sessionId,
      taskQueue: this.taskQueue,
      args: [validateSessionOptions(options)],
    });
    return this.session(sessionId);
  }

  /** A handle on an existing session. */
  session(sessionId: string): SessionHandle {
    return new SessionHandle(this, this.client.workflow.getHandle(sessionId));
  }

  /**
   * Runs a turn, starting the session first if it does not exist yet (update-with-start), so an agent loop needs
   * a single call per model reply.
   */
  async executeTurnWithStart(sessionId: string, request: { turnId: string; calls: ToolCall[] }, options: SessionOptions = {}): Promise<TurnResult> {
    const startOperation = new WithStartWorkflowOperation(toolSessionWorkflowType, {
      workflowId: sessionId,
      taskQueue: this.taskQueue,
      args: [validateSessionOptions(options)],
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
    return this.client.workflow.executeUpdateWithStart(executeTurnUpdate, {
      args: [request],
      updateId: request.turnId,
      startWorkflowOperation: startOperation,
    });
  }
}

export class SessionHandle {
  constructor(
    readonly switchyard: SwitchyardClient,
    readonly workflow: WorkflowHandle,
  ) {}

  get sessionId(): string {
    return this.workflow.workflowId;
  }

  /** Runs one model reply's tool calls; the update id is the turnId, so a retry re-attaches instead of re-running. */
  executeTurn(request: { turnId: string; calls: ToolCall[] }): Promise<TurnResult> {
    return this.workflow.executeUpdate(executeTurnUpdate, { args: [request], updateId: request.turnId });
  }

  approve(approval: ApprovalSignal): Promise<void> {
    return this.workflow.signal(approvalSignal, approval);
  }

  interrupt(reason?: string): Promise<void> {
    return this.workflow.signal(interruptSignal, reason === undefined ? {} : { reason });
  }

  pendingApprovals(): Promise<ApprovalRequest[]> {
    return this.workflow.query(pendingApprovalsQuery);
  }

  events(since = 0): Promise<EventsPage> {
    return this.workflow.query(eventsQuery, { since });
  }
}
