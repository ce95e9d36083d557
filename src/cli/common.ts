import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { switchyardDataConverter } from '../config/data-converter.js';
import { envValue, processEnvironment, temporalConnectConfigFromEnv } from '../config/environment.js';
import type { Environment } from '../config/environment.js';
import { describeConnectionSecurity } from '../config/temporal-connection.js';
import type { TemporalConnectConfig, TemporalConnectionFlags } from '../config/temporal-connection.js';
import { resolveTaskQueue } from '../config/project-file.js';
import { diagnoseTlsFailure, isPermissionDenied, permissionDeniedMessage } from './connection-diagnosis.js';
import { SwitchyardClient } from '../client/switchyard-client.js';

/**
 * How to run this CLI again: in a clone (its sources beside it, whether this runs them or the built dist/)
 * `npx switchyard` is the clone's own bin; anywhere else it would fetch an unrelated npm package of that name, so the
 * package's own name.
 */
export const npxCommand = existsSync(new URL('../../src/cli/main.ts', import.meta.url))
  ? 'npx switchyard'
  : 'npx temporal-switchyard';

/**
 * What a `switchyard` command's exit code says. Documented in docs/CLI.md, "Exit codes"; scripts may rely on it.
 */
export const ExitCode = {
  /** Done, and every call of a turn succeeded. */
  ok: 0,
  /** The command failed (the server refused it, a session failed, an approval was ignored, …). */
  failed: 1,
  /** Bad arguments: nothing was done. */
  usage: 2,
  /** No Temporal server answered at the address. */
  unreachable: 3,
  /** A turn ran, but at least one call did not succeed (error, denied, cancelled). */
  callsFailed: 4,
  /** The session (or the approval request) does not exist. */
  notFound: 5,
  /** Stopped by Ctrl-C (SIGINT); SIGTERM gives 143. */
  interrupted: 130,
} as const;

/** Bad arguments: printed with a pointer to the command's help, exit code 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
  }
}

/** A failure whose message is already a sentence for a person, with its own exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** The parsed values of `O`, plus `--help` and `--json`. */
export type CommandValues<O extends Options> = {
  [K in keyof O]?: O[K] extends { type: 'boolean' }
    ? O[K] extends { multiple: true }
      ? boolean[]
      : boolean
    : O[K] extends { multiple: true }
      ? string[]
      : string;
} & { help?: boolean; json?: boolean };

/**
 * The `temporal` CLI's connection flags, which every command takes (docs/CONFIGURATION.md, "An existing Temporal cluster"); each
 * wins over its `TEMPORAL_*` variable and the `temporal.toml` profile.
 */
export const CONNECTION_OPTIONS = {
  address: { type: 'string' },
  namespace: { type: 'string' },
  'api-key': { type: 'string' },
  'tls-cert-path': { type: 'string' },
  'tls-key-path': { type: 'string' },
  'tls-ca-path': { type: 'string' },
  'tls-server-name': { type: 'string' },
  profile: { type: 'string' },
  // Not a temporal CLI flag, but every command takes it too: the task queue of the sessions it works on.
  'task-queue': { type: 'string' },
} as const;

/** The connection flags of this run's command (one command per process), set by `parseCommand`. */
let commandConnectionFlags: TemporalConnectionFlags = {};

/** `--task-queue` of this run's command, set by `parseCommand`. */
let commandTaskQueue: string | undefined;

/** The connection flags given to this run's command. */
export function givenConnectionFlags(): TemporalConnectionFlags {
  return commandConnectionFlags;
}

/** The connection flags among a command's parsed values. */
export function connectionFlags(values: Record<string, unknown>): TemporalConnectionFlags {
  const text = (name: keyof typeof CONNECTION_OPTIONS): string | undefined =>
    typeof values[name] === 'string' ? values[name] : undefined;
  return {
    address: text('address'),
    namespace: text('namespace'),
    apiKey: text('api-key'),
    tlsCertPath: text('tls-cert-path'),
    tlsKeyPath: text('tls-key-path'),
    tlsCaPath: text('tls-ca-path'),
    tlsServerName: text('tls-server-name'),
    profile: text('profile'),
  };
}

/**
 * `parseArgs` with `--help`/`-h`, `--json` and the connection flags (`CONNECTION_OPTIONS`) on every command; unknown
 * options and missing values are usage errors naming the command. Returns `undefined` after printing the help when
 * `--help` was given (anywhere in the args).
 */
export function parseCommand<const O extends Options>(
  command: string,
  args: string[],
  options: O,
  help: string,
  config: { positionals?: boolean } = {},
): { values: CommandValues<O>; positionals: string[] } | undefined {
  // --help wins over any other mistake: `switchyard dev --bogus --help` prints dev's help.
  if (args.some((arg) => arg === '--help' || arg === '-h')) {
    process.stdout.write(help);
    return undefined;
  }
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({
      args,
      options: { ...CONNECTION_OPTIONS, ...options, help: { type: 'boolean', short: 'h' }, json: { type: 'boolean' } },
      allowPositionals: config.positionals === true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError((error as Error).message, command);
  }
  commandConnectionFlags = connectionFlags(parsed.values);
  commandTaskQueue = typeof parsed.values['task-queue'] === 'string' ? parsed.values['task-queue'] : undefined;
  const values = Object.fromEntries(
    Object.entries(parsed.values).filter(([name]) => !(name in CONNECTION_OPTIONS) || name in options),
  );
  return { values, positionals: parsed.positionals } as never;
}

/**
 * Where this command connects: its connection flags over the environment and the `temporal.toml` profile. A file
 * that cannot be used (TLS, config) is a usage error naming it: nothing connects.
 */
export function temporalConnection(
  flags: TemporalConnectionFlags = commandConnectionFlags,
  env: Environment = processEnvironment(),
): TemporalConnectConfig {
  try {
    return temporalConnectConfigFromEnv(flags, env);
  } catch (error) {
    throw new CliError((error as Error).message, ExitCode.usage);
  }
}

/**
 * The task queue this command works on: `--task-queue`, else `taskQueue` of `switchyard.json` in the current folder,
 * else `SWITCHYARD_TASK_QUEUE`, else `switchyard` (src/config/project-file.ts). A `switchyard.json` that cannot be read
 * or holds a bad value is a usage error naming the file: nothing connects.
 */
export function commandTaskQueueOf(env: Environment = processEnvironment()): { taskQueue: string; source: string } {
  try {
    return resolveTaskQueue({
      flag: commandTaskQueue,
      folder: process.cwd(),
      fromEnvironment: envValue('SWITCHYARD_TASK_QUEUE', env),
    });
  } catch (error) {
    throw new CliError((error as Error).message, ExitCode.usage);
  }
}

/** Where the CLI's client connects, as a person should read it. */
export function serverAddress(env: Environment = processEnvironment()): {
  address: string;
  namespace: string;
  taskQueue: string;
  source: string;
} {
  const { connectionOptions, namespace, addressSource } = temporalConnection(commandConnectionFlags, env);
  const { taskQueue } = commandTaskQueueOf(env);
  return { address: connectionOptions.address, namespace, taskQueue, source: addressSource };
}

/** `Temporal: host:port, namespace ns (TLS on, API key off)`: the line a long-running command prints at start. */
export function connectionLine(temporal: TemporalConnectConfig): string {
  return `Temporal: ${temporal.connectionOptions.address} (${temporal.addressSource}), namespace ${temporal.namespace}; ${describeConnectionSecurity(temporal.security)}`;
}

/** One readable line for a server nobody answers at, saying where the CLI looked and what to run. */
export function unreachableMessage(address: string, source: string): string {
  return (
    `cannot reach a Temporal server at ${address} (${source}). Start one with \`${npxCommand} dev\` (or \`npm start\`) ` +
    'in another terminal, or set TEMPORAL_ADDRESS to your cluster.'
  );
}

/** Whether an error means no server answered (connect refused, DNS, deadline, gRPC UNAVAILABLE). */
export function isUnreachable(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current !== undefined && current !== null && depth < 8; depth += 1) {
    const candidate = current as { name?: string; message?: string; code?: unknown; cause?: unknown };
    if (candidate.name === 'TransportError') return true;
    if (candidate.code === 14) return true; // gRPC UNAVAILABLE
    if (
      /Failed to connect before the deadline|ECONNREFUSED|tcp connect error|dns error|No connection established/i.test(
        candidate.message ?? '',
      )
    )
      return true;
    current = candidate.cause;
  }
  return false;
}

/**
 * How long a command waits for the server before it says so: a refused TLS handshake or a wrong key ends a command at
 * once, not after a retry loop.
 */
export const CONNECT_TIMEOUT_MS = 5_000;

/**
 * Why connecting (or a first request) failed, in words that name what is missing: the server's refusal of the API key,
 * or what one TLS handshake with the same settings finds. Undefined when neither explains it.
 */
export async function connectionFailureMessage(
  error: unknown,
  temporal: TemporalConnectConfig,
): Promise<string | undefined> {
  if (isPermissionDenied(error)) return permissionDeniedMessage(temporal, error);
  return diagnoseTlsFailure(temporal);
}

/**
 * Checks that this connection may use its namespace (one `DescribeNamespace`): a missing or refused API key, and a
 * namespace that does not exist, stop a command at start instead of at its first request.
 */
export async function checkNamespaceAccess(
  workflowService: { describeNamespace(request: { namespace: string }): Promise<unknown> },
  temporal: TemporalConnectConfig,
): Promise<void> {
  try {
    await workflowService.describeNamespace({ namespace: temporal.namespace });
  } catch (error) {
    if (isPermissionDenied(error)) throw new CliError(permissionDeniedMessage(temporal, error), ExitCode.failed);
    if (isNotFound(error))
      throw new CliError(
        `namespace "${temporal.namespace}" does not exist on the Temporal server at ${temporal.connectionOptions.address}`,
        ExitCode.failed,
      );
    throw error;
  }
}

/** A connected Switchyard client for one command; an unreachable server becomes exit code 3 with one line. */
export async function connectClient(): Promise<SwitchyardClient> {
  const temporal = temporalConnection();
  const { address, taskQueue, source } = serverAddress();
  let connection: Connection;
  try {
    connection = await Connection.connect({ ...temporal.connectionOptions, connectTimeout: CONNECT_TIMEOUT_MS });
  } catch (error) {
    const explained = await connectionFailureMessage(error, temporal);
    if (explained !== undefined) throw new CliError(explained, ExitCode.failed);
    if (isUnreachable(error)) throw new CliError(unreachableMessage(address, source), ExitCode.unreachable);
    throw error;
  }
  try {
    await checkNamespaceAccess(connection.workflowService, temporal);
  } catch (error) {
    await connection.close();
    throw error;
  }
  return new SwitchyardClient({
    client: new Client({ connection, namespace: temporal.namespace, dataConverter: switchyardDataConverter }),
    taskQueue,
  });
}

export async function withClient<T>(body: (client: SwitchyardClient) => Promise<T>): Promise<T> {
  const client = await connectClient();
  try {
    return await body(client);
  } finally {
    await client.client.connection.close();
  }
}

/**
 * An error's message with its causes: `Workflow Update failed` alone says nothing, its cause (the validator's
 * `duplicate call id "c1"`) says why. Repeated messages are dropped.
 */
export function describeError(error: unknown): string {
  const parts: string[] = [];
  for (let current: unknown = error, depth = 0; current !== undefined && current !== null && depth < 8; depth += 1) {
    const message = current instanceof Error ? current.message : String(current);
    if (message !== '' && !parts.some((part) => part.includes(message))) parts.push(message);
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(': ');
}

/** Whether an error says the workflow (session) does not exist. */
export function isNotFound(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current !== undefined && current !== null && depth < 8; depth += 1) {
    const candidate = current as { name?: string; code?: unknown; cause?: unknown };
    if (candidate.name === 'WorkflowNotFoundError' || candidate.code === 5) return true;
    current = candidate.cause;
  }
  return false;
}

export function writeJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * A repeat of a stop signal this soon after the first is the same Ctrl-C delivered twice — `npm start` forwards the
 * SIGINT the terminal already sent to its whole process group — not a person asking to hurry.
 */
export const REPEATED_SIGNAL_MS = 1_000;

/**
 * Calls `stop` on the first SIGINT, SIGTERM or SIGHUP (the terminal closed), and exits at once on a second one while
 * the first one's clean stop is still under way — unless it came within REPEATED_SIGNAL_MS of the first.
 */
export function onStopSignal(stop: (signal: NodeJS.Signals) => void): () => void {
  let firstAt: number | undefined;
  const handler = (signal: NodeJS.Signals): void => {
    if (firstAt !== undefined) {
      if (Date.now() - firstAt < REPEATED_SIGNAL_MS) return;
      process.stderr.write(`switchyard: ${signal} again: exiting now\n`);
      process.exit(signal === 'SIGINT' ? ExitCode.interrupted : signal === 'SIGHUP' ? 129 : 143);
    }
    firstAt = Date.now();
    stop(signal);
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const signal of signals) process.on(signal, handler);
  return () => {
    for (const signal of signals) process.off(signal, handler);
  };
}

const DURATION_UNITS_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/** `7d`, `12h`, `30m`, `45s`, `500ms`, `2w` → milliseconds. */
export function parseDuration(value: string, name: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$/.exec(value.trim());
  if (match === null) throw new UsageError(`${name} must be a duration such as 30m, 12h, 7d or 2w; got "${value}"`);
  return Number(match[1]) * DURATION_UNITS_MS[match[2] as keyof typeof DURATION_UNITS_MS];
}

export function formatDuration(ms: number): string {
  const unit = (['w', 'd', 'h', 'm', 's'] as const).find(
    (candidate) => ms % DURATION_UNITS_MS[candidate] === 0 && ms >= DURATION_UNITS_MS[candidate],
  );
  return unit === undefined ? `${ms}ms` : `${ms / DURATION_UNITS_MS[unit]}${unit}`;
}

/** `3s`, `2m 5s`, `1h 2m`: how long something has waited, for a person. */
export function formatElapsed(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1_000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${seconds % 60}s`;
  return `${Math.floor(minutes / 60)}h ${minutes % 60}m`;
}

/** The one session id of a command: `--session ID` or a single positional argument. */
export function sessionArgument(
  command: string,
  values: { session?: string | undefined },
  positionals: readonly string[],
  required: boolean,
): string | undefined {
  if (positionals.length > 1 || (positionals.length === 1 && values.session !== undefined)) {
    throw new UsageError(`${command} takes one session: --session ID or a single argument`, command);
  }
  const sessionId = values.session ?? positionals[0];
  if (sessionId === undefined && required)
    throw new UsageError(`${command} needs a session: --session ID (see \`switchyard sessions\`)`, command);
  return sessionId;
}
