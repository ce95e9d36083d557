import type { ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApproverKeyPair, signApproval } from '../../src/approvals/approval-signature.js';
import { SwitchyardClient } from '../../src/client/switchyard-client.js';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import { approvalSigningPayload } from '../../src/contracts/approval.js';
import type { ApprovalRequest } from '../../src/contracts/approval.js';
import { cliEnvironment, killCli, startCli } from '../support/cli-process.js';
import type { CliProcess } from '../support/cli-process.js';
import { createHarness, scratchDir, uniqueName } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { killProcess, spawnWorkerProcess } from '../support/spawn-worker.js';
import { waitFor } from '../support/wait-for.js';

// The same environment, two ways to start a worker: docs/CONFIGURATION.md's `createSwitchyardWorker` (test/support/
// worker-process.ts passes it no approversFile and no operatorRules) and `switchyard worker`. Both must enforce the
// operator's deny rule from SWITCHYARD_POLICY_FILE and check signatures against SWITCHYARD_APPROVERS_FILE; a worker
// that silently dropped either would fail open.
describe('SWITCHYARD_POLICY_FILE and SWITCHYARD_APPROVERS_FILE hold whichever way the worker starts', () => {
  let harness: Harness;
  let cwd: string;
  let env: NodeJS.ProcessEnv;
  const alice = generateApproverKeyPair();
  const library: { child?: ChildProcess; client?: SwitchyardClient } = {};
  const cli: { process?: CliProcess; client?: SwitchyardClient } = {};

  beforeAll(async () => {
    harness = await createHarness();
    cwd = await scratchDir('switchyard-settings-cwd-');
    const files = await scratchDir('switchyard-settings-');
    const policyFile = path.join(files, 'policy.json');
    await writeFile(policyFile, JSON.stringify({ rules: { deny: ['Bash(echo:*)'] } }));
    const approversFile = path.join(files, 'approvers.json');
    await writeFile(approversFile, JSON.stringify({ approvers: { alice: { publicKey: alice.publicKeyPem } } }));
    env = await cliEnvironment(harness, {
      SWITCHYARD_POLICY_FILE: policyFile,
      SWITCHYARD_APPROVERS_FILE: approversFile,
    });
    const libraryQueue = uniqueName('settings-library');
    library.child = await spawnWorkerProcess(
      { ...harness, taskQueue: libraryQueue },
      { tools: 'builtin', env: { SWITCHYARD_POLICY_FILE: policyFile, SWITCHYARD_APPROVERS_FILE: approversFile } },
    );
    library.client = new SwitchyardClient({ client: harness.client.client, taskQueue: libraryQueue });
    const cliQueue = uniqueName('settings-cli');
    cli.process = startCli(['worker', '--cwd', cwd], { ...env, SWITCHYARD_TASK_QUEUE: cliQueue });
    const security = await cli.process.waitForLog(
      (line) => typeof line.msg === 'string' && line.msg.startsWith('security settings:'),
      'the worker to log its security settings',
    );
    expect(security).toMatchObject({ policyFile, policyRules: 1, approversFile, approvers: 1 });
    await cli.process.waitForLog((line) => line.msg === 'worker started', 'the worker to start');
    cli.client = new SwitchyardClient({ client: harness.client.client, taskQueue: cliQueue });
  });
  afterAll(async () => {
    if (library.child !== undefined) await killProcess(library.child);
    if (cli.process !== undefined) await killCli(cli.process);
    await harness?.close();
  });

  for (const [name, worker] of [
    ['createSwitchyardWorker', library],
    ['switchyard worker', cli],
  ] as const) {
    it(`${name}: the policy file's deny holds in bypassPermissions, and only alice's signed approval lets a Write run`, async () => {
      const client = worker.client as SwitchyardClient;
      const denied = await client.executeTurnWithStart(
        uniqueName('deny'),
        { turnId: 't', calls: [{ id: 'e', name: 'Bash', input: { command: 'echo fail-open' } }] },
        { cwd, permissionMode: 'bypassPermissions' },
      );
      expect(denied.results[0]).toMatchObject({ status: 'denied' });

      const session: SessionHandle = await client.startSession(uniqueName('signed'), { cwd, approvers: ['alice'] });
      const target = path.join(cwd, `${session.sessionId}.txt`);
      const turn = session.executeTurn({
        turnId: 't',
        calls: [{ id: 'w', name: 'Write', input: { file_path: target, content: 'signed\n' } }],
      });
      const [request] = (await waitFor(
        () => session.pendingApprovals(),
        (list) => list.length === 1,
        { what: 'the Write to wait for approval' },
      )) as [ApprovalRequest];
      const fields = {
        requestId: request.requestId,
        inputDigest: request.inputDigest,
        decision: 'allow' as const,
        by: 'alice',
        expiresAt: new Date(Date.now() + 10 * 60_000).toISOString(),
      };
      // Unsigned: ignored. Signed by alice, whose key only the approvers file holds: taken.
      await session.approve({
        requestId: request.requestId,
        inputDigest: request.inputDigest,
        decision: 'allow',
        by: 'alice',
      });
      await waitFor(
        async () => (await session.events()).events.filter((event) => event.type === 'ApprovalIgnored').length,
        (count) => count === 1,
        { what: 'the unsigned approval to be ignored' },
      );
      await session.approve({
        ...fields,
        signature: signApproval(approvalSigningPayload(session.sessionId, fields), alice.privateKeyPem),
      });
      expect((await turn).results[0]?.status).toBe('success');
      expect(await readFile(target, 'utf8')).toBe('signed\n');
    });
  }
});
