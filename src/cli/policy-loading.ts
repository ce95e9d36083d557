import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { invalidRule } from '../contracts/policy.js';
import { operatorPolicyFileSchema } from '../contracts/schemas.js';
import type { ApprovalEvaluator, PermissionRules } from '../contracts/policy.js';
import { formatZodError } from '../contracts/tool-call.js';
import { UsageError } from './common.js';
import { importCommandLineModule } from './import-module.js';

/**
 * The operator's policy file (`SWITCHYARD_POLICY_FILE`): JSON `{ "rules": { "allow": [], "ask": [], "deny": [] } }`.
 * A file that cannot be read or holds a bad rule stops the worker before it starts.
 */
export async function loadOperatorPolicy(file: string, command: string): Promise<PermissionRules> {
  const where = `SWITCHYARD_POLICY_FILE ${path.resolve(file)}`;
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8')) as unknown;
  } catch (error) {
    throw new UsageError(`${where} cannot be read as JSON: ${(error as Error).message}`, command);
  }
  const parsed = operatorPolicyFileSchema.safeParse(json);
  if (!parsed.success) throw new UsageError(`${where}: ${formatZodError(parsed.error)}`, command);
  const bad = invalidRule(parsed.data.rules);
  if (bad !== undefined) throw new UsageError(`${where}: ${bad}`, command);
  return parsed.data.rules;
}

const looksLikeEvaluator = (value: unknown): value is ApprovalEvaluator =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as ApprovalEvaluator).name === 'string' &&
  typeof (value as ApprovalEvaluator).evaluate === 'function';

/** The evaluators an `--evaluator` module's default export lists (`[{ name, evaluate }]`). */
export async function loadEvaluatorModule(file: string): Promise<ApprovalEvaluator[]> {
  const module: { default?: unknown } = await importCommandLineModule(file, '--evaluator');
  const list = Array.isArray(module.default) ? (module.default as unknown[]) : [module.default];
  const evaluators = list.filter(looksLikeEvaluator);
  if (evaluators.length === 0 || evaluators.length !== list.length) {
    throw new UsageError(
      `--evaluator ${file}: its default export must be a list of { name, evaluate(request) } evaluators`,
    );
  }
  return evaluators;
}
