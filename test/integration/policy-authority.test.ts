import type { ChildProcess } from 'node:child_process';
import { access, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ruleBasedEvaluator } from '../../examples/evaluators/rule-based.js';
import {
  generateApproverKeyPair,
  policyDigest,
  signApproval,
  signPolicyChange,
} from '../../src/approvals/approval-signature.js';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import { approvalSigningPayload } from '../../src/contracts/approval.js';
import type { ApprovalDecision, ApprovalDecisionRecord, ApprovalRequest } from '../../src/contracts/approval.js';
import { approvalDecisionsQuery } from '../../src/contracts/messages.js';
import type { SetPolicyRequest } from '../../src/contracts/policy.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import {
  allEvents,
  eventsOfType,
  rejectionOf,
  sessionStateOf,
  waitForPendingApprovals,
} from '../support/session-probes.js';
import { cliEnvironment, runCli } from '../support/cli-process.js';
import { killProcess, spawnWorkerProcess } from '../support/spawn-worker.js';
import { waitFor } from '../support/wait-for.js';

type Keys = ReturnType<typeof generateApproverKeyPair>;

const exists = (file: string): Promise<boolean> =>
  access(file).then(
    () => true,
    () => false,
  );
const writeInput = (file_path: string, content: string) => ({ file_path, content });
const write = (id: string, file: string, text: string) => ({ id, name: 'Write', input: writeInput(file, text) });
const bash = (id: string, command: string) => ({ id, name: 'Bash', input: { command } });
const inTenMinutes = (): string => new Date(Date.now() + 10 * 60_000).toISOString();

/**
 * Who may change what runs, in a session with approvers (SECURITY.md, Authority): `setPolicy`, remembered rules,
 * evaluators and PermissionRequest hooks, through real sessions with the real built-in tools; and the worker's
 * `SWITCHYARD_SANDBOX=required` floor.
 */
describe('authority in a session with approvers (real server, real tools)', () => {
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
        approvers: { alice: { publicKey: alice.publicKeyPem }, bob: { publicKey: bob.publicKeyPem } },
      }),
    );
    harness = await createHarness({
      tools: builtinTools(),
      defaultCwd: cwd,
      approversFile,
      evaluators: [ruleBasedEvaluator],
    });
  });
  afterAll(async () => {
    await Promise.all(children.map(killProcess));
    await harness.close();
  });

  const decisions = (session: SessionHandle): Promise<ApprovalDecisionRecord[]> =>
    session.workflow.query(approvalDecisionsQuery);
  /** alice's signed approval of `request`. */
  const approveAsAlice = (session: SessionHandle, request: ApprovalRequest, decision: ApprovalDecision = 'allow') => {
    const fields = {
      requestId: request.requestId,
      inputDigest: request.inputDigest,
      decision,
      by: 'alice',
      expiresAt: inTenMinutes(),
    };
    return session.approve({
      ...fields,
      signature: signApproval(approvalSigningPayload(session.sessionId, fields), alice.privateKeyPem),
    });
  };
  /** `request` signed by `key` in the name of `by`. */
  const signedBy = (
    session: SessionHandle,
    request: SetPolicyRequest,
    by: string,
    key: Keys,
    expiresAt = inTenMinutes(),
  ): SetPolicyRequest =>
    signPolicyChange({ sessionId: session.sessionId, request, by, expiresAt, privateKeyPem: key.privateKeyPem });
  /** No decision names a person unless that person's signature was verified. */
  const expectNoUnverifiedPerson = (records: readonly ApprovalDecisionRecord[]): void => {
    for (const record of records.filter((entry) => entry.outcome === 'accepted'))
      if (!record.verified) expect(record.by ?? '').toMatch(/^(evaluator|hook|policy):/);
  };

  it('an unsigned, forged, outsider, expired or replayed setPolicy changes nothing and says why; alice’s signed one applies', async () => {
    await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, approvers: ['alice'] });
      const turn = session.executeTurn({ turnId: 't1', calls: [write('w1', 'policy-signed.txt', 'by alice\n')] });
      const [request] = await waitForPendingApprovals(session);
      const open: SetPolicyRequest = { permissionMode: 'bypassPermissions', reason: 'let it run', by: 'alice' };
      const attempts: Array<[string, SetPolicyRequest]> = [
        ['unsigned', open],
        ['bad_signature', signedBy(session, open, 'alice', mallory)],
        ['unknown_approver', signedBy(session, open, 'mallory', mallory)],
        ['not_an_approver', signedBy(session, open, 'bob', bob)],
        ['expired', signedBy(session, open, 'alice', alice, new Date(Date.now() - 60_000).toISOString())],
        // alice signed a narrower change; the request sent is another one (the digest covers the change).
        [
          'bad_signature',
          { ...signedBy(session, { rules: { allow: ['Read'] } }, 'alice', alice), permissionMode: 'bypassPermissions' },
        ],
        // alice's signature for another session.
        [
          'bad_signature',
          {
            ...open,
            ...signPolicyChange({
              sessionId: 'another-session',
              request: open,
              by: 'alice',
              expiresAt: inTenMinutes(),
              privateKeyPem: alice.privateKeyPem,
            }),
          },
        ],
      ];
      for (const [reason, attempt] of attempts) {
        const rejection = await rejectionOf(session.setPolicy(attempt));
        expect(rejection, reason).toContain(reason);
        expect(rejection).toContain('nothing changed');
      }
      // Nothing changed: the Write still waits, no policy version was added, no call was decided.
      expect(await session.pendingApprovals()).toMatchObject([{ requestId: request?.requestId, callId: 'w1' }]);
      const events = await allEvents(session);
      expect(eventsOfType(events, 'PolicyChanged')).toEqual([]);
      expect(
        eventsOfType(events, 'ApprovalIgnored')
          .filter((event) => event.requestId === 'setPolicy')
          .map((event) => event.reason),
      ).toEqual(attempts.map(([reason]) => reason));
      expect((await decisions(session)).filter((record) => record.outcome === 'accepted')).toEqual([]);
      expect(await exists(path.join(cwd, 'policy-signed.txt'))).toBe(false);

      // alice's own signature over this change, for this session, applies: the Write is released.
      const change: SetPolicyRequest = {
        rules: { allow: ['Write(policy-*)'] },
        reason: 'writes are fine',
        by: 'alice',
      };
      const signed = signedBy(session, change, 'alice', alice);
      expect(await session.setPolicy(signed)).toEqual({ policyVersion: 2, released: ['w1'], denied: [] });
      expect((await turn).results[0]).toMatchObject({ status: 'success' });
      expect(await readFile(path.join(cwd, 'policy-signed.txt'), 'utf8')).toBe('by alice\n');
      // The same signed change again is a replay: refused, nothing changes.
      expect(await rejectionOf(session.setPolicy(signed))).toContain('already_decided');

      const after = await allEvents(session);
      expect(eventsOfType(after, 'PolicyChanged')).toMatchObject([
        {
          policyVersion: 2,
          by: 'alice',
          verified: true,
          policyDigest: policyDigest({ rules: { allow: ['Write(policy-*)'] } }),
          released: ['w1'],
        },
      ]);
      const accepted = (await decisions(session)).filter((record) => record.outcome === 'accepted');
      expect(accepted).toMatchObject([{ callId: 'w1', decision: 'allow', by: 'policy:alice', verified: true }]);
      expectNoUnverifiedPerson(await decisions(session));

      // Still the default mode: a Write the new rule does not cover asks.
      const next = session.executeTurn({ turnId: 't2', calls: [write('w2', 'other.txt', 'asks\n')] });
      const [asking] = await waitForPendingApprovals(session);
      expect(asking?.callId).toBe('w2');
      await approveAsAlice(session, asking!, 'deny');
      expect((await next).results[0]).toMatchObject({ status: 'denied' });

      await Worker.runReplayHistory(
        { workflowBundle: { codePath: inject('workflowBundlePath') } },
        await session.workflow.fetchHistory(),
        session.sessionId,
      );
    });
  });

  it('switchyard policy set: refused without --key (exit 1, the reason printed), applied with alice’s key', async () => {
    const keyFile = path.join(await scratchDir('switchyard-keys-'), 'alice.key');
    await writeFile(keyFile, alice.privateKeyPem, { mode: 0o600 });
    const env = await cliEnvironment(harness);
    await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, approvers: ['alice'] });
      const turn = session.executeTurn({ turnId: 't1', calls: [write('w1', 'policy-cli.txt', 'cli\n')] });
      await waitForPendingApprovals(session);
      const args = ['policy', 'set', '--session', session.sessionId, '--allow', 'Write(policy-cli.txt)'];
      await expect(runCli([...args, '--by', 'alice'], env)).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringContaining('unsigned'),
      });
      expect(await session.pendingApprovals()).toHaveLength(1);
      const applied = await runCli([...args, '--key', keyFile, '--json'], env);
      expect(JSON.parse(applied.stdout)).toEqual({ policyVersion: 2, released: ['w1'], denied: [] });
      expect((await turn).results[0]).toMatchObject({ status: 'success' });
      expect((await decisions(session)).filter((record) => record.outcome === 'accepted')).toMatchObject([
        { callId: 'w1', by: 'policy:alice', verified: true },
      ]);
    });
  });

  it('a remembered rule takes alice’s signed allow_always; no unsigned path adds one', async () => {
    await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, approvers: ['alice'] });
      const first = session.executeTurn({ turnId: 't1', calls: [bash('b1', 'touch remembered-1.txt')] });
      const [request] = await waitForPendingApprovals(session);
      // Unsigned ways to an "always allow": an allow_always signal, and a setPolicy adding the rule.
      await session.approve({
        requestId: request!.requestId,
        inputDigest: request!.inputDigest,
        decision: 'allow_always',
        by: 'alice',
      });
      expect(await rejectionOf(session.setPolicy({ rules: { allow: ['Bash(touch:*)'] }, by: 'alice' }))).toContain(
        'unsigned',
      );
      await waitFor(
        () => decisions(session),
        (records) => records.some((record) => record.ignoredBecause === 'unsigned' && record.requestId !== 'setPolicy'),
        { what: 'the unsigned allow_always ignored' },
      );
      expect(await session.pendingApprovals()).toHaveLength(1);
      // alice allows once: the call runs and nothing is remembered.
      await approveAsAlice(session, request!, 'allow');
      expect((await first).results[0]).toMatchObject({ status: 'success' });
      expect((await sessionStateOf(session)).rememberedRules).toEqual([]);

      const second = session.executeTurn({ turnId: 't2', calls: [bash('b2', 'touch remembered-2.txt')] });
      const [again] = await waitForPendingApprovals(session);
      await approveAsAlice(session, again!, 'allow_always');
      expect((await second).results[0]).toMatchObject({ status: 'success' });
      expect((await sessionStateOf(session)).rememberedRules).toEqual([again?.rememberRule]);
      const third = await session.executeTurn({ turnId: 't3', calls: [bash('b3', 'touch remembered-3.txt')] });
      expect(third.results[0]).toMatchObject({ status: 'success', timings: { permissionWaitMs: 0 } });
      expectNoUnverifiedPerson(await decisions(session));
    });
  });

  it("an evaluator's or a hook's allow does not stand in for the approvers; their decisions are never a person's", async () => {
    const allowHook = `echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}'`;
    await harness.withWorker(async () => {
      // The rule-based evaluator denies rm (counted) and allows touch (set aside: only alice allows here).
      const evaluated = await harness.startSession({ cwd, approvers: ['alice'], approvalEvaluator: 'rule-based' });
      const denied = await evaluated.executeTurn({ turnId: 't1', calls: [bash('r1', 'rm -f nothing-here.txt')] });
      expect(denied.results[0]).toMatchObject({ status: 'denied' });
      const waiting = evaluated.executeTurn({ turnId: 't2', calls: [bash('e1', 'touch evaluated.txt')] });
      const [request] = await waitForPendingApprovals(evaluated);
      const setAside = await waitFor(
        () => allEvents(evaluated),
        (events) => eventsOfType(events, 'ApprovalIgnored').some((event) => event.requestId === request?.requestId),
        { what: "the evaluator's allow set aside" },
      );
      expect(eventsOfType(setAside, 'ApprovalIgnored').at(-1)?.detail).toContain('evaluator:rule-based');
      expect(await evaluated.pendingApprovals()).toHaveLength(1);
      expect(await exists(path.join(cwd, 'evaluated.txt'))).toBe(false);
      await approveAsAlice(evaluated, request!);
      expect((await waiting).results[0]).toMatchObject({ status: 'success' });
      const evaluatedLog = await decisions(evaluated);
      expect(evaluatedLog.filter((record) => record.outcome === 'accepted')).toMatchObject([
        { callId: 'r1', decision: 'deny', by: 'evaluator:rule-based', verified: false },
        { callId: 'e1', decision: 'allow', by: 'alice', verified: true },
      ]);
      expectNoUnverifiedPerson(evaluatedLog);

      // A PermissionRequest hook that allows everything: set aside with approvers, taken (as the hook) without.
      const hooks = { PermissionRequest: [{ matcher: 'Write', hooks: [{ type: 'command', command: allowHook }] }] };
      const hooked = await harness.startSession({ cwd, approvers: ['alice'], hooks });
      const hookTurn = hooked.executeTurn({ turnId: 't1', calls: [write('h1', 'hooked.txt', 'hook\n')] });
      const [hookRequest] = await waitForPendingApprovals(hooked);
      await waitFor(
        () => allEvents(hooked),
        (events) =>
          eventsOfType(events, 'ApprovalIgnored').some(
            (event) => event.requestId === hookRequest?.requestId && event.detail?.includes('hook:echo') === true,
          ),
        { what: "the hook's allow set aside" },
      );
      expect(await hooked.pendingApprovals()).toHaveLength(1);
      await approveAsAlice(hooked, hookRequest!, 'deny');
      expect((await hookTurn).results[0]).toMatchObject({ status: 'denied' });
      expect(await exists(path.join(cwd, 'hooked.txt'))).toBe(false);

      const open = await harness.startSession({ cwd, hooks });
      const openTurn = await open.executeTurn({ turnId: 't1', calls: [write('o1', 'open-hooked.txt', 'hook\n')] });
      expect(openTurn.results[0]).toMatchObject({ status: 'success' });
      const openLog = await decisions(open);
      expect(openLog).toMatchObject([{ callId: 'o1', decision: 'allow', verified: false, outcome: 'accepted' }]);
      expect(openLog[0]?.by).toBe(`hook:${allowHook}`);
      expectNoUnverifiedPerson(openLog);

      // Without approvers an unsigned setPolicy still applies, recorded as the policy's, never as a person.
      const policyTurn = open.executeTurn({ turnId: 't2', calls: [bash('p1', 'touch policy-released.txt')] });
      await waitForPendingApprovals(open);
      expect(await open.setPolicy({ rules: { allow: ['Bash(touch:*)'] }, by: 'alice' })).toMatchObject({
        released: ['p1'],
      });
      expect((await policyTurn).results[0]).toMatchObject({ status: 'success' });
      expect((await decisions(open)).at(-1)).toMatchObject({ callId: 'p1', by: 'policy:alice', verified: false });
      expectNoUnverifiedPerson(await decisions(open));
    });
  });

  it("a worker's SWITCHYARD_SANDBOX=required refuses a session asking for sandbox mode off or auto; nothing runs", async () => {
    const worker = await spawnWorkerProcess(harness, {
      tools: 'builtin',
      env: { SWITCHYARD_SANDBOX: 'required', SWITCHYARD_WORKER_CWD: cwd },
    });
    children.push(worker);
    try {
      for (const mode of ['off', 'auto'] as const) {
        const session = await harness.startSession({ cwd, permissionMode: 'acceptEdits', sandbox: { mode } });
        // A turn sent with the start waits for the admission and is refused: with the reason when it reached the
        // session before the refusal, else as aborted by the session's close.
        const turn = rejectionOf(
          session.executeTurn({ turnId: 't1', calls: [write('w1', `floor-${mode}.txt`, 'ran\n')] }),
        );
        const failure = await session.workflow.result().then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(failure).toBeInstanceOf(WorkflowFailedError);
        const reason = ((failure as WorkflowFailedError).cause as Error).message;
        expect(reason).toContain('SWITCHYARD_SANDBOX=required');
        expect(reason).toContain(`sandbox.mode "${mode}"`);
        const rejected = await turn;
        expect(rejected).not.toBe('accepted');
        if (!rejected.includes('aborted')) expect(rejected).toContain('SWITCHYARD_SANDBOX=required');
        expect(await exists(path.join(cwd, `floor-${mode}.txt`))).toBe(false);
      }
      // A session that leaves the mode to the worker (or asks for required) runs.
      const session = await harness.startSession({ cwd, permissionMode: 'acceptEdits' });
      const result = await session.executeTurn({ turnId: 't1', calls: [write('w1', 'floor-default.txt', 'ran\n')] });
      expect(result.results[0]).toMatchObject({ status: 'success' });
    } finally {
      await killProcess(worker);
    }
  });
});
