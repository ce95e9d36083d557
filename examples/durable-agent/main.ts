// `npm run example:agent -- "fix the failing test in ./demo"`: runs the durable agent on a fresh copy of the demo
// workspace. Starts what is missing: a Temporal dev server when no server is configured (TEMPORAL_ADDRESS, a
// temporal.toml profile; see README "An existing Temporal cluster") and none answers on localhost:7233,
// the agent's worker in this process (unless --no-worker: run `npx tsx examples/durable-agent/worker.ts` yourself, to
// kill and restart it mid-turn), and the scripted model when ANTHROPIC_API_KEY is not set. Approvals are asked here;
// the console and `switchyard approve` answer them too.
import { cp, mkdtemp } from 'node:fs/promises';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SwitchyardClient } from 'temporal-switchyard';
import type { ApprovalRequest, SessionEvent, SessionHandle } from 'temporal-switchyard';
import { startDevServer } from 'temporal-switchyard/dev-server';
import type { DevServer } from 'temporal-switchyard/dev-server';
import {
  NativeConnection,
  createLogger,
  installTemporalRuntime,
  temporalConnectConfigFromEnv,
} from 'temporal-switchyard/worker';
import { agentTaskQueue, createAgentWorker, modelFromEnv } from './worker.js';
import type { AgentInput, AgentOutcome } from './workflows.js';

const demoDir = fileURLToPath(new URL('./demo/', import.meta.url));

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { 'no-worker': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
});
if (values.help === true) {
  process.stdout.write(
    'usage: npm run example:agent -- ["task"] [--no-worker]\n  default task: "fix the failing test in ./demo"\n',
  );
  process.exit(0);
}
const prompt = positionals.join(' ') || 'fix the failing test in ./demo';

/** Whether something accepts TCP connections at `host:port`. */
function listening(address: string): Promise<boolean> {
  const [host = 'localhost', port = '7233'] = address.split(':');
  return new Promise((resolve) => {
    const socket = connect({ host, port: Number(port), timeout: 1_000 });
    const done = (answer: boolean): void => {
      socket.destroy();
      resolve(answer);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}

const say = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

/** The request as a human should read it: the command, the file and change, or the input. */
function describeRequest(request: ApprovalRequest): string {
  const input = (request.input ?? {}) as Record<string, unknown>;
  if (request.toolName === 'Bash') return `$ ${String(input.command)}`;
  if (request.toolName === 'Edit')
    return `${String(input.file_path)}\n    - ${String(input.old_string)}\n    + ${String(input.new_string)}`;
  if (request.toolName === 'Write')
    return `${String(input.file_path)} (${String(input.content ?? '').length} characters)`;
  return JSON.stringify(input);
}

function describeEvent(event: SessionEvent): string | undefined {
  if (event.type === 'ToolCallStarted') return `  ▶ ${event.toolName} (${event.callId})`;
  if (event.type === 'ToolCallResult') {
    const waited = event.permissionWaitMs > 0 ? ` (${event.permissionWaitMs} ms waiting for approval)` : '';
    return `  ✓ ${event.toolName} ${event.status} in ${event.totalMs} ms${waited}`;
  }
  if (event.type === 'ToolCallError') return `  ✗ ${event.toolName} ${event.status}: ${event.message.slice(0, 200)}`;
  if (event.type === 'PermissionDenied') return `  ✗ denied: ${event.reason}`;
  return undefined;
}

/** Lines from stdin, one at a time; undefined once stdin has ended (then approvals come from elsewhere). */
function lineReader(): (
  stillWanted?: () => Promise<boolean>,
) => Promise<string | undefined | typeof ANSWERED_ELSEWHERE> {
  const lines: string[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  const reader = createInterface({ input: process.stdin });
  reader.on('line', (line) => {
    lines.push(line);
    wake?.();
  });
  reader.once('close', () => {
    ended = true;
    wake?.();
  });
  // Waits for a line; every second asks `stillWanted`, and gives up with ANSWERED_ELSEWHERE when it says no.
  return async (stillWanted) => {
    while (lines.length === 0 && !ended) {
      await Promise.race([new Promise<void>((resolve) => (wake = resolve)), delay(1_000)]);
      if (lines.length === 0 && !ended && stillWanted !== undefined && !(await stillWanted()))
        return ANSWERED_ELSEWHERE;
    }
    return lines.shift();
  };
}

/** What the prompt returns when its question was answered in the console or by `switchyard approve`. */
const ANSWERED_ELSEWHERE = Symbol('answered elsewhere');

/** Asks each new approval here; prints the agent's tool calls as they run. Ends when the workflow does. */
async function superviseAgent(session: SessionHandle, finished: () => boolean): Promise<void> {
  const readLine = lineReader();
  let interactive = true;
  const asked = new Set<string>();
  let since = 0;
  // Queries need a worker: while it is down (killed, restarting) they fail, and the loop just tries again.
  const attempt = async <T>(query: () => Promise<T>): Promise<T | undefined> => query().catch(() => undefined);
  const printEvents = async (): Promise<void> => {
    const page = await attempt(() => session.events(since));
    if (page === undefined) return;
    since = page.next;
    for (const event of page.events) {
      const line = describeEvent(event);
      if (line !== undefined) say(line);
    }
  };
  for (;;) {
    await printEvents();
    if (finished()) return;
    const request = (await attempt(() => session.pendingApprovals()))?.find(
      (candidate) => !asked.has(candidate.requestId),
    );
    if (request === undefined || !interactive) {
      await delay(500);
      continue;
    }
    asked.add(request.requestId);
    say(`\n  ? ${request.toolName} wants approval: ${request.reason ?? ''}\n    ${describeRequest(request)}`);
    say(
      `    [y] allow  [a] always allow (${request.rememberRule ?? request.toolName})  [n] deny — or answer in the console / switchyard approve --session ${session.sessionId} --request ${request.requestId}`,
    );
    // Answered elsewhere (the console, the CLI, another client): the request leaves the pending list.
    const stillPending = async (): Promise<boolean> =>
      (await attempt(() => session.pendingApprovals()))?.some(
        (candidate) => candidate.requestId === request.requestId,
      ) ?? true;
    const line = await readLine(stillPending);
    if (line === ANSWERED_ELSEWHERE) {
      say('    answered elsewhere (console or `switchyard approve`)');
      continue;
    }
    const answer = line?.trim().toLowerCase();
    if (answer === undefined) {
      interactive = false;
      say('    (stdin closed: waiting for an answer from the console or `switchyard approve`)');
      continue;
    }
    const decision = answer.startsWith('a') ? 'allow_always' : answer.startsWith('y') ? 'allow' : 'deny';
    // The signal is recorded by the server even while no worker runs; the workflow takes it when one is back.
    await session.approve({
      requestId: request.requestId,
      decision,
      inputDigest: request.inputDigest,
      by: `${os.userInfo().username} (example:agent)`,
    });
    say(`    sent ${decision}`);
  }
}

async function main(): Promise<void> {
  installTemporalRuntime(
    createLogger({
      env: { SWITCHYARD_LOG_LEVEL: process.env.SWITCHYARD_LOG_LEVEL ?? 'warn', SWITCHYARD_LOG_FORMAT: 'json' },
    }),
  );
  let server: DevServer | undefined;
  // Address, namespace, TLS and API key as the `temporal` CLI resolves them (environment, temporal.toml profile).
  let temporal = temporalConnectConfigFromEnv();
  if (temporal.addressIsDefault && !(await listening(temporal.connectionOptions.address))) {
    say(
      'No Temporal server on localhost:7233: starting a dev server for this run (or run `npm start` in another terminal first).',
    );
    server = await startDevServer({ onProgress: (message) => say(`  ${message}`) });
    temporal = { ...temporal, connectionOptions: { address: server.address }, namespace: server.namespace };
  }
  const { namespace, connectionOptions } = temporal;
  const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-'));
  await cp(demoDir, path.join(workspace, 'demo'), { recursive: true });
  say(`Workspace: ${workspace} (a fresh copy of examples/durable-agent/demo, as ./demo)`);

  let stopWorker = async (): Promise<void> => {};
  if (values['no-worker'] !== true) {
    const { model, scripted } = await modelFromEnv();
    say(
      scripted === undefined
        ? `Model: Anthropic ${model.model ?? 'claude-sonnet-4-5'}`
        : 'Model: scripted (ANTHROPIC_API_KEY is not set; examples/durable-agent/scripted-model.ts answers offline)',
    );
    const connection = await NativeConnection.connect(connectionOptions);
    say('Starting the agent worker (bundling its workflow takes a few seconds)…');
    const worker = await createAgentWorker({ connection, model, namespace });
    const running = worker.run();
    stopWorker = async () => {
      worker.shutdown();
      await running;
      await connection.close();
      await scripted?.close();
    };
  }

  const client = await SwitchyardClient.connect({ connectionOptions, namespace, taskQueue: agentTaskQueue() });
  const workflowId = `agent-${Date.now().toString(36)}`;
  const input: AgentInput = { prompt, cwd: workspace };
  const handle = await client.client.workflow.start('durableAgent', {
    workflowId,
    taskQueue: agentTaskQueue(),
    args: [input],
  });
  say(`Agent ${workflowId} started on task queue ${agentTaskQueue()}: "${prompt}"`);
  let finished = false;
  const outcome = handle.result().finally(() => {
    finished = true;
  }) as Promise<AgentOutcome>;
  await Promise.all([outcome.catch(() => undefined), superviseAgent(client.session(workflowId), () => finished)]);
  try {
    const result = await outcome;
    say(`\nAgent (${result.ending}, ${result.steps} model requests): ${result.text}`);
    say(`Workspace: ${workspace}  (check: cd ${path.join(workspace, 'demo')} && node --test)`);
  } finally {
    await stopWorker();
    await client.client.connection.close();
    await server?.stop();
  }
}

await main();
process.exit(0);
