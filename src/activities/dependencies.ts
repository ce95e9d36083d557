import type { Tracer } from '@opentelemetry/api';
import type { ArtifactStore } from '../contracts/artifact-store.js';
import type { LocalCallsPolicy } from '../contracts/pipeline.js';
import type { ApprovalEvaluator } from '../contracts/policy.js';
import type { PermissionRules } from '../contracts/session.js';
import type { SwitchyardHooks } from '../hooks/types.js';
import type { ToolRegistry } from '../tools/registry.js';

/** What a worker's activities are built from (`createActivities`); tests hand in their own tools here. */
export interface ActivityDependencies {
  registry: ToolRegistry;
  /** Working directory of sessions that name none. Default: the worker's. */
  defaultCwd?: string;
  /** Group size for sessions that name none (the worker's `SWITCHYARD_MAX_TOOL_CONCURRENCY`). Default 10. */
  defaultMaxConcurrency?: number;
  /** Workspaces whose hook settings files are trusted (the worker's `SWITCHYARD_TRUSTED_WORKSPACES`). Default: none. */
  trustedWorkspaces?: readonly string[];
  /** Hooks given as functions; they run before command hooks from settings. */
  hooks?: SwitchyardHooks;
  /**
   * Where the user-level `settings.json` with command hooks is (default `~/.switchyard`); `false` reads no settings
   * files at all (project `<cwd>/.switchyard/settings.json` included).
   */
  userSettingsDir?: string | false;
  /** Whether the namespace has the `SwitchyardPendingApprovals` search attribute (the worker checks at start). */
  pendingApprovalsSearchAttribute?: boolean;
  /** Where full outputs go; without a store, over-budget outputs are truncated. */
  artifacts?: ArtifactStore;
  /**
   * The worker's data directory (its settings' `SWITCHYARD_DATA_DIR`): background tasks live under
   * `<dataDir>/background`.
   */
  dataDir: string;
  /** Admission gates by name, with their permits. Default `{ model: 4, network: 16 }`. */
  admissionGates?: Readonly<Record<string, number>>;
  /** Where hook failures and other worker-side problems are reported. */
  onWarning?: (message: string, details: Record<string, unknown>) => void;
  /**
   * Short read-only calls run as local activities on the workflow's worker (see `PlannedCalls.localCalls`); `false`
   * (the default) when the tools must run elsewhere or local calls are not wanted.
   */
  localCalls?: LocalCallsPolicy | false;
  /**
   * This worker's identity as Temporal knows it, with its tool fingerprint (`workerIdentity`): a call naming a tool
   * this worker lacks while other workers on the queue offer different tools fails retryably, naming both.
   */
  workerIdentity?: string;
  /** The operator's rules (the worker's policy file): a tier above every session's rules. */
  operatorRules?: PermissionRules;
  /** Approval evaluators sessions may pick by name (`SessionOptions.approvalEvaluator`). */
  evaluators?: readonly ApprovalEvaluator[];
  /** The approvers file signed approvals are checked against (`SWITCHYARD_APPROVERS_FILE`); none: no signature verifies. */
  approversFile?: string;
  /** OpenTelemetry tracer: an `execute_tool` span per tool execution (src/worker/telemetry.ts). */
  tracer?: Tracer;
  /** The worker's sandbox mode (`SWITCHYARD_SANDBOX`, read by the worker factory): `required` is a floor no session lowers. */
  workerSandboxMode?: string;
}

/** Reports a worker-side problem (a failed hook, a skipped settings file) to `onWarning`, if any. */
export type Warn = (message: string, details?: Record<string, unknown>) => void;
