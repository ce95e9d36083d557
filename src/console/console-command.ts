import os from 'node:os';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { addressFromEnv, consoleIdentityFromEnv, processEnvironment, resolveConnection, userNameFromEnv } from '../config/environment.js';
import type { Environment } from '../config/environment.js';
import { DEFAULT_CONSOLE_PORT, startConsole } from './console-server.js';
import type { RunningConsole } from './console-server.js';

export const CONSOLE_USAGE = `Usage: switchyard console [--port N] [--host ADDRESS] [--identity NAME] [--temporal-ui URL]

The approval console: a web page listing the sessions waiting for approval across the namespace, with Approve /
Always allow / Deny buttons, each session's timeline, live output and decision log. Connects to TEMPORAL_ADDRESS
(default localhost:7233) and TEMPORAL_NAMESPACE.
  --port N           port to serve on (default ${DEFAULT_CONSOLE_PORT}; 0 picks a free one)
  --host ADDRESS     interface to bind (default 127.0.0.1; anything else exposes the console to the network)
  --identity NAME    who the decisions are from, the \`by\` of each approval (default SWITCHYARD_CONSOLE_IDENTITY,
                     else your OS user name)
  --temporal-ui URL  the Temporal Web UI, for links to each session (default http://localhost:8233 with the
                     default address, none otherwise)
Every request needs the token printed with the URL (or SWITCHYARD_CONSOLE_TOKEN, if set).
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
    options: { port: { type: 'string' }, host: { type: 'string' }, identity: { type: 'string' }, 'temporal-ui': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
  });
  if (values.help === true) {
    process.stdout.write(CONSOLE_USAGE);
    return 0;
  }
  const port = values.port === undefined ? DEFAULT_CONSOLE_PORT : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new ConsoleUsageError(`--port must be a port number, got "${values.port ?? ''}"`);
  const { address, namespace } = resolveConnection();
  const temporalUiUrl = values['temporal-ui'] ?? (addressFromEnv() === undefined ? 'http://localhost:8233' : undefined);
  const connection = await Connection.connect({ address, connectTimeout: '5s' }).catch((error: unknown) => {
    throw new Error(`Could not reach Temporal at ${address} (${(error as Error).message}); start one with \`npm start\` or set TEMPORAL_ADDRESS.`, { cause: error });
  });
  let running: RunningConsole | undefined;
  try {
    running = await startConsole({
      client: new Client({ connection, namespace }),
      port,
      ...(values.host === undefined ? {} : { host: values.host }),
      identity: consoleIdentity(values.identity),
      ...(temporalUiUrl === undefined ? {} : { temporalUiUrl }),
    });
    process.stderr.write(`Approval console: ${running.loginUrl}\n(deciding as ${consoleIdentity(values.identity)}; Ctrl-C stops it)\n`);
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
  address: string;
  namespace: string;
  port: number;
  temporalUiUrl?: string;
  onWarning: (message: string) => void;
}): Promise<{ line: string; close(): Promise<void> } | undefined> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address: options.address });
    const running = await startConsole({
      client: new Client({ connection, namespace: options.namespace }),
      port: options.port,
      identity: consoleIdentity(),
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
    options.onWarning(`Approval console not started on port ${options.port}: ${(error as Error).message} (run \`switchyard console --port N\` yourself)`);
    return undefined;
  }
}
