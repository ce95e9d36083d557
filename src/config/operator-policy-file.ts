import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { invalidRule } from '../contracts/policy.js';
import type { PermissionRules } from '../contracts/policy.js';
import { operatorPolicyFileSchema } from '../contracts/schemas.js';
import { formatZodError } from '../contracts/tool-call.js';
import { SettingsError } from './settings-error.js';

/**
 * The operator's policy file (`SWITCHYARD_POLICY_FILE`): JSON `{ "rules": { "allow": [], "ask": [], "deny": [] } }`.
 * A file that cannot be read, or holds a bad rule, throws a `SettingsError` naming the file and the reason.
 */
export async function readOperatorPolicyFile(file: string): Promise<PermissionRules> {
  const where = `SWITCHYARD_POLICY_FILE ${path.resolve(file)}`;
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8')) as unknown;
  } catch (error) {
    throw new SettingsError(`${where} cannot be read as JSON: ${(error as Error).message}`, { cause: error });
  }
  const parsed = operatorPolicyFileSchema.safeParse(json);
  if (!parsed.success) throw new SettingsError(`${where}: ${formatZodError(parsed.error)}`);
  const bad = invalidRule(parsed.data.rules);
  if (bad !== undefined) throw new SettingsError(`${where}: ${bad}`);
  return parsed.data.rules;
}

/** How many rules a rule set holds (allow, ask and deny together), for the start-up line. */
export function ruleCount(rules: PermissionRules): number {
  return (rules.allow?.length ?? 0) + (rules.ask?.length ?? 0) + (rules.deny?.length ?? 0);
}
