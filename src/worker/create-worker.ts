import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { WorkerOptions } from '@temporalio/worker';
import type { Logger as PinoLogger } from 'pino';
import { createActivities } from '../activities/create-activities.js';
import type { Tracer } from '@opentelemetry/api';
import {
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { InjectedSinks } from '@temporalio/worker';
import { FileArtifactStore } from '../artifacts/file-artifact-store.js';
import { processEnvironment } from '../config/environment.js';
import { sessionDiskQuota } from '../artifacts/session-disk.js';
import { securitySettingsLine, settingsFromEnvironment } from '../config/settings.js';
import type { SwitchyardSettings, WorkerSecuritySettings } from '../config/settings.js';
import { switchyardDataConverter } from '../config/data-converter.js';
import type { WorkerRole } from '../config/environment.js';
import { bubblewrapBinary } from '../tools/sandbox/bubblewrap-availability.js';
import { probeSandboxStartupLine } from '../tools/sandbox/sandbox-report.js';
import { runWithToolSettings, sessionDiskBytes } from '../tools/tool-settings.js';
import type { ToolSettingsSource } from '../tools/tool-settings.js';
import { createToolCallTelemetry, errorCategoryOf, recordApprovalDecision, stageOf } from './telemetry.js';
import type { ToolCallRecorder } from './telemetry.js';
import type { SwitchyardSinks } from '../contracts/sinks.js';
import type { ArtifactStore } from '../contracts/artifact-store.js';
import type { SwitchyardHooks } from '../hooks/types.js';
import { DEFAULT_LOCAL_CALL_BUDGET_MS, DEFAULT_LOCAL_CALL_MAX_TIMEOUT_MS } from '../contracts/defaults.js';
import { pendingApprovalsSearchAttribute } from '../contracts/messages.js';
import { builtinTools } from '../tools/builtin.js';
import type { Tool } from '../tools/define-tool.js';
import { ToolRegistry } from '../tools/registry.js';
import { workerIdentity } from '../activities/tool-mismatch.js';
import type { ApprovalEvaluator, PermissionRules } from '../contracts/policy.js';
import { loadApproversFile } from '../approvals/approval-signature.js';
import { createVerifyApproval } from '../activities/verify-approval.js';
import { createAdmitSession } from '../activities/admit-session.js';
import { stackTracingBundlerOptions, workflowBundlerOptions } from './workflow-bundle-options.js';
import { HooklessWorkflowThreadsWorker } from './workflow-threads.js';

/** `.js` in the built package (dist/), `.ts` when the sources run through tsx or vitest. */
const ownExtension = path.extname(fileURLToPath(import.meta.url));

/**
 * Path of the workflow bundle's entry, for `workflowsPath` or `bundleWorkflowCode`: found relative to this file, so
 * it works from `node_modules` as well as from the sources.
 */
export const workflowsPath = fileURLToPath(new URL(`../workflows/index${ownExtension}`, import.meta.url));

/**
 * The workflow bundle `npm run build` writes with `bundleWorkflowCode` (dist/workflow-bundle.js), which spares the
 * worker the bundling at start; undefined when running from the sources (the worker then bundles `workflowsPath`).
 */
export const prebuiltWorkflowBundlePath: string | undefined = (() => {
  if (ownExtension !== '.js') return undefined;
  const file = fileURLToPath(new URL('../workflow-bundle.js', import.meta.url));
  return existsSync(file) ? file : undefined;
})();

function workflowStackTraces(options: Pick<SwitchyardWorkerOptions, 'workflowStackTraces' | 'settings'>): boolean {
  return options.workflowStackTraces ?? options.settings?.worker.workflowStackTraces ?? false;
}

type WorkflowCode = Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath' | 'bundlerOptions'>;

/**
 * The workflow code a worker runs: `workflowBundle` as given; else `workflowsPath` (the caller's, or Switchyard's)
 * bundled at start with Switchyard's bundler options; else the prebuilt bundle. Full stack traces need a bundle
 * without the stack-trace cap, so they bundle at start.
 */
function workflowCode(options: SwitchyardWorkerOptions): WorkflowCode {
  if (options.workflowBundle !== undefined) return { workflowBundle: options.workflowBundle };
  const stackTraces = workflowStackTraces(options);
  const bundlerOptions = stackTraces ? stackTracingBundlerOptions : workflowBundlerOptions;
  if (options.workflowsPath !== undefined) return { workflowsPath: options.workflowsPath, bundlerOptions };
  if (prebuiltWorkflowBundlePath === undefined || stackTraces) return { workflowsPath, bundlerOptions };
  return { workflowBundle: { codePath: prebuiltWorkflowBundlePath } };
}

export interface SwitchyardWorkerOptions {
  /**
   * The settings the options below default to: what `settingsFromEnvironment()` resolved (src/config/settings.ts).
   * Default: `settingsFromEnvironment()` called here, once, at start — the same function `switchyard worker` calls, so
   * a setting in the environment holds whichever way the worker starts; an option given wins over its setting. The
   * worker reads no environment of its own beyond that call.
   */
  settings?: SwitchyardSettings;
  /**
   * The settings this worker's tools run with (limits, sandbox, which variables child processes inherit, and the
   * environment they inherit from), for its activities only: another worker in the same process keeps its own.
   * Default: `settings.tools`. A function is called each time a tool needs them (a test that changes its process's
   * environment between calls passes one that resolves it again).
   */
  toolSettings?: ToolSettingsSource;
  /**
   * The operator's rules, a tier above every session's rules: their deny and ask hold whatever a session's rules,
   * mode or `setPolicy` say. Default: the rules of the file `SWITCHYARD_POLICY_FILE` names.
   */
  operatorRules?: PermissionRules;
  /** Approval evaluators sessions pick by name with `SessionOptions.approvalEvaluator` (CLI: `--evaluator MODULE`). */
  evaluators?: readonly ApprovalEvaluator[];
  connection: NativeConnection;
  /** Default `TEMPORAL_NAMESPACE` or `default`. */
  namespace?: string;
  /** Default `SWITCHYARD_TASK_QUEUE` or `switchyard`. */
  taskQueue?: string;
  /** Tools offered to sessions. Default: the built-in tools. */
  tools?: readonly Tool[];
  /** Working directory of sessions that name none. Default: the process's. */
  defaultCwd?: string;
  /** Group size for sessions that name none. Default `SWITCHYARD_MAX_TOOL_CONCURRENCY` or 10. */
  defaultMaxConcurrency?: number;
  /**
   * A prebuilt workflow bundle (tests build one and share it). Default: the built package's
   * `prebuiltWorkflowBundlePath`, else bundle `workflowsPath` at start.
   */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /**
   * Your own workflows' module, bundled instead of Switchyard's (export `toolSession` from it too if this worker also
   * serves sessions); its workflows may run tool turns with `runToolTurn`. Ignored when `workflowBundle` is given.
   * It is bundled with Switchyard's bundler options, so its stack traces are capped too (see `workflowStackTraces`).
   */
  workflowsPath?: string;
  /**
   * Full stack traces in workflow code (`SWITCHYARD_WORKFLOW_STACK_TRACES=1`): the Temporal SDK's stack-trace query
   * and the frames of a workflow error. Off by default, because the SDK then records a mapped stack for every promise
   * workflow code creates, which about doubles a call's worker CPU (BENCHMARKS.md): the bundle caps stack traces
   * and the workflow threads run without the SDK's promise hook, so the `__stack_trace` query answers "Workflow stack
   * traces are not enabled on this worker". With it on, the worker bundles its workflows at start (unless
   * `workflowBundle` is given, which is run as it is) and keeps the SDK's hook.
   */
  workflowStackTraces?: boolean;
  /** Your own activities, registered beside Switchyard's (an agent's model call, say). */
  activities?: Readonly<Record<string, (...args: never[]) => Promise<unknown>>>;
  /**
   * Longest gap between heartbeats sent to the server. Cancellation (an interrupt) reaches a running tool only in
   * the answer to a heartbeat, so this bounds how late it arrives. Default 1000 ms.
   */
  heartbeatThrottleMs?: number;
  /**
   * Where full outputs go. Default: a `FileArtifactStore` under `dataDir`. Pass a shared store when workers run on
   * several hosts.
   */
  artifacts?: ArtifactStore;
  /**
   * Data directory of the default artifact store and of background tasks (`<dataDir>/background`):
   * `SWITCHYARD_DATA_DIR`, else `~/.local/share/switchyard`.
   */
  dataDir?: string;
  /** Admission gates (name → permits) that tools pass before model or network requests. Default `{ model: 4, network: 16 }`. */
  admissionGates?: Readonly<Record<string, number>>;
  /**
   * OpenTelemetry tracer: a span per tool call, and Temporal's activity spans (`@temporalio/interceptors-opentelemetry`).
   * Tracing is off without one.
   */
  tracer?: Tracer;
  /** Hooks given as functions; command hooks come from settings files and session options. */
  hooks?: SwitchyardHooks;
  /**
   * Directory of the user-level `settings.json` with command hooks (default `~/.switchyard`, or
   * `SWITCHYARD_USER_SETTINGS_DIR`); `false` reads no settings files, the project's included.
   */
  userSettingsDir?: string | false;
  logger?: PinoLogger;
  /**
   * Short read-only calls (read-only, idempotent, concurrency-safe, deadline up to `maxTimeoutMs`, default 30 s: Read,
   * Glob, Grep, read-only Bash with a short `timeout`) run as local activities on the worker that runs the session's
   * workflow — no activity task round trip, one history event each. On by default (env
   * `SWITCHYARD_LOCAL_READ_ONLY_CALLS=false` turns it off); sessions with a `toolTaskQueue` never use it. Only when
   * every call of a group qualifies; a call still running after `budgetMs` (default 1 s) moves to a regular activity,
   * because the session's queries and signals wait while a local call holds its workflow task. Local calls have no
   * live progress (`session.progress()`) and appear in the Web UI as local-activity markers with the same summary.
   */
  localReadOnlyCalls?: boolean | { maxTimeoutMs?: number; budgetMs?: number };
  /**
   * Refuse to start when the namespace lacks the `SwitchyardPendingApprovals` search attribute (default true; env
   * `SWITCHYARD_REQUIRE_SEARCH_ATTRIBUTE=false` turns it off). With false, sessions run without publishing it.
   */
  requireSearchAttribute?: boolean;
  /**
   * Scale-out (`SWITCHYARD_WORKER_ROLE`): `all` (default) runs session workflows and their tools; `workflows` runs
   * only workflow tasks (no tool code, no workspace: serves sessions that set `toolTaskQueue`); `tools` runs only
   * activities, on the queue named after the workspace it owns (sessions point at it with `toolTaskQueue`).
   */
  role?: WorkerRole;
  /**
   * The approvers file (default `SWITCHYARD_APPROVERS_FILE`): approver names → Ed25519 public keys and
   * groups, against which signed approvals are checked (docs/APPROVALS.md). Checked at start; read again for each
   * signature. Without it no signature verifies, so sessions that set `approvers` take no approval.
   */
  approversFile?: string;
  /**
   * Temporal worker tuning, passed to `Worker.create` as given: `workflowThreadPoolSize`, `maxCachedWorkflows`,
   * `maxConcurrentWorkflowTaskExecutions`, `maxConcurrentActivityTaskExecutions`, `maxConcurrentLocalActivityExecutions`,
   * `stickyQueueScheduleToStartTimeout`, poller counts. Default: the SDK's defaults (docs/CONCEPTS.md, "Worker tuning").
   */
  tuning?: WorkerTuning;
}

export {
  namespaceFromEnv,
  switchFromEnv,
  taskQueueFromEnv,
  workerRoleFromEnv,
  workerRoles,
} from '../config/environment.js';
export type { WorkerRole };

/** The `Worker.create` options a Switchyard worker lets its caller tune. */
export type WorkerTuning = Pick<
  WorkerOptions,
  | 'workflowThreadPoolSize'
  | 'maxCachedWorkflows'
  | 'maxConcurrentWorkflowTaskExecutions'
  | 'maxConcurrentActivityTaskExecutions'
  | 'maxConcurrentLocalActivityExecutions'
  | 'stickyQueueScheduleToStartTimeout'
  | 'workflowTaskPollerBehavior'
  | 'activityTaskPollerBehavior'
>;

/**
 * Whether the namespace has the `SwitchyardPendingApprovals` search attribute: `true`/`false` from the operator
 * service, or `'unknown'` when the server would not say (no permission, an older server).
 */
export async function hasPendingApprovalsSearchAttribute(
  connection: NativeConnection,
  namespace: string,
): Promise<boolean | 'unknown'> {
  try {
    const response = await connection.operatorService.listSearchAttributes({ namespace });
    return Object.hasOwn(response.customAttributes ?? {}, pendingApprovalsSearchAttribute);
  } catch {
    return 'unknown';
  }
}

/** The error a worker starts with when its namespace lacks the search attribute (and it is required). */
export function missingSearchAttributeMessage(namespace: string): string {
  return (
    `Namespace "${namespace}" has no search attribute ${pendingApprovalsSearchAttribute} (Int), which sessions use to publish ` +
    `their pending approvals to visibility (the console and \`switchyard pending\` query it). Create it once per namespace:\n` +
    `  temporal operator search-attribute create --namespace ${namespace} --name ${pendingApprovalsSearchAttribute} --type Int\n` +
    `or start the worker with requireSearchAttribute: false (SWITCHYARD_REQUIRE_SEARCH_ATTRIBUTE=false) to run without it.`
  );
}

/** The worker side of the telemetry sink: spans and `tool.call.*` logs for what the workflow reports. */
function telemetrySinks(options: { tracer?: Tracer; logger?: PinoLogger }): InjectedSinks<SwitchyardSinks> {
  const telemetry = createToolCallTelemetry({
    ...(options.tracer === undefined ? {} : { tracer: options.tracer }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  const open = new Map<string, ToolCallRecorder>();
  const keyOf = (workflowId: string, record: { turnId: string; callId: string }): string =>
    `${workflowId}/${record.turnId}/${record.callId}`;
  return {
    switchyardTelemetry: {
      toolCallStarted: {
        fn: (info, record) => {
          open.set(keyOf(info.workflowId, record), telemetry.started({ ...record, startTime: record.startedAt }));
        },
        callDuringReplay: false,
      },
      toolCallEnded: {
        fn: (info, record) => {
          const key = keyOf(info.workflowId, record);
          const recorder = open.get(key) ?? telemetry.started({ ...record, startTime: record.startedAt });
          open.delete(key);
          const stage = stageOf(record.errorCode, record.status);
          recorder.end({
            status: record.status,
            permission: record.permission,
            outputBytes: record.outputBytes,
            truncated: record.truncated,
            durationMs: record.durationMs,
            ...(record.permissionWaitMs === undefined ? {} : { permissionWaitMs: record.permissionWaitMs }),
            ...(record.sandboxed === undefined ? {} : { sandboxed: record.sandboxed }),
            ...(stage === undefined ? {} : { stage }),
            ...(record.status === 'success' ? {} : { errorCategory: errorCategoryOf(record.errorCode, record.status) }),
          });
        },
        callDuringReplay: false,
      },
      approvalDecision: {
        fn: (_info, record) => recordApprovalDecision(options, record),
        callDuringReplay: false,
      },
    },
  };
}

/**
 * The worker's settings: the caller's `settings`, else `settingsFromEnvironment()` — the function `switchyard worker`
 * calls — with the files the caller's `approversFile` and `operatorRules` replace left unread.
 */
async function workerSettings(options: SwitchyardWorkerOptions): Promise<SwitchyardSettings> {
  if (options.settings !== undefined) return options.settings;
  const env = { ...processEnvironment() };
  if (options.approversFile !== undefined) delete env.SWITCHYARD_APPROVERS_FILE;
  if (options.operatorRules !== undefined) delete env.SWITCHYARD_POLICY_FILE;
  return settingsFromEnvironment(env);
}

/**
 * The security settings a worker enforces: the caller's `approversFile` and `operatorRules`, and for each one left
 * out what its settings say (`SWITCHYARD_APPROVERS_FILE`, `SWITCHYARD_POLICY_FILE`).
 */
async function workerSecurity(
  options: SwitchyardWorkerOptions,
  settings: SwitchyardSettings,
): Promise<WorkerSecuritySettings> {
  const givenApprovers =
    options.approversFile === undefined
      ? undefined
      : {
          file: options.approversFile,
          count: Object.keys((await loadApproversFile(options.approversFile)).approvers).length,
        };
  return {
    sandboxMode: settings.sandboxMode,
    ...(settings.approvers === undefined ? {} : { approvers: settings.approvers }),
    ...(settings.operatorPolicy === undefined ? {} : { operatorPolicy: settings.operatorPolicy }),
    ...(givenApprovers === undefined ? {} : { approvers: givenApprovers }),
    ...(options.operatorRules === undefined
      ? {}
      : { operatorPolicy: { file: '(given by the caller)', rules: options.operatorRules } }),
  };
}

/**
 * Creates a worker that runs `toolSession` workflows and the tool activities. Every option left out comes from its
 * `settings` (default `settingsFromEnvironment()`, called once, here: the function `switchyard worker` calls), so the
 * same environment gives the same policy, approvers and sandbox either way; a setting that cannot be used stops it,
 * naming the variable or the file. The tools it runs get their settings from it: each activity it registers runs with
 * them (`runWithToolSettings`), so workers built in one process with different settings keep them apart. With a
 * `logger`, it logs the security settings in force at start.
 */
export async function createSwitchyardWorker(given: SwitchyardWorkerOptions): Promise<Worker> {
  const settings = await workerSettings(given);
  const security = await workerSecurity(given, settings);
  const options: SwitchyardWorkerOptions = {
    ...given,
    settings,
    ...(security.approvers === undefined ? {} : { approversFile: security.approvers.file }),
    ...(security.operatorPolicy === undefined ? {} : { operatorRules: security.operatorPolicy.rules }),
  };
  const tools = options.toolSettings ?? settings.tools;
  const role = options.role ?? settings.worker.role;
  const sandboxBinary = role === 'workflows' ? undefined : runWithToolSettings(tools, sandboxBinaryName);
  const securityLine = securitySettingsLine({
    ...security,
    temporal: settings.temporal,
    ...(sandboxBinary === undefined ? {} : { sandboxBinary }),
  });
  options.logger?.info(securityLine.fields, securityLine.message);
  const registry = new ToolRegistry(options.tools ?? builtinTools());
  const namespace = options.namespace ?? settings.temporal.namespace;
  const taskQueue = options.taskQueue ?? settings.taskQueue;
  const registered = await hasPendingApprovalsSearchAttribute(options.connection, namespace);
  const required = options.requireSearchAttribute ?? settings.worker.requireSearchAttribute;
  // A namespace without the attribute would have sessions that never show up in the pending-approvals query: refuse
  // to start unless told to run without it. When the server will not say, start and let sessions skip the upsert.
  if (registered === false && required) throw new Error(missingSearchAttributeMessage(namespace));
  const pendingApprovals = registered === true;
  if (!pendingApprovals) {
    options.logger?.warn(
      { namespace },
      `search attribute ${pendingApprovalsSearchAttribute} (Int) is ${registered === false ? 'not registered' : 'not confirmed by the server'}; sessions will not publish their pending approvals to visibility`,
    );
  }
  const logger = options.logger;
  // A broken approvers file is a start-up error, not a stream of approvals that never verify.
  if (options.approversFile !== undefined) {
    const approvers = await loadApproversFile(options.approversFile);
    logger?.info(
      { approversFile: options.approversFile, approvers: Object.keys(approvers.approvers).length },
      'approvers file loaded',
    );
  }
  if (logger !== undefined && role !== 'workflows') {
    // Loud where the worker cannot sandbox the processes its tools start (see SECURITY.md, the second wall).
    const line = await runWithToolSettings(tools, () => probeSandboxStartupLine());
    if (line.level === 'warn') logger.warn(line.message);
    else logger.info(line.message);
  }
  const dataDir = options.dataDir ?? settings.worker.dataDir;
  const userSettings = settings.worker.userSettingsDir;
  const identity = workerIdentity(registry);
  const activityDependencies: Parameters<typeof createActivities>[0] = {
    registry,
    workerIdentity: identity,
    pendingApprovalsSearchAttribute: pendingApprovals,
    // The default store checks each session's disk quota (SWITCHYARD_SESSION_DISK_BYTES) before it writes.
    artifacts:
      options.artifacts ??
      new FileArtifactStore(dataDir, {
        quota: sessionDiskQuota({ dataDir, limitBytes: runWithToolSettings(tools, sessionDiskBytes) }),
      }),
    dataDir,
    workerSandboxMode: security.sandboxMode,
    defaultMaxConcurrency: options.defaultMaxConcurrency ?? settings.worker.defaultMaxConcurrency,
    trustedWorkspaces: settings.worker.trustedWorkspaces,
    ...(options.admissionGates === undefined ? {} : { admissionGates: options.admissionGates }),
    ...(options.approversFile === undefined ? {} : { approversFile: options.approversFile }),
    ...(logger === undefined
      ? {}
      : { onWarning: (message: string, details: Record<string, unknown>) => logger.warn(details, message) }),
    ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
    ...(options.tracer === undefined ? {} : { tracer: options.tracer }),
    ...(options.operatorRules === undefined ? {} : { operatorRules: options.operatorRules }),
    ...(options.evaluators === undefined ? {} : { evaluators: options.evaluators }),
    ...(options.userSettingsDir !== undefined
      ? { userSettingsDir: options.userSettingsDir }
      : userSettings === undefined
        ? {}
        : { userSettingsDir: userSettings }),
  };
  if (options.defaultCwd !== undefined) activityDependencies.defaultCwd = options.defaultCwd;
  const localReadOnlyCalls = options.localReadOnlyCalls ?? settings.worker.localReadOnlyCalls;
  if (localReadOnlyCalls !== false) {
    const limits = localReadOnlyCalls === true ? {} : localReadOnlyCalls;
    activityDependencies.localCalls = {
      maxTimeoutMs: limits.maxTimeoutMs ?? DEFAULT_LOCAL_CALL_MAX_TIMEOUT_MS,
      budgetMs: limits.budgetMs ?? DEFAULT_LOCAL_CALL_BUDGET_MS,
    };
  }
  // Without stack traces the SDK's per-promise stack records are dead weight: the workflow threads go without them.
  const sdkWorker = workflowStackTraces(options) ? Worker : HooklessWorkflowThreadsWorker;
  return sdkWorker.create({
    connection: options.connection,
    namespace,
    taskQueue,
    identity,
    // A workflows-only worker runs no tool code, but checks approval signatures itself (a local activity of the session).
    ...(role === 'workflows'
      ? {
          activities: withToolSettings(tools, {
            verifyApproval: createVerifyApproval(
              options.approversFile === undefined ? {} : { approversFile: options.approversFile },
            ),
            admitSession: createAdmitSession(security.sandboxMode),
          }),
        }
      : {
          activities: withToolSettings(tools, { ...options.activities, ...createActivities(activityDependencies) }),
        }),
    maxHeartbeatThrottleInterval: options.heartbeatThrottleMs ?? 1_000,
    // Payloads as the SDK's default converter writes them, with a native UTF-8 coder (in the bundle too).
    dataConverter: switchyardDataConverter,
    // Temporal's own activity spans (they join the trace of the client that started the turn).
    ...(options.tracer === undefined
      ? {}
      : {
          interceptors: {
            activity: [
              (context) => ({
                inbound: new OpenTelemetryActivityInboundInterceptor(context, { tracer: options.tracer }),
                outbound: new OpenTelemetryActivityOutboundInterceptor(context),
              }),
            ],
          },
        }),
    sinks: telemetrySinks({
      ...(options.tracer === undefined ? {} : { tracer: options.tracer }),
      ...(logger === undefined ? {} : { logger }),
    }),
    ...(role === 'tools' ? {} : workflowCode(options)),
    ...options.tuning,
  });
}

/**
 * `activities`, each run with `tools` as its tools' settings. The SDK runs a local activity from the same object as a
 * regular one, so both paths hold; so does everything an activity leaves running (a Bash call's child process events,
 * a background task started from it), which keeps the context it was started in.
 */
function withToolSettings<T extends Record<string, (...args: never[]) => Promise<unknown>>>(
  tools: ToolSettingsSource,
  activities: T,
): T {
  return Object.fromEntries(
    Object.entries(activities).map(([name, activity]) => [
      name,
      (...args: never[]) => runWithToolSettings(tools, () => activity(...args)),
    ]),
  ) as T;
}

/** The bubblewrap binary this worker would sandbox with, for the start-up line (`none` where there is none). */
function sandboxBinaryName(): string {
  try {
    return bubblewrapBinary() ?? 'none';
  } catch {
    return 'unusable SWITCHYARD_BWRAP';
  }
}

export { NativeConnection };
