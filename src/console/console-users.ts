import { createHash, createPrivateKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { formatZodError } from '../contracts/tool-call.js';

/** One person the console serves: how they log in, the key it signs their decisions with, their approver groups. */
export interface ConsoleUser {
  /** The approver name: the `by` of every decision this person makes. */
  name: string;
  /** sha256 (hex) of the person's login token; none when they log in only through the trusted proxy header. */
  tokenSha256?: string;
  /** Ed25519 private key (PKCS#8 PEM) the console signs this person's decisions with. */
  signingKeyPem?: string;
  /** Approver groups (as in the workers' approvers file), for showing which requests they may decide. */
  groups: string[];
}

const userEntrySchema = z
  .strictObject({
    token: z.string().min(16, 'a token must be at least 16 characters').optional(),
    tokenSha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'tokenSha256 must be 64 hex digits')
      .optional(),
    signingKeyFile: z.string().min(1).optional(),
    groups: z.array(z.string().min(1)).optional(),
  })
  .refine(
    (entry) => !(entry.token !== undefined && entry.tokenSha256 !== undefined),
    'give token or tokenSha256, not both',
  );

/** The console's users file (`SWITCHYARD_CONSOLE_USERS_FILE`, `--users FILE`). */
const usersFileSchema = z.strictObject({ users: z.record(z.string().min(1).max(200), userEntrySchema) });

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * Reads the console's users file: `{ "users": { "<name>": { "token" | "tokenSha256", "signingKeyFile"?, "groups"? } } }`.
 * `signingKeyFile` is relative to the users file. A clear error names the file and the user.
 */
export async function loadConsoleUsers(file: string): Promise<ConsoleUser[]> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new Error(`users file ${file}: ${(error as Error).message}`, { cause: error });
  }
  const parsed = usersFileSchema.safeParse(raw);
  if (!parsed.success) throw new Error(`users file ${file}: ${formatZodError(parsed.error)}`);
  const users: ConsoleUser[] = [];
  for (const [name, entry] of Object.entries(parsed.data.users)) {
    const user: ConsoleUser = { name, groups: entry.groups ?? [] };
    if (entry.token !== undefined) user.tokenSha256 = sha256Hex(entry.token);
    if (entry.tokenSha256 !== undefined) user.tokenSha256 = entry.tokenSha256;
    if (entry.signingKeyFile !== undefined) {
      const keyFile = path.resolve(path.dirname(file), entry.signingKeyFile);
      try {
        const pem = await readFile(keyFile, 'utf8');
        if (createPrivateKey(pem).asymmetricKeyType !== 'ed25519') throw new Error('not an Ed25519 key');
        user.signingKeyPem = pem;
      } catch (error) {
        throw new Error(`users file ${file}: user "${name}": signingKeyFile ${keyFile}: ${(error as Error).message}`, {
          cause: error,
        });
      }
    }
    users.push(user);
  }
  return users;
}
