import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateApproverKeyPair } from '../../src/approvals/approval-signature.js';
import {
  securitySettingsLine,
  settingsFromEnvironment,
  workerSecuritySettingsFromEnvironment,
} from '../../src/config/settings.js';
import { scratchDir } from '../support/scratch.js';

describe('settingsFromEnvironment: the settings every entry point resolves alike', () => {
  it('reads the policy and approvers files, and says what is in force without a secret', async () => {
    const dir = await scratchDir('switchyard-settings-');
    const policyFile = path.join(dir, 'policy.json');
    await writeFile(policyFile, JSON.stringify({ rules: { deny: ['Bash(echo:*)'], ask: ['Write'] } }));
    const approversFile = path.join(dir, 'approvers.json');
    const alice = generateApproverKeyPair();
    await writeFile(approversFile, JSON.stringify({ approvers: { alice: { publicKey: alice.publicKeyPem } } }));
    const settings = await settingsFromEnvironment({
      HOME: dir,
      SWITCHYARD_POLICY_FILE: policyFile,
      SWITCHYARD_APPROVERS_FILE: approversFile,
      SWITCHYARD_SANDBOX: 'required',
      TEMPORAL_API_KEY: 'secret-key',
      SWITCHYARD_TASK_QUEUE: 'q',
    });
    expect(settings.operatorPolicy).toEqual({ file: policyFile, rules: { deny: ['Bash(echo:*)'], ask: ['Write'] } });
    expect(settings.approvers).toEqual({ file: approversFile, count: 1 });
    expect(settings).toMatchObject({ sandboxMode: 'required', taskQueue: 'q' });
    const line = securitySettingsLine(settings);
    expect(line.message).toBe(
      `security settings: sandbox required; approvers file ${approversFile} (1 approvers); policy file ${policyFile} (2 rules); Temporal TLS on, API key on`,
    );
    expect(line.fields).toMatchObject({ policyRules: 2, approvers: 1, temporalTls: 'on', temporalApiKey: true });
    expect(JSON.stringify(line)).not.toContain('secret-key');
  });

  it('with nothing set: no files, sandbox auto', async () => {
    expect(
      await workerSecuritySettingsFromEnvironment({ SWITCHYARD_POLICY_FILE: '', SWITCHYARD_APPROVERS_FILE: '' }),
    ).toEqual({
      sandboxMode: 'auto',
    });
  });

  it('a file that cannot be read or parsed stops startup, naming the variable, the file and the reason', async () => {
    const dir = await scratchDir('switchyard-settings-bad-');
    const missing = path.join(dir, 'missing.json');
    await expect(workerSecuritySettingsFromEnvironment({ SWITCHYARD_POLICY_FILE: missing })).rejects.toThrow(
      `SWITCHYARD_POLICY_FILE ${missing} cannot be read as JSON: ENOENT`,
    );
    const badRule = path.join(dir, 'bad-rule.json');
    await writeFile(badRule, JSON.stringify({ rules: { deny: ['Bash(echo:*'] } }));
    await expect(workerSecuritySettingsFromEnvironment({ SWITCHYARD_POLICY_FILE: badRule })).rejects.toThrow(
      `SWITCHYARD_POLICY_FILE ${badRule}: `,
    );
    await expect(workerSecuritySettingsFromEnvironment({ SWITCHYARD_APPROVERS_FILE: missing })).rejects.toThrow(
      `SWITCHYARD_APPROVERS_FILE: approvers file ${missing}: ENOENT`,
    );
    const notJson = path.join(dir, 'approvers.json');
    await writeFile(notJson, '{ nope');
    await expect(workerSecuritySettingsFromEnvironment({ SWITCHYARD_APPROVERS_FILE: notJson })).rejects.toThrow(
      `SWITCHYARD_APPROVERS_FILE: approvers file ${notJson}: `,
    );
  });
});
