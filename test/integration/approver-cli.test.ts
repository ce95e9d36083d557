import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { ApprovalRequest } from '../../src/contracts/approval.js';
import type { SessionEvent } from '../../src/contracts/events.js';
import { killCli, runCli, startCli, cliEnvironment } from '../support/cli-process.js';
import type { CliProcess } from '../support/cli-process.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { waitFor } from '../support/wait-for.js';

// README "Approve as a named person" and docs/CLI.md: `keys new`, `approve|deny --key` and `audit`, run as the real
// binary against the test's server, with a `switchyard worker` that reads SWITCHYARD_APPROVERS_FILE.

interface AuditLine {
  sessionId: string;
  at: string;
  requestId: string;
  callId?: string;
  toolName?: string;
  inputDigest?: string;
  decision?: string;
  by?: string;
  verified: boolean;
  outcome: string;
  reason?: string;
  policyVersion: number;
}

describe('signing approvals and exporting the audit trail with the switchyard CLI', { timeout: 300_000 }, () => {
  let harness: Harness;
  let cwd: string;
  let keysDir: string;
  let env: NodeJS.ProcessEnv;
  let worker: CliProcess;

  beforeAll(async () => {
    cwd = await scratchDir();
    keysDir = await scratchDir('switchyard-keys-');
    harness = await createHarness({ defaultCwd: cwd });
    env = await cliEnvironment(harness);
  });
  afterAll(async () => {
    if (worker !== undefined) await killCli(worker);
    await harness.close();
  });

  const pending = (session: SessionHandle) =>
    waitFor(
      () => session.pendingApprovals(),
      (list) => list.length === 1,
      { what: 'one pending approval' },
    );

  it('`keys new` writes a key pair; `approve|deny --key` sign; `audit --json` lists both decisions with who, tool and digest', async () => {
    const created = JSON.parse((await runCli(['keys', 'new', 'alice', '--dir', keysDir, '--json'], env)).stdout) as {
      privateKeyFile: string;
      approvers: Record<string, { publicKey: string }>;
    };
    expect(created.privateKeyFile).toBe(path.join(keysDir, 'alice.key'));
    expect((await stat(created.privateKeyFile)).mode & 0o777).toBe(0o600);
    expect(created.approvers.alice?.publicKey).toContain('BEGIN PUBLIC KEY');
    await expect(runCli(['keys', 'new', 'alice', '--dir', keysDir], env)).rejects.toMatchObject({ code: 1 });
    const approversFile = path.join(keysDir, 'approvers.json');
    await writeFile(approversFile, JSON.stringify({ approvers: created.approvers }));

    worker = startCli(['worker', '--cwd', cwd], { ...env, SWITCHYARD_APPROVERS_FILE: approversFile });
    await worker.waitForLog(
      (line) => line.msg === 'worker started' && line.taskQueue === harness.taskQueue,
      'the worker to start',
    );

    const session = await harness.startSession({ cwd, approvers: ['alice'] });
    const first = session.executeTurn({
      turnId: 't1',
      calls: [{ id: 'w1', name: 'Write', input: { file_path: 'allowed.txt', content: 'yes\n' } }],
    });
    const allowRequest = (await pending(session))[0] as ApprovalRequest;
    // Unsigned: the session ignores it, and the CLI says so (exit 1).
    await expect(
      runCli(['approve', allowRequest.requestId, '--session', session.sessionId], env),
    ).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('unsigned') });
    const approved = await runCli(
      ['approve', allowRequest.requestId, '--session', session.sessionId, '--key', created.privateKeyFile],
      env,
    );
    expect(approved.stderr).toContain('allowed: Write');
    expect((await first).results[0]).toMatchObject({ status: 'success' });
    expect(await readFile(path.join(cwd, 'allowed.txt'), 'utf8')).toBe('yes\n');

    const second = session.executeTurn({
      turnId: 't2',
      calls: [{ id: 'w2', name: 'Write', input: { file_path: 'denied.txt', content: 'no\n' } }],
    });
    const denyRequest = (await pending(session))[0] as ApprovalRequest;
    await runCli(
      [
        'deny',
        denyRequest.requestId,
        '--session',
        session.sessionId,
        '--reason',
        'not today',
        '--key',
        created.privateKeyFile,
      ],
      env,
    );
    expect((await second).results[0]).toMatchObject({ status: 'denied' });

    // A closed session stays in the audit while its history exists.
    await session.end();
    const audit = async (args: string[] = []): Promise<AuditLine[]> =>
      (await runCli(['audit', '--json', ...args], env)).stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as AuditLine);
    const lines = await waitFor(
      () => audit(),
      (list) => list.filter((line) => line.sessionId === session.sessionId).length === 3,
      {
        what: 'the three decisions of the session in `audit`',
        timeoutMs: 60_000,
      },
    );
    const mine = lines.filter((line) => line.sessionId === session.sessionId);
    expect(mine).toMatchObject([
      { requestId: allowRequest.requestId, outcome: 'ignored', verified: false, decision: 'allow' },
      {
        requestId: allowRequest.requestId,
        callId: 'w1',
        toolName: 'Write',
        inputDigest: allowRequest.inputDigest,
        decision: 'allow',
        by: 'alice',
        verified: true,
        outcome: 'accepted',
        policyVersion: 1,
      },
      {
        requestId: denyRequest.requestId,
        callId: 'w2',
        toolName: 'Write',
        inputDigest: denyRequest.inputDigest,
        decision: 'deny',
        by: 'alice',
        verified: true,
        outcome: 'accepted',
        reason: 'not today',
        policyVersion: 1,
      },
    ]);
    for (const line of mine) expect(Date.parse(line.at)).not.toBeNaN();
    expect(await audit(['--session', session.sessionId])).toEqual(mine);
    expect(await audit(['--session', session.sessionId, '--since', mine[2]?.at ?? ''])).toEqual(mine.slice(2));
    await expect(runCli(['audit', '--since', 'yesterday'], env)).rejects.toMatchObject({ code: 2 });

    // Each decision is a pino line of the worker too.
    const logged = worker
      .logs()
      .filter((line) => line.event === 'approval.decision' && line.sessionId === session.sessionId);
    expect(logged).toMatchObject([
      { outcome: 'ignored', ignoredBecause: 'unsigned' },
      { outcome: 'accepted', by: 'alice', verified: true, toolName: 'Write', decision: 'allow' },
      { outcome: 'accepted', by: 'alice', verified: true, decision: 'deny' },
    ]);
    const events = (await session.events()).events.filter(
      (event): event is Extract<SessionEvent, { type: 'ApprovalIgnored' }> => event.type === 'ApprovalIgnored',
    );
    expect(events.map((event) => event.reason)).toEqual(['unsigned']);
  });
});
