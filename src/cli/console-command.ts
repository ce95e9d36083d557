import os from 'node:os';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { switchyardDataConverter } from '../config/data-converter.js';
import type { ConnectionOptions } from '@temporalio/client';
import {
  consoleIdentityFromEnv,
  consoleUserHeaderFromEnv,
  consoleUsersFileFromEnv,
  processEnvironment,
  userNameFromEnv,
} from '../config/environment.js';
import type { Environment } from '../config/environment.js';
import { clientSecurityLine, settingsFromEnvironment } from '../config/settings.js';
import {
  CONNECTION_OPTIONS,
  CONNECT_TIMEOUT_MS,
  CliError,
  ExitCode,
  checkNamespaceAccess,
  connectionFailureMessage,
  connectionFlags,
  connectionLine,
  temporalConnection,
} from './common.js';
import { DEFAULT_CONSOLE_PORT, startConsole } from '../console/console-server.js';
import type { RunningConsole } from '../console/console-server.js';
import { loadConsoleUsers } from '../console/console-users.js';
import type { ConsoleUser } from '../console/console-users.js';

export const CONSOLE_USAGE = `Usage: switchyard console [--port N] [--host ADDRESS] [--identity NAME] [--users FILE] [--user-header NAME] [--temporal-ui URL]

The approval console: a web page listing the sessions waiting for approval across the namespace, with Approve /
Always allow / Deny buttons, each session's timeline, live output and decision log. Connects as the \`temporal\` CLI
does: --address, --namespace, --api-key, --tls-cert-path, --tls-key-path, --tls-ca-path, --tls-server-name and
--profile, else TEMPORAL_ADDRESS (default localhost:7233), TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_* and
the TEMPORAL_PROFILE of temporal.toml.
  --port N           port to serve on (default ${DEFAULT_CONSOLE_PORT}; 0 picks a free one)
  --host ADDRESS     interface to bind (default 127.0.0.1; anything else exposes the console to the network)
  --identity NAME    who the decisions are from, the \`by\` of each approval (default SWITCHYARD_CONSOLE_IDENTITY,
                     else your OS user name)
  --temporal-ui URL  the Temporal Web UI, for links to each session (default http://localhost:8233 with the
                     default address, none otherwise)
  --users FILE       one login per person (default SWITCHYARD_CONSOLE_USERS_FILE): { "users": { "<name>": { "token"
                     or "tokenSha256", "signingKeyFile"?, "groups"? } } }. Each person opens the console with
                     ?token=<their token>, decides as <name>, and their decisions are signed with their key
  --user-header NAME trust this header, set by a reverse proxy in front, to name the person (default
                     SWITCHYARD_CONSOLE_USER_HEADER; e.g. X-Forwarded-User). Only behind a proxy that strips it
                     from clients
Without --users, every request needs the token printed with the URL (or SWITCHYARD_CONSOLE_TOKEN, if set).
`;

/** A usage error of `switchyard console`; the CLI maps it to exit code 2. */
export class ConsoleUsageError extends Error {}

/** The console's identity: the flag, else `SWITCHYARD_CONSOLE_IDENTITY`, else the OS user. */
export function consoleIdentity(flag?: string, env: Environment = processEnvironment()): string {
  if (flag !== undefined && flag.trim() !== '') return flag.trim();
  const configured = consoleIdentityFromEnv(env);
  if (configured !== undefined) return configured;
  try {
    return os.userInfo().username;
  } catch {
    return userNameFromEnv(env) ?? 'console';
  }
}

/** `switchyard console`: serves until SIGINT/SIGTERM. */
export async function runConsoleCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      ...CONNECTION_OPTIONS,
      port: { type: 'string' },
      host: { type: 'string' },
      identity: { type: 'string' },
      users: { type: 'string' },
      'user-header': { type: 'string' },
      'temporal-ui': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help === true) {
    process.stdout.write(CONSOLE_USAGE);
    return 0;
  }
  const port = values.port === undefined ? DEFAULT_CONSOLE_PORT : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new ConsoleUsageError(`--port must be a port number, got "${values.port ?? ''}"`);
  // Every setting checked at start (a bad one stops the console, naming it), as every entry point does.
  try {
    await settingsFromEnvironment(processEnvironment(), connectionFlags(values));
  } catch (error) {
    throw new ConsoleUsageError((error as Error).message);
  }
  const usersFile = values.users ?? consoleUsersFileFromEnv();
  let users: ConsoleUser[] | undefined;
  try {
    users = usersFile === undefined ? undefined : await loadConsoleUsers(usersFile);
  } catch (error) {
    throw new ConsoleUsageError((error as Error).message);
  }
  const userHeader = values['user-header'] ?? consoleUserHeaderFromEnv();
  const temporal = temporalConnection(connectionFlags(values));
  const { address } = temporal.connectionOptions;
  const namespace = temporal.namespace;
  const temporalUiUrl = values['temporal-ui'] ?? (temporal.addressIsDefault ? 'http://localhost:8233' : undefined);
  let connection: Connection;
  try {
    connection = await Connection.connect({ ...temporal.connectionOptions, connectTimeout: CONNECT_TIMEOUT_MS });
  } catch (error) {
    const explained = await connectionFailureMessage(error, temporal);
    if (explained !== undefined) throw new CliError(explained, ExitCode.failed);
    throw new Error(
      `Could not reach Temporal at ${address} (${(error as Error).message}); start one with \`npm start\` or set TEMPORAL_ADDRESS.`,
      { cause: error },
    );
  }
  try {
    await checkNamespaceAccess(connection.workflowService, temporal);
  } catch (error) {
    await connection.close();
    throw error;
  }
  process.stderr.write(`${connectionLine(temporal)}\n`);
  const security = clientSecurityLine(temporal, {
    'console users file': usersFile === undefined ? null : `${usersFile} (${users?.length ?? 0} users)`,
    'user header': userHeader ?? null,
    token:
      users !== undefined
        ? 'per user'
        : processEnvironment().SWITCHYARD_CONSOLE_TOKEN
          ? 'SWITCHYARD_CONSOLE_TOKEN'
          : 'random',
  });
  process.stderr.write(`${security.message}\n`);
  let running: RunningConsole | undefined;
  try {
    running = await startConsole({
      client: new Client({ connection, namespace, dataConverter: switchyardDataConverter }),
      port,
      ...(values.host === undefined ? {} : { host: values.host }),
      identity: consoleIdentity(values.identity),
      ...(users === undefined ? {} : { users }),
      ...(userHeader === undefined ? {} : { userHeader }),
      ...(temporalUiUrl === undefined ? {} : { temporalUiUrl }),
    });
    const who =
      users === undefined
        ? `deciding as ${consoleIdentity(values.identity)}`
        : `${users.length} users from ${usersFile ?? ''}: each opens it with ?token=<their token>`;
    process.stderr.write(
      `Approval console: ${running.loginUrl}\n(${who}${userHeader === undefined ? '' : `; trusting the ${userHeader} header`}; Ctrl-C stops it)\n`,
    );
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    return 0;
  } finally {
    await running?.close();
    await connection.close();
  }
}

/**
 * The console `switchyard dev` starts beside its server and worker; returns undefined (after a warning) when it
 * cannot, since the worker is still useful without it.
 */
export async function startDevConsole(options: {
  /** The worker's connection options (address, TLS, API key). */
  connectionOptions: ConnectionOptions;
  namespace: string;
  port: number;
  temporalUiUrl?: string;
  onWarning: (message: string) => void;
}): Promise<{ line: string; close(): Promise<void> } | undefined> {
  let connection: Connection | undefined;
  try {
    // The same per-person logins as `switchyard console` when the environment names a users file.
    const usersFile = consoleUsersFileFromEnv();
    const users = usersFile === undefined ? undefined : await loadConsoleUsers(usersFile);
    const userHeader = consoleUserHeaderFromEnv();
    connection = await Connection.connect({ ...options.connectionOptions, connectTimeout: CONNECT_TIMEOUT_MS });
    const running = await startConsole({
      client: new Client({ connection, namespace: options.namespace, dataConverter: switchyardDataConverter }),
      port: options.port,
      identity: consoleIdentity(),
      ...(users === undefined ? {} : { users }),
      ...(userHeader === undefined ? {} : { userHeader }),
      ...(options.temporalUiUrl === undefined ? {} : { temporalUiUrl: options.temporalUiUrl }),
    });
    const opened = connection;
    return {
      line: `Approval console: ${running.loginUrl}`,
      close: async () => {
        await running.close();
        await opened.close();
      },
    };
  } catch (error) {
    await connection?.close();
    options.onWarning(
      `Approval console not started on port ${options.port}: ${(error as Error).message} (run \`switchyard console --port N\` yourself)`,
    );
    return undefined;
  }
}
