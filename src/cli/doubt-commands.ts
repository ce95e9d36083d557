import { readFile } from 'node:fs/promises';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { userNameFromEnv } from '../config/environment.js';
import { inDoubtOutcomes } from '../contracts/calls-in-doubt.js';
import type { CallInDoubt, InDoubtOutcome, ResolveInDoubtRequest } from '../contracts/calls-in-doubt.js';
import type { SwitchyardClient } from '../client/switchyard-client.js';
import { signingFromFlags } from './signing-flags.js';
import {
  CliError,
  ExitCode,
  UsageError,
  formatElapsed,
  isNotFound,
  parseCommand,
  withClient,
  writeJson,
} from './common.js';
import { COMMAND_HELP } from './help.js';
import { listSessions } from './session-listing.js';

/** `switchyard doubt list|resolve`: calls whose worker died while they ran, and a person's word on them. */
export async function doubtCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'list') return doubtList(rest);
  if (sub === 'resolve') return doubtResolve(rest);
  if (sub === undefined || sub === '--help' || sub === '-h') {
    process.stdout.write(COMMAND_HELP.doubt ?? '');
    return ExitCode.ok;
  }
  throw new UsageError(`doubt has no subcommand "${sub}" (list or resolve)`, 'doubt');
}

type ListedCall = CallInDoubt & { sessionId: string };

/** The calls in doubt of one session, or of every running session of the task queue (oldest first). */
async function callsInDoubt(client: SwitchyardClient, sessionId: string | undefined): Promise<ListedCall[]> {
  const sessionIds =
    sessionId !== undefined
      ? [sessionId]
      : (await listSessions(client, { limit: 100 })).map((session) => session.sessionId);
  const lists = await Promise.all(
    sessionIds.map(async (id) => {
      try {
        return (await client.session(id).callsInDoubt()).map((call) => ({ sessionId: id, ...call }));
      } catch (error) {
        if (isNotFound(error) && sessionId !== undefined)
          throw new CliError(`no session ${id} on this server (see \`switchyard sessions\`)`, ExitCode.notFound);
        if (sessionId === undefined) return []; // closed since it was listed, or a worker too old to answer
        throw error;
      }
    }),
  );
  return lists.flat().sort((a, b) => a.startedAt.localeCompare(b.startedAt));
}

async function doubtList(args: string[]): Promise<number> {
  const parsed = parseCommand('doubt', args, { session: { type: 'string' } }, COMMAND_HELP.doubt ?? '');
  if (parsed === undefined) return ExitCode.ok;
  const sessionId = parsed.values.session;
  return withClient(async (client) => {
    const calls = await callsInDoubt(client, sessionId);
    if (parsed.values.json === true) {
      writeJson(calls);
      return ExitCode.ok;
    }
    if (calls.length === 0) {
      process.stdout.write(
        sessionId === undefined
          ? `no calls in doubt on task queue ${client.taskQueue}\n`
          : `session ${sessionId} has no call in doubt\n`,
      );
      return ExitCode.ok;
    }
    for (const call of calls) {
      const since = formatElapsed(Date.now() - Date.parse(call.startedAt));
      process.stdout.write(`${call.callId}  ${call.toolName}  session ${call.sessionId}  started ${since} ago\n`);
      process.stdout.write(`  ${call.inputSummary}\n`);
      process.stdout.write(`  idempotency key: ${call.idempotencyKey}\n`);
      process.stdout.write(
        `  settle: switchyard doubt resolve ${call.callId} --session ${call.sessionId} --outcome ran|not-ran|retry\n`,
      );
    }
    return ExitCode.ok;
  });
}

const RESOLVE_OPTIONS = {
  session: { type: 'string' },
  outcome: { type: 'string' },
  output: { type: 'string' },
  'output-file': { type: 'string' },
  by: { type: 'string' },
  key: { type: 'string' },
  'expires-at': { type: 'string' },
} as const;

/** The output a `ran` resolution reports: `--output TEXT` or the contents of `--output-file F`. */
async function outputOf(values: { output?: string; 'output-file'?: string }): Promise<string | undefined> {
  if (values.output !== undefined && values['output-file'] !== undefined)
    throw new UsageError('give --output or --output-file, not both', 'doubt');
  const file = values['output-file'];
  if (file === undefined) return values.output;
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--output-file ${file}: ${(error as Error).message}`, 'doubt');
  }
}

/** The session holding `callId`: the one given, else the one running session that lists it. */
async function sessionOf(client: SwitchyardClient, callId: string, given: string | undefined): Promise<string> {
  if (given !== undefined) return given;
  const holders = (await callsInDoubt(client, undefined)).filter((call) => call.callId === callId);
  const [first, ...others] = holders;
  if (first === undefined)
    throw new CliError(
      `no running session of task queue ${client.taskQueue} has call ${callId} in doubt (see \`switchyard doubt list\`)`,
      ExitCode.notFound,
    );
  if (others.length > 0)
    throw new UsageError(
      `call ${callId} is in doubt in several sessions (${holders.map((call) => call.sessionId).join(', ')}): give --session ID`,
      'doubt',
    );
  return first.sessionId;
}

async function doubtResolve(args: string[]): Promise<number> {
  const parsed = parseCommand('doubt', args, RESOLVE_OPTIONS, COMMAND_HELP.doubt ?? '', { positionals: true });
  if (parsed === undefined) return ExitCode.ok;
  const { values, positionals } = parsed;
  const [callId, ...extra] = positionals;
  if (callId === undefined || extra.length > 0)
    throw new UsageError('doubt resolve takes one CALL_ID (see `switchyard doubt list`)', 'doubt');
  const outcome = values.outcome;
  if (outcome === undefined || !(inDoubtOutcomes as readonly string[]).includes(outcome))
    throw new UsageError(`--outcome must be one of ${inDoubtOutcomes.join(', ')}`, 'doubt');
  const output = await outputOf(values);
  if (output !== undefined && outcome !== 'ran')
    throw new UsageError('--output and --output-file go only with --outcome ran', 'doubt');
  const signing = await signingFromFlags(values, { command: 'doubt', what: 'resolution' });
  const request: ResolveInDoubtRequest = {
    callId,
    outcome: outcome as InDoubtOutcome,
    ...(output === undefined ? {} : { output }),
    by: signing?.by ?? values.by ?? userNameFromEnv() ?? 'cli',
  };
  return withClient(async (client) => {
    const sessionId = await sessionOf(client, callId, values.session);
    let result;
    try {
      result = await client
        .session(sessionId)
        .resolveInDoubt(
          request,
          signing === undefined ? undefined : { privateKeyPem: signing.privateKeyPem, expiresAt: signing.expiresAt },
        );
    } catch (error) {
      // The session's refusal (unknown call; unsigned, badly signed or expired where approvers are set) names why.
      if (error instanceof WorkflowUpdateFailedError) {
        const cause = error.cause instanceof Error ? error.cause.message : error.message;
        process.stderr.write(`session ${sessionId} refused the resolution: ${cause}\n`);
        return ExitCode.failed;
      }
      if (isNotFound(error))
        throw new CliError(`no session ${sessionId} on this server (see \`switchyard sessions\`)`, ExitCode.notFound);
      throw error;
    }
    if (values.json === true) writeJson({ sessionId, ...result });
    else {
      const next =
        result.outcome === 'retry'
          ? "it runs again, permission again, first in the session's next turn"
          : result.outcome === 'ran'
            ? "the session's next turn reports its output"
            : 'recorded as not run';
      process.stdout.write(
        `call ${result.callId} settled as ${result.outcome}${result.verified ? ' (signed)' : ''}: ${next}\n`,
      );
    }
    return ExitCode.ok;
  });
}
