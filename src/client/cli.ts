import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Logger as PinoLogger } from 'pino';
import { ARTIFACT_RETENTION, DEFAULT_TASK_QUEUE } from '../contracts/defaults.js';
import { toolSessionWorkflowType } from '../contracts/messages.js';
import { FileArtifactStore, dataDirFromEnv } from '../artifacts/file-artifact-store.js';
import { formatBytes } from '../contracts/persisted-output.js';
import { createTracingFromEnv } from '../worker/telemetry.js';
import { builtinTools } from '../tools/builtin.js';
import { connectMcpTools, mcpServersFromConfig } from '../tools/mcp.js';
import { ConsoleUsageError, runConsoleCommand, startDevConsole } from '../console/console-command.js';
import type { DevServer } from '../server/dev-server.js';
import { findTemporalBinary } from '../server/temporal-binary.js';
import { NativeConnection, createSwitchyardWorker, namespaceFromEnv, taskQueueFromEnv } from '../worker/create-worker.js';
import { createLogger } from '../worker/logger.js';
import { installTemporalRuntime } from '../worker/runtime.js';
import { SwitchyardClient } from './switchyard-client.js';
import type { SessionHandle } from './switchyard-client.js';

const DURATION_UNITS_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/** `7d`, `12h`, `30m`, `45s`, `500ms`, `2w` → milliseconds. */
function parseDuration(value: string, name: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$/.exec(value.trim());
  if (match === null) throw new UsageError(`${name} must be a duration such as 30m, 12h, 7d or 2w; got "${value}"`);
  return Number(match[1]) * DURATION_UNITS_MS[match[2] as keyof typeof DURATION_UNITS_MS];
}

function formatDuration(ms: number): string {
  const unit = (['w', 'd', 'h', 'm', 's'] as const).find((candidate) => ms % DURATION_UNITS_MS[candidate] === 0 && ms >= DURATION_UNITS_MS[candidate]);
  return unit === undefined ? `${ms}ms` : `${ms / DURATION_UNITS_MS[unit]}${unit}`;
}

const USAGE = `switchyard — a durable tool-call executor for AI agents, on Temporal

Usage: switchyard <command> [options]

Commands:
  dev             Start a local Temporal dev server (with Web UI) and a Switchyard worker. What \`npm start\` runs.
                  With TEMPORAL_ADDRESS set, no server is started and the worker joins that cluster.
      --port N        gRPC port of the dev server (default 7233)
      --ui-port N     Web UI port (default port + 1000, i.e. 8233)
      --db-file F     keep the server's state in this SQLite file across restarts (default: in memory)
      --headless      no Web UI
      --cwd DIR       working directory of sessions that name none (default: the current directory)
      --mcp-config F  MCP servers to offer as tools, in Claude Code's .mcp.json shape
  worker          Run a worker against TEMPORAL_ADDRESS (default localhost:7233) and TEMPORAL_NAMESPACE.
      --cwd DIR       as for dev
      --mcp-config F  as for dev
  turn            Run one turn on a session, starting the session if needed; prints the TurnResult as JSON.
      --session ID    session (workflow) id (required)
      --calls JSON    the calls: [{"id":"c1","name":"Read","input":{"file_path":"README.md"}}], or @file.json
      --turn-id ID    turn id (default: a new one); repeating it re-attaches instead of running twice
      --cwd DIR       the session's cwd when this starts it
  pending         List the approvals a session waits for (JSON).
      --session ID
  approve         Answer a pending approval; the digest is taken from the pending request unless given.
      --session ID  --request ID  [--decision allow|allow_always|deny (default allow)]  [--reason TEXT]
      [--by NAME]   [--digest SHA256]
  interrupt       Interrupt the session's running turn.
      --session ID  [--reason TEXT]
  events          Print a session's events (JSON lines) from a cursor.
      --session ID  [--since N]  (or: switchyard events ID ...)
      --follow, -f  keep printing new events, and a ToolCallProgress line when a running call's progress changes
                    (from heartbeats: up to 0.8 x heartbeatTimeoutMs behind), until Ctrl-C or the session closes
  tasks           List a session's background tasks, or stop one: switchyard tasks <sessionId> [--stop TASK] [--json]
                  (switchyard tasks --help for details)
  artifact        Print a stored full output: switchyard artifact switchyard-artifact://<session>/<id>
                  (reads the file store under SWITCHYARD_DATA_DIR, the same one the workers write)
  artifacts prune Delete the stored full outputs of sessions that wrote none for a while (retention).
      --older-than AGE  delete session directories idle longer than AGE: 30m, 12h, 7d, 2w (default ${formatDuration(ARTIFACT_RETENTION.maxAgeMs)})
      --dry-run         only list what would be deleted
  console         The approval console (web page on 127.0.0.1:8234): pending approvals, timelines, decisions.
                  \`switchyard console --help\` for its options; \`dev\` starts one on the Web UI port + 1.
  temporal-path   Find or build the temporal CLI (DESIGN.md §6 order) and print its path.
  help            This text.

Environment:
  TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE     an existing cluster (default: an embedded dev server for dev)
  SWITCHYARD_TASK_QUEUE                    task queue (default ${DEFAULT_TASK_QUEUE})
  SWITCHYARD_MAX_TOOL_CONCURRENCY          largest concurrent group (default 10)
  SWITCHYARD_OTEL_CONSOLE=1                print a span per tool call to the console (library users pass a tracer)
  SWITCHYARD_DATA_DIR                      artifact store and background task root (default ~/.local/share/switchyard)
  SWITCHYARD_TRUSTED_WORKSPACES            :-separated paths whose workspaces' .switchyard/.claude settings hooks load
  SWITCHYARD_ENV_EXCLUDE, SWITCHYARD_ENV_INCLUDE  comma-separated name globs: drop more env vars from Bash and
                                           hooks / pass ones that look like secrets (*KEY*, *SECRET*, *TOKEN*...)
  SWITCHYARD_BASH_MAX_SPOOL_BYTES          output bytes one Bash call may write before it is stopped (default 64 MiB)
  SWITCHYARD_LOG_LEVEL, SWITCHYARD_LOG_FORMAT  pino level (default info); json or pretty (default: pretty on a TTY)
  TEMPORAL_CLI_PATH, SWITCHYARD_CACHE_DIR  where the temporal binary is, or is cached/built (~/.cache/switchyard)
`;

class UsageError extends Error {}

function parsePort(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new UsageError(`${name} must be a port number, got "${value}"`);
  return port;
}

/** Runs the worker until SIGINT/SIGTERM; the Temporal Runtime turns those signals into a clean shutdown. */
async function runWorker(options: { address: string; namespace: string; cwd: string; logger: PinoLogger; mcpConfig?: string }): Promise<void> {
  const connection = await NativeConnection.connect({ address: options.address });
  const tracing = createTracingFromEnv(process.env);
  const mcp =
    options.mcpConfig === undefined
      ? undefined
      : await connectMcpTools(mcpServersFromConfig(JSON.parse(await readFile(options.mcpConfig, 'utf8')) as unknown, { source: options.mcpConfig }), {
          onWarning: (message, details) => options.logger.warn(details, message),
        });
  if (mcp !== undefined) options.logger.info({ tools: mcp.tools.map((tool) => tool.name) }, 'MCP tools connected');
  try {
    const worker = await createSwitchyardWorker({
      connection,
      namespace: options.namespace,
      defaultCwd: options.cwd,
      logger: options.logger,
      tools: [...builtinTools(), ...(mcp?.tools ?? [])],
      ...(tracing.tracer === undefined ? {} : { tracer: tracing.tracer }),
    });
    options.logger.info({ taskQueue: worker.options.taskQueue, namespace: options.namespace, address: options.address }, 'worker started');
    await worker.run();
    options.logger.info('worker stopped');
  } finally {
    await mcp?.close();
    await tracing.shutdown();
    await connection.close();
  }
}

/**
 * How to run this CLI again: in a clone (the sources, through tsx) `npx switchyard` is the clone's own bin; anywhere
 * else it would fetch an unrelated npm package of that name, so the package's own name.
 */
const npxCommand = import.meta.url.endsWith('.ts') ? 'npx switchyard' : 'npx temporal-switchyard';

function firstTurnHint(server: { address: string; namespace: string }, cwd: string): string {
  const taskQueue = taskQueueFromEnv();
  const file = path.join(cwd, 'README.md');
  return [
    'Send a first turn from another terminal, with the Temporal CLI:',
    `  temporal workflow start --address ${server.address} --namespace ${server.namespace} --task-queue ${taskQueue} --type ${toolSessionWorkflowType} --workflow-id demo --input '{}'`,
    `  temporal workflow update execute --address ${server.address} --namespace ${server.namespace} --workflow-id demo --name executeTurn --input '{"turnId":"t1","calls":[{"id":"c1","name":"Read","input":{"file_path":"${file}","limit":5}}]}'`,
    'or with Switchyard\'s own CLI:',
    `  TEMPORAL_ADDRESS=${server.address} ${npxCommand} turn --session demo2 --calls '[{"id":"c1","name":"Read","input":{"file_path":"README.md","limit":5}}]'`,
  ].join('\n');
}

/**
 * The dev server module, loaded only by `dev`: it needs `@temporalio/testing`, an optional dependency that library
 * users (client and worker only) may leave out with `npm install --omit=optional`.
 */
async function loadDevServer(): Promise<typeof import('../server/dev-server.js')> {
  try {
    return await import('../server/dev-server.js');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' && String((error as Error).message).includes('@temporalio/testing')) {
      throw new Error('`switchyard dev` needs the optional dependency @temporalio/testing; install it (npm install @temporalio/testing@1.24.0) or point TEMPORAL_ADDRESS at a running server', { cause: error });
    }
    throw error;
  }
}

async function dev(args: string[], logger: PinoLogger): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { port: { type: 'string' }, 'ui-port': { type: 'string' }, 'db-file': { type: 'string' }, headless: { type: 'boolean' }, cwd: { type: 'string' }, 'mcp-config': { type: 'string' } },
    strict: true,
  });
  const cwd = path.resolve(values.cwd ?? process.cwd());
  const namespace = namespaceFromEnv();
  const mcpConfig = values['mcp-config'] === undefined ? {} : { mcpConfig: path.resolve(values['mcp-config']) };
  if (process.env.TEMPORAL_ADDRESS) {
    logger.info({ address: process.env.TEMPORAL_ADDRESS }, 'TEMPORAL_ADDRESS is set: using that cluster, no embedded server');
    await runWorker({ address: process.env.TEMPORAL_ADDRESS, namespace, cwd, logger, ...mcpConfig });
    return;
  }
  const port = parsePort(values.port, '--port') ?? 7233;
  const uiPort = parsePort(values['ui-port'], '--ui-port') ?? port + 1000;
  const { startDevServer } = await loadDevServer();
  let server: DevServer | undefined;
  try {
    server = await startDevServer({
      port,
      ui: values.headless !== true,
      uiPort,
      namespace,
      ...(values['db-file'] === undefined ? {} : { dbFilename: path.resolve(values['db-file']) }),
      onProgress: (message) => logger.info(message),
    });
  } catch (error) {
    throw new Error(`Could not start the Temporal dev server on port ${port} (is another server using it? try --port): ${(error as Error).message}`, { cause: error });
  }
  const approvalConsole = await startDevConsole({
    address: server.address,
    namespace,
    port: uiPort + 1,
    ...(server.uiUrl === undefined ? {} : { temporalUiUrl: server.uiUrl }),
    onWarning: (message) => logger.warn(message),
  });
  try {
    const lines = [
      '',
      `Temporal dev server: ${server.address} (namespace ${server.namespace}; binary ${server.binary.path})`,
      server.uiUrl === undefined ? 'Web UI: off (--headless)' : `Web UI: ${server.uiUrl}/namespaces/${server.namespace}/workflows`,
      ...(approvalConsole === undefined ? [] : [approvalConsole.line]),
      `Switchyard worker: task queue ${taskQueueFromEnv()}, sessions default to cwd ${cwd}`,
      '',
      firstTurnHint(server, cwd),
      '',
      'Press Ctrl-C to stop the worker and the server.',
      '',
    ];
    process.stderr.write(`${lines.join('\n')}\n`);
    await runWorker({ address: server.address, namespace, cwd, logger, ...mcpConfig });
  } finally {
    await approvalConsole?.close();
    await server.stop();
    logger.info('dev server stopped');
  }
}

async function turn(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { session: { type: 'string' }, calls: { type: 'string' }, 'turn-id': { type: 'string' }, cwd: { type: 'string' } },
    strict: true,
  });
  if (values.session === undefined) throw new UsageError('turn needs --session ID');
  if (values.calls === undefined) throw new UsageError('turn needs --calls JSON (or @file.json)');
  const text = values.calls.startsWith('@') ? await readFile(values.calls.slice(1), 'utf8') : values.calls;
  let calls: unknown;
  try {
    calls = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--calls is not valid JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(calls)) throw new UsageError('--calls must be a JSON array of {id, name, input}');
  const client = await SwitchyardClient.connect({ taskQueue: taskQueueFromEnv() });
  try {
    const turnId = values['turn-id'] ?? `turn-${Date.now().toString(36)}`;
    const result = await client.executeTurnWithStart(values.session, { turnId, calls }, values.cwd === undefined ? {} : { cwd: path.resolve(values.cwd) });
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await client.client.connection.close();
  }
}

async function withClient<T>(body: (client: SwitchyardClient) => Promise<T>): Promise<T> {
  const client = await SwitchyardClient.connect({ taskQueue: taskQueueFromEnv() });
  try {
    return await body(client);
  } finally {
    await client.client.connection.close();
  }
}

async function sessionCommand(command: 'pending' | 'approve' | 'interrupt' | 'events', args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      session: { type: 'string' },
      request: { type: 'string' },
      decision: { type: 'string' },
      reason: { type: 'string' },
      by: { type: 'string' },
      digest: { type: 'string' },
      since: { type: 'string' },
      follow: { type: 'boolean', short: 'f' },
    },
    strict: true,
    // `switchyard events <sessionId> --follow`: the session may come first, without --session.
    allowPositionals: command === 'events',
  });
  if (positionals.length > 1 || (positionals.length === 1 && values.session !== undefined)) throw new UsageError(`${command} takes one session: --session ID or a single argument`);
  const sessionId = values.session ?? positionals[0];
  if (sessionId === undefined) throw new UsageError(`${command} needs --session ID`);
  await withClient(async (client) => {
    const session = client.session(sessionId);
    switch (command) {
      case 'pending':
        process.stdout.write(`${JSON.stringify(await session.pendingApprovals(), null, 2)}\n`);
        return;
      case 'approve': {
        if (values.request === undefined) throw new UsageError('approve needs --request ID (see `switchyard pending`)');
        const decision = values.decision ?? 'allow';
        if (decision !== 'allow' && decision !== 'allow_always' && decision !== 'deny') {
          throw new UsageError(`--decision must be allow, allow_always or deny; got "${decision}"`);
        }
        let digest = values.digest;
        if (digest === undefined) {
          const request = (await session.pendingApprovals()).find((candidate) => candidate.requestId === values.request);
          if (request === undefined) throw new UsageError(`session ${sessionId} has no pending approval ${values.request}`);
          digest = request.inputDigest;
        }
        await session.approve({
          requestId: values.request,
          decision,
          inputDigest: digest,
          by: values.by ?? process.env.USER ?? 'cli',
          ...(values.reason === undefined ? {} : { reason: values.reason }),
        });
        process.stderr.write(`sent ${decision} for ${values.request}\n`);
        return;
      }
      case 'interrupt':
        await session.interrupt(values.reason);
        process.stderr.write(`interrupt sent to ${sessionId}\n`);
        return;
      case 'events': {
        const since = values.since === undefined ? 0 : Number(values.since);
        if (!Number.isInteger(since) || since < 0) throw new UsageError('--since must be a non-negative integer');
        if (values.follow === true) {
          await followEvents(session, since);
          return;
        }
        const page = await session.events(since);
        for (const event of page.events) process.stdout.write(`${JSON.stringify(event)}\n`);
        process.stderr.write(`next cursor: ${page.next}\n`);
        return;
      }
      default: {
        const exhaustive: never = command;
        throw new Error(`unknown command ${String(exhaustive)}`);
      }
    }
  });
}

/** How often `events --follow` asks for new events and progress; progress itself lags by the heartbeat throttle. */
const FOLLOW_POLL_MS = 500;

/**
 * `events --follow`: prints new events as JSON lines and, between them, a `ToolCallProgress` line whenever a running
 * call's progress changes (from heartbeat details, not history), until SIGINT/SIGTERM or the session closes.
 */
async function followEvents(session: SessionHandle, since: number): Promise<void> {
  let stop: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  let running = true;
  const onSignal = (): void => {
    running = false;
    stop();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const lastShown = new Map<string, string>();
  let cursor = since;
  try {
    while (running) {
      const page = await session.events(cursor);
      for (const event of page.events) process.stdout.write(`${JSON.stringify(event)}\n`);
      cursor = page.next;
      const progress = await session.progress();
      const live = new Set<string>();
      for (const entry of progress) {
        const key = `${entry.turnId}/${entry.callId}`;
        live.add(key);
        const shown = `${entry.reportedAt ?? ''}|${entry.message ?? ''}|${entry.outputTail ?? ''}`;
        if (entry.reportedAt === undefined || lastShown.get(key) === shown) continue;
        lastShown.set(key, shown);
        process.stdout.write(`${JSON.stringify({ type: 'ToolCallProgress', ...entry })}\n`);
      }
      for (const key of lastShown.keys()) if (!live.has(key)) lastShown.delete(key);
      const { status } = await session.workflow.describe();
      if (status.name !== 'RUNNING') {
        process.stderr.write(`session ${session.sessionId} is ${status.name.toLowerCase()}; next cursor: ${cursor}\n`);
        return;
      }
      await Promise.race([stopped, new Promise((resolve) => setTimeout(resolve, FOLLOW_POLL_MS))]);
    }
    process.stderr.write(`next cursor: ${cursor}\n`);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

const ARTIFACTS_PRUNE_USAGE = `Usage: switchyard artifacts prune [--older-than AGE] [--dry-run]

Deletes the artifact directories of sessions that stored no full output for longer than AGE, from the file store
under SWITCHYARD_DATA_DIR (default ~/.local/share/switchyard). Their switchyard-artifact:// URIs stop resolving.
  --older-than AGE  30m, 12h, 7d, 2w... (default ${formatDuration(ARTIFACT_RETENTION.maxAgeMs)})
  --dry-run         only list what would be deleted
`;

/** `switchyard artifacts prune`: artifact retention, run by hand or from cron. */
async function artifactsCommand(args: string[]): Promise<number> {
  const [subcommand, ...rest] = args;
  if (subcommand !== 'prune') throw new UsageError(`artifacts needs a subcommand: prune${subcommand === undefined ? '' : ` (got "${subcommand}")`}`);
  const { values } = parseArgs({ args: rest, options: { 'older-than': { type: 'string' }, 'dry-run': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, strict: true });
  if (values.help === true) {
    process.stdout.write(ARTIFACTS_PRUNE_USAGE);
    return 0;
  }
  const olderThanMs = values['older-than'] === undefined ? ARTIFACT_RETENTION.maxAgeMs : parseDuration(values['older-than'], '--older-than');
  const dryRun = values['dry-run'] === true;
  const store = new FileArtifactStore(dataDirFromEnv());
  const report = await store.prune({ olderThanMs, dryRun });
  const verb = dryRun ? 'would remove' : 'removed';
  for (const entry of report.removed) {
    process.stdout.write(`${verb} ${entry.session} (${formatBytes(entry.bytes)}, last written ${entry.lastModified.toISOString()})\n`);
  }
  const bytes = report.removed.reduce((sum, entry) => sum + entry.bytes, 0);
  const sessions = `${report.removed.length} session${report.removed.length === 1 ? '' : 's'}`;
  process.stdout.write(`${verb} ${sessions}, kept ${report.kept} (${formatBytes(bytes)}; older than ${formatDuration(olderThanMs)}, in ${store.root})\n`);
  return 0;
}

const TASKS_USAGE = `Usage: switchyard tasks <sessionId> [--stop TASK_ID] [--json]

Lists the session's background tasks (Bash calls with run_in_background), as the session last saw them (query
backgroundTasks): a task shows "running" until a TaskOutput or TaskStop call saw it end, or the session ended.
  --stop TASK_ID  stop that task: runs a TaskStop call as a turn of its own on the session (turn id
                  tasks-stop-<task>-<time>), through the session's permission rules, so it is recorded like any call
                  and waits for a running turn to finish first
  --json          print JSON (the task list, or the TaskStop call's ToolResult)
`;

/** `switchyard tasks`: a session's background tasks (query `backgroundTasks`), and TaskStop from the command line. */
async function tasksCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, options: { stop: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  if (values.help === true) {
    process.stdout.write(TASKS_USAGE);
    return 0;
  }
  const [sessionId, ...extra] = positionals;
  if (sessionId === undefined || extra.length > 0) throw new UsageError('tasks needs exactly one session id: switchyard tasks <sessionId> [--stop TASK_ID] [--json]');
  return withClient(async (client) => {
    const session = client.session(sessionId);
    if (values.stop !== undefined) {
      const taskId = values.stop;
      const turnId = `tasks-stop-${taskId}-${Date.now().toString(36)}`;
      const turnResult = await session.executeTurn({ turnId, calls: [{ id: 'stop', name: 'TaskStop', input: { task_id: taskId } }] });
      const result = turnResult.results[0];
      if (result === undefined) throw new Error(`the TaskStop turn ${turnId} returned no result`);
      process.stdout.write(values.json === true ? `${JSON.stringify(result, null, 2)}\n` : `${result.modelContent}\n`);
      return result.isError ? 1 : 0;
    }
    const tasks = await session.backgroundTasks();
    if (values.json === true) {
      process.stdout.write(`${JSON.stringify(tasks, null, 2)}\n`);
      return 0;
    }
    if (tasks.length === 0) {
      process.stdout.write(`session ${sessionId} has no background tasks\n`);
      return 0;
    }
    for (const task of tasks) {
      const status = task.status === 'exited' ? `exited ${task.exitCode ?? '?'}` : task.status;
      process.stdout.write(`${task.taskId}  ${status.padEnd(10)}  ${task.startedAt}  ${task.command}\n`);
    }
    return 0;
  });
}

/** Entry point of the `switchyard` command; returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  let logger: PinoLogger | undefined;
  try {
    switch (command) {
      case 'dev':
      case 'worker': {
        logger = createLogger();
        installTemporalRuntime(logger);
        if (command === 'dev') {
          await dev(rest, logger);
        } else {
          const { values } = parseArgs({ args: rest, options: { cwd: { type: 'string' }, 'mcp-config': { type: 'string' } }, strict: true });
          await runWorker({
            address: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233',
            namespace: namespaceFromEnv(),
            cwd: path.resolve(values.cwd ?? process.cwd()),
            logger,
            ...(values['mcp-config'] === undefined ? {} : { mcpConfig: path.resolve(values['mcp-config']) }),
          });
        }
        return 0;
      }
      case 'turn':
        await turn(rest);
        return 0;
      case 'pending':
      case 'approve':
      case 'interrupt':
      case 'events':
        await sessionCommand(command, rest);
        return 0;
      case 'artifact': {
        const uri = rest[0];
        if (uri === undefined || rest.length > 1) throw new UsageError('artifact needs exactly one URI: switchyard artifact switchyard-artifact://<session>/<id>');
        const store = new FileArtifactStore(dataDirFromEnv());
        // Bytes as stored: an image artifact can be redirected to a file.
        process.stdout.write(await store.readBytes(uri));
        return 0;
      }
      case 'artifacts':
        return await artifactsCommand(rest);
      case 'tasks':
        return await tasksCommand(rest);
      case 'console':
        try {
          return await runConsoleCommand(rest);
        } catch (error) {
          throw error instanceof ConsoleUsageError ? new UsageError(error.message) : error;
        }
      case 'temporal-path': {
        const binary = await findTemporalBinary({ onProgress: (message) => process.stderr.write(`${message}\n`) });
        if (binary === undefined) {
          process.stderr.write('No temporal binary found and no Go toolchain to build one; install the Temporal CLI or Go.\n');
          return 1;
        }
        process.stdout.write(`${binary.path}\n`);
        return 0;
      }
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(USAGE);
        return command === undefined ? 1 : 0;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    const usage = error instanceof UsageError || (error as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS');
    const message = error instanceof Error ? error.message : String(error);
    if (logger !== undefined && !usage) logger.error({ err: error }, message);
    else process.stderr.write(`switchyard: ${message}\n${usage ? 'Run `switchyard help` for usage.\n' : ''}`);
    return usage ? 2 : 1;
  }
}
