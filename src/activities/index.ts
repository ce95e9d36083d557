import os from 'node:os';
import type { CallPlan } from '../contracts/call-plan.js';
import { DEFAULT_MAX_CONCURRENCY } from '../contracts/defaults.js';
import type { ToolCall } from '../contracts/tool-call.js';
import type { ToolRegistry } from '../tools/registry.js';
import { AdmissionGate, DEFAULT_ADMISSION_GATES } from './admission-gate.js';
import type { ArtifactStore } from './artifact-store.js';
import { executeCall } from './execute-call.js';
import type { CallOutcome, ExecuteCallInput } from './execute-call.js';
import { hookMatches } from './hooks.js';
import type { PermissionRequestHookInput, PermissionRequestHookResult, SwitchyardHooks } from './hooks.js';
import { prepareCall } from './prepare-turn.js';

export interface ActivityDependencies {
  registry: ToolRegistry;
  /** Working directory of sessions that name none. Default: the worker's. */
  defaultCwd?: string;
  /** Group size for sessions that name none. Default `SWITCHYARD_MAX_TOOL_CONCURRENCY` or 10. */
  defaultMaxConcurrency?: number;
  /** Hooks given as functions. */
  hooks?: SwitchyardHooks;
  /** Whether the namespace has the `SwitchyardPendingApprovals` search attribute (the worker checks at start). */
  pendingApprovalsSearchAttribute?: boolean;
  /** Where full outputs go; without a store, over-budget outputs are truncated. */
  artifacts?: ArtifactStore;
  /** Admission gates by name, with their permits. Default `{ model: 4, network: 16 }`. */
  admissionGates?: Readonly<Record<string, number>>;
  /** Where hook failures and other worker-side problems are reported. */
  onWarning?: (message: string, details: Record<string, unknown>) => void;
}

export interface PrepareTurnInput {
  sessionId: string;
  cwd?: string;
  calls: ToolCall[];
  /** The session's allow rules (file tools may use paths outside cwd that these name explicitly). */
  allowRules?: string[];
}

export interface PreparedTurn {
  plans: CallPlan[];
  /** The session's effective working directory. */
  cwd: string;
  /** The worker's default group size, recorded in history so replay sees the same grouping. */
  defaultMaxConcurrency: number;
  /** Whether the workflow may upsert the `SwitchyardPendingApprovals` search attribute. */
  pendingApprovalsSearchAttribute: boolean;
}

/** Reads `SWITCHYARD_MAX_TOOL_CONCURRENCY`; a bad value is an error, not a silent default. */
export function maxConcurrencyFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SWITCHYARD_MAX_TOOL_CONCURRENCY;
  if (raw === undefined || raw === '') return DEFAULT_MAX_CONCURRENCY;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) {
    throw new Error(`SWITCHYARD_MAX_TOOL_CONCURRENCY must be a positive integer, got "${raw}"`);
  }
  return value;
}

/** The activities of a worker; dependencies come in here so tests can hand in their own tools. */
export function createActivities(dependencies: ActivityDependencies) {
  const defaultCwd = dependencies.defaultCwd ?? process.cwd();
  const defaultMaxConcurrency = dependencies.defaultMaxConcurrency ?? maxConcurrencyFromEnv();
  const gates = new Map(
    Object.entries(dependencies.admissionGates ?? DEFAULT_ADMISSION_GATES).map(([name, permits]) => [name, new AdmissionGate(name, permits)]),
  );
  const executeDependencies = {
    registry: dependencies.registry,
    gates,
    artifacts: dependencies.artifacts,
    ...(dependencies.hooks === undefined ? {} : { hooks: dependencies.hooks }),
    ...(dependencies.onWarning === undefined ? {} : { onWarning: dependencies.onWarning }),
  };
  const cwdOf = (cwd: string | undefined): string => (cwd === undefined ? defaultCwd : cwd.replace(/^~(?=$|\/)/, os.homedir()));
  return {
    /** Plans every call of a turn in one round trip: lookup, validation, resolution, flags, digest, deadline. */
    async prepareTurn(input: PrepareTurnInput): Promise<PreparedTurn> {
      const cwd = cwdOf(input.cwd);
      const context = { sessionId: input.sessionId, cwd, allowRules: input.allowRules ?? [] };
      const onHookError = (error: unknown, toolName: string): void =>
        dependencies.onWarning?.('PreToolUse hook failed; it counts as no decision', { toolName, error: String(error) });
      const plans = await Promise.all(
        input.calls.map((call) => prepareCall({ registry: dependencies.registry, call, context, onHookError, ...(dependencies.hooks === undefined ? {} : { hooks: dependencies.hooks }) })),
      );
      return { plans, cwd, defaultMaxConcurrency, pendingApprovalsSearchAttribute: dependencies.pendingApprovalsSearchAttribute ?? false };
    },
    /**
     * Runs the matching PermissionRequest hooks in order; the first decision wins. A hook that throws is reported
     * and counts as no decision, so the human's answer still decides.
     */
    async runPermissionRequestHooks(input: PermissionRequestHookInput): Promise<PermissionRequestHookResult | null> {
      for (const hook of dependencies.hooks?.permissionRequest ?? []) {
        if (!hookMatches(hook.matcher, input.toolName)) continue;
        try {
          const result = await hook.run(input);
          if (result?.behavior === 'allow' || result?.behavior === 'deny') return result;
        } catch (error) {
          dependencies.onWarning?.('PermissionRequest hook failed; it counts as no decision', { toolName: input.toolName, error: String(error) });
        }
      }
      return null;
    },
    /** Runs one allowed call. */
    async executeCall(request: ExecuteCallInput): Promise<CallOutcome> {
      return executeCall({ dependencies: executeDependencies, request });
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
