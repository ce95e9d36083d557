import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { userNameFromEnv } from '../config/environment.js';
import type { ApprovalDecisionRecord, ApprovalRequest } from '../contracts/approval.js';
import { approvalDecisionsQuery } from '../contracts/messages.js';
import type { ToolCall } from '../contracts/tool-call.js';
import type { TurnResult } from '../contracts/tool-result.js';
import type { SessionHandle, SwitchyardClient } from '../client/switchyard-client.js';
import {
  CliError,
  ExitCode,
  UsageError,
  formatElapsed,
  isNotFound,
  onStopSignal,
  parseCommand,
  sessionArgument,
  withClient,
  writeJson,
} from './common.js';
import { COMMAND_HELP } from './help.js';
import { listSessions } from './session-listing.js';

export async function sessionsCommand(args: string[]): Promise<number> {
  const parsed = parseCommand(
    'sessions',
    args,
    { pending: { type: 'boolean' }, all: { type: 'boolean' }, limit: { type: 'string' } },
    COMMAND_HELP.sessions ?? '',
  );
  if (parsed === undefined) return ExitCode.ok;
  const { values } = parsed;
  const limit = values.limit === undefined ? 50 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1)
    throw new UsageError(`--limit must be a positive integer; got "${values.limit}"`, 'sessions');
  return withClient(async (client) => {
    const sessions = await listSessions(client, { pending: values.pending === true, all: values.all === true, limit });
    if (values.json === true) {
      writeJson(sessions);
      return ExitCode.ok;
    }
    if (sessions.length === 0) {
      const what = values.pending === true ? 'waiting for approval' : values.all === true ? '' : 'running';
      process.stdout.write(`no sessions ${what} on task queue ${client.taskQueue}\n`.replace('  ', ' '));
      return ExitCode.ok;
    }
    const width = Math.max(...sessions.map((session) => session.sessionId.length), 'SESSION'.length);
    process.stdout.write(`${'SESSION'.padEnd(width)}  STATUS      PENDING  STARTED${' '.repeat(22)}LABEL\n`);
    for (const session of sessions) {
      // The label (v1.3) last: it is free text, so the columns before it stay aligned.
      process.stdout.write(
        `${session.sessionId.padEnd(width)}  ${session.status.toLowerCase().padEnd(10)}  ${String(session.pendingApprovals).padStart(7)}  ${session.startTime}${session.label === undefined ? '' : `  ${session.label}`}\n`,
      );
    }
    return ExitCode.ok;
  });
}

/** What a pending request would do, for a person: the command, the path, the URL, else the input. */
export function describeRequest(request: ApprovalRequest): string {
  const input = (request.input ?? {}) as Record<string, unknown>;
  for (const key of ['command', 'file_path', 'url', 'path', 'pattern', 'task_id']) {
    if (typeof input[key] === 'string') return `${key === 'command' ? '$ ' : ''}${input[key]}`;
  }
  if (request.preview !== undefined) return request.preview.split('\n')[0] ?? '';
  const json = JSON.stringify(request.input);
  return json.length > 200 ? `${json.slice(0, 199)}…` : json;
}

type SessionRequest = ApprovalRequest & { sessionId: string };

/** Pending approvals of one session, or of every session that waits (visibility, then a query each). */
async function pendingRequests(client: SwitchyardClient, sessionId: string | undefined): Promise<SessionRequest[]> {
  const sessionIds =
    sessionId !== undefined
      ? [sessionId]
      : (await listSessions(client, { pending: true, limit: 100 })).map((session) => session.sessionId);
  const lists = await Promise.all(
    sessionIds.map(async (id) => {
      try {
        return (await client.session(id).pendingApprovals()).map((request) => ({ sessionId: id, ...request }));
      } catch (error) {
        if (isNotFound(error) && sessionId !== undefined)
          throw new CliError(`no session ${id} on this server (see \`switchyard sessions\`)`, ExitCode.notFound);
        if (sessionId === undefined) return []; // closed since visibility listed it
        throw error;
      }
    }),
  );
  return lists.flat().sort((a, b) => a.requestedAt.localeCompare(b.requestedAt));
}

export async function pendingCommand(args: string[]): Promise<number> {
  const parsed = parseCommand('pending', args, { session: { type: 'string' } }, COMMAND_HELP.pending ?? '', {
    positionals: true,
  });
  if (parsed === undefined) return ExitCode.ok;
  const sessionId = sessionArgument('pending', parsed.values, parsed.positionals, false);
  return withClient(async (client) => {
    const requests = await pendingRequests(client, sessionId);
    if (parsed.values.json === true) {
      writeJson(requests);
      return ExitCode.ok;
    }
    if (requests.length === 0) {
      process.stdout.write(
        sessionId === undefined
          ? `no approvals pending on task queue ${client.taskQueue}\n`
          : `session ${sessionId} waits for no approval\n`,
      );
      return ExitCode.ok;
    }
    for (const request of requests) {
      const waited = formatElapsed(Date.now() - Date.parse(request.requestedAt));
      process.stdout.write(
        `${request.requestId}  ${request.toolName}  session ${request.sessionId}  waiting ${waited}\n`,
      );
      process.stdout.write(`  ${describeRequest(request)}\n`);
      if (request.reason !== undefined) process.stdout.write(`  why: ${request.reason}\n`);
      process.stdout.write(
        `  approve: switchyard approve ${request.requestId} --session ${request.sessionId}${request.rememberRule === undefined ? '' : `   (--always remembers ${request.rememberRule})`}\n`,
      );
      process.stdout.write(
        `  deny:    switchyard deny ${request.requestId} --session ${request.sessionId} --reason "..."\n`,
      );
    }
    return ExitCode.ok;
  });
}

/** How long `approve`/`deny` wait for the session's decision log to show their signal. */
const DECISION_WAIT_MS = 10_000;

/** `approve` and `deny`: the approval signal, then the session's own word on whether it took effect. */
/**
 * The pending request `given` names: its whole id, or its first characters as `pending` and `run` show them
 * (`5f0c…`, `5f0c...` or `5f0c`, at least 4 of them); more than one match is a usage error listing them.
 */
export function findRequest<T extends { requestId: string; sessionId: string }>(
  requests: readonly T[],
  given: string,
  command = 'approve',
): T | undefined {
  const exact = requests.find((candidate) => candidate.requestId === given);
  if (exact !== undefined) return exact;
  const prefix = given.replace(/(?:…|\.\.\.)$/u, '');
  if (prefix.length < 4) return undefined;
  const matches = requests.filter((candidate) => candidate.requestId.startsWith(prefix));
  if (matches.length > 1) {
    throw new UsageError(
      `${given} matches ${matches.length} pending requests (${matches.map((match) => `${match.requestId} in ${match.sessionId}`).join(', ')}): give more of the id`,
      command,
    );
  }
  return matches[0];
}

export async function decideCommand(command: 'approve' | 'deny', args: string[]): Promise<number> {
  const parsed = parseCommand(
    command,
    args,
    {
      session: { type: 'string' },
      request: { type: 'string' },
      always: { type: 'boolean' },
      decision: { type: 'string' },
      reason: { type: 'string' },
      by: { type: 'string' },
      digest: { type: 'string' },
      key: { type: 'string' },
      'expires-at': { type: 'string' },
    },
    COMMAND_HELP[command] ?? '',
    { positionals: true },
  );
  if (parsed === undefined) return ExitCode.ok;
  const { values, positionals } = parsed;
  if (positionals.length > 1 || (positionals.length === 1 && values.request !== undefined))
    throw new UsageError(`${command} takes one request id: REQUEST or --request ID`, command);
  const requestId = values.request ?? positionals[0];
  if (requestId === undefined)
    throw new UsageError(`${command} needs the request id (see \`switchyard pending\`)`, command);
  if (command === 'deny' && (values.reason === undefined || values.reason.trim() === '')) {
    throw new UsageError('deny needs --reason "…": the model reads it as the result of the denied call', command);
  }
  let decision: 'allow' | 'allow_always' | 'deny' =
    command === 'deny' ? 'deny' : values.always === true ? 'allow_always' : 'allow';
  if (values.decision !== undefined) {
    // The older spelling, `approve --decision allow|allow_always|deny`, still works.
    if (command === 'deny' || !['allow', 'allow_always', 'deny'].includes(values.decision))
      throw new UsageError(`--decision must be allow, allow_always or deny; got "${values.decision}"`, command);
    decision = values.decision as typeof decision;
  }
  if (values.key === undefined && values['expires-at'] !== undefined)
    throw new UsageError('--expires-at needs --key (only a signed grant carries an expiry)', command);
  return withClient(async (client) => {
    const request = findRequest(await pendingRequests(client, values.session), requestId, command);
    if (request === undefined) {
      const where =
        values.session === undefined ? `any session of task queue ${client.taskQueue}` : `session ${values.session}`;
      throw new CliError(
        `no pending approval ${requestId === '' ? '' : `${requestId} `}in ${where} (already decided? see \`switchyard pending\`)`,
        ExitCode.notFound,
      );
    }
    // The request as the session knows it: a short id given on the command line names it, it is not its id.
    const { requestId: fullId } = request;
    const session = client.session(request.sessionId);
    const seen = await decisionLog(session);
    const lastSeq = seen === undefined ? -1 : Math.max(-1, ...seen.map((record) => record.seq));
    const inputDigest = values.digest ?? request.inputDigest;
    // --key signs the approval (docs/APPROVALS.md): what sessions with approvers require.
    const signed =
      values.key === undefined
        ? { by: values.by ?? userNameFromEnv() ?? 'cli' }
        : await (
            await import('./approver-commands.js')
          ).signedFields({
            keyFile: values.key,
            by: values.by,
            expiresAt: values['expires-at'],
            sessionId: request.sessionId,
            signal: { requestId: fullId, inputDigest, decision },
            command,
          });
    await session.approve({
      requestId: fullId,
      decision,
      inputDigest,
      ...signed,
      ...(values.reason === undefined ? {} : { reason: values.reason }),
    });
    const record = seen === undefined ? undefined : await waitForDecision(session, fullId, lastSeq);
    const what = `${request.toolName} (${describeRequest(request)}) in session ${request.sessionId}`;
    if (values.json === true)
      writeJson(record ?? { requestId: fullId, decision, sessionId: request.sessionId, outcome: 'sent' });
    if (record === undefined) {
      if (values.json !== true)
        process.stderr.write(`sent ${decision} for ${fullId}: ${what} (the session did not confirm it yet)\n`);
      return ExitCode.ok;
    }
    if (record.outcome === 'ignored') {
      const because = record.ignoredBecause === undefined ? '' : `: ${record.ignoredBecause.replaceAll('_', ' ')}`;
      process.stderr.write(
        `session ${request.sessionId} ignored the ${decision} for ${fullId}${because}${record.detail === undefined ? '' : ` (${record.detail})`}\n`,
      );
      return ExitCode.failed;
    }
    if (values.json !== true)
      process.stderr.write(
        `${decision === 'deny' ? 'denied' : decision === 'allow_always' ? 'allowed (always)' : 'allowed'}: ${what}\n`,
      );
    return ExitCode.ok;
  });
}

/** The session's decision log, or undefined when its worker predates the `approvalDecisions` query. */
async function decisionLog(session: SessionHandle): Promise<ApprovalDecisionRecord[] | undefined> {
  try {
    return await session.workflow.query(approvalDecisionsQuery);
  } catch {
    return undefined;
  }
}

async function waitForDecision(
  session: SessionHandle,
  requestId: string,
  afterSeq: number,
): Promise<ApprovalDecisionRecord | undefined> {
  const deadline = Date.now() + DECISION_WAIT_MS;
  while (Date.now() < deadline) {
    const record = (await decisionLog(session))?.find(
      (candidate) => candidate.seq > afterSeq && candidate.requestId === requestId,
    );
    if (record !== undefined) return record;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return undefined;
}

export async function interruptCommand(args: string[]): Promise<number> {
  const parsed = parseCommand(
    'interrupt',
    args,
    { session: { type: 'string' }, reason: { type: 'string' } },
    COMMAND_HELP.interrupt ?? '',
    { positionals: true },
  );
  if (parsed === undefined) return ExitCode.ok;
  const sessionId = sessionArgument('interrupt', parsed.values, parsed.positionals, true) as string;
  return withClient(async (client) => {
    await client.session(sessionId).interrupt(parsed.values.reason);
    if (parsed.values.json === true)
      writeJson({
        sessionId,
        interrupted: true,
        ...(parsed.values.reason === undefined ? {} : { reason: parsed.values.reason }),
      });
    else process.stderr.write(`interrupt sent to ${sessionId}\n`);
    return ExitCode.ok;
  });
}

/** Reads `--calls` (inline JSON or @file) or a calls file: an array of calls, or `{ calls, turnId? }`. */
export async function readCalls(source: string, from: string): Promise<{ calls: ToolCall[]; turnId?: string }> {
  let text: string;
  try {
    text =
      source === '-' ? await readStdin() : source.startsWith('@') ? await readFile(source.slice(1), 'utf8') : source;
  } catch (error) {
    throw new UsageError(`cannot read ${from} ${source.replace(/^@/, '')}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${from} is not valid JSON: ${(error as Error).message}`);
  }
  const object = value as { calls?: unknown; turnId?: unknown };
  const calls = Array.isArray(value)
    ? value
    : typeof value === 'object' && value !== null && Array.isArray(object.calls)
      ? object.calls
      : undefined;
  if (calls === undefined)
    throw new UsageError(`${from} must be a JSON array of {"id","name","input"} calls, or {"calls": [...]}`);
  return { calls: calls as ToolCall[], ...(typeof object.turnId === 'string' ? { turnId: object.turnId } : {}) };
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export const turnSucceeded = (result: TurnResult): boolean =>
  result.results.every((entry) => entry.status === 'success');

export async function turnCommand(args: string[]): Promise<number> {
  const parsed = parseCommand(
    'turn',
    args,
    { session: { type: 'string' }, calls: { type: 'string' }, 'turn-id': { type: 'string' }, cwd: { type: 'string' } },
    COMMAND_HELP.turn ?? '',
  );
  if (parsed === undefined) return ExitCode.ok;
  const { values } = parsed;
  if (values.session === undefined) throw new UsageError('turn needs --session ID', 'turn');
  if (values.calls === undefined) throw new UsageError('turn needs --calls JSON (or @file.json)', 'turn');
  const { calls, turnId } = await readCalls(values.calls, '--calls');
  return withClient(async (client) => {
    const id = values['turn-id'] ?? turnId ?? `turn-${Date.now().toString(36)}`;
    const result = await client.executeTurnWithStart(
      values.session as string,
      { turnId: id, calls },
      values.cwd === undefined ? {} : { cwd: path.resolve(values.cwd) },
    );
    writeJson(result);
    return turnSucceeded(result) ? ExitCode.ok : ExitCode.callsFailed;
  });
}

/** How often `events --follow` asks for new events and progress; progress itself lags by the heartbeat throttle. */
const FOLLOW_POLL_MS = 500;

export async function eventsCommand(args: string[]): Promise<number> {
  const parsed = parseCommand(
    'events',
    args,
    { session: { type: 'string' }, since: { type: 'string' }, follow: { type: 'boolean', short: 'f' } },
    COMMAND_HELP.events ?? '',
    { positionals: true },
  );
  if (parsed === undefined) return ExitCode.ok;
  const { values } = parsed;
  const sessionId = sessionArgument('events', values, parsed.positionals, true) as string;
  const since = values.since === undefined ? 0 : Number(values.since);
  if (!Number.isInteger(since) || since < 0) throw new UsageError('--since must be a non-negative integer', 'events');
  return withClient(async (client) => {
    const session = client.session(sessionId);
    if (values.follow === true) return followEvents(session, since);
    const page = await session.events(since);
    for (const event of page.events) process.stdout.write(`${JSON.stringify(event)}\n`);
    process.stderr.write(`next cursor: ${page.next}\n`);
    return ExitCode.ok;
  });
}

/**
 * `events --follow`: prints new events as JSON lines and, between them, a `ToolCallProgress` line whenever a running
 * call's progress changes (from heartbeat details, not history), until SIGINT/SIGTERM or the session closes.
 */
async function followEvents(session: SessionHandle, since: number): Promise<number> {
  let stop: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  let running = true;
  const release = onStopSignal(() => {
    running = false;
    stop();
  });
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
        return ExitCode.ok;
      }
      await Promise.race([stopped, new Promise((resolve) => setTimeout(resolve, FOLLOW_POLL_MS))]);
    }
    process.stderr.write(`next cursor: ${cursor}\n`);
    return ExitCode.ok;
  } finally {
    release();
  }
}

export async function tasksCommand(args: string[]): Promise<number> {
  const parsed = parseCommand('tasks', args, { stop: { type: 'string' } }, COMMAND_HELP.tasks ?? '', {
    positionals: true,
  });
  if (parsed === undefined) return ExitCode.ok;
  const { values, positionals } = parsed;
  const [sessionId, ...extra] = positionals;
  if (sessionId === undefined || extra.length > 0)
    throw new UsageError(
      'tasks needs exactly one session id: switchyard tasks SESSION [--stop TASK_ID] [--json]',
      'tasks',
    );
  return withClient(async (client) => {
    const session = client.session(sessionId);
    if (values.stop !== undefined) {
      const taskId = values.stop;
      const turnId = `tasks-stop-${taskId}-${Date.now().toString(36)}`;
      const turnResult = await session.executeTurn({
        turnId,
        calls: [{ id: 'stop', name: 'TaskStop', input: { task_id: taskId } }],
      });
      const result = turnResult.results[0];
      if (result === undefined) throw new Error(`the TaskStop turn ${turnId} returned no result`);
      process.stdout.write(values.json === true ? `${JSON.stringify(result, null, 2)}\n` : `${result.modelContent}\n`);
      return result.isError ? ExitCode.callsFailed : ExitCode.ok;
    }
    const tasks = await session.backgroundTasks();
    if (values.json === true) {
      writeJson(tasks);
      return ExitCode.ok;
    }
    if (tasks.length === 0) {
      process.stdout.write(`session ${sessionId} has no background tasks\n`);
      return ExitCode.ok;
    }
    for (const task of tasks) {
      const status = task.status === 'exited' ? `exited ${task.exitCode ?? '?'}` : task.status;
      process.stdout.write(`${task.taskId}  ${status.padEnd(10)}  ${task.startedAt}  ${task.command}\n`);
    }
    return ExitCode.ok;
  });
}
