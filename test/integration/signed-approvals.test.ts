import type { ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateApproverKeyPair, signApproval } from '../../src/approvals/approval-signature.js';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import { approvalSigningPayload } from '../../src/contracts/approval.js';
import type {
  ApprovalDecision,
  ApprovalDecisionRecord,
  ApprovalRequest,
  ApprovalSignal,
} from '../../src/contracts/approval.js';
import type { SessionEvent } from '../../src/contracts/events.js';
import { approvalDecisionsQuery } from '../../src/contracts/messages.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { killProcess, spawnWorkerProcess } from '../support/spawn-worker.js';
import { waitFor } from '../support/wait-for.js';

type Keys = ReturnType<typeof generateApproverKeyPair>;

describe('signed approvals from named approvers, on a real server', () => {
  let harness: Harness;
  let cwd: string;
  let approversFile: string;
  const alice: Keys = generateApproverKeyPair();
  const bob: Keys = generateApproverKeyPair();
  const mallory: Keys = generateApproverKeyPair();
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    cwd = await scratchDir();
    approversFile = path.join(await scratchDir('switchyard-approvers-'), 'approvers.json');
    // mallory is not in the file; bob is, but is not an approver of the sessions below.
    await writeFile(
      approversFile,
      JSON.stringify({
        approvers: { alice: { publicKey: alice.publicKeyPem, groups: ['ops'] }, bob: { publicKey: bob.publicKeyPem } },
      }),
    );
    harness = await createHarness({ tools: builtinTools(), defaultCwd: cwd, approversFile });
  });
  afterAll(async () => {
    await Promise.all(children.map(killProcess));
    await harness.close();
  });

  const pending = (session: SessionHandle) =>
    waitFor(
      () => session.pendingApprovals(),
      (list) => list.length === 1,
      { what: 'one pending approval' },
    );
  const ignoredEvents = async (session: SessionHandle) =>
    (await session.events()).events.filter(
      (event): event is Extract<SessionEvent, { type: 'ApprovalIgnored' }> => event.type === 'ApprovalIgnored',
    );
  const decisions = (session: SessionHandle): Promise<ApprovalDecisionRecord[]> =>
    session.workflow.query(approvalDecisionsQuery);

  /** A signal for `request`, signed with `key` in the name of `by`. */
  function signed(options: {
    session: SessionHandle;
    request: ApprovalRequest;
    by: string;
    key: Keys;
    decision?: ApprovalDecision;
    expiresAt?: string;
  }): ApprovalSignal {
    const { session, request, by, key } = options;
    const fields = {
      requestId: request.requestId,
      inputDigest: request.inputDigest,
      decision: options.decision ?? 'allow',
      by,
      expiresAt: options.expiresAt ?? new Date(Date.now() + 10 * 60_000).toISOString(),
    };
    return { ...fields, signature: signApproval(approvalSigningPayload(session.sessionId, fields), key.privateKeyPem) };
  }

  it("ignores unsigned, forged, outsider and expired approvals, each saying why; takes alice's signature once, and replays", async () => {
    const { worker, done } = await harness.startWorker();
    try {
      const session = await harness.startSession({ cwd, approvers: ['alice'] });
      const turn = session.executeTurn({
        turnId: 't1',
        calls: [{ id: 'w1', name: 'Write', input: { file_path: 'signed.txt', content: 'approved by alice\n' } }],
      });
      const request = (await pending(session))[0] as ApprovalRequest;
      expect(request.approvers).toEqual(['alice']);
      const expired = new Date(Date.now() - 60_000).toISOString();

      const attempts: Array<[string, ApprovalSignal]> = [
        [
          'unsigned',
          { requestId: request.requestId, inputDigest: request.inputDigest, decision: 'allow', by: 'alice' },
        ],
        ['unknown_approver', signed({ session, request, by: 'mallory', key: mallory })],
        ['bad_signature', signed({ session, request, by: 'alice', key: mallory })],
        ['not_an_approver', signed({ session, request, by: 'bob', key: bob })],
        ['expired', signed({ session, request, by: 'alice', key: alice, expiresAt: expired })],
        // alice's signature, replayed for another session: the session id is signed too.
        [
          'bad_signature',
          {
            ...signed({ session, request, by: 'alice', key: alice }),
            signature: signApproval(
              approvalSigningPayload('another-session', { ...request, decision: 'allow', by: 'alice' }),
              alice.privateKeyPem,
            ),
          },
        ],
      ];
      for (const [, signal] of attempts) await session.approve(signal);
      const ignored = await waitFor(
        () => ignoredEvents(session),
        (events) => events.length === attempts.length,
        { what: `${attempts.length} ignored approvals` },
      );
      // Signatures are checked concurrently, so the events come in the order the checks finish.
      expect(ignored.map((event) => event.reason).sort()).toEqual(attempts.map(([reason]) => reason).sort());
      for (const event of ignored) expect(event.detail).toBeTruthy();
      expect(await session.pendingApprovals()).toHaveLength(1);
      expect((await decisions(session)).every((record) => record.outcome === 'ignored' && !record.verified)).toBe(true);

      const grant = signed({ session, request, by: 'alice', key: alice });
      await session.approve(grant);
      const result = await turn;
      expect(result.results[0]).toMatchObject({ status: 'success', toolName: 'Write' });
      expect(await readFile(path.join(cwd, 'signed.txt'), 'utf8')).toBe('approved by alice\n');
      const accepted = (await decisions(session)).filter((record) => record.outcome === 'accepted');
      expect(accepted).toMatchObject([
        {
          requestId: request.requestId,
          callId: 'w1',
          toolName: 'Write',
          inputDigest: request.inputDigest,
          decision: 'allow',
          by: 'alice',
          verified: true,
          policyVersion: 1,
        },
      ]);
      expect(accepted[0]?.at).toMatch(/^\d{4}-\d\d-\d\dT/);

      // A grant is single-use: the same signed signal again decides nothing.
      await session.approve(grant);
      const after = await waitFor(
        () => ignoredEvents(session),
        (events) => events.length === attempts.length + 1,
        { what: 'the reused grant ignored' },
      );
      expect(after.at(-1)?.reason).toBe('already_decided');

      // The verdicts are in history: replay needs neither the approvers file nor a key.
      await Worker.runReplayHistory(
        { workflowBundle: { codePath: inject('workflowBundlePath') } },
        await session.workflow.fetchHistory(),
        session.sessionId,
      );
      const history = JSON.stringify(await session.workflow.fetchHistory());
      expect(history).not.toContain('PRIVATE KEY');
      expect(history).not.toContain(alice.publicKeyPem.split('\n')[1]);
    } finally {
      worker.shutdown();
      await done;
    }
  });

  it("takes a group member's signature and, without approvers, keeps taking unsigned approvals (unverified)", async () => {
    const { worker, done } = await harness.startWorker();
    try {
      const grouped = await harness.startSession({ cwd, approvers: ['group:ops'] });
      const groupTurn = grouped.executeTurn({
        turnId: 't1',
        calls: [{ id: 'w1', name: 'Write', input: { file_path: 'group.txt', content: 'ops\n' } }],
      });
      const groupRequest = (await pending(grouped))[0] as ApprovalRequest;
      await grouped.approve(
        signed({ session: grouped, request: groupRequest, by: 'alice', key: alice, decision: 'deny' }),
      );
      expect((await groupTurn).results[0]).toMatchObject({ status: 'denied' });
      expect(await decisions(grouped)).toMatchObject([
        { outcome: 'accepted', decision: 'deny', by: 'alice', verified: true },
      ]);

      const open = await harness.startSession({ cwd });
      const openTurn = open.executeTurn({
        turnId: 't1',
        calls: [{ id: 'w1', name: 'Write', input: { file_path: 'open.txt', content: 'anyone\n' } }],
      });
      const openRequest = (await pending(open))[0] as ApprovalRequest;
      expect(openRequest.approvers).toBeUndefined();
      await open.approve({
        requestId: openRequest.requestId,
        inputDigest: openRequest.inputDigest,
        decision: 'allow',
        by: 'someone',
      });
      expect((await openTurn).results[0]).toMatchObject({ status: 'success' });
      expect(await decisions(open)).toMatchObject([
        { outcome: 'accepted', by: 'someone', verified: false, policyVersion: 1 },
      ]);
    } finally {
      worker.shutdown();
      await done;
    }
  });

  it('survives a worker kill between the signature and the decision', async () => {
    const env = { SWITCHYARD_APPROVERS_FILE: approversFile, SWITCHYARD_WORKER_CWD: cwd };
    const first = await spawnWorkerProcess(harness, { tools: 'builtin', env });
    children.push(first);
    const session = await harness.startSession({ cwd, approvers: ['alice'] });
    const turn = session.executeTurn({
      turnId: 't1',
      calls: [{ id: 'w1', name: 'Write', input: { file_path: 'after-kill.txt', content: 'survived\n' } }],
    });
    const request = (await pending(session))[0] as ApprovalRequest;
    await killProcess(first);
    // The signed grant reaches history while no worker runs; a new worker checks it and decides.
    await session.approve(signed({ session, request, by: 'alice', key: alice }));
    const second = await spawnWorkerProcess(harness, { tools: 'builtin', env });
    children.push(second);
    expect((await turn).results[0]).toMatchObject({ status: 'success' });
    expect(await readFile(path.join(cwd, 'after-kill.txt'), 'utf8')).toBe('survived\n');
    expect((await decisions(session)).filter((record) => record.outcome === 'accepted')).toMatchObject([
      { by: 'alice', verified: true },
    ]);
  });
});
