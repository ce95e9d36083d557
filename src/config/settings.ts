// Configuration resolved once, at the edge: one function (`settingsFromEnvironment`) turns the environment, the
// `temporal` CLI's flags and the files they name into one typed settings object, every documented variable checked
// against its schema (src/config/settings-schema.ts). Only entry points call it: each `switchyard` command, the worker
// factory (`createSwitchyardWorker`, for the options its caller leaves out), and library users who start a worker or a
// client themselves. Everything below them — tools, hooks, activities, the console, the dev server — takes what it
// needs from that object, passed down; none of it reads the environment (an ESLint rule keeps
// src/config/environment.ts out of it). A setting that cannot be used stops startup with the variable or the file named.
import { loadApproversFile } from '../approvals/approval-signature.js';
import type { PermissionRules } from '../contracts/policy.js';
import type { ToolSettings } from '../tools/tool-settings.js';
import { bashTimeoutsFromEnv, dataDirFromEnv, processEnvironment } from './environment.js';
import type { Environment, LogLevelName, WorkerRole } from './environment.js';
import { readOperatorPolicyFile, ruleCount } from './operator-policy-file.js';
import { checkVariables, variableSchemas } from './settings-schema.js';
import type { CheckedVariables, VariableName } from './settings-schema.js';
import { SettingsError } from './settings-error.js';
import { describeConnectionSecurity, loadTemporalConnectConfig } from './temporal-connection.js';
import type { TemporalConnectConfig, TemporalConnectionFlags } from './temporal-connection.js';
import { DEFAULT_MAX_CONCURRENCY, DEFAULT_TASK_QUEUE, LIMITS } from '../contracts/defaults.js';
import { DEFAULT_TOOL_SETTINGS } from '../tools/tool-settings.js';
import { LIMIT_ENV_VARIABLES } from '../tools/limits.js';
import type { LimitName } from '../tools/limits.js';
import { sandboxLimitsFromEnv } from '../tools/sandbox/sandbox-limits.js';
import os from 'node:os';
import path from 'node:path';

export type { Environment } from './environment.js';
// Helpers library users call explicitly, as the CLI does: each reads the environment it is given (default the process's).
export { dataDirFromEnv, temporalConnectConfigFromEnv } from './environment.js';

/** What a worker enforces beyond a session's own options. */
export interface WorkerSecuritySettings {
  /** `SWITCHYARD_APPROVERS_FILE`, checked at start: the file and how many approvers it names. */
  approvers?: { file: string; count: number };
  /** `SWITCHYARD_POLICY_FILE`, read at start: the file and its rules, a tier no session can loosen. */
  operatorPolicy?: { file: string; rules: PermissionRules };
  /** `SWITCHYARD_SANDBOX` as set, `auto` when unset. */
  sandboxMode: string;
}

/** The settings that come from variables alone (no file is read): checked and resolved synchronously. */
export interface EnvironmentSettings {
  /** The variables these settings were resolved from: child processes inherit what the environment policy allows. */
  environment: Environment;
  /** `SWITCHYARD_TASK_QUEUE`, else `switchyard`. */
  taskQueue: string;
  worker: {
    /** `SWITCHYARD_WORKER_ROLE`, else `all`. */
    role: WorkerRole;
    /** `SWITCHYARD_MAX_TOOL_CONCURRENCY` (or an alias), else 10. */
    defaultMaxConcurrency: number;
    /** `SWITCHYARD_LOCAL_READ_ONLY_CALLS`, else on. */
    localReadOnlyCalls: boolean;
    /** `SWITCHYARD_REQUIRE_SEARCH_ATTRIBUTE`, else on. */
    requireSearchAttribute: boolean;
    /** `SWITCHYARD_WORKFLOW_STACK_TRACES`, else off. */
    workflowStackTraces: boolean;
    /** `SWITCHYARD_USER_SETTINGS_DIR`, when set. */
    userSettingsDir?: string;
    /** `SWITCHYARD_TRUSTED_WORKSPACES`, absolute folders. */
    trustedWorkspaces: readonly string[];
    /** `SWITCHYARD_DATA_DIR`, else `$XDG_DATA_HOME/switchyard`, else `~/.local/share/switchyard`. */
    dataDir: string;
  };
  /** What the built-in tools take from the worker (src/tools/tool-settings.ts). */
  tools: ToolSettings;
  /** `SWITCHYARD_LOG_LEVEL` (else `info`) and `SWITCHYARD_LOG_FORMAT` (else pretty on a terminal, JSON otherwise). */
  logs: { level: LogLevelName; format?: 'json' | 'pretty' };
  /** `SWITCHYARD_OTEL_CONSOLE`: a span per tool call printed to stdout. */
  consoleTracing: boolean;
  console: {
    /** `SWITCHYARD_CONSOLE_TOKEN` (a secret: never logged). */
    token?: string;
    identity?: string;
    usersFile?: string;
    userHeader?: string;
  };
  /** `SWITCHYARD_MCP_TOKEN` (a secret: never logged). */
  mcpToken?: string;
  devServer: {
    /** `TEMPORAL_CLI_PATH`. */
    temporalCliPath?: string;
    /** `SWITCHYARD_CACHE_DIR`, else `$XDG_CACHE_HOME/switchyard`, else `~/.cache/switchyard`. */
    cacheDir: string;
  };
}

/** Everything a Switchyard process resolves at start: where Temporal is, the task queue, the security settings. */
export interface SwitchyardSettings extends EnvironmentSettings, WorkerSecuritySettings {
  temporal: TemporalConnectConfig;
}

/** The documented variables the tools' settings come from. */
const TOOL_VARIABLES: readonly VariableName[] = [
  ...(Object.values(LIMIT_ENV_VARIABLES) as VariableName[]),
  'BASH_DEFAULT_TIMEOUT_MS',
  'BASH_MAX_TIMEOUT_MS',
  'SWITCHYARD_BASH_MAX_SPOOL_BYTES',
  'SWITCHYARD_SESSION_DISK_BYTES',
  'SWITCHYARD_SANDBOX',
  'SWITCHYARD_SANDBOX_MEMORY_BYTES',
  'SWITCHYARD_SANDBOX_MAX_PROCESSES',
  'SWITCHYARD_SANDBOX_MAX_FILE_BYTES',
  'SWITCHYARD_SANDBOX_CPU_SECONDS',
  'SWITCHYARD_ENV_INCLUDE',
  'SWITCHYARD_ENV_EXCLUDE',
];

/** The values of `names` in `env`, checked; a bad one throws a `SettingsError` naming each variable that is wrong. */
function checked(env: Environment, names?: readonly VariableName[]): CheckedVariables {
  const result = checkVariables(env, names);
  if (result.ok) return result.values;
  throw new SettingsError(result.problems.map((problem) => problem.message).join('; '));
}

function toolSettingsOf(env: Environment, values: CheckedVariables): ToolSettings {
  const limits = Object.fromEntries(
    (Object.keys(LIMITS) as LimitName[]).map((name) => [
      name,
      (values[LIMIT_ENV_VARIABLES[name] as VariableName] as number | undefined) ?? LIMITS[name],
    ]),
  ) as Record<LimitName, number>;
  return {
    environment: env,
    limits,
    bashTimeouts: bashTimeoutsFromEnv(env),
    bashSpoolBytes: values.SWITCHYARD_BASH_MAX_SPOOL_BYTES ?? DEFAULT_TOOL_SETTINGS.bashSpoolBytes,
    sessionDiskBytes: values.SWITCHYARD_SESSION_DISK_BYTES ?? DEFAULT_TOOL_SETTINGS.sessionDiskBytes,
    sandbox: {
      workerMode: values.SWITCHYARD_SANDBOX,
      bwrap: env.SWITCHYARD_BWRAP === '' ? undefined : env.SWITCHYARD_BWRAP,
      limits: sandboxLimitsFromEnv(env),
    },
    environmentPolicy: { include: values.SWITCHYARD_ENV_INCLUDE ?? [], exclude: values.SWITCHYARD_ENV_EXCLUDE ?? [] },
  };
}

/**
 * The tools' settings from `env`: their variables checked (a bad one throws a `SettingsError` naming it), the rest
 * defaults. `SWITCHYARD_BWRAP` is checked where it is used (an unusable one fails the call as `sandbox_unavailable`),
 * and by `environmentSettings` at start.
 */
export function toolSettingsFromEnvironment(env: Environment): ToolSettings {
  return toolSettingsOf(env, checked(env, TOOL_VARIABLES));
}

/** `~/` at the start of a path is the home directory. */
const expandHome = (value: string): string => value.replace(/^~(?=$|\/)/, os.homedir());

/**
 * The settings that come from variables alone, every documented variable checked (`variableSchemas`): a bad value
 * throws a `SettingsError` naming each variable that is wrong. Synchronous: entry points that read no file call it
 * (`createLogger`, `startDevServer`, the console's and the MCP gateway's defaults).
 */
export function environmentSettings(env: Environment = processEnvironment()): EnvironmentSettings {
  const values = checked(env);
  const cacheXdg = env.XDG_CACHE_HOME === '' ? undefined : env.XDG_CACHE_HOME;
  const cacheDir =
    values.SWITCHYARD_CACHE_DIR !== undefined
      ? path.resolve(values.SWITCHYARD_CACHE_DIR)
      : path.join(cacheXdg !== undefined ? path.resolve(cacheXdg) : path.join(os.homedir(), '.cache'), 'switchyard');
  return {
    environment: env,
    taskQueue: values.SWITCHYARD_TASK_QUEUE ?? DEFAULT_TASK_QUEUE,
    worker: {
      role: values.SWITCHYARD_WORKER_ROLE ?? 'all',
      defaultMaxConcurrency:
        values.SWITCHYARD_MAX_TOOL_CONCURRENCY ??
        values.CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY ??
        values.ZCODE_MAX_TOOL_CONCURRENCY ??
        DEFAULT_MAX_CONCURRENCY,
      localReadOnlyCalls: values.SWITCHYARD_LOCAL_READ_ONLY_CALLS ?? true,
      requireSearchAttribute: values.SWITCHYARD_REQUIRE_SEARCH_ATTRIBUTE ?? true,
      workflowStackTraces: values.SWITCHYARD_WORKFLOW_STACK_TRACES ?? false,
      ...(values.SWITCHYARD_USER_SETTINGS_DIR === undefined
        ? {}
        : { userSettingsDir: values.SWITCHYARD_USER_SETTINGS_DIR }),
      trustedWorkspaces: values.SWITCHYARD_TRUSTED_WORKSPACES ?? [],
      dataDir: dataDirFromEnv(env),
    },
    tools: toolSettingsOf(env, values),
    logs: {
      level: values.SWITCHYARD_LOG_LEVEL ?? 'info',
      ...(values.SWITCHYARD_LOG_FORMAT === undefined ? {} : { format: values.SWITCHYARD_LOG_FORMAT }),
    },
    consoleTracing: values.SWITCHYARD_OTEL_CONSOLE ?? false,
    console: {
      ...(values.SWITCHYARD_CONSOLE_TOKEN === undefined ? {} : { token: values.SWITCHYARD_CONSOLE_TOKEN }),
      ...(values.SWITCHYARD_CONSOLE_IDENTITY === undefined ? {} : { identity: values.SWITCHYARD_CONSOLE_IDENTITY }),
      ...(values.SWITCHYARD_CONSOLE_USERS_FILE === undefined
        ? {}
        : { usersFile: values.SWITCHYARD_CONSOLE_USERS_FILE }),
      ...(values.SWITCHYARD_CONSOLE_USER_HEADER === undefined
        ? {}
        : { userHeader: values.SWITCHYARD_CONSOLE_USER_HEADER }),
    },
    ...(values.SWITCHYARD_MCP_TOKEN === undefined ? {} : { mcpToken: values.SWITCHYARD_MCP_TOKEN }),
    devServer: {
      ...(values.TEMPORAL_CLI_PATH === undefined ? {} : { temporalCliPath: expandHome(values.TEMPORAL_CLI_PATH) }),
      cacheDir,
    },
  };
}

/**
 * The worker's security settings from `env`: the approvers file checked, the policy file read. Throws a
 * `SettingsError` naming the variable, the file and the reason when a file cannot be read or parsed.
 */
export async function workerSecuritySettingsFromEnvironment(env: Environment): Promise<WorkerSecuritySettings> {
  const approversFile = env.SWITCHYARD_APPROVERS_FILE === '' ? undefined : env.SWITCHYARD_APPROVERS_FILE;
  let approvers: WorkerSecuritySettings['approvers'];
  if (approversFile !== undefined) {
    try {
      approvers = {
        file: approversFile,
        count: Object.keys((await loadApproversFile(approversFile)).approvers).length,
      };
    } catch (error) {
      throw new SettingsError(`SWITCHYARD_APPROVERS_FILE: ${(error as Error).message}`, { cause: error });
    }
  }
  const policyFile = env.SWITCHYARD_POLICY_FILE === '' ? undefined : env.SWITCHYARD_POLICY_FILE;
  const operatorPolicy =
    policyFile === undefined ? undefined : { file: policyFile, rules: await readOperatorPolicyFile(policyFile) };
  return {
    ...(approvers === undefined ? {} : { approvers }),
    ...(operatorPolicy === undefined ? {} : { operatorPolicy }),
    sandboxMode:
      env.SWITCHYARD_SANDBOX === undefined || env.SWITCHYARD_SANDBOX === '' ? 'auto' : env.SWITCHYARD_SANDBOX,
  };
}

/**
 * All of a process's settings, from `env` (default the process's environment) and the `temporal` CLI's connection
 * `flags` (which win): the connection as the `temporal` CLI resolves it, the task queue, the worker's security
 * settings with its files read, and every other documented variable checked and resolved. Library users who start a
 * worker or a client themselves call it once and pass the parts on, exactly as `switchyard worker` does:
 *
 *   const settings = await settingsFromEnvironment();
 *   const connection = await NativeConnection.connect(settings.temporal.connectionOptions);
 *   const worker = await createSwitchyardWorker({ connection, settings });
 *
 * Throws a `SettingsError` (or a `TemporalConfigError`) naming the variable or the file when something cannot be used.
 */
export async function settingsFromEnvironment(
  env: Environment = processEnvironment(),
  flags: TemporalConnectionFlags = {},
): Promise<SwitchyardSettings> {
  // Every variable checked first (a named file must be readable), then the files read by the readers of their formats.
  const resolved = environmentSettings(env);
  const temporal = loadTemporalConnectConfig(flags, env);
  const security = await workerSecuritySettingsFromEnvironment(env);
  return { ...resolved, temporal, ...security };
}

/** The documented variables, as the schema names them (docs/CONFIGURATION.md lists the same). */
export const documentedVariables: readonly string[] = Object.keys(variableSchemas);

/** The start-up line naming the security settings in force — never a secret: files, counts, on or off. */
export function securitySettingsLine(
  settings: WorkerSecuritySettings & {
    temporal?: TemporalConnectConfig;
    sandboxBinary?: string;
    extra?: Record<string, string | number | boolean | null>;
  },
): {
  fields: Record<string, unknown>;
  message: string;
} {
  const fields = {
    sandbox: settings.sandboxMode,
    ...(settings.sandboxBinary === undefined ? {} : { sandboxBinary: settings.sandboxBinary }),
    approversFile: settings.approvers?.file ?? null,
    approvers: settings.approvers?.count ?? 0,
    policyFile: settings.operatorPolicy?.file ?? null,
    policyRules: settings.operatorPolicy === undefined ? 0 : ruleCount(settings.operatorPolicy.rules),
    ...(settings.temporal === undefined
      ? {}
      : { temporalTls: settings.temporal.security.tls, temporalApiKey: settings.temporal.security.apiKey }),
    ...settings.extra,
  };
  const parts = [
    `sandbox ${fields.sandbox}${settings.sandboxBinary === undefined ? '' : ` (${settings.sandboxBinary})`}`,
    settings.approvers === undefined
      ? 'approvers file none'
      : `approvers file ${settings.approvers.file} (${settings.approvers.count} approvers)`,
    settings.operatorPolicy === undefined
      ? 'policy file none'
      : `policy file ${settings.operatorPolicy.file} (${fields.policyRules} rules)`,
    ...(settings.temporal === undefined ? [] : [`Temporal ${describeConnectionSecurity(settings.temporal.security)}`]),
    ...Object.entries(settings.extra ?? {}).map(([name, value]) => `${name} ${String(value)}`),
  ];
  return { fields, message: `security settings: ${parts.join('; ')}` };
}

/**
 * The start-up line of an entry point that runs no tools (the console, the MCP gateway): how it reaches Temporal and
 * what guards its own door — never a secret (a token is named by where it came from, never shown).
 */
export function clientSecurityLine(
  temporal: TemporalConnectConfig,
  door: Record<string, string | number | boolean | null>,
): { fields: Record<string, unknown>; message: string } {
  const fields = { temporalTls: temporal.security.tls, temporalApiKey: temporal.security.apiKey, ...door };
  const parts = [
    `Temporal ${describeConnectionSecurity(temporal.security)}`,
    ...Object.entries(door).map(([name, value]) => `${name} ${value === null ? 'none' : String(value)}`),
  ];
  return { fields, message: `security settings: ${parts.join('; ')}` };
}
