import { readOperatorPolicyFile } from '../config/operator-policy-file.js';
import type { ApprovalEvaluator, PermissionRules } from '../contracts/policy.js';
import { UsageError } from './common.js';
import { importCommandLineModule } from './import-module.js';

/**
 * The operator's policy file (`SWITCHYARD_POLICY_FILE`), read as every entry point reads it
 * (src/config/operator-policy-file.ts); a file that cannot be read or holds a bad rule is a usage error.
 */
export async function loadOperatorPolicy(file: string, command: string): Promise<PermissionRules> {
  try {
    return await readOperatorPolicyFile(file);
  } catch (error) {
    throw new UsageError((error as Error).message, command);
  }
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
