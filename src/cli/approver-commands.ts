import { access, chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { generateApproverKeyPair, signApproval } from '../approvals/approval-signature.js';
import { approvalSigningPayload } from '../contracts/approval.js';
import type { ApprovalDecisionCounts, ApprovalDecisionRecord, ApprovalSignal } from '../contracts/approval.js';
import { approvalDecisionCountsQuery, approvalDecisionsQuery } from '../contracts/messages.js';
import type { SwitchyardClient } from '../client/switchyard-client.js';
import { dataDirFromEnv, processEnvironment } from '../config/environment.js';
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

/**
 * Where `keys new` writes when no `--dir` is given: `<data directory>/keys` (`SWITCHYARD_DATA_DIR`, else
 * `~/.local/share/switchyard`), never the current folder, which is often a workspace a model's commands can read. The
 * sandbox hides the data directory from sessions (SECURITY.md).
 */
export function defaultKeysDir(env: NodeJS.ProcessEnv = processEnvironment()): string {
  return path.join(dataDirFromEnv(env), 'keys');
}

/**
 * `switchyard keys new NAME [--dir DIR]`: a key pair for an approver, and the approvers-file entry to add. The private
 * key is written with mode 600, into a folder of mode 700 when this command creates it (the default folder always).
 */
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
  const dir = path.resolve(parsed.values.dir ?? defaultKeysDir());
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
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // The default folder holds only keys: whoever made it, only its owner may list or enter it.
  if (parsed.values.dir === undefined) await chmod(dir, 0o700);
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
    `wrote ${keyFile} (private, mode 600: keep it to ${name}) and ${publicFile}\nadd this entry to the "approvers" object of the worker's SWITCHYARD_APPROVERS_FILE:\n`,
  );
  process.stdout.write(`${JSON.stringify(entry, null, 2).slice(2, -2)}\n`);
  return ExitCode.ok;
}

/** One line of `switchyard audit --json`: a session's decision record with the session's id. */
export type AuditLine = ApprovalDecisionRecord & { sessionId: string };

/**
 * `switchyard audit [--session ID] [--since ISO] --json`: every approval decision of the task queue's sessions (a
 * visibility query, then each session's `approvalDecisions` query; closed sessions too while the server keeps their
 * history), oldest first, one JSON line each. A session lists every accepted decision but only its newest ignored
 * signals: how many it ignored in all goes to stderr (query `approvalDecisionCounts`), so a flood of junk signals is
 * seen, not hidden.
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
    const { lines: all, counts } = await auditLines(client, sessionId);
    const lines = all.filter((line) => since === undefined || Date.parse(line.at) >= Date.parse(since));
    for (const line of lines) {
      if (values.json === true) {
        process.stdout.write(`${JSON.stringify(line)}\n`);
        continue;
      }
      const what =
        line.outcome === 'accepted' ? (line.decision ?? '') : `ignored (${line.ignoredBecause ?? 'unknown'})`;
      const source = line.source === undefined || line.source === 'person' ? '' : ` [${line.source}]`;
      const input = line.inputSummary === undefined ? '' : `  ${line.inputSummary}`;
      process.stdout.write(
        `${line.at}  ${line.sessionId}  ${line.toolName ?? '-'}${input}  ${what}  by ${line.by ?? '-'}${line.verified ? ' (verified)' : ''}${source}  ${line.inputDigest ?? ''}\n`,
      );
    }
    for (const [id, count] of counts) {
      if (count.ignored > count.ignoredRetained)
        process.stderr.write(
          `session ${id}: ${count.ignored} ignored approval signals, the newest ${count.ignoredRetained} listed\n`,
        );
      else if (count.ignored > 0) process.stderr.write(`session ${id}: ${count.ignored} ignored approval signals\n`);
      if (count.acceptedDropped > 0)
        process.stderr.write(
          `session ${id}: ${count.acceptedDropped} oldest accepted decisions no longer kept (past the session's bound)\n`,
        );
    }
    if (values.json !== true && lines.length === 0)
      process.stderr.write(
        `no approval decisions on task queue ${client.taskQueue}${sessionId === undefined ? '' : ` in session ${sessionId}`}\n`,
      );
    return ExitCode.ok;
  });
}

/** The sessions' decision logs, and each session's counts when its worker answers `approvalDecisionCounts`. */
async function auditLines(
  client: SwitchyardClient,
  sessionId: string | undefined,
): Promise<{ lines: AuditLine[]; counts: Map<string, ApprovalDecisionCounts> }> {
  const sessionIds =
    sessionId !== undefined
      ? [sessionId]
      : (await listSessions(client, { all: true, limit: AUDIT_SESSIONS_MAX })).map((session) => session.sessionId);
  const counts = new Map<string, ApprovalDecisionCounts>();
  const logs = await Promise.all(
    sessionIds.map(async (id) => {
      try {
        const { workflow } = client.session(id);
        const records = await workflow.query(approvalDecisionsQuery);
        // A worker older than the counts query lists ignored and accepted decisions together: no count to add.
        const count = await workflow.query(approvalDecisionCountsQuery).catch(() => undefined);
        if (count !== undefined) counts.set(id, count);
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
  const lines = logs
    .flat()
    .sort((a, b) => a.at.localeCompare(b.at) || a.sessionId.localeCompare(b.sessionId) || a.seq - b.seq);
  return { lines, counts };
}
