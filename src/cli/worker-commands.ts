import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { Runtime } from '@temporalio/worker';
import type { Worker } from '@temporalio/worker';
import type { Logger as PinoLogger } from 'pino';
import { grpcCompressionFor } from '../config/grpc-compression.js';
import { DEFAULT_NAMESPACE, DEFAULT_TASK_QUEUE } from '../contracts/defaults.js';
import { toolSessionWorkflowType } from '../contracts/messages.js';
import { startDevConsole } from './console-command.js';
import type { DevServer, PortInUseError } from '../server/dev-server.js';
import { runningTasksStartedHere } from '../tools/background/background-task-tools.js';
import { builtinTools } from '../tools/builtin.js';
import type { Tool } from '../tools/define-tool.js';
import { connectMcpTools, mcpServersFromConfig } from '../tools/mcp/mcp.js';
import { envValue, processEnvironment } from '../config/environment.js';
import { settingsFromEnvironment } from '../config/settings.js';
import type { SwitchyardSettings } from '../config/settings.js';
import type { TemporalConnectConfig } from '../config/temporal-connection.js';
import { NativeConnection, createSwitchyardWorker } from '../worker/create-worker.js';
import { createLogger } from '../worker/logger.js';
import { installTemporalRuntime } from '../worker/runtime.js';
import { createTracingFromEnv } from '../worker/telemetry.js';
import {
  CONNECT_TIMEOUT_MS,
  CliError,
  ExitCode,
  UsageError,
  connectionFailureMessage,
  connectionLine,
  givenConnectionFlags,
  isUnreachable,
  npxCommand,
  onStopSignal,
  parseCommand,
  serverAddress,
  temporalConnection,
  unreachableMessage,
} from './common.js';
import { isPermissionDenied } from './connection-diagnosis.js';
import { importCommandLineModule } from './import-module.js';
import { COMMAND_HELP } from './help.js';
import { loadEvaluatorModule } from './policy-loading.js';

/**
 * The dev server module, loaded only by `dev`: it needs `@temporalio/testing`, an optional dependency that library
 * users (client and worker only) may leave out with `npm install --omit=optional`.
 */
async function loadDevServer(): Promise<typeof import('../server/dev-server.js')> {
  try {
    return await import('../server/dev-server.js');
  } catch (error) {
    if (
      (error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' &&
      String((error as Error).message).includes('@temporalio/testing')
    ) {
      throw new Error(
        '`switchyard dev` needs the optional dependency @temporalio/testing; install it (npm install @temporalio/testing@1.24.0) or point TEMPORAL_ADDRESS at a running server',
        { cause: error },
      );
    }
    throw error;
  }
}

/** Stopped by SIGINT/SIGTERM before the worker ran: exit 130 (143 for SIGTERM). */
class Stopped extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`stopped by ${signal}`);
  }
}

/** Resolves with `work`, or rejects with `Stopped` when a stop signal comes first (`cleanup` then gets the late value). */
async function unlessStopped<T>(
  work: Promise<T>,
  stop: Promise<NodeJS.Signals>,
  cleanup?: (value: T) => Promise<void>,
): Promise<T> {
  const outcome = await Promise.race([work.then((value) => ({ value })), stop.then((signal) => ({ signal }))]);
  if ('signal' in outcome) {
    void work.then(cleanup ?? (async () => {}), () => {});
    throw new Stopped(outcome.signal);
  }
  return outcome.value;
}

const looksLikeTool = (value: unknown): value is Tool =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as Tool).name === 'string' &&
  typeof (value as Tool).execute === 'function' &&
  typeof (value as { inputSchema?: { safeParse?: unknown } }).inputSchema?.safeParse === 'function';

/** The `defineTool` tools a module exports (as named exports, a default export, or arrays of them). */
export async function loadToolModule(file: string): Promise<Tool[]> {
  const module = await importCommandLineModule(file, '--tools');
  const tools = new Set<Tool>();
  for (const value of Object.values(module)) {
    for (const candidate of Array.isArray(value) ? value : [value]) if (looksLikeTool(candidate)) tools.add(candidate);
  }
  if (tools.size === 0) throw new UsageError(`--tools ${file} exports no tools (export the values defineTool returns)`);
  return [...tools];
}

interface WorkerSetup {
  cwd: string;
  namespace: string;
  taskQueue: string;
  toolModules: string[];
  mcpConfig?: { file: string; config: unknown };
  /** `--evaluator` modules (approval evaluators). */
  evaluatorModules: string[];
  /** Every setting (`settingsFromEnvironment`), checked before anything starts, and handed to the worker factory. */
  settings: SwitchyardSettings;
}

/** Checks every argument before anything starts: a bad one is a usage error (exit 2) and nothing runs. */
async function workerSetup(
  command: string,
  values: { cwd?: string; tools?: string[]; 'mcp-config'?: string; evaluator?: string[] },
): Promise<WorkerSetup> {
  const cwd = path.resolve(values.cwd ?? process.cwd());
  const cwdStat = await stat(cwd).catch(() => undefined);
  if (cwdStat === undefined) throw new UsageError(`--cwd ${cwd} does not exist`, command);
  if (!cwdStat.isDirectory()) throw new UsageError(`--cwd ${cwd} is not a directory`, command);
  const toolModules = (values.tools ?? []).map((file) => path.resolve(file));
  for (const file of toolModules)
    if (!existsSync(file)) throw new UsageError(`--tools ${file} does not exist`, command);
  const evaluatorModules = (values.evaluator ?? []).map((file) => path.resolve(file));
  for (const file of evaluatorModules)
    if (!existsSync(file)) throw new UsageError(`--evaluator ${file} does not exist`, command);
  // Every setting, resolved once by the function createSwitchyardWorker calls for what its caller leaves out.
  let settings: SwitchyardSettings;
  try {
    settings = await settingsFromEnvironment(processEnvironment(), givenConnectionFlags());
  } catch (error) {
    throw new UsageError((error as Error).message, command);
  }
  let mcpConfig: WorkerSetup['mcpConfig'];
  if (values['mcp-config'] !== undefined) {
    const file = path.resolve(values['mcp-config']);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw new UsageError(`--mcp-config ${file} cannot be read: ${(error as Error).message}`, command);
    }
    try {
      mcpConfig = { file, config: JSON.parse(text) as unknown };
    } catch (error) {
      throw new UsageError(`--mcp-config ${file} is not valid JSON: ${(error as Error).message}`, command);
    }
  }
  const { namespace, taskQueue } = serverAddress();
  return {
    cwd,
    namespace,
    taskQueue,
    toolModules,
    evaluatorModules,
    ...(mcpConfig === undefined ? {} : { mcpConfig }),
    settings,
  };
}

/**
 * The worker's native connection, bounded: the SDK's native client keeps retrying a server that refuses the TLS
 * handshake or the key, so a start that has not connected within `CONNECT_TIMEOUT_MS` fails, saying why.
 */
async function connectNative(temporal: TemporalConnectConfig): Promise<NativeConnection> {
  const connecting = NativeConnection.connect({
    ...temporal.connectionOptions,
    ...grpcCompressionFor(temporal.connectionOptions.address),
  });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`Failed to connect before the deadline (${CONNECT_TIMEOUT_MS} ms)`)),
      CONNECT_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([connecting, timeout]);
  } catch (error) {
    void connecting.then(
      (late) => late.close(),
      () => {},
    );
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** Runs the worker until SIGINT/SIGTERM; the Temporal Runtime turns those signals into a clean shutdown. */
async function runWorker(options: {
  /** Where to connect: the resolved flags, environment and profile, or the dev server this command started. */
  temporal: TemporalConnectConfig;
  setup: WorkerSetup;
  logger: PinoLogger;
  stop: Promise<NodeJS.Signals>;
  /** Printed once the worker is ready, after the server's and the bundler's output. */
  onReady?: (worker: Worker, tools: readonly Tool[]) => void;
}): Promise<void> {
  const { setup, logger } = options;
  const customTools = (await Promise.all(setup.toolModules.map(loadToolModule))).flat();
  const evaluators = (await Promise.all(setup.evaluatorModules.map(loadEvaluatorModule))).flat();
  const { temporal } = options;
  const { address } = temporal.connectionOptions;
  let connection: NativeConnection;
  try {
    connection = await unlessStopped(connectNative(temporal), options.stop, (late) => late.close());
  } catch (error) {
    if (error instanceof Stopped) throw error;
    const explained = await connectionFailureMessage(error, temporal);
    if (explained !== undefined) throw new CliError(explained, ExitCode.failed);
    if (isUnreachable(error))
      throw new CliError(unreachableMessage(address, temporal.addressSource), ExitCode.unreachable);
    throw error;
  }
  logger.info({ address, namespace: setup.namespace, ...temporal.security }, connectionLine(temporal));
  const tracing = createTracingFromEnv(setup.settings.environment);
  let mcp: Awaited<ReturnType<typeof connectMcpTools>> | undefined;
  try {
    if (setup.mcpConfig !== undefined) {
      let servers;
      try {
        servers = mcpServersFromConfig(setup.mcpConfig.config, { source: setup.mcpConfig.file });
      } catch (error) {
        throw new UsageError(`--mcp-config ${setup.mcpConfig.file}: ${(error as Error).message}`);
      }
      mcp = await unlessStopped(
        connectMcpTools(servers, { onWarning: (message, details) => logger.warn(details, message) }),
        options.stop,
        (late) => late.close(),
      );
      logger.info({ tools: mcp.tools.map((tool) => tool.name) }, 'MCP tools connected');
    }
    const tools = [...builtinTools(), ...customTools, ...(mcp?.tools ?? [])];
    if (customTools.length > 0)
      logger.info({ tools: customTools.map((tool) => tool.name), modules: setup.toolModules }, 'custom tools loaded');
    let worker: Worker;
    try {
      worker = await unlessStopped(
        createSwitchyardWorker({
          connection,
          namespace: setup.namespace,
          taskQueue: setup.taskQueue,
          defaultCwd: setup.cwd,
          logger,
          tools,
          // No approversFile or operatorRules: the factory takes them from the settings (SWITCHYARD_APPROVERS_FILE and
          // SWITCHYARD_POLICY_FILE), as for every worker (checked above, before anything started).
          settings: { ...setup.settings, temporal },
          ...(tracing.tracer === undefined ? {} : { tracer: tracing.tracer }),
          ...(evaluators.length === 0 ? {} : { evaluators }),
        }),
        options.stop,
      );
    } catch (error) {
      if (error instanceof Stopped) throw error;
      const explained = isPermissionDenied(error) ? await connectionFailureMessage(error, temporal) : undefined;
      if (explained !== undefined) throw new CliError(explained, ExitCode.failed);
      if (isUnreachable(error))
        throw new CliError(unreachableMessage(address, temporal.addressSource), ExitCode.unreachable);
      throw error;
    }
    logger.info(
      {
        taskQueue: worker.options.taskQueue,
        namespace: setup.namespace,
        address,
        identity: worker.options.identity,
      },
      'worker started',
    );
    const running = worker.run();
    if (options.onReady !== undefined) {
      // After the worker's own start-up lines, so the hint is the last thing on the screen.
      for (let waited = 0; worker.getState() === 'INITIALIZED' && waited < 5_000; waited += 50)
        await new Promise((resolve) => setTimeout(resolve, 50));
      // The SDK logs its state change a moment after the state changes.
      await new Promise((resolve) => setTimeout(resolve, 500));
      if (worker.getState() === 'RUNNING') options.onReady(worker, tools);
    }
    await running;
    logger.info('worker stopped');
  } finally {
    await mcp?.close();
    await tracing.shutdown();
    await connection.close();
  }
}

/** The lines `dev` prints last: how to send a first turn, with the namespace and queue when they are not the defaults. */
export function firstTurnHint(options: { address: string; namespace: string; taskQueue: string; cwd: string }): string {
  const { address, namespace, taskQueue, cwd } = options;
  const env = [
    `TEMPORAL_ADDRESS=${address}`,
    ...(namespace === DEFAULT_NAMESPACE ? [] : [`TEMPORAL_NAMESPACE=${namespace}`]),
    ...(taskQueue === DEFAULT_TASK_QUEUE ? [] : [`SWITCHYARD_TASK_QUEUE=${taskQueue}`]),
  ].join(' ');
  // A call that works in any directory: Read the README when there is one, else list the files.
  const call = existsSync(path.join(cwd, 'README.md'))
    ? { id: 'c1', name: 'Read', input: { file_path: 'README.md', limit: 5 } }
    : { id: 'c1', name: 'Glob', input: { pattern: '*' } };
  const calls = JSON.stringify([call]);
  return [
    'Send a first turn from another terminal:',
    `  ${env} ${npxCommand} turn --session demo --calls '${calls}'`,
    `or with the Temporal CLI (\`${npxCommand} temporal-path\` prints where it is):`,
    `  temporal workflow start --address ${address} --namespace ${namespace} --task-queue ${taskQueue} --type ${toolSessionWorkflowType} --workflow-id demo2 --input '${JSON.stringify({ cwd })}'`,
    `  temporal workflow update execute --address ${address} --namespace ${namespace} --workflow-id demo2 --name executeTurn --input '${JSON.stringify({ turnId: 't1', calls: [call] })}' -o json`,
    `Sessions and approvals: ${env} ${npxCommand} sessions | pending | approve ID (${npxCommand} help)`,
  ].join('\n');
}

const WORKER_OPTIONS = {
  cwd: { type: 'string' },
  tools: { type: 'string', multiple: true },
  'mcp-config': { type: 'string' },
  evaluator: { type: 'string', multiple: true },
} as const;
const DEV_OPTIONS = {
  ...WORKER_OPTIONS,
  port: { type: 'string' },
  'ui-port': { type: 'string' },
  'db-file': { type: 'string' },
  headless: { type: 'boolean' },
  'existing-server': { type: 'boolean' },
  'console-port': { type: 'string' },
} as const;

function parsePort(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65_535)
    throw new UsageError(`${name} must be a port number, got "${value}"`, 'dev');
  return port;
}

/** `switchyard worker` and `switchyard dev`: arguments first (nothing starts on a usage error), then the Runtime. */
export async function workerCommand(command: 'worker' | 'dev', args: string[]): Promise<number> {
  const parsed =
    command === 'dev'
      ? parseCommand('dev', args, DEV_OPTIONS, COMMAND_HELP.dev ?? '')
      : parseCommand('worker', args, WORKER_OPTIONS, COMMAND_HELP.worker ?? '');
  if (parsed === undefined) return ExitCode.ok;
  const values = parsed.values as {
    cwd?: string;
    tools?: string[];
    'mcp-config'?: string;
    evaluator?: string[];
    port?: string;
    'ui-port'?: string;
    'db-file'?: string;
    headless?: boolean;
    'existing-server'?: boolean;
    'console-port'?: string;
    json?: boolean;
  };
  const existingServer = values['existing-server'] === true;
  if (command === 'dev' && !existingServer) {
    // Its own server takes no TLS and no key: a flag naming another server means --existing-server.
    const flags = givenConnectionFlags();
    const elsewhere = (
      ['address', 'apiKey', 'tlsCertPath', 'tlsKeyPath', 'tlsCaPath', 'tlsServerName', 'profile'] as const
    )
      .filter((name) => flags[name] !== undefined)
      .map((name) => `--${name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`);
    if (elsewhere.length > 0)
      throw new UsageError(
        `${elsewhere.join(', ')} ${elsewhere.length === 1 ? 'names' : 'name'} a server to join: add --existing-server (without it \`dev\` starts its own server)`,
        'dev',
      );
  }
  if (existingServer) {
    // The two modes of `dev`: its own server (the default) or the one TEMPORAL_ADDRESS names; the server's options
    // mean nothing in the second.
    const serverOnly = (['port', 'ui-port', 'db-file', 'headless'] as const).filter(
      (name) => values[name] !== undefined,
    );
    if (serverOnly.length > 0)
      throw new UsageError(
        `--existing-server starts no server: ${serverOnly.map((name) => `--${name}`).join(', ')} cannot be used with it`,
        'dev',
      );
  }
  const setup = await workerSetup(command, values);
  const port = parsePort(values.port, '--port') ?? 7233;
  const uiPort = parsePort(values['ui-port'], '--ui-port') ?? port + 1000;
  const consolePort = parsePort(values['console-port'], '--console-port') ?? uiPort + 1;
  const logger = createLogger({
    logs: values.json === true ? { ...setup.settings.logs, format: 'json' } : setup.settings.logs,
  });
  installTemporalRuntime(logger);
  // A signal before the worker runs stops the start; once it runs, the Runtime's own handler shuts it down cleanly.
  // A second signal exits at once.
  let onStop: (signal: NodeJS.Signals) => void = () => {};
  const stop = new Promise<NodeJS.Signals>((resolve) => {
    onStop = resolve;
  });
  const release = onStopSignal((signal) => onStop(signal));
  // Started by npm (`npm start`, `npm run worker`, `npx …`): npm forwards a signal to its shell, which does not pass
  // it on, so a SIGTERM to npm would leave this process, its server and its children behind. Stop when npm goes.
  const unwatch = envValue('npm_command') === undefined ? () => {} : stopWhenParentExits(logger);
  try {
    if (command === 'worker') {
      await runWorker({ temporal: temporalConnection(), setup, logger, stop });
      return ExitCode.ok;
    }
    if (existingServer) {
      const temporal = temporalConnection();
      const { address } = temporal.connectionOptions;
      logger.info(
        { address, namespace: setup.namespace },
        `--existing-server: the worker and the approval console join the server at ${address} (${temporal.addressSource}); no server is started`,
      );
      await devOnExistingServer({ temporal, setup, logger, stop, consolePort });
      return ExitCode.ok;
    }
    const named = temporalConnection();
    if (!named.addressIsDefault) {
      const ignored = named.connectionOptions.address;
      logger.info(
        { ignored },
        `${named.addressSource === 'TEMPORAL_ADDRESS' ? 'TEMPORAL_ADDRESS is set' : `${named.addressSource} names a server`} (${ignored}) but \`dev\` starts its own server; to join that server instead run \`${npxCommand} dev --existing-server\` (or \`${npxCommand} worker\`)`,
      );
    }
    await dev({
      setup,
      logger,
      stop,
      port,
      uiPort,
      consolePort,
      headless: values.headless === true,
      ...(values['db-file'] === undefined ? {} : { dbFile: path.resolve(values['db-file']) }),
    });
    return ExitCode.ok;
  } catch (error) {
    if (error instanceof Stopped) {
      logger.info({ signal: error.signal }, 'stopped before the worker started');
      return error.signal === 'SIGINT' ? ExitCode.interrupted : 143;
    }
    throw error;
  } finally {
    unwatch();
    release();
    // The Runtime keeps the process alive and holds the signal handlers: without this, a failed start would hang.
    await Runtime.instance().shutdown();
  }
}

/**
 * Checks every second whether the parent process is gone (this process was handed to init or a subreaper) and then
 * stops as on SIGTERM: the same clean stop of the worker, the server and the children.
 */
function stopWhenParentExits(logger: PinoLogger): () => void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    logger.warn({ parent }, `the process that started this one (pid ${parent}, npm) is gone: stopping as on SIGTERM`);
    process.kill(process.pid, 'SIGTERM');
  }, 1_000);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * What happens to the background tasks this process started when `dev` stops: with the in-memory server nothing
 * could reach them afterwards, so they are stopped; with `--db-file` their sessions live on in the file, so they are
 * kept, and the log says so and how to stop them.
 */
async function settleBackgroundTasks(logger: PinoLogger, dbFile: string | undefined): Promise<void> {
  const running = await runningTasksStartedHere();
  if (running.length === 0) return;
  const tasks = running.map(({ record }) => ({
    sessionId: record.sessionId,
    taskId: record.taskId,
    pid: record.pid,
    command: record.command,
  }));
  if (dbFile !== undefined) {
    logger.warn(
      { tasks },
      `${running.length} background task(s) keep running: their sessions are kept in ${dbFile}, so TaskStop stops them after the next \`dev --db-file\`; or now: ${tasks.map((task) => `kill -- -${task.pid}`).join('; ')}`,
    );
    return;
  }
  const stopped = await Promise.all(running.map(({ store, record }) => store.stop(record)));
  logger.info(
    { tasks, states: stopped.map((state) => state.status) },
    `stopped ${running.length} background task(s) this worker started (the in-memory server forgets their sessions)`,
  );
}

/** `dev --existing-server`: the worker and the approval console against the server TEMPORAL_ADDRESS names. */
async function devOnExistingServer(options: {
  temporal: TemporalConnectConfig;
  setup: WorkerSetup;
  logger: PinoLogger;
  stop: Promise<NodeJS.Signals>;
  consolePort: number;
}): Promise<void> {
  const { setup, logger, temporal } = options;
  const { address } = temporal.connectionOptions;
  const approvalConsole = await startDevConsole({
    connectionOptions: temporal.connectionOptions,
    namespace: setup.namespace,
    port: options.consolePort,
    onWarning: (message) => logger.warn(message),
  });
  try {
    await runWorker({
      temporal,
      setup,
      logger,
      stop: options.stop,
      onReady: (_worker, tools) => {
        const lines = [
          '',
          `Temporal server: ${address} (namespace ${setup.namespace}; not started by this command: --existing-server)`,
          ...(approvalConsole === undefined ? [] : [approvalConsole.line]),
          `Switchyard worker: task queue ${setup.taskQueue}, ${tools.length} tools, sessions default to cwd ${setup.cwd}`,
          '',
          firstTurnHint({
            address,
            namespace: setup.namespace,
            taskQueue: setup.taskQueue,
            cwd: setup.cwd,
          }),
          '',
          'Press Ctrl-C to stop the worker and the console (the server keeps running).',
          '',
        ];
        process.stderr.write(`${lines.join('\n')}\n`);
      },
    });
  } finally {
    await approvalConsole?.close();
  }
}

async function dev(options: {
  setup: WorkerSetup;
  logger: PinoLogger;
  stop: Promise<NodeJS.Signals>;
  port: number;
  uiPort: number;
  consolePort: number;
  headless: boolean;
  dbFile?: string;
}): Promise<void> {
  const { setup, logger, port, uiPort } = options;
  const { startDevServer } = await loadDevServer();
  let server: DevServer;
  try {
    server = await unlessStopped(
      startDevServer({
        port,
        ui: !options.headless,
        uiPort,
        namespace: setup.namespace,
        env: setup.settings.environment,
        ...(options.dbFile === undefined ? {} : { dbFilename: options.dbFile }),
        // Out of the terminal's process group: Ctrl-C reaches dev alone, which stops the worker before the server.
        ownSession: true,
        onProgress: (message) => logger.info(message),
      }),
      options.stop,
      (late) => late.stop(),
    );
  } catch (error) {
    if (error instanceof Stopped) throw error;
    if ((error as Error).name === 'PortInUseError') {
      const { port: taken, role } = error as InstanceType<typeof PortInUseError>;
      const flag = role === 'gRPC' ? '--port' : '--ui-port';
      throw new CliError(
        `${(error as Error).message}: \`dev\` starts its own server and will not attach to one it did not start. Free port ${taken}, choose another with ${flag} N${role === 'gRPC' ? ' (the Web UI then takes N+1000 unless --ui-port says otherwise)' : ''}, or join the server already there with \`${npxCommand} dev --existing-server\``,
        ExitCode.failed,
      );
    }
    throw new CliError(
      `could not start the Temporal dev server on port ${port} (is another server using it? try --port): ${(error as Error).message}`,
      ExitCode.failed,
    );
  }
  const temporal: TemporalConnectConfig = {
    connectionOptions: { address: server.address },
    namespace: server.namespace,
    addressSource: 'the dev server this command started',
    addressIsDefault: false,
    security: { tls: 'off', apiKey: false },
  };
  const approvalConsole = await startDevConsole({
    connectionOptions: temporal.connectionOptions,
    namespace: setup.namespace,
    port: options.consolePort,
    ...(server.uiUrl === undefined ? {} : { temporalUiUrl: server.uiUrl }),
    onWarning: (message) => logger.warn(message),
  });
  try {
    await runWorker({
      temporal,
      setup,
      logger,
      stop: options.stop,
      onReady: (_worker, tools) => {
        // Last, after the server's banner and the bundler's output, so it is what the screen shows.
        const lines = [
          '',
          `Temporal dev server: ${server.address} (namespace ${server.namespace}; binary ${server.binary.path})`,
          server.uiUrl === undefined
            ? 'Web UI: off (--headless)'
            : `Web UI: ${server.uiUrl}/namespaces/${server.namespace}/workflows`,
          ...(approvalConsole === undefined ? [] : [approvalConsole.line]),
          `Switchyard worker: task queue ${setup.taskQueue}, ${tools.length} tools, sessions default to cwd ${setup.cwd}`,
          '',
          firstTurnHint({
            address: server.address,
            namespace: server.namespace,
            taskQueue: setup.taskQueue,
            cwd: setup.cwd,
          }),
          '',
          options.dbFile === undefined
            ? 'Press Ctrl-C to stop the worker, the server and the background tasks it started (the server keeps no state).'
            : `Press Ctrl-C to stop the worker and the server; the state stays in ${options.dbFile}, and background tasks keep running.`,
          '',
        ];
        process.stderr.write(`${lines.join('\n')}\n`);
      },
    });
  } finally {
    await settleBackgroundTasks(logger, options.dbFile);
    await approvalConsole?.close();
    await server.stop();
    logger.info('dev server stopped');
  }
}
