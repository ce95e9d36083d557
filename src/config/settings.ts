// The settings every entry point resolves the same way — `switchyard worker`, `switchyard dev`, and
// `createSwitchyardWorker` for the options its caller leaves out — so that a security setting in the environment is
// enforced whichever way the worker was started (README "Configuration"). One function reads them; a named file that
// cannot be read or parsed stops startup with the file and the reason.
import { loadApproversFile } from '../activities/approval-signature.js';
import type { PermissionRules } from '../contracts/policy.js';
import {
  approversFileFromEnv,
  envValue,
  policyFileFromEnv,
  processEnvironment,
  taskQueueFromEnv,
} from './environment.js';
import type { Environment } from './environment.js';
import { readOperatorPolicyFile, ruleCount } from './operator-policy-file.js';
import { SettingsError } from './settings-error.js';
import { describeConnectionSecurity, loadTemporalConnectConfig } from './temporal-connection.js';
import type { TemporalConnectConfig, TemporalConnectionFlags } from './temporal-connection.js';

/** What a worker enforces beyond a session's own options. */
export interface WorkerSecuritySettings {
  /** `SWITCHYARD_APPROVERS_FILE`, checked at start: the file and how many approvers it names. */
  approvers?: { file: string; count: number };
  /** `SWITCHYARD_POLICY_FILE`, read at start: the file and its rules, a tier no session can loosen. */
  operatorPolicy?: { file: string; rules: PermissionRules };
  /** `SWITCHYARD_SANDBOX` as set, `auto` when unset (the tools read and check it). */
  sandboxMode: string;
}

/** Everything a Switchyard process resolves at start: where Temporal is, the task queue, the security settings. */
export interface SwitchyardSettings extends WorkerSecuritySettings {
  temporal: TemporalConnectConfig;
  taskQueue: string;
}

/**
 * The worker's security settings from `env`: the approvers file checked, the policy file read. Throws a
 * `SettingsError` naming the variable, the file and the reason when a file cannot be read or parsed.
 */
export async function workerSecuritySettingsFromEnvironment(env: Environment): Promise<WorkerSecuritySettings> {
  const approversFile = approversFileFromEnv(env);
  let approvers: WorkerSecuritySettings['approvers'];
  if (approversFile !== undefined) {
    try {
      approvers = {
        file: approversFile,
        count: Object.keys((await loadApproversFile(approversFile)).approvers).length,
      };
    } catch (error) {
      throw new SettingsError(`SWITCHYARD_APPROVERS_FILE: ${(error as Error).message}`, { cause: error });
    }
  }
  const policyFile = policyFileFromEnv(env);
  const operatorPolicy =
    policyFile === undefined ? undefined : { file: policyFile, rules: await readOperatorPolicyFile(policyFile) };
  return {
    ...(approvers === undefined ? {} : { approvers }),
    ...(operatorPolicy === undefined ? {} : { operatorPolicy }),
    sandboxMode: envValue('SWITCHYARD_SANDBOX', env) ?? 'auto',
  };
}

/**
 * All of a process's settings from `env` (default the process's environment; and the `temporal` CLI's connection flags, which win): the connection as
 * the `temporal` CLI resolves it, the task queue, and the worker's security settings. Library users call it to start
 * a worker or a client exactly as `switchyard worker` does:
 *
 *   const settings = await settingsFromEnvironment();
 *   const connection = await NativeConnection.connect(settings.temporal.connectionOptions);
 *   const worker = await createSwitchyardWorker({ connection, namespace: settings.temporal.namespace, ... });
 *
 * Throws a `SettingsError` (or a `TemporalConfigError`) naming the file or variable when something cannot be used.
 */
export async function settingsFromEnvironment(
  env: Environment = processEnvironment(),
  flags: TemporalConnectionFlags = {},
): Promise<SwitchyardSettings> {
  const temporal = loadTemporalConnectConfig(flags, env);
  return { temporal, taskQueue: taskQueueFromEnv(env), ...(await workerSecuritySettingsFromEnvironment(env)) };
}

/** The start-up line naming the security settings in force — never a secret: files, counts, on or off. */
export function securitySettingsLine(settings: WorkerSecuritySettings & { temporal?: TemporalConnectConfig }): {
  fields: Record<string, unknown>;
  message: string;
} {
  const fields = {
    sandbox: settings.sandboxMode,
    approversFile: settings.approvers?.file ?? null,
    approvers: settings.approvers?.count ?? 0,
    policyFile: settings.operatorPolicy?.file ?? null,
    policyRules: settings.operatorPolicy === undefined ? 0 : ruleCount(settings.operatorPolicy.rules),
    ...(settings.temporal === undefined
      ? {}
      : { temporalTls: settings.temporal.security.tls, temporalApiKey: settings.temporal.security.apiKey }),
  };
  const parts = [
    `sandbox ${fields.sandbox}`,
    settings.approvers === undefined
      ? 'approvers file none'
      : `approvers file ${settings.approvers.file} (${settings.approvers.count} approvers)`,
    settings.operatorPolicy === undefined
      ? 'policy file none'
      : `policy file ${settings.operatorPolicy.file} (${fields.policyRules} rules)`,
    ...(settings.temporal === undefined ? [] : [`Temporal ${describeConnectionSecurity(settings.temporal.security)}`]),
  ];
  return { fields, message: `security settings: ${parts.join('; ')}` };
}
