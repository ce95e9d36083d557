// A production-shaped Temporal cluster for `npm run test:cluster`: the Temporal server (`go.temporal.io/server`,
// built with Go once and cached beside the CLI in ~/.cache/switchyard) on PostgreSQL 15 from Debian's packages,
// started in a temporary data dir, the schema set up with Temporal's SQL tool, then the namespace and the
// `SwitchyardPendingApprovals` search attribute created with the operator commands of the Temporal CLI — the same
// topology as docker-compose.yml (postgresql + temporal server + a worker), without Docker.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { constants } from 'node:fs';
import { access, chmod, chown, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { pendingApprovalsSearchAttribute } from '../../src/contracts/messages.js';
import { findTemporalBinary, switchyardCacheDir } from '../../src/server/temporal-binary.js';
import type { TestCertificates } from '../support/certificates.js';
import { freePort } from '../support/free-port.js';

export const TEMPORAL_SERVER_VERSION = '1.29.1';
const POSTGRES_BIN = '/usr/lib/postgresql/15/bin';

/**
 * How the frontend is secured: mTLS (a client certificate signed by the test CA is required), or JWT authorization
 * (the server's default claim mapper and authorizer, keys from a JWKS URL; the frontend serves TLS without asking for
 * a client certificate, as behind Temporal Cloud's API keys).
 */
export type ClusterSecurity =
  | { kind: 'mtls'; certificates: TestCertificates }
  | { kind: 'jwt'; certificates: TestCertificates; jwksUrl: string; adminToken: string };

export interface Cluster {
  address: string;
  namespace: string;
  /** The Temporal CLI, for operator commands. */
  cli: string;
  /** The Temporal CLI's flags that reach this server (TLS files, an admin token), for operator commands. */
  cliConnectionArgs: string[];
  /** The SDK connection options that reach this server as an admin (TLS, client certificate, token). */
  connectionOptions: {
    address: string;
    tls?: {
      serverRootCACertificate: Buffer;
      serverNameOverride?: string;
      clientCertPair?: { crt: Buffer; key: Buffer };
    };
    apiKey?: string;
  };
  stop(): Promise<void>;
}

type Progress = (line: string) => void;

async function exists(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * A free port under 32768: Temporal's SQL schema keeps membership ports in a `smallint` column, so the kernel's
 * ephemeral ports (32768 and up here) fail with "out of range for type smallint".
 */
const handedOut = new Set<number>();
async function freeLowPort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const candidate = 20_000 + Math.floor(Math.random() * 12_000);
    // Never the same port twice in this process: a port is free again once probed, until the server binds it.
    if (handedOut.has(candidate)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(candidate, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) {
      handedOut.add(candidate);
      return candidate;
    }
  }
  throw new Error('no free port under 32768');
}

/** Runs a command to completion; rejects with its output when it fails. */
function run(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: options.env ?? process.env,
      cwd: options.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0
        ? resolve(output)
        : reject(new Error(`${command} ${args.join(' ')} exited with ${code}:\n${output.slice(-4000)}`)),
    );
  });
}

/** The server and SQL tool binaries, built with Go into the cache on first use (minutes once, then instant). */
export async function ensureServerBinaries(
  progress: Progress,
): Promise<{ server: string; sqlTool: string; schemaDir: string }> {
  const dir = path.join(switchyardCacheDir(), `temporal-server-${TEMPORAL_SERVER_VERSION}`);
  const server = path.join(dir, 'temporal-server');
  const sqlTool = path.join(dir, 'temporal-sql-tool');
  const goEnv = { ...process.env, PATH: `${process.env.PATH ?? ''}:/usr/local/go/bin` };
  if (!(await exists(server)) || !(await exists(sqlTool))) {
    progress(
      `building go.temporal.io/server v${TEMPORAL_SERVER_VERSION} and its SQL tool with Go (once; cached in ${dir})`,
    );
    const work = await mkdtemp(path.join(os.tmpdir(), 'switchyard-server-build-'));
    try {
      await writeFile(path.join(work, 'go.mod'), 'module switchyard.local/temporal-server\n\ngo 1.26\n');
      await run(
        'go',
        [
          'get',
          `go.temporal.io/server/cmd/server@v${TEMPORAL_SERVER_VERSION}`,
          `go.temporal.io/server/cmd/tools/sql@v${TEMPORAL_SERVER_VERSION}`,
        ],
        { env: goEnv, cwd: work },
      );
      await run('go', ['build', '-o', path.join(work, 'temporal-server'), 'go.temporal.io/server/cmd/server'], {
        env: goEnv,
        cwd: work,
      });
      await run('go', ['build', '-o', path.join(work, 'temporal-sql-tool'), 'go.temporal.io/server/cmd/tools/sql'], {
        env: goEnv,
        cwd: work,
      });
      await mkdir(dir, { recursive: true });
      await rename(path.join(work, 'temporal-server'), server);
      await rename(path.join(work, 'temporal-sql-tool'), sqlTool);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }
  const modCache = (await run('go', ['env', 'GOMODCACHE'], { env: goEnv })).trim();
  const schemaDir = path.join(
    modCache,
    `go.temporal.io/server@v${TEMPORAL_SERVER_VERSION}`,
    'schema',
    'postgresql',
    'v12',
  );
  if (!(await exists(schemaDir))) {
    // The module is in the Go module cache after a build; fetch it if the binaries came from elsewhere.
    const work = await mkdtemp(path.join(os.tmpdir(), 'switchyard-server-schema-'));
    await writeFile(path.join(work, 'go.mod'), 'module switchyard.local/temporal-schema\n\ngo 1.26\n');
    await run('go', ['mod', 'download', `go.temporal.io/server@v${TEMPORAL_SERVER_VERSION}`], {
      env: goEnv,
      cwd: work,
    });
    await rm(work, { recursive: true, force: true });
  }
  return { server, sqlTool, schemaDir };
}

/** Postgres refuses to run as root: run its commands as the `postgres` user then. */
function asPostgres(command: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
}

function startProcess(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; logTo: string[] },
): ChildProcess {
  const child = spawn(command, args, {
    env: options.env ?? process.env,
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (chunk: Buffer): void => {
    options.logTo.push(chunk.toString());
    if (options.logTo.length > 200) options.logTo.splice(0, options.logTo.length - 200);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return child;
}

async function stopProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const timeout = sleep(20_000).then(() => 'timeout' as const);
  if ((await Promise.race([exited, timeout])) === 'timeout') {
    child.kill('SIGKILL');
    await exited;
  }
}

function serverConfig(options: {
  pgPort: number;
  ports: Record<
    'frontend' | 'internal-frontend' | 'history' | 'matching' | 'worker',
    { grpc: number; membership: number }
  >;
  httpPort: number;
  metricsPort: number;
  pprofPort: number;
  dynamicConfig: string;
  security?: ClusterSecurity;
}): string {
  const datastore = (database: string, maxConns: number) => `      sql:
        pluginName: "postgres12"
        databaseName: "${database}"
        connectAddr: "127.0.0.1:${options.pgPort}"
        connectProtocol: "tcp"
        user: "temporal"
        password: "temporal"
        maxConns: ${maxConns}
        maxIdleConns: ${maxConns}
        maxConnLifetime: "1h"`;
  const service = (name: keyof typeof options.ports, extra = '') => `  ${name}:
    rpc:
      grpcPort: ${options.ports[name].grpc}
      membershipPort: ${options.ports[name].membership}
      bindOnLocalHost: true${extra}`;
  const security = options.security;
  const frontendTls =
    security === undefined
      ? ''
      : `
  tls:
    frontend:
      server:
        certFile: "${security.certificates.serverCert}"
        keyFile: "${security.certificates.serverKey}"
        requireClientAuth: ${security.kind === 'mtls'}
        clientCaFiles: ["${security.certificates.caCert}"]
      client:
        serverName: "localhost"
        rootCaFiles: ["${security.certificates.caCert}"]
    systemWorker:
      certFile: "${security.certificates.clientCert}"
      keyFile: "${security.certificates.clientKey}"
      client:
        serverName: "localhost"
        rootCaFiles: ["${security.certificates.caCert}"]`;
  const authorization =
    security?.kind !== 'jwt'
      ? ''
      : `
  authorization:
    jwtKeyProvider:
      keySourceURIs: ["${security.jwksUrl}"]
      refreshInterval: 1m
    permissionsClaimName: permissions
    authorizer: default
    claimMapper: default`;
  return `log:
  stdout: true
  level: warn
persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: 4
  datastores:
    postgres-default:
${datastore('temporal', 20)}
    postgres-visibility:
${datastore('temporal_visibility', 4)}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "127.0.0.1"
  pprof:
    port: ${options.pprofPort}
  metrics:
    prometheus:
      framework: "tally"
      timerType: "histogram"
      listenAddress: "127.0.0.1:${options.metricsPort}"${frontendTls}${authorization}
services:
${service('frontend', `\n      httpPort: ${options.httpPort}`)}
${service('matching')}
${service('history')}
${service('worker')}${security?.kind === 'jwt' ? `\n${service('internal-frontend')}` : ''}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: "active"
  currentClusterName: "active"
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: "frontend"
      rpcAddress: "127.0.0.1:${options.ports.frontend.grpc}"
dcRedirectionPolicy:
  policy: "noop"
dynamicConfigClient:
  filepath: "${options.dynamicConfig}"
  pollInterval: "10s"
`;
}

/**
 * Starts PostgreSQL and a Temporal server on it (all four services in one process, as the temporalio/server image
 * does), creates the `default` namespace and the search attribute, and resolves once the frontend answers.
 */
export async function startCluster(
  options: { progress?: Progress; searchAttribute?: boolean; security?: ClusterSecurity } = {},
): Promise<Cluster> {
  const progress = options.progress ?? (() => {});
  const started = Date.now();
  const { server, sqlTool, schemaDir } = await ensureServerBinaries(progress);
  const cli = (await findTemporalBinary({ onProgress: progress }))?.path;
  if (cli === undefined) throw new Error('no Temporal CLI for the operator commands');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'switchyard-cluster-'));
  const logs: string[] = [];
  const children: ChildProcess[] = [];
  const extraDirs: string[] = [];
  const stop = async (): Promise<void> => {
    for (const child of children.reverse()) await stopProcess(child);
    for (const extra of [dir, ...extraDirs]) await rm(extra, { recursive: true, force: true });
  };
  try {
    // PostgreSQL in its own data dir and socket dir, on a free port.
    // As root, postgres runs as the `postgres` user, which must reach its data dir: the run's private TMPDIR (0700)
    // will not do, so the data dir goes under /tmp then.
    const asRoot = process.getuid?.() === 0;
    const pgParent = asRoot ? await mkdtemp('/tmp/switchyard-pg-') : dir;
    if (asRoot) extraDirs.push(pgParent);
    const pgData = path.join(pgParent, 'pgdata');
    await mkdir(pgData);
    if (asRoot) {
      await chmod(pgParent, 0o755);
      await chown(
        pgData,
        Number((await run('id', ['-u', 'postgres'])).trim()),
        Number((await run('id', ['-g', 'postgres'])).trim()),
      );
    }
    const [initdb, initdbArgs] = asPostgres(path.join(POSTGRES_BIN, 'initdb'), [
      '-D',
      pgData,
      '-U',
      'postgres',
      '--auth=trust',
      '-E',
      'UTF8',
    ]);
    await run(initdb, initdbArgs);
    const pgPort = await freePort();
    const [postgres, postgresArgs] = asPostgres(path.join(POSTGRES_BIN, 'postgres'), [
      '-D',
      pgData,
      '-p',
      String(pgPort),
      '-k',
      pgData,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'max_connections=200',
      '-c',
      'fsync=off',
    ]);
    children.push(startProcess(postgres, postgresArgs, { logTo: logs }));
    for (let attempt = 0; ; attempt += 1) {
      try {
        await run('psql', [
          '-h',
          '127.0.0.1',
          '-p',
          String(pgPort),
          '-U',
          'postgres',
          '-c',
          "CREATE USER temporal WITH SUPERUSER PASSWORD 'temporal'",
        ]);
        break;
      } catch (error) {
        if (attempt > 100) throw error;
        await sleep(200);
      }
    }
    progress(`postgres on 127.0.0.1:${pgPort} after ${Date.now() - started} ms`);

    // Schemas with Temporal's SQL tool: create, set up the base, then apply every versioned step.
    for (const [database, schema] of [
      ['temporal', 'temporal'],
      ['temporal_visibility', 'visibility'],
    ] as const) {
      const base = [
        '--plugin',
        'postgres12',
        '--ep',
        '127.0.0.1',
        '-p',
        String(pgPort),
        '-u',
        'temporal',
        '--pw',
        'temporal',
        '--db',
        database,
      ];
      await run(sqlTool, [...base, 'create-database']);
      await run(sqlTool, [...base, 'setup-schema', '-v', '0.0']);
      await run(sqlTool, [...base, 'update-schema', '-d', path.join(schemaDir, schema, 'versioned')]);
    }
    progress(`schemas set up after ${Date.now() - started} ms`);

    const configDir = path.join(dir, 'config');
    await mkdir(configDir);
    const dynamicConfig = path.join(configDir, 'dynamicconfig.yaml');
    // Visibility queries with custom search attributes and fast namespace refresh, as a test cluster wants.
    await writeFile(
      dynamicConfig,
      'system.forceSearchAttributesCacheRefreshOnRead:\n  - value: true\n    constraints: {}\n',
    );
    const security = options.security;
    const cliConnectionArgs =
      security === undefined
        ? []
        : [
            '--tls-ca-path',
            security.certificates.caCert,
            ...(security.kind === 'mtls'
              ? ['--tls-cert-path', security.certificates.clientCert, '--tls-key-path', security.certificates.clientKey]
              : ['--api-key', security.adminToken]),
          ];
    // A port probed free can be taken before the server binds it (other jobs share the machine): a server that exits
    // before it is healthy is started again on other ports.
    let address = '';
    for (let start = 1; ; start += 1) {
      const port = async () => ({ grpc: await freeLowPort(), membership: await freeLowPort() });
      const ports = {
        frontend: await port(),
        // With JWT authorization the server's own system workers go through an internal frontend, which maps no
        // claims.
        'internal-frontend': await port(),
        history: await port(),
        matching: await port(),
        worker: await port(),
      };
      await writeFile(
        path.join(configDir, 'development.yaml'),
        serverConfig({
          pgPort,
          ports,
          httpPort: await freePort(),
          metricsPort: await freePort(),
          pprofPort: await freePort(),
          dynamicConfig,
          ...(security === undefined ? {} : { security }),
        }),
      );
      const serverProcess = startProcess(
        server,
        [
          '--root',
          dir,
          '--config',
          'config',
          '--env',
          'development',
          '--allow-no-auth',
          'start',
          ...(security?.kind === 'jwt'
            ? ['frontend', 'internal-frontend', 'history', 'matching', 'worker'].flatMap((name) => ['--service', name])
            : []),
        ],
        { logTo: logs, cwd: dir },
      );
      children.push(serverProcess);
      address = `127.0.0.1:${ports.frontend.grpc}`;
      let healthy = false;
      for (let attempt = 0; serverProcess.exitCode === null && serverProcess.signalCode === null; attempt += 1) {
        try {
          await run(cli, ['operator', 'cluster', 'health', '--address', address, ...cliConnectionArgs]);
          healthy = true;
          break;
        } catch (error) {
          if (attempt > 300)
            throw new Error(
              `the Temporal server did not become healthy: ${String(error)}\n${logs.join('').slice(-4000)}`,
            );
          await sleep(300);
        }
      }
      if (healthy) break;
      if (start >= 3)
        throw new Error(
          `the Temporal server exited before it was healthy, ${start} times:\n${logs.join('').slice(-4000)}`,
        );
      progress(`the Temporal server exited before it was healthy (attempt ${start}); starting it again on other ports`);
    }
    const connectionOptions: Cluster['connectionOptions'] = {
      address,
      ...(security === undefined
        ? {}
        : {
            tls: {
              serverRootCACertificate: await readFile(security.certificates.caCert),
              ...(security.kind === 'mtls'
                ? {
                    clientCertPair: {
                      crt: await readFile(security.certificates.clientCert),
                      key: await readFile(security.certificates.clientKey),
                    },
                  }
                : {}),
            },
          }),
      ...(security?.kind === 'jwt' ? { apiKey: security.adminToken } : {}),
    };
    const namespace = 'default';
    await run(cli, [
      'operator',
      'namespace',
      'create',
      '--namespace',
      namespace,
      '--address',
      address,
      ...cliConnectionArgs,
      '--retention',
      '24h',
    ]);
    if (options.searchAttribute !== false) {
      await run(cli, [
        'operator',
        'search-attribute',
        'create',
        '--namespace',
        namespace,
        '--address',
        address,
        ...cliConnectionArgs,
        '--name',
        pendingApprovalsSearchAttribute,
        '--type',
        'Int',
      ]);
    }
    // The namespace takes a moment to reach every service's cache.
    const connection = await Connection.connect(connectionOptions);
    try {
      for (let attempt = 0; ; attempt += 1) {
        try {
          await connection.workflowService.describeNamespace({ namespace });
          break;
        } catch (error) {
          if (attempt > 100) throw error;
          await sleep(300);
        }
      }
    } finally {
      await connection.close();
    }
    progress(`Temporal ${TEMPORAL_SERVER_VERSION} on PostgreSQL ready at ${address} after ${Date.now() - started} ms`);
    return { address, namespace, cli, cliConnectionArgs, connectionOptions, stop };
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\nserver log:\n${logs.join('').slice(-6000)}`, { cause: error });
  }
}
