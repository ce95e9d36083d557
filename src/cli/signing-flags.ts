import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_SIGNED_GRANT_MS } from './approver-commands.js';
import { UsageError } from './common.js';

/** The signing flags a command takes beside `--by`: `--key FILE` and `--expires-at ISO`. */
export interface SigningFlags {
  key?: string;
  by?: string;
  'expires-at'?: string;
}

/**
 * `--key FILE` signs what `command` sends (what a session with approvers requires, docs/APPROVALS.md): `by` defaults
 * to the key file's name without `.key` (what `switchyard keys new NAME` writes), `expiresAt` to ten minutes from
 * now. Undefined without `--key`; `what` names the signed thing in errors ("change", "resolution").
 */
export async function signingFromFlags(
  values: SigningFlags,
  options: { command: string; what: string },
): Promise<{ privateKeyPem: string; by: string; expiresAt: string } | undefined> {
  const { command, what } = options;
  const keyFile = values.key;
  if (keyFile === undefined) {
    if (values['expires-at'] !== undefined)
      throw new UsageError(`--expires-at needs --key (only a signed ${what} carries an expiry)`, command);
    return undefined;
  }
  const expiresAt = values['expires-at'] ?? new Date(Date.now() + DEFAULT_SIGNED_GRANT_MS).toISOString();
  if (Number.isNaN(Date.parse(expiresAt)) || !/^\d{4}-\d\d-\d\dT/.test(expiresAt))
    throw new UsageError(`--expires-at must be an ISO time such as 2026-01-31T12:00:00Z; got "${expiresAt}"`, command);
  let privateKeyPem: string;
  try {
    privateKeyPem = await readFile(keyFile, 'utf8');
  } catch (error) {
    throw new UsageError(`--key ${keyFile}: ${(error as Error).message}`, command);
  }
  return { privateKeyPem, by: values.by ?? path.basename(keyFile).replace(/\.key$/, ''), expiresAt };
}
