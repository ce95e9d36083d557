import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApproverKeyPair, signApproval } from '../../src/approvals/approval-signature.js';
import { approvalSigningPayload } from '../../src/contracts/approval.js';
import type { ApprovalDecisionRecord, ApprovalRequest } from '../../src/contracts/approval.js';
import { approvalDecisionCountsQuery, approvalDecisionsQuery } from '../../src/contracts/messages.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { IGNORED_DECISIONS_RETAINED } from '../../src/workflows/approval-decision-log.js';
import { cliEnvironment, runCli } from '../support/cli-process.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { waitFor } from '../support/wait-for.js';

// An attacker who can send `approval` signals but holds no approver's key must not be able to flush the audit: junk
// signals are ignored and counted, and never push a person's accepted decision out of `approvalDecisions` or
// `switchyard audit`, in this run or the next (continue-as-new). Real server, real worker, real Bash.

const JUNK_SIGNALS = 250;

describe('the decision log under a flood of junk approval signals', { timeout: 300_000 }, () => {
  let harness: Harness;
  let cwd: string;
  const alice = generateApproverKeyPair();

  beforeAll(async () => {
    cwd = await scratchDir();
    const approversFile = path.join(await scratchDir('switchyard-approvers-'), 'approvers.json');
    await writeFile(approversFile, JSON.stringify({ approvers: { alice: { publicKey: alice.publicKeyPem } } }));
    harness = await createHarness({ tools: builtinTools(), defaultCwd: cwd, approversFile });
  });
  afterAll(async () => harness.close());

  it('keeps the signed decision, with its input summary, after 250 junk unsigned signals and a continue-as-new', async () => {
    const { worker, done } = await harness.startWorker();
    try {
      // Few events per run: the junk signals alone make the session continue as new once it is idle.
      const session = await harness.startSession({ cwd, approvers: ['alice'], continueAsNewAfterEvents: 100 });
      const firstRun = (await session.workflow.describe()).runId;
      const command = 'echo audited > audited.txt';
      const turn = session.executeTurn({
        turnId: 't1',
        calls: [{ id: 'b1', name: 'Bash', input: { command } }],
      });
      const request = (
        await waitFor(
          () => session.pendingApprovals(),
          (list) => list.length === 1,
          { what: 'the Bash call waiting for approval' },
        )
      )[0] as ApprovalRequest;
      const fields = {
        requestId: request.requestId,
        inputDigest: request.inputDigest,
        decision: 'allow' as const,
        by: 'alice',
        expiresAt: new Date(Date.now() + 10 * 60_000).toISOString(),
      };
      await session.approve({
        ...fields,
        signature: signApproval(approvalSigningPayload(session.sessionId, fields), alice.privateKeyPem),
      });
      expect((await turn).results[0]).toMatchObject({ status: 'success' });

      // The flood: unsigned signals for unknown requests and for the decided one, as anyone who reaches the server
      // can send.
      for (let index = 0; index < JUNK_SIGNALS; index += 1) {
        await session.approve({
          requestId: index % 2 === 0 ? `junk-${index}` : request.requestId,
          inputDigest: index % 2 === 0 ? 'sha256:junk' : request.inputDigest,
          decision: 'allow',
          by: 'alice',
        });
      }
      // The session continues as new once idle; the next run answers from what it carried.
      await waitFor(
        async () => (await session.workflow.describe()).runId,
        (runId) => runId !== firstRun,
        { what: 'the session to continue as new' },
      );
      const decisions = await waitFor(
        (): Promise<ApprovalDecisionRecord[]> => session.workflow.query(approvalDecisionsQuery),
        (list) => list.at(-1)?.requestId === request.requestId && list.at(-1)?.outcome === 'ignored',
        { what: 'the last junk signal in the decision log' },
      );
      const accepted = decisions.filter((record) => record.outcome === 'accepted');
      expect(accepted).toMatchObject([
        {
          requestId: request.requestId,
          callId: 'b1',
          toolName: 'Bash',
          inputDigest: request.inputDigest,
          inputSummary: command,
          decision: 'allow',
          by: 'alice',
          verified: true,
          source: 'person',
          policyVersion: 1,
        },
      ]);
      const ignored = decisions.filter((record) => record.outcome === 'ignored');
      expect(ignored.length).toBeLessThanOrEqual(IGNORED_DECISIONS_RETAINED);
      expect(ignored.length).toBeGreaterThan(0);
      expect(await session.workflow.query(approvalDecisionCountsQuery)).toMatchObject({
        accepted: 1,
        ignored: JUNK_SIGNALS,
        ignoredRetained: ignored.length,
      });

      // `switchyard audit` prints the decision with what was run, and says how many signals were ignored.
      const env = await cliEnvironment(harness);
      const audit = await runCli(['audit', '--json', '--session', session.sessionId], env);
      const lines = audit.stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as ApprovalDecisionRecord & { sessionId: string });
      expect(lines.filter((line) => line.outcome === 'accepted')).toMatchObject([
        { sessionId: session.sessionId, toolName: 'Bash', inputSummary: command, by: 'alice', verified: true },
      ]);
      expect(audit.stderr).toContain(`${JUNK_SIGNALS} ignored`);
      const text = await runCli(['audit', '--session', session.sessionId], env);
      const acceptedLine = text.stdout.split('\n').find((line) => line.includes('by alice (verified)'));
      expect(acceptedLine).toContain(command);
      expect(acceptedLine).toContain(request.inputDigest);
    } finally {
      worker.shutdown();
      await done;
    }
  });
});
