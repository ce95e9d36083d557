// The one module that reads Switchyard's environment variables, imported only at the edge (an ESLint rule keeps it
// out of every file but src/cli, src/config and the worker factory). Entry points resolve the settings once through
// `settingsFromEnvironment` (src/config/settings.ts), which checks every variable against its schema
// (src/config/settings-schema.ts), and pass them down. An empty value means the same as an unset one, for every
// variable. `configurationVariables` is the catalogue docs/CONFIGURATION.md's table is checked against
// (test/unit/configuration.test.ts, test/unit/settings-validation.test.ts).
import os from 'node:os';
import path from 'node:path';
import {
  BASH_LIMITS,
  BASH_TIMEOUTS,
  DEFAULT_MAX_CONCURRENCY,
  DEFAULT_TASK_QUEUE,
  LIMITS,
} from '../contracts/defaults.js';
import { DEFAULT_TEMPORAL_ADDRESS, loadTemporalConnectConfig } from './temporal-connection.js';
import type { TemporalConnectConfig, TemporalConnectionFlags } from './temporal-connection.js';
import { LIMIT_ENV_VARIABLES } from '../tools/limits.js';
import { DEFAULT_SESSION_DISK_BYTES } from '../tools/tool-settings.js';
import type { LimitName } from '../tools/tool-settings.js';

/** A set of environment variables: the process's own unless a caller passes another (tests, child processes). */
export type Environment = Readonly<Record<string, string | undefined>>;

/** The process environment, for the entry points that default to it. */
export function processEnvironment(): NodeJS.ProcessEnv {
  return process.env;
}

/** A variable's value; empty counts as unset. */
export function envValue(name: string, env: Environment = process.env): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** One documented variable: its name, and the names it also answers to (first set wins). */
export interface ConfigurationVariable {
  name: string;
  aliases?: readonly string[];
}

/** Every variable Switchyard reads, as docs/CONFIGURATION.md's table lists them. */
export const configurationVariables: readonly ConfigurationVariable[] = [
  { name: 'TEMPORAL_ADDRESS' },
  { name: 'TEMPORAL_NAMESPACE' },
  { name: 'TEMPORAL_API_KEY' },
  { name: 'TEMPORAL_TLS_CLIENT_CERT_PATH' },
  { name: 'TEMPORAL_TLS_CLIENT_KEY_PATH' },
  { name: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH' },
  { name: 'TEMPORAL_TLS_SERVER_NAME' },
  { name: 'TEMPORAL_TLS' },
  { name: 'TEMPORAL_PROFILE' },
  { name: 'TEMPORAL_CONFIG_FILE' },
  { name: 'SWITCHYARD_TASK_QUEUE' },
  {
    name: 'SWITCHYARD_MAX_TOOL_CONCURRENCY',
    aliases: ['CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY', 'ZCODE_MAX_TOOL_CONCURRENCY'],
  },
  { name: 'SWITCHYARD_LOG_LEVEL' },
  { name: 'SWITCHYARD_LOG_FORMAT' },
  { name: 'TEMPORAL_CLI_PATH' },
  { name: 'SWITCHYARD_DATA_DIR' },
  { name: 'BASH_DEFAULT_TIMEOUT_MS' },
  { name: 'BASH_MAX_TIMEOUT_MS' },
  { name: 'SWITCHYARD_OTEL_CONSOLE' },
  { name: 'SWITCHYARD_CACHE_DIR' },
  { name: 'SWITCHYARD_TRUSTED_WORKSPACES' },
  { name: 'SWITCHYARD_ENV_EXCLUDE' },
  { name: 'SWITCHYARD_ENV_INCLUDE' },
  { name: 'SWITCHYARD_BASH_MAX_SPOOL_BYTES' },
  { name: 'SWITCHYARD_READ_MAX_FILE_BYTES' },
  { name: 'SWITCHYARD_IMAGE_MAX_BYTES' },
  { name: 'SWITCHYARD_GREP_MAX_LINE_CHARS' },
  { name: 'SWITCHYARD_GREP_LINE_WORK' },
  { name: 'SWITCHYARD_GREP_MAX_PATTERN_CHARS' },
  { name: 'SWITCHYARD_TODO_MAX_ITEMS' },
  { name: 'SWITCHYARD_TODO_MAX_CHARS' },
  { name: 'SWITCHYARD_LOCAL_READ_ONLY_CALLS' },
  { name: 'SWITCHYARD_REQUIRE_SEARCH_ATTRIBUTE' },
  { name: 'SWITCHYARD_WORKFLOW_STACK_TRACES' },
  { name: 'SWITCHYARD_WORKER_ROLE' },
  { name: 'SWITCHYARD_USER_SETTINGS_DIR' },
  { name: 'SWITCHYARD_CONSOLE_TOKEN' },
  { name: 'SWITCHYARD_CONSOLE_IDENTITY' },
  { name: 'SWITCHYARD_MCP_TOKEN' },
  { name: 'SWITCHYARD_APPROVERS_FILE' },
  { name: 'SWITCHYARD_CONSOLE_USERS_FILE' },
  { name: 'SWITCHYARD_CONSOLE_USER_HEADER' },
  { name: 'SWITCHYARD_SANDBOX' },
  { name: 'SWITCHYARD_POLICY_FILE' },
  { name: 'SWITCHYARD_BWRAP' },
  { name: 'SWITCHYARD_SANDBOX_MEMORY_BYTES' },
  { name: 'SWITCHYARD_SANDBOX_MAX_PROCESSES' },
  { name: 'SWITCHYARD_SANDBOX_MAX_FILE_BYTES' },
  { name: 'SWITCHYARD_SANDBOX_CPU_SECONDS' },
  { name: 'SWITCHYARD_SESSION_DISK_BYTES' },
];

// ---- Connection: address, namespace and task queue, the same for the client, the worker and the CLI ----

export const DEFAULT_ADDRESS = DEFAULT_TEMPORAL_ADDRESS;

/**
 * Where a process connects, as the `temporal` CLI resolves it (src/config/temporal-connection.ts): `flags` over
 * `TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, `TEMPORAL_API_KEY`, `TEMPORAL_TLS_*` over the `temporal.toml` profile
 * (`TEMPORAL_PROFILE`, `TEMPORAL_CONFIG_FILE`). Throws, naming the file, when a named file cannot be used.
 */
export function temporalConnectConfigFromEnv(
  flags: TemporalConnectionFlags = {},
  env: Environment = process.env,
): TemporalConnectConfig {
  return loadTemporalConnectConfig(flags, env);
}

/** Where a client or worker connects, and on which namespace and task queue. */
export interface ConnectionSettings {
  address: string;
  namespace: string;
  taskQueue: string;
  /** Where `address` came from, as a person should read it. */
  addressSource: string;
}

/**
 * The connection settings: each option given wins, else its variable (`TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`,
 * `SWITCHYARD_TASK_QUEUE`), else the `temporal.toml` profile's, else the default (`localhost:7233`, `default`,
 * `switchyard`).
 */
export function resolveConnection(
  options: { address?: string | undefined; namespace?: string | undefined; taskQueue?: string | undefined } = {},
  env: Environment = process.env,
): ConnectionSettings {
  const temporal = loadTemporalConnectConfig({ address: options.address, namespace: options.namespace }, env);
  return {
    address: temporal.connectionOptions.address,
    namespace: temporal.namespace,
    taskQueue: options.taskQueue ?? envValue('SWITCHYARD_TASK_QUEUE', env) ?? DEFAULT_TASK_QUEUE,
    addressSource: options.address !== undefined ? 'the address given' : temporal.addressSource,
  };
}

export function taskQueueFromEnv(env: Environment = process.env): string {
  return envValue('SWITCHYARD_TASK_QUEUE', env) ?? DEFAULT_TASK_QUEUE;
}

export function namespaceFromEnv(env: Environment = process.env): string {
  return resolveConnection({}, env).namespace;
}

// ---- Worker ----

export const workerRoles = ['all', 'workflows', 'tools'] as const;
export type WorkerRole = (typeof workerRoles)[number];

export function workerRoleFromEnv(env: Environment = process.env): WorkerRole {
  const value = envValue('SWITCHYARD_WORKER_ROLE', env);
  if (value === undefined) return 'all';
  if (!(workerRoles as readonly string[]).includes(value))
    throw new Error(`SWITCHYARD_WORKER_ROLE must be one of ${workerRoles.join(', ')}; got "${value}"`);
  return value as WorkerRole;
}

/**
 * A worker switch that is on by default (`SWITCHYARD_LOCAL_READ_ONLY_CALLS`, `SWITCHYARD_REQUIRE_SEARCH_ATTRIBUTE`):
 * `false`, `0`, `off` or `no` (any case) turn it off; anything else, or unset, keeps it on.
 */
export function switchFromEnv(name: string, env: Environment = process.env): boolean {
  const value = envValue(name, env)?.trim().toLowerCase();
  return !(value === 'false' || value === '0' || value === 'off' || value === 'no');
}

/** An opt-in switch: true only when `name` is `1`, `true`, `on` or `yes` (any case); unset or anything else is false. */
export function optInFromEnv(name: string, env: Environment = process.env): boolean {
  const value = envValue(name, env)?.trim().toLowerCase();
  return value === '1' || value === 'true' || value === 'on' || value === 'yes';
}

/** `SWITCHYARD_DATA_DIR`, else `$XDG_DATA_HOME/switchyard`, else `~/.local/share/switchyard`. */
export function dataDirFromEnv(env: Environment = process.env): string {
  const dataDir = envValue('SWITCHYARD_DATA_DIR', env);
  if (dataDir !== undefined) return path.resolve(dataDir);
  const xdg = envValue('XDG_DATA_HOME', env);
  return path.join(xdg !== undefined ? path.resolve(xdg) : path.join(os.homedir(), '.local', 'share'), 'switchyard');
}

/** `SWITCHYARD_USER_SETTINGS_DIR`: where the worker reads user-level hook settings (`settings.json`) instead of `~/.switchyard`. */
export function userSettingsDirFromEnv(env: Environment = process.env): string | undefined {
  return envValue('SWITCHYARD_USER_SETTINGS_DIR', env);
}

/**
 * Environment variables that set the default largest concurrent group, first set wins: Switchyard's own, then the
 * names two other agent CLIs use (Claude Code's `CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY`, ZCode's
 * `ZCODE_MAX_TOOL_CONCURRENCY`), so a worker configured for either behaves the same here.
 */
export const MAX_CONCURRENCY_ENV_VARIABLES = [
  'SWITCHYARD_MAX_TOOL_CONCURRENCY',
  'CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY',
  'ZCODE_MAX_TOOL_CONCURRENCY',
] as const;

/** Reads `SWITCHYARD_MAX_TOOL_CONCURRENCY` (or an alias); a bad value is an error, not a silent default. */
export function maxConcurrencyFromEnv(env: Environment = process.env): number {
  for (const variable of MAX_CONCURRENCY_ENV_VARIABLES) {
    const raw = envValue(variable, env);
    if (raw === undefined) continue;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1) throw new Error(`${variable} must be a positive integer, got "${raw}"`);
    return value;
  }
  return DEFAULT_MAX_CONCURRENCY;
}

/** The worker's `SWITCHYARD_TRUSTED_WORKSPACES`: a `:`-separated path list (`~/` is the home directory). */
export function trustedWorkspacesFromEnv(env: Environment = process.env): string[] {
  return (envValue('SWITCHYARD_TRUSTED_WORKSPACES', env) ?? '')
    .split(':')
    .filter((entry) => entry !== '')
    .map((entry) => entry.replace(/^~(?=$|\/)/, os.homedir()));
}

// ---- Tools ----

export { LIMIT_ENV_VARIABLES };
export type { LimitName };

/** A limit: its variable when set, else the default in `LIMITS`; a bad value is an error naming the variable. */
export function limitFromEnv(name: LimitName, env: Environment = process.env): number {
  const variable = LIMIT_ENV_VARIABLES[name];
  const raw = envValue(variable, env);
  if (raw === undefined) return LIMITS[name];
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0)
    throw new Error(`${variable} must be a positive integer, got "${raw}"`);
  return value;
}

/** Bash's default and largest deadline: `BASH_DEFAULT_TIMEOUT_MS`, `BASH_MAX_TIMEOUT_MS`, else `BASH_TIMEOUTS`. */
export function bashTimeoutsFromEnv(env: Environment = process.env): { defaultMs: number; maxMs: number } {
  const ms = (name: string, fallback: number): number => {
    const raw = envValue(name, env);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value <= 0)
      throw new Error(`${name} must be a positive number of milliseconds, got "${raw}"`);
    return value;
  };
  return {
    defaultMs: ms('BASH_DEFAULT_TIMEOUT_MS', BASH_TIMEOUTS.defaultMs),
    maxMs: ms('BASH_MAX_TIMEOUT_MS', BASH_TIMEOUTS.maxMs),
  };
}

/** `SWITCHYARD_BASH_MAX_SPOOL_BYTES`, else `BASH_LIMITS.spoolBytes`: the output one Bash call or task may write. */
export function bashSpoolBytesFromEnv(env: Environment = process.env): number {
  const raw = envValue('SWITCHYARD_BASH_MAX_SPOOL_BYTES', env);
  if (raw === undefined) return BASH_LIMITS.spoolBytes;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0)
    throw new Error(`SWITCHYARD_BASH_MAX_SPOOL_BYTES must be a positive integer number of bytes, got "${raw}"`);
  return value;
}

export { DEFAULT_SESSION_DISK_BYTES };

/** `SWITCHYARD_SESSION_DISK_BYTES`, else 1 GiB; `0` turns the quota off. */
export function sessionDiskBytesFromEnv(env: Environment = process.env): number {
  const raw = envValue('SWITCHYARD_SESSION_DISK_BYTES', env);
  if (raw === undefined) return DEFAULT_SESSION_DISK_BYTES;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0)
    throw new Error(
      `SWITCHYARD_SESSION_DISK_BYTES must be a non-negative integer number of bytes (0: no quota), got "${raw}"`,
    );
  return value;
}

/** Comma-separated name globs of `SWITCHYARD_ENV_INCLUDE` and `SWITCHYARD_ENV_EXCLUDE`. */
export function environmentGlobsFromEnv(env: Environment = process.env): { include: string[]; exclude: string[] } {
  const globs = (name: string): string[] =>
    (envValue(name, env) ?? '')
      .split(',')
      .map((glob) => glob.trim())
      .filter((glob) => glob !== '');
  return { include: globs('SWITCHYARD_ENV_INCLUDE'), exclude: globs('SWITCHYARD_ENV_EXCLUDE') };
}

// ---- CLI, console, logs, the dev server's binary ----

export const logLevels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevelName = (typeof logLevels)[number];

/** `SWITCHYARD_LOG_LEVEL` (default `info`) and `SWITCHYARD_LOG_FORMAT` (default pretty on a terminal, else JSON). */
export function logSettingsFromEnv(
  env: Environment = process.env,
  isTerminal = process.stdout.isTTY === true,
): { level: LogLevelName; format: 'json' | 'pretty' } {
  const level = (envValue('SWITCHYARD_LOG_LEVEL', env) ?? 'info').toLowerCase();
  if (!(logLevels as readonly string[]).includes(level))
    throw new Error(`SWITCHYARD_LOG_LEVEL must be one of ${logLevels.join(', ')}; got "${level}"`);
  const format = envValue('SWITCHYARD_LOG_FORMAT', env) ?? (isTerminal ? 'pretty' : 'json');
  if (format !== 'json' && format !== 'pretty')
    throw new Error(`SWITCHYARD_LOG_FORMAT must be "json" or "pretty"; got "${format}"`);
  return { level: level as LogLevelName, format };
}

/** `SWITCHYARD_OTEL_CONSOLE=1`: print a span per tool call. */
export function consoleTracingFromEnv(env: Environment = process.env): boolean {
  return envValue('SWITCHYARD_OTEL_CONSOLE', env) === '1';
}

/** `SWITCHYARD_CONSOLE_TOKEN`: the approval console's login token (default a random one per start). */
export function consoleTokenFromEnv(env: Environment = process.env): string | undefined {
  return envValue('SWITCHYARD_CONSOLE_TOKEN', env);
}

/** `SWITCHYARD_CONSOLE_IDENTITY`: who the console decides as. */
export function consoleIdentityFromEnv(env: Environment = process.env): string | undefined {
  return envValue('SWITCHYARD_CONSOLE_IDENTITY', env);
}

/** `SWITCHYARD_MCP_TOKEN`: the bearer token of `switchyard mcp --http` (default a random one per start). */
export function mcpTokenFromEnv(env: Environment = process.env): string | undefined {
  return envValue('SWITCHYARD_MCP_TOKEN', env);
}

/** `SWITCHYARD_CONSOLE_USERS_FILE`: the console's per-person logins (docs/APPROVALS.md). */
export function consoleUsersFileFromEnv(env: Environment = process.env): string | undefined {
  return envValue('SWITCHYARD_CONSOLE_USERS_FILE', env);
}

/** `SWITCHYARD_CONSOLE_USER_HEADER`: the trusted reverse-proxy header that names the console's user. */
export function consoleUserHeaderFromEnv(env: Environment = process.env): string | undefined {
  return envValue('SWITCHYARD_CONSOLE_USER_HEADER', env);
}

/** `SWITCHYARD_APPROVERS_FILE`: the worker's approvers (names → Ed25519 public keys and groups). */
export function approversFileFromEnv(env: Environment = process.env): string | undefined {
  return envValue('SWITCHYARD_APPROVERS_FILE', env);
}

/** `SWITCHYARD_POLICY_FILE`: the operator's rules, a tier no session can loosen. */
export function policyFileFromEnv(env: Environment = process.env): string | undefined {
  return envValue('SWITCHYARD_POLICY_FILE', env);
}

/** The OS user's name from `USER`, for who decided when nothing else says. */
export function userNameFromEnv(env: Environment = process.env): string | undefined {
  return envValue('USER', env);
}

/** `~/.cache/switchyard` (or `$XDG_CACHE_HOME/switchyard`, or `SWITCHYARD_CACHE_DIR`): outside any checkout. */
export function cacheDirFromEnv(env: Environment = process.env): string {
  const cacheDir = envValue('SWITCHYARD_CACHE_DIR', env);
  if (cacheDir !== undefined) return path.resolve(cacheDir);
  const xdg = envValue('XDG_CACHE_HOME', env);
  return path.join(xdg !== undefined ? path.resolve(xdg) : path.join(os.homedir(), '.cache'), 'switchyard');
}

/** `TEMPORAL_CLI_PATH`: an existing `temporal` binary to use. */
export function temporalCliPathFromEnv(env: Environment = process.env): string | undefined {
  return envValue('TEMPORAL_CLI_PATH', env);
}
