import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { environmentSettings } from '../config/settings.js';
import type { Environment } from '../config/settings.js';
import { DEFAULT_NAMESPACE } from '../contracts/defaults.js';
import { pendingApprovalsSearchAttributeKey } from '../contracts/messages.js';
import { findOnPath, findTemporalBinary } from './temporal-binary.js';
import type { TemporalBinary } from './temporal-binary.js';

export interface DevServerOptions {
  /** gRPC port; default a free one. */
  port?: number;
  /** Serve the Web UI; default false. */
  ui?: boolean;
  /** Web UI port; default `port + 1000`. */
  uiPort?: number;
  /** SQLite file that keeps state across restarts; default in-memory. */
  dbFilename?: string;
  namespace?: string;
  /** Host to bind; default 127.0.0.1. */
  ip?: string;
  /** The environment the server's binary is looked up in (`TEMPORAL_CLI_PATH`, `PATH`, the cache). Default: the process's. */
  env?: Environment;
  onProgress?: (message: string) => void;
  /**
   * Run the server in a session of its own (Linux, with util-linux's `setsid`), out of the terminal's process group:
   * a Ctrl-C then reaches only the process that started it, which can stop its worker before the server. Without
   * it, Ctrl-C stops the server at once while the worker is still finishing its calls. Default false.
   */
  ownSession?: boolean;
}

export interface DevServer {
  /** `host:port` for `TEMPORAL_ADDRESS`. */
  address: string;
  namespace: string;
  uiUrl?: string;
  binary: TemporalBinary;
  environment: TestWorkflowEnvironment;
  stop(): Promise<void>;
}

/** A port the dev server was asked to use is taken: it is not started (it would never attach to another server). */
export class PortInUseError extends Error {
  override readonly name = 'PortInUseError';
  constructor(
    readonly port: number,
    readonly ip: string,
    /** Which of the server's ports: `gRPC` or `Web UI`. */
    readonly role: 'gRPC' | 'Web UI',
  ) {
    super(`port ${port} on ${ip} (the dev server's ${role} port) is in use by another process`);
  }
}

/** Throws `PortInUseError` when something already listens on `ip:port`. */
async function assertPortFree(port: number, ip: string, role: PortInUseError['role']): Promise<void> {
  const taken = await new Promise<boolean>((resolve) => {
    const probe = net.createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'EADDRINUSE'));
    probe.listen(port, ip, () => probe.close(() => resolve(false)));
  });
  if (taken) throw new PortInUseError(port, ip, role);
}

/**
 * Starts a local Temporal dev server with Switchyard's search attribute registered and WAL journaling, using the
 * binary `findTemporalBinary` finds, downloads or builds. A `port` (or, with the UI, its port) that another process
 * holds is a `PortInUseError` before anything starts: the SDK waits for the port to answer, and would take another
 * server's answer for its own.
 */
export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  const bindIp = options.ip ?? '127.0.0.1';
  if (options.port !== undefined) await assertPortFree(options.port, bindIp, 'gRPC');
  if (options.ui === true && (options.uiPort !== undefined || options.port !== undefined))
    await assertPortFree(options.uiPort ?? (options.port ?? 0) + 1000, bindIp, 'Web UI');
  // Without `env`, the process's, through the settings function every entry point uses (src/config/settings.ts).
  const env = environmentSettings(options.env).environment;
  const found = await findTemporalBinary({ env, onProgress: options.onProgress });
  if (found === undefined) {
    throw new Error(
      'No Temporal CLI: none on PATH or in TEMPORAL_CLI_PATH, the download failed and there is no Go toolchain to build one; install the Temporal CLI (https://docs.temporal.io/cli) or Go',
    );
  }
  const wrapper = options.ownSession === true ? await ownSessionWrapper(found.path, env) : undefined;
  const executable = { type: 'existing-path', path: wrapper?.path ?? found.path } as const;
  const namespace = options.namespace ?? DEFAULT_NAMESPACE;
  const ip = options.ip ?? '127.0.0.1';
  const extraArgs = [
    '--sqlite-pragma',
    'journal_mode=WAL',
    '--dynamic-config-value',
    'system.enableActivityEagerExecution=true',
  ];
  const environment = await createWithRetries(
    () =>
      TestWorkflowEnvironment.createLocal({
        server: {
          executable,
          namespace,
          ip,
          ...(options.port === undefined ? {} : { port: options.port }),
          ...(options.ui ? { ui: true } : {}),
          ...(options.uiPort === undefined ? {} : { uiPort: options.uiPort }),
          ...(options.dbFilename === undefined ? {} : { dbFilename: options.dbFilename }),
          searchAttributes: [pendingApprovalsSearchAttributeKey],
          extraArgs,
          log: { format: 'json', level: 'error' },
        },
      }),
    options.onProgress,
  ).catch(async (error: unknown) => {
    await wrapper?.remove();
    throw error;
  });
  const address = environment.address;
  const port = Number(address.split(':').at(-1));
  const server: DevServer = {
    address,
    namespace,
    binary: found,
    environment,
    stop: async () => {
      await environment.teardown();
      await wrapper?.remove();
    },
  };
  if (options.ui) server.uiUrl = `http://${ip}:${options.uiPort ?? port + 1000}`;
  return server;
}

/**
 * The SDK gives a dev server 5 s to answer; a loaded machine (or a SQLite file still being released by a server that
 * just stopped) can miss that. Two more tries before giving up.
 */
async function createWithRetries(
  create: () => Promise<TestWorkflowEnvironment>,
  onProgress?: (message: string) => void,
): Promise<TestWorkflowEnvironment> {
  const attempts = 3;
  for (let attempt = 1; ; attempt++) {
    try {
      return await create();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (attempt >= attempts || !/did not start within/.test(message)) throw error;
      onProgress?.(`The Temporal dev server did not answer in time (attempt ${attempt} of ${attempts}); trying again…`);
      await new Promise((resolve) => setTimeout(resolve, 1_000 * attempt));
    }
  }
}

/**
 * A two-line script that `exec`s the server through `setsid`: the SDK starts the script, which is not a process
 * group leader, so `setsid` makes a new session in place and execs the server under the same pid — the SDK's stop
 * still reaches the server itself. Undefined (run the binary directly) where there is no `setsid`.
 */
async function ownSessionWrapper(
  binary: string,
  env: Environment,
): Promise<{ path: string; remove: () => Promise<void> } | undefined> {
  const setsid =
    process.platform === 'linux' ? await findOnPath('setsid', { PATH: `/usr/bin:/bin:${env.PATH ?? ''}` }) : undefined;
  if (setsid === undefined) return undefined;
  const directory = await mkdtemp(path.join(os.tmpdir(), 'switchyard-dev-server-'));
  const script = path.join(directory, 'temporal');
  const quote = (value: string): string => `'${value.replaceAll("'", `'\\''`)}'`;
  await writeFile(script, `#!/bin/sh\nexec ${quote(setsid)} ${quote(binary)} "$@"\n`);
  await chmod(script, 0o755);
  return { path: script, remove: () => rm(directory, { recursive: true, force: true }) };
}
