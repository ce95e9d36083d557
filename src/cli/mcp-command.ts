import { createHash, randomBytes } from 'node:crypto';
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { mcpTokenFromEnv, processEnvironment } from '../config/environment.js';
import { clientSecurityLine, settingsFromEnvironment } from '../config/settings.js';
import { sessionOptionsSchema } from '../contracts/schemas.js';
import { permissionModes } from '../contracts/session.js';
import type { PermissionMode, SessionOptions } from '../contracts/session.js';
import { formatZodError } from '../contracts/tool-call.js';
import { SwitchyardGateway } from '../gateway/mcp-gateway.js';
import { startGatewayHttp } from '../gateway/http-transport.js';
import { builtinTools } from '../tools/builtin.js';
import type { Tool } from '../tools/define-tool.js';
import { validateSessionOptions } from '../client/switchyard-client.js';
import {
  ExitCode,
  UsageError,
  givenConnectionFlags,
  connectClient,
  connectionLine,
  onStopSignal,
  parseCommand,
  temporalConnection,
} from './common.js';
import { COMMAND_HELP } from './help.js';

const MCP_OPTIONS = {
  session: { type: 'string' },
  cwd: { type: 'string' },
  'permission-mode': { type: 'string' },
  allow: { type: 'string', multiple: true },
  ask: { type: 'string', multiple: true },
  deny: { type: 'string', multiple: true },
  settings: { type: 'string' },
  tools: { type: 'string', multiple: true },
  'mcp-config': { type: 'string' },
  http: { type: 'string' },
  'token-file': { type: 'string' },
  'batch-window': { type: 'string' },
} as const;

/** The session a gateway uses when none is named: one per working directory, so a restarted client finds its calls. */
export function defaultGatewaySession(cwd: string): string {
  const base =
    path
      .basename(cwd)
      .replace(/[^A-Za-z0-9_.-]/g, '_')
      .slice(0, 40) || 'root';
  return `mcp-${base}-${createHash('sha256').update(cwd).digest('hex').slice(0, 8)}`;
}

async function readJsonFile(file: string, option: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`${option} ${file} cannot be read: ${(error as Error).message}`, 'mcp');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(`${option} ${file} is not valid JSON: ${(error as Error).message}`, 'mcp');
  }
}

/** The session options from `--settings FILE` and the flags (flags win; rule lists add up). */
async function gatewaySessionOptions(values: {
  cwd: string;
  settings?: string;
  'permission-mode'?: string;
  allow?: string[];
  ask?: string[];
  deny?: string[];
}): Promise<SessionOptions> {
  let base: SessionOptions = {};
  if (values.settings !== undefined) {
    const parsed = sessionOptionsSchema.safeParse(await readJsonFile(path.resolve(values.settings), '--settings'));
    if (!parsed.success) throw new UsageError(`--settings ${values.settings}: ${formatZodError(parsed.error)}`, 'mcp');
    base = parsed.data;
  }
  const mode = values['permission-mode'];
  if (mode !== undefined && !(permissionModes as readonly string[]).includes(mode)) {
    throw new UsageError(`--permission-mode must be one of ${permissionModes.join(', ')}; got "${mode}"`, 'mcp');
  }
  const rules = {
    allow: [...(base.rules?.allow ?? []), ...(values.allow ?? [])],
    ask: [...(base.rules?.ask ?? []), ...(values.ask ?? [])],
    deny: [...(base.rules?.deny ?? []), ...(values.deny ?? [])],
  };
  const options: SessionOptions = {
    ...base,
    cwd: values.cwd,
    ...(mode === undefined ? {} : { permissionMode: mode as PermissionMode }),
    rules: Object.fromEntries(Object.entries(rules).filter(([, list]) => list.length > 0)),
  };
  try {
    return validateSessionOptions(options);
  } catch (error) {
    throw new UsageError((error as Error).message, 'mcp');
  }
}

/** The tools `tools/list` shows: the built-ins, plus what `--tools` and `--mcp-config` add (as on the worker). */
async function gatewayTools(values: {
  tools?: string[];
  'mcp-config'?: string;
}): Promise<{ tools: Tool[]; close(): Promise<void> }> {
  const tools: Tool[] = [...builtinTools()];
  if ((values.tools ?? []).length > 0) {
    const { loadToolModule } = await import('./worker-commands.js');
    for (const file of values.tools ?? []) tools.push(...(await loadToolModule(path.resolve(file))));
  }
  if (values['mcp-config'] === undefined) return { tools, close: async () => {} };
  const file = path.resolve(values['mcp-config']);
  const { connectMcpTools, mcpServersFromConfig } = await import('../tools/mcp/mcp.js');
  let servers;
  try {
    servers = mcpServersFromConfig(await readJsonFile(file, '--mcp-config'), { source: file });
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`--mcp-config ${file}: ${(error as Error).message}`, 'mcp');
  }
  const mcp = await connectMcpTools(servers, {
    onWarning: (message) => process.stderr.write(`switchyard mcp: ${message}\n`),
  });
  tools.push(...mcp.tools);
  return { tools, close: () => mcp.close() };
}

/**
 * `switchyard mcp`: Switchyard as an MCP server. Over stdio (the default) stdout carries only MCP messages; what a
 * person should read goes to stderr. With `--http PORT`, streamable HTTP on 127.0.0.1 with a bearer token.
 */
export async function mcpCommand(args: string[]): Promise<number> {
  const parsed = parseCommand('mcp', args, MCP_OPTIONS, COMMAND_HELP.mcp ?? '');
  if (parsed === undefined) return ExitCode.ok;
  const { values } = parsed;
  const cwd = path.resolve(values.cwd ?? process.cwd());
  const cwdStat = await stat(cwd).catch(() => undefined);
  if (cwdStat?.isDirectory() !== true) throw new UsageError(`--cwd ${cwd} is not a directory`, 'mcp');
  const sessionId = values.session ?? defaultGatewaySession(cwd);
  const sessionOptions = await gatewaySessionOptions({ ...values, cwd });
  let httpPort: number | undefined;
  if (values.http !== undefined) {
    httpPort = Number(values.http);
    if (!Number.isInteger(httpPort) || httpPort < 0 || httpPort > 65_535)
      throw new UsageError(`--http must be a port number (0: any free one); got "${values.http}"`, 'mcp');
  }
  let batchWindowMs: number | undefined;
  if (values['batch-window'] !== undefined) {
    batchWindowMs = Number(values['batch-window']);
    if (!Number.isInteger(batchWindowMs) || batchWindowMs < 0 || batchWindowMs > 10_000)
      throw new UsageError(`--batch-window must be 0-10000 ms; got "${values['batch-window']}"`, 'mcp');
  }
  // Every setting checked at start (a bad one stops the gateway, naming it), as every entry point does.
  try {
    await settingsFromEnvironment(processEnvironment(), givenConnectionFlags());
  } catch (error) {
    throw new UsageError((error as Error).message, 'mcp');
  }
  const listing = await gatewayTools(values);
  const switchyard = await connectClient();
  const temporal = temporalConnection();
  process.stderr.write(`switchyard mcp: ${connectionLine(temporal)}\n`);
  const security = clientSecurityLine(temporal, {
    transport: httpPort === undefined ? 'stdio' : 'http',
    ...(httpPort === undefined ? {} : { token: mcpTokenFromEnv() === undefined ? 'random' : 'SWITCHYARD_MCP_TOKEN' }),
  });
  process.stderr.write(`switchyard mcp: ${security.message}\n`);
  const gateway = new SwitchyardGateway({
    switchyard,
    sessionId,
    sessionOptions,
    tools: listing.tools,
    ...(batchWindowMs === undefined ? {} : { batchWindowMs }),
  });
  let finish: (code: number) => void = () => {};
  const finished = new Promise<number>((resolve) => {
    finish = resolve;
  });
  const release = onStopSignal((signal) => finish(signal === 'SIGINT' ? ExitCode.interrupted : 143));
  let closeTransport: () => Promise<void> = async () => {};
  try {
    if (httpPort === undefined) {
      const transport = new StdioServerTransport();
      transport.onclose = () => finish(ExitCode.ok);
      // stdin closing is how an MCP client ends a stdio server.
      process.stdin.once('end', () => finish(ExitCode.ok));
      await gateway.createServer().connect(transport);
      closeTransport = () => transport.close();
      process.stderr.write(
        `switchyard mcp: serving session ${sessionId} (task queue ${switchyard.taskQueue}, cwd ${cwd}) over stdio\n`,
      );
    } else {
      const configuredToken = mcpTokenFromEnv();
      const token = configuredToken ?? randomBytes(24).toString('base64url');
      const http = await startGatewayHttp(gateway, { port: httpPort, token });
      closeTransport = () => http.close();
      if (values['token-file'] !== undefined)
        await writeFile(path.resolve(values['token-file']), `${token}\n`, { mode: 0o600 });
      const shown =
        configuredToken !== undefined
          ? '(the token in SWITCHYARD_MCP_TOKEN)'
          : values['token-file'] !== undefined
            ? `(token in ${values['token-file']})`
            : token;
      process.stderr.write(
        `switchyard mcp: serving session ${sessionId} (task queue ${switchyard.taskQueue}, cwd ${cwd}) at ${http.url}\n`,
      );
      process.stderr.write(`switchyard mcp: send "Authorization: Bearer ${shown}" with every request\n`);
    }
    return await finished;
  } finally {
    release();
    await closeTransport().catch(() => {});
    await listing.close().catch(() => {});
    await switchyard.client.connection.close();
  }
}
