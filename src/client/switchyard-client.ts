import type { Tracer } from '@opentelemetry/api';
import { Client, Connection, WithStartWorkflowOperation } from '@temporalio/client';
import type { ConnectionOptions } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import type { WorkflowHandle } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { signInDoubtResolution, signPolicyChange } from '../approvals/approval-signature.js';
import type { CallInDoubt, ResolveInDoubtRequest, ResolveInDoubtResult } from '../contracts/calls-in-doubt.js';
import { FileArtifactStore } from '../artifacts/file-artifact-store.js';
import { switchyardDataConverter } from '../config/data-converter.js';
import { environmentSettings } from '../config/settings.js';
import {
  DEFAULT_TEMPORAL_ADDRESS as DEFAULT_ADDRESS,
  loadTemporalConnectConfig,
} from '../config/temporal-connection.js';
import { grpcCompressionFor } from '../config/grpc-compression.js';
import { hookSettingsSchema } from '../contracts/hook-settings.js';
import type { ArtifactStore } from '../contracts/artifact-store.js';
import type { ApprovalRequest, ApprovalSignal } from '../contracts/approval.js';
import { DEFAULT_NAMESPACE, DEFAULT_TASK_QUEUE, MAX_TURN_REQUEST_BYTES } from '../contracts/defaults.js';
import type { BackgroundTaskView } from '../contracts/background-tasks.js';
import type { EventsPage } from '../contracts/events.js';
import { toolProgressFromHeartbeat } from '../contracts/progress.js';
import type { ToolProgress } from '../contracts/progress.js';
import {
  activeTurnQuery,
  addCallsUpdate,
  approvalSignal,
  awaitResultsUpdate,
  backgroundTasksQuery,
  eventsQuery,
  executeTurnUpdate,
  interruptSignal,
  pendingApprovalsQuery,
  pendingClientCallsQuery,
  setPolicyUpdate,
  submitToolResultUpdate,
  callsInDoubtQuery,
  resolveInDoubtUpdate,
  toolSessionWorkflowType,
} from '../contracts/messages.js';
import type { SetPolicyRequest, SetPolicyResult } from '../contracts/policy.js';
import { invalidRule } from '../contracts/policy.js';
import type { SessionOptions } from '../contracts/session.js';
import { oversizeToolResultReason } from '../contracts/client-tools.js';
import type { PendingClientCall, SubmitToolResultRequest, SubmitToolResultResult } from '../contracts/client-tools.js';
import { sessionOptionsSchema } from '../contracts/schemas.js';
import { formatZodError, oversizeRequestReason } from '../contracts/tool-call.js';
import { parseRule } from '../contracts/permission-rules.js';
import { sessionStartMetadata } from './session-metadata.js';

/** Rejects bad session options before a session starts (the workflow tolerates them, but every call would fail). */
export function validateSessionOptions(options: SessionOptions): SessionOptions {
  const parsed = sessionOptionsSchema.safeParse(options);
  if (!parsed.success) throw new TypeError(`Invalid session options: ${formatZodError(parsed.error)}`);
  if (options.hooks !== undefined) {
    const hooks = hookSettingsSchema.safeParse({ hooks: options.hooks });
    if (!hooks.success) throw new TypeError(`Invalid session hooks: ${formatZodError(hooks.error)}`);
  }
  for (const list of [options.rules?.allow, options.rules?.ask, options.rules?.deny]) {
    for (const rule of list ?? []) parseRule(rule);
  }
  const badShadow =
    invalidRule(options.shadowRules) ?? invalidRule({ allow: (options.limits ?? []).map((limit) => limit.rule) });
  if (badShadow !== undefined) throw new TypeError(`Invalid session options: ${badShadow}`);
  return options;
}
import type { ToolCall } from '../contracts/tool-call.js';
import type { ActiveTurnView, AddCallsResult, ToolResult, TurnResult } from '../contracts/tool-result.js';

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
    // Left out: the data directory the settings function resolves (src/config/settings.ts), as `switchyard` does.
    this.artifacts = options.artifacts ?? new FileArtifactStore(environmentSettings().worker.dataDir);
  }

  /** The full output behind a result's `budget.artifact` URI (`switchyard-artifact://<session>/<id>`). */
  readArtifact(uri: string): Promise<string> {
    return this.artifacts.read(uri);
  }

  /**
   * Connects to Temporal and starts sessions on `taskQueue`. `connectionOptions` are the SDK's (`Connection.connect`:
   * address, `tls`, `apiKey`, metadata); without them the connection is resolved as the `temporal` CLI and
   * `createSwitchyardWorker`'s callers resolve it — `TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, `TEMPORAL_API_KEY`,
   * `TEMPORAL_TLS_*` over the `temporal.toml` profile (`TEMPORAL_PROFILE`), an empty value counting as unset — else
   * `localhost:7233` and `default`; `address` and `namespace` win over both. The task queue is `SWITCHYARD_TASK_QUEUE`,
   * else `switchyard`. A TLS or config file that cannot be read throws, naming it. With a `tracer`, starts, signals and
   * updates carry the trace context (`@temporalio/interceptors-opentelemetry`).
   *
   * `native: true` connects through the Temporal SDK's native connection (`NativeConnection`, the Rust client
   * workers use) instead of its JavaScript gRPC client: the same calls for about a third less of the client's CPU
   * per turn (docs/CONCEPTS.md, "Client connection"). It loads `@temporalio/worker`'s native core, whose runtime starts with
   * the first native connection: in a process that also calls `installTemporalRuntime`, call that first.
   */
  static async connect(
    options: {
      connectionOptions?: ConnectionOptions;
      address?: string;
      namespace?: string;
      taskQueue?: string;
      tracer?: Tracer;
      native?: boolean;
    } = {},
  ): Promise<SwitchyardClient> {
    // What the caller left out comes from the settings function every entry point uses (src/config/settings.ts).
    const settings = environmentSettings();
    const taskQueue = options.taskQueue ?? settings.taskQueue;
    const resolved =
      options.connectionOptions === undefined
        ? loadTemporalConnectConfig({ address: options.address, namespace: options.namespace }, settings.environment)
        : undefined;
    const connectionOptions: ConnectionOptions = {
      ...(resolved?.connectionOptions ?? options.connectionOptions),
      ...(options.address === undefined ? {} : { address: options.address }),
    };
    const namespace = options.namespace ?? resolved?.namespace ?? DEFAULT_NAMESPACE;
    const address = connectionOptions.address ?? DEFAULT_ADDRESS;
    const connection =
      options.native === true
        ? await (
            await import('@temporalio/worker')
          ).NativeConnection.connect({
            address,
            ...(connectionOptions.tls === undefined ? {} : { tls: connectionOptions.tls }),
            ...(connectionOptions.apiKey === undefined || typeof connectionOptions.apiKey !== 'string'
              ? {}
              : { apiKey: connectionOptions.apiKey }),
            ...(connectionOptions.metadata === undefined
              ? {}
              : { metadata: connectionOptions.metadata as Record<string, string> }),
            ...grpcCompressionFor(address),
          })
        : await Connection.connect({ ...connectionOptions, address });
    const client = new Client({
      connection,
      namespace,
      dataConverter: switchyardDataConverter,
      ...(options.tracer === undefined
        ? {}
        : { interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor({ tracer: options.tracer })] } }),
    });
    return new SwitchyardClient({ client, taskQueue });
  }

  /** Starts a session whose workflow id is `sessionId`. */
  async startSession(sessionId: string, options: SessionOptions = {}): Promise<SessionHandle> {
    await this.client.workflow.start(toolSessionWorkflowType, {
      workflowId: sessionId,
      taskQueue: this.taskQueue,
      args: [validateSessionOptions(options)],
      ...sessionStartMetadata(sessionId, options, this.taskQueue),
    });
    return this.session(sessionId);
  }

  /** A handle on an existing session. */
  session(sessionId: string): SessionHandle {
    return new SessionHandle(this, this.client.workflow.getHandle(sessionId));
  }

  /**
   * Runs a turn, starting the session first if it does not exist yet (update-with-start), so an agent loop needs
   * a single call per model reply. A request over the size limit is refused before anything is sent, as by
   * `SessionHandle.executeTurn`.
   */
  async executeTurnWithStart(
    sessionId: string,
    request: { turnId: string; calls: ToolCall[] },
    options: SessionOptions = {},
  ): Promise<TurnResult> {
    const oversize = oversizeRequestReason(request.calls, MAX_TURN_REQUEST_BYTES);
    if (oversize !== undefined) throw new Error(`executeTurnWithStart "${request.turnId}" was not sent: ${oversize}`);
    const startOperation = new WithStartWorkflowOperation(toolSessionWorkflowType, {
      workflowId: sessionId,
      taskQueue: this.taskQueue,
      args: [validateSessionOptions(options)],
      workflowIdConflictPolicy: 'USE_EXISTING',
      ...sessionStartMetadata(sessionId, options, this.taskQueue),
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
    const oversize = oversizeRequestReason(request.calls, MAX_TURN_REQUEST_BYTES);
    if (oversize !== undefined)
      return Promise.reject(new Error(`executeTurn "${request.turnId}" was not sent: ${oversize}`));
    return this.workflow.executeUpdate(executeTurnUpdate, { args: [request], updateId: request.turnId });
  }

  /**
   * A streaming turn: `add(...)` calls as the model streams them, `end()` when its reply is complete, and iterate
   * the results, which arrive in call order as soon as each is ready.
   */
  streamTurn(turnId: string): StreamingTurn {
    return new StreamingTurn(this, turnId);
  }

  /** The running turn and whether everything executing is interruptible; null when idle. */
  activeTurn(): Promise<ActiveTurnView | null> {
    return this.workflow.query(activeTurnQuery);
  }

  approve(approval: ApprovalSignal): Promise<void> {
    return this.workflow.signal(approvalSignal, approval);
  }

  /**
   * Changes the session's rules and/or permission mode (update `setPolicy`): each rule list given replaces the
   * session's list of that kind. Waiting calls are decided again at once; the answer names those released or denied.
   * Rejected, with nothing applied, when a rule does not parse, and in a session with approvers when the change is not
   * signed by one of them (`sign`: the approver's Ed25519 private key, PKCS#8 PEM, and name; docs/APPROVALS.md). The
   * rejection's cause says why.
   */
  async setPolicy(
    request: SetPolicyRequest,
    sign?: { privateKeyPem: string; by: string; expiresAt?: string },
  ): Promise<SetPolicyResult> {
    const sent =
      sign === undefined
        ? request
        : signPolicyChange({
            sessionId: this.sessionId,
            request,
            by: sign.by,
            ...(sign.expiresAt === undefined ? {} : { expiresAt: sign.expiresAt }),
            privateKeyPem: sign.privateKeyPem,
          });
    return await this.workflow.executeUpdate(setPolicyUpdate, { args: [sent] });
  }

  interrupt(reason?: string): Promise<void> {
    return this.workflow.signal(interruptSignal, reason === undefined ? {} : { reason });
  }

  pendingApprovals(): Promise<ApprovalRequest[]> {
    return this.workflow.query(pendingApprovalsQuery);
  }

  /** Calls of the session's client tools waiting for this client's answer (`SessionOptions.clientTools`). */
  pendingClientCalls(): Promise<PendingClientCall[]> {
    return this.workflow.query(pendingClientCallsQuery);
  }

  /**
   * Answers a parked client-tool call with the client's result. Rejects, with the session's reason in the message, for
   * an unknown or already answered call id (a second answer is never taken for the same call).
   */
  async submitToolResult(request: SubmitToolResultRequest): Promise<SubmitToolResultResult> {
    // Refused before sending: the server could never take it (`SUBMIT_TOOL_RESULT_MAX_BYTES`).
    const oversize = oversizeToolResultReason(request);
    if (oversize !== undefined)
      throw new Error(`submitToolResult for call "${request.callId}" was not sent: ${oversize}`);
    try {
      return await this.workflow.executeUpdate(submitToolResultUpdate, { args: [request] });
    } catch (error) {
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : undefined;
      throw new Error(
        `submitToolResult for call "${request.callId}" was rejected: ${cause ?? (error as Error).message}`,
        { cause: error },
      );
    }
  }

  events(since = 0): Promise<EventsPage> {
    return this.workflow.query(eventsQuery, { since });
  }

  /** v1.1: the session's background tasks, as the session last saw them (query `backgroundTasks`). */
  backgroundTasks(): Promise<BackgroundTaskView[]> {
    return this.workflow.query(backgroundTasksQuery);
  }

  /** Calls whose worker died while they ran and that may have partly run, until a person settles them. */
  callsInDoubt(): Promise<CallInDoubt[]> {
    return this.workflow.query(callsInDoubtQuery);
  }

  /**
   * Settles a call in doubt (update `resolveInDoubt`): `ran` (its `output` is what the next turn reports), `not-ran`,
   * or `retry` (run again in the next turn, permission again, same idempotency key). In a session with approvers it
   * must be signed (`sign`: the approver's Ed25519 private key, PKCS#8 PEM; `request.by` names the approver). Rejected,
   * with nothing changed, for an unknown call id or an unsigned, badly signed or expired resolution; the cause says why.
   */
  async resolveInDoubt(
    request: ResolveInDoubtRequest,
    sign?: { privateKeyPem: string; expiresAt?: string },
  ): Promise<ResolveInDoubtResult> {
    const sent =
      sign === undefined
        ? request
        : signInDoubtResolution({
            sessionId: this.sessionId,
            request,
            ...(sign.expiresAt === undefined ? {} : { expiresAt: sign.expiresAt }),
            privateKeyPem: sign.privateKeyPem,
          });
    return await this.workflow.executeUpdate(resolveInDoubtUpdate, { args: [sent] });
  }

  /**
   * Ends the session by cancelling its workflow: the running turn is cancelled and its background tasks are stopped
   * (process groups killed) before the workflow closes. Resolves once the cancellation is requested.
   */
  async end(): Promise<void> {
    await this.workflow.cancel();
  }

  /**
   * Live progress of the calls running now (Bash's output tail, a tool's own `reportProgress`), in no set order:
   * each call activity's last heartbeat details, from the server's description of the session. Nothing of it is in
   * workflow history. It lags by the heartbeat throttle (0.8 × `heartbeatTimeoutMs`); calls that run as local
   * activities, and calls that have not heartbeated yet, are absent.
   */
  async progress(): Promise<ToolProgress[]> {
    const description = await this.workflow.describe();
    const converter = this.switchyard.client.workflow.options.loadedDataConverter;
    const progress: ToolProgress[] = [];
    for (const activity of description.raw.pendingActivities ?? []) {
      const payloads = activity.heartbeatDetails?.payloads;
      if (payloads === undefined || payloads === null || payloads.length === 0) continue;
      let details: unknown;
      try {
        // The client's codecs in reverse order of encoding, then its payload converter (the SDK's own decode steps).
        let decoded = payloads as Payload[];
        for (const codec of [...converter.payloadCodecs].reverse()) decoded = await codec.decode(decoded);
        details = decoded[0] === undefined ? undefined : converter.payloadConverter.fromPayload(decoded[0]);
      } catch {
        continue; // not ours to read (another codec, another activity)
      }
      const heartbeat = activity.lastHeartbeatTime;
      const heartbeatMs =
        heartbeat == null
          ? undefined
          : Number(heartbeat.seconds ?? 0) * 1000 + Math.floor((heartbeat.nanos ?? 0) / 1e6);
      const entry = toolProgressFromHeartbeat(details, {
        attempt: activity.attempt ?? 1,
        ...(heartbeatMs === undefined ? {} : { heartbeatAt: new Date(heartbeatMs) }),
      });
      if (entry !== undefined) progress.push(entry);
    }
    return progress;
  }
}

/** Client side of a streaming turn (`addCalls` / `awaitResults`). */
export class StreamingTurn implements AsyncIterable<ToolResult> {
  #next = 0;
  #markOpened: () => void = () => {};
  /** Resolves once the first `add`/`end` was accepted: polling before the turn exists would be rejected. */
  readonly #opened = new Promise<void>((resolve) => {
    this.#markOpened = resolve;
  });

  constructor(
    readonly session: SessionHandle,
    readonly turnId: string,
  ) {}

  /** Adds calls; resolves once the session accepted them (they may already be running). */
  add(...calls: ToolCall[]): Promise<AddCallsResult> {
    return this.#addCalls({ calls, done: false });
  }

  /** Says the model's reply is complete; calls added afterwards are rejected. */
  end(): Promise<AddCallsResult> {
    return this.#addCalls({ calls: [], done: true });
  }

  #addCalls(options: { calls: ToolCall[]; done: boolean }): Promise<AddCallsResult> {
    const { calls, done } = options;
    const oversize = oversizeRequestReason(calls, MAX_TURN_REQUEST_BYTES);
    if (oversize !== undefined)
      return Promise.reject(new Error(`addCalls to "${this.turnId}" was not sent: ${oversize}`));
    // A retried batch re-attaches to the same update instead of adding the calls twice.
    const updateId =
      done && calls.length === 0
        ? `${this.turnId}:end`
        : `${this.turnId}:add:${calls[0]?.id ?? ''}:${calls.at(-1)?.id ?? ''}:${calls.length}`;
    const accepted = this.session.workflow.executeUpdate(addCallsUpdate, {
      args: [{ turnId: this.turnId, calls, ...(done ? { done } : {}) }],
      updateId,
    });
    return accepted.then((result) => {
      this.#markOpened();
      return result;
    });
  }

  /** Results in call order, each as soon as it and all before it are ready; ends with the turn. */
  async *results(): AsyncGenerator<ToolResult> {
    await this.#opened;
    for (;;) {
      const page = await this.session.workflow.executeUpdate(awaitResultsUpdate, {
        args: [{ turnId: this.turnId, since: this.#next }],
        updateId: `${this.turnId}:await:${this.#next}`,
      });
      for (const result of page.results) yield result;
      this.#next = page.next;
      if (page.done) return;
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<ToolResult> {
    return this.results();
  }
}
