import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { generateApproverKeyPair, signApproval } from '../activities/approval-signature.js';
import { approvalSigningPayload } from '../contracts/approval.js';
import type { ApprovalDecisionRecord, ApprovalSignal } from '../contracts/approval.js';
import { approvalDecisionsQuery } from '../contracts/messages.js';
import type { SwitchyardClient } from '../client/switchyard-client.js';
import { CliError, ExitCode, UsageError, isNotFound, parseCommand, sessionArgument, withClient } from './common.js';
import { COMMAND_HELP } from './help.js';
import { listSessions } from './session-listing.js';

/** How long a grant signed by `approve|deny --key` counts when no `--expires-at` is given. */
export const DEFAULT_SIGNED_GRANT_MS = 10 * 60_000;

/** Sessions `audit` reads at most (visibility, newest first). */
const AUDIT_SESSIONS_MAX = 1_000;

/**
 * Signs an approval for `approve|deny --key FILE`: `by` defaults to the key file's name without `.key` (what
 * `switchyard keys new NAME` writes), `expiresAt` to ten minutes from now.
 */
export async function signedFields(options: {
  keyFile: string;
  by: string | undefined;
  expiresAt: string | undefined;
  sessionId: string;
  signal: Pick<ApprovalSignal, 'requestId' | 'inputDigest' | 'decision'>;
  command: string;
}): Promise<{ by: string; expiresAt: string; signature: string }> {
  const { keyFile, sessionId, signal, command } = options;
  const by = options.by ?? path.basename(keyFile).replace(/\.key$/, '');
  const expiresAt = options.expiresAt ?? new Date(Date.now() + DEFAULT_SIGNED_GRANT_MS).toISOString();
  if (Number.isNaN(Date.parse(expiresAt)) || !/^\d{4}-\d\d-\d\dT/.test(expiresAt))
    throw new UsageError(`--expires-at must be an ISO time such as 2026-01-31T12:00:00Z; got "${expiresAt}"`, command);
  let pem: string;
  try {
    pem = await readFile(keyFile, 'utf8');
  } catch (error) {
    throw new UsageError(`--key ${keyFile}: ${(error as Error).message}`, command);
  }
  let signature: string;
  try {
    signature = signApproval(approvalSigningPayload(sessionId, { ...signal, by, expiresAt }), pem);
  } catch (error) {
    throw new UsageError(`--key ${keyFile}: not an Ed25519 private key (${(error as Error).message})`, command);
  }
  return { by, expiresAt, signature };
}

/** `switchyard keys new NAME [--dir DIR]`: a key pair for an approver, and the approvers-file entry to add. */
export async function keysCommand(args: string[]): Promise<number> {
  const parsed = parseCommand('keys', args, { dir: { type: 'string' } }, COMMAND_HELP.keys ?? '', {
    positionals: true,
  });
  if (parsed === undefined) return ExitCode.ok;
  const [action, name, ...extra] = parsed.positionals;
  if (action !== 'new' || name === undefined || extra.length > 0)
    throw new UsageError('usage: switchyard keys new NAME [--dir DIR]', 'keys');
  if (!/^[\w.@-]+$/.test(name))
    throw new UsageError(`NAME may hold letters, digits and . _ @ - only; got "${name}"`, 'keys');
  const dir = parsed.values.dir ?? '.';
  const keyFile = path.resolve(dir, `${name}.key`);
  const publicFile = path.resolve(dir, `${name}.pub`);
  for (const file of [keyFile, publicFile]) {
    if (
      await access(file).then(
        () => true,
        () => false,
      )
    )
      throw new CliError(`${file} exists; not overwriting a key (choose another --dir or remove it)`, ExitCode.failed);
  }
  const { publicKeyPem, privateKeyPem } = generateApproverKeyPair();
  await mkdir(path.resolve(dir), { recursive: true });
  await writeFile(keyFile, privateKeyPem, { mode: 0o600, flag: 'wx' });
  await writeFile(publicFile, publicKeyPem, { flag: 'wx' });
  const entry = { [name]: { publicKey: publicKeyPem } };
  if (parsed.values.json === true) {
    process.stdout.write(
      `${JSON.stringify({ privateKeyFile: keyFile, publicKeyFile: publicFile, approvers: entry })}\n`,
    );
    return ExitCode.ok;
  }
  process.stderr.write(
    `wrote ${keyFile} (private: keep it to ${name}) and ${publicFile}\nadd this entry to the "approvers" object of the worker's SWITCHYARD_APPROVERS_FILE:\n`,
  );
  process.stdout.write(`${JSON.stringify(entry, null, 2).slice(2, -2)}\n`);
  return ExitCode.ok;
}

/** One line of `switchyard audit --json`: a session's decision record with the session's id. */
export type AuditLine = ApprovalDecisionRecord & { sessionId: string };

/**
 * `switchyard audit [--session ID] [--since ISO] --json`: every approval decision of the task queue's sessions (a
 * visibility query, then each session's `approvalDecisions` query; closed sessions too while the server keeps their
 * history), oldest first, one JSON line each.
 */
export async function auditCommand(args: string[]): Promise<number> {
  const parsed = parseCommand(
    'audit',
    args,
    { session: { type: 'string' }, since: { type: 'string' } },
    COMMAND_HELP.audit ?? '',
    { positionals: true },
  );
  if (parsed === undefined) return ExitCode.ok;
  const { values } = parsed;
  const sessionId = sessionArgument('audit', values, parsed.positionals, false);
  const since = values.since;
  if (since !== undefined && (Number.isNaN(Date.parse(since)) || !/^\d{4}-\d\d-\d\d/.test(since)))
    throw new UsageError(`--since must be an ISO time such as 2026-01-31T12:00:00Z; got "${since}"`, 'audit');
  return withClient(async (client) => {
    const lines = (await auditLines(client, sessionId)).filter(
      (line) => since === undefined || Date.parse(line.at) >= Date.parse(since),
    );
    for (const line of lines) {
      if (values.json === true) {
        process.stdout.write(`${JSON.stringify(line)}\n`);
        continue;
      }
      const what =
        line.outcome === 'accepted' ? (line.decision ?? '') : `ignored (${line.ignoredBecause ?? 'unknown'})`;
      process.stdout.write(
        `${line.at}  ${line.sessionId}  ${line.toolName ?? '-'}  ${what}  by ${line.by ?? '-'}${line.verified ? ' (verified)' : ''}  ${line.inputDigest ?? ''}\n`,
      );
    }
    if (values.json !== true && lines.length === 0)
      process.stderr.write(
        `no approval decisions on task queue ${client.taskQueue}${sessionId === undefined ? '' : ` in session ${sessionId}`}\n`,
      );
    return ExitCode.ok;
  });
}

async function auditLines(client: SwitchyardClient, sessionId: string | undefined): Promise<AuditLine[]> {
  const sessionIds =
    sessionId !== undefined
      ? [sessionId]
      : (await listSessions(client, { all: true, limit: AUDIT_SESSIONS_MAX })).map((session) => session.sessionId);
  const logs = await Promise.all(
    sessionIds.map(async (id) => {
      try {
        const records = await client.session(id).workflow.query(approvalDecisionsQuery);
        return records.map((record) => ({ sessionId: id, ...record }));
      } catch (error) {
        if (sessionId !== undefined) {
          if (isNotFound(error))
            throw new CliError(
              `no session ${id} on this server (see \`switchyard sessions --all\`)`,
              ExitCode.notFound,
            );
          throw error;
        }
        // A session whose history is gone, or that no worker can answer for: nothing to list.
        return [];
      }
    }),
  );
  return logs
    .flat()
    .sort((a, b) => a.at.localeCompare(b.at) || a.sessionId.localeCompare(b.sessionId) || a.seq - b.seq);
}
