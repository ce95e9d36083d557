import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createRequire } from 'node:module';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { ApprovalRequest } from '../../src/contracts/approval.js';
import type { SessionOptions } from '../../src/contracts/session.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { testTools } from '../support/test-tools.js';
import { ruleBasedEvaluator } from '../../examples/evaluators/rule-based.js';
import { waitFor } from '../support/wait-for.js';
import { generateApproverKeyPair, signApproval, signPolicyChange } from '../../src/approvals/approval-signature.js';
import { approvalSigningPayload } from '../../src/contracts/approval.js';
import type { ClientToolSpec } from '../../src/contracts/client-tools.js';
import { builtinTools } from '../../src/tools/builtin.js';

/**
 * Fixtures by the release that recorded them: `test/fixtures/histories/<version>/<scenario>.json`. Every version's
 * folder is replayed at HEAD, so a release's sessions replay on every later release (docs/ARCHITECTURE.md, Versioning).
 */
const fixtures = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));
const { version } = JSON.parse(
  await readFile(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8'),
) as { version: string };
const recordInto = path.join(fixtures, version);
const recording = process.env.SWITCHYARD_RECORD_HISTORIES === '1';
const run = promisify(execFile);
// Loaded through Node's require: under Vitest's ESM loader the proto reflection objects end up duplicated.
const { historyFromJSON } = createRequire(import.meta.url)(
  '@temporalio/common/lib/proto-utils',
) as typeof import('@temporalio/common/lib/proto-utils.js');

/** The real Read of one line of a.txt in the session's cwd. */
const readLine = (id: string, offset: number) => ({ id, name: 'Read', input: { file_path: 'a.txt', offset } });
/** The real Bash, started in the background. */
const inBackground = { run_in_background: true, description: 'job' };
const backgroundBash = (id: string, command: string) => ({ id, name: 'Bash', input: { command, ...inBackground } });

/**
 * Determinism guard (invariant 1): histories recorded from real sessions are replayed against today's workflow
 * code. Re-record deliberately, after a reviewed, versioned change: `npm run record-histories`.
 */
describe('replay of recorded session histories', () => {
  let harness: Harness;
  /** The real built-in tools (background Bash, TaskOutput) and an approvers file naming alice. */
  let realHarness: Harness;
  let cwd: string;
  const alice = generateApproverKeyPair();
  beforeAll(async () => {
    cwd = await scratchDir();
    harness = await createHarness({ tools: testTools(), defaultCwd: cwd, evaluators: [ruleBasedEvaluator] });
    if (!recording) return;
    const approversFile = path.join(await scratchDir('switchyard-approvers-'), 'approvers.json');
    await writeFile(approversFile, JSON.stringify({ approvers: { alice: { publicKey: alice.publicKeyPem } } }));
    realHarness = await createHarness({ tools: builtinTools(), defaultCwd: cwd, approversFile });
  });
  afterAll(async () => {
    await harness.close();
    await realHarness?.close();
  });
  const inTenMinutes = (): string => new Date(Date.now() + 10 * 60_000).toISOString();
  const clickButton: ClientToolSpec = {
    name: 'ClickButton',
    description: "Clicks a button in the user's browser.",
    inputSchema: { type: 'object', properties: { selector: { type: 'string' } }, required: ['selector'] },
    readOnly: true,
  };

  const approveNext = async (session: SessionHandle, decision: 'allow' | 'allow_always' | 'deny') => {
    const [request] = (await waitFor(
      () => session.pendingApprovals(),
      (list) => list.length > 0,
    )) as [ApprovalRequest];
    await session.approve({ requestId: request.requestId, decision, inputDigest: request.inputDigest });
  };

  const scenarios: Record<
    string,
    { options: SessionOptions; real?: boolean; run: (session: SessionHandle) => Promise<void> }
  > = {
    // Plan runs the allowed read-only first group (two Reads) itself; a denied Read and a mixed group do not qualify.
    'plan-runs-first-group': {
      options: { rules: { deny: ['Read(secret.txt)'] } },
      run: async (session) => {
        await writeFile(path.join(cwd, 'a.txt'), 'alpha\n');
        await writeFile(path.join(cwd, 'secret.txt'), 'secret\n');
        await session.executeTurn({
          turnId: 't1',
          calls: [
            { id: 'a', name: 'Read', input: { file_path: 'a.txt' } },
            { id: 'b', name: 'Read', input: { file_path: 'a.txt', limit: 1 } },
          ],
        });
        await session.executeTurn({
          turnId: 't2',
          calls: [
            { id: 'c', name: 'Read', input: { file_path: 'a.txt' } },
            { id: 's', name: 'Read', input: { file_path: 'secret.txt' } },
          ],
        });
        await session.executeTurn({
          turnId: 't3',
          calls: [
            { id: 'd', name: 'Read', input: { file_path: 'a.txt' } },
            { id: 'e', name: 'Sleep', input: { ms: 1 } },
          ],
        });
      },
    },
    // Plan runs the second group of a twelve-Read turn too (groups of ten), after the first.
    'plan-runs-following-groups': {
      options: {},
      run: async (session) => {
        await writeFile(path.join(cwd, 'a.txt'), 'alpha\n');
        await session.executeTurn({
          turnId: 't1',
          calls: Array.from({ length: 12 }, (_, index) => readLine(`r${index}`, 1 + (index % 2))),
        });
      },
    },
    'grouping-stop-and-errors': {
      options: { rules: { allow: ['FakeShell'] } },
      run: async (session) => {
        await session.executeTurn({
          turnId: 't1',
          calls: [
            { id: 'a', name: 'Sleep', input: { ms: 1 } },
            { id: 'b', name: 'Nope', input: {} },
            { id: 'c', name: 'FakeShell', input: { command: 'fail' } },
            { id: 'd', name: 'FakeSubmit', input: { result: 1 } },
            { id: 'e', name: 'Sleep', input: { ms: 1 } },
          ],
        });
      },
    },
    'streaming-turn': {
      options: { permissionMode: 'bypassPermissions' },
      run: async (session) => {
        const turn = session.streamTurn('s');
        await turn.add({ id: 'a', name: 'Sleep', input: { ms: 300 } }, { id: 'b', name: 'Sleep', input: { ms: 10 } });
        await turn.add(
          { id: 'c', name: 'FakeEdit', input: { file_path: 'streamed.txt' } },
          { id: 'd', name: 'Nope', input: {} },
        );
        await turn.end();
        for await (const result of turn) void result;
      },
    },
    'approvals-and-interrupt': {
      options: {},
      run: async (session) => {
        const first = session.executeTurn({
          turnId: 't1',
          calls: [{ id: 'e1', name: 'FakeEdit', input: { file_path: 'replay.txt' } }],
        });
        await approveNext(session, 'allow_always');
        await first;
        const second = session.executeTurn({
          turnId: 't2',
          calls: [{ id: 'b', name: 'FakeShell', input: { command: 'rm x' } }],
        });
        await approveNext(session, 'deny');
        await second;
        const third = session.executeTurn({
          turnId: 't3',
          calls: [
            { id: 'b', name: 'FakeShell', input: { command: 'make' } },
            { id: 's', name: 'Sleep', input: { ms: 1 } },
          ],
        });
        await waitFor(
          () => session.pendingApprovals(),
          (list) => list.length > 0,
        );
        await session.interrupt('replay');
        await third;
      },
    },
    'policy-set-shadow-and-limits': {
      options: { limits: [{ rule: 'Bash', max: 1, per: 'session' }], shadowRules: { deny: ['Sleep'] } },
      run: async (session) => {
        const first = session.executeTurn({
          turnId: 't1',
          calls: [
            { id: 'b1', name: 'Bash', input: { command: 'make' } },
            { id: 's', name: 'Sleep', input: { ms: 1 } },
          ],
        });
        await waitFor(
          () => session.pendingApprovals(),
          (list) => list.length > 0,
        );
        await session.setPolicy({ rules: { allow: ['Bash'] }, by: 'replay', reason: 'recorded' });
        await first;
        await session.executeTurn({ turnId: 't2', calls: [{ id: 'b2', name: 'Bash', input: { command: 'make' } }] });
      },
    },
    'approval-evaluator': {
      options: { approvalEvaluator: 'rule-based' },
      run: async (session) => {
        await session.executeTurn({
          turnId: 't1',
          calls: [
            { id: 'b1', name: 'Bash', input: { command: 'touch evaluated.txt' } },
            { id: 'b2', name: 'Bash', input: { command: 'rm evaluated.txt' } },
          ],
        });
        const escalated = session.executeTurn({
          turnId: 't2',
          calls: [{ id: 'b3', name: 'Bash', input: { command: 'make' } }],
        });
        await approveNext(session, 'allow');
        await escalated;
      },
    },
  };

  // Recorded from 0.1.0 on: background tasks, continue-as-new, client tools, signed approvals and policy changes.
  Object.assign(scenarios, {
    'background-task': {
      options: { rules: { allow: ['Bash'] } },
      real: true,
      run: async (session) => {
        const started = await session.executeTurn({
          turnId: 't1',
          calls: [backgroundBash('bg', 'echo begun; sleep 0.2; echo done')],
        });
        const taskId = started.results[0]?.backgroundTask?.taskId ?? '';
        await session.executeTurn({
          turnId: 't2',
          calls: [{ id: 'read', name: 'TaskOutput', input: { task_id: taskId, block: true } }],
        });
      },
    },
    'continue-as-new': {
      options: { permissionMode: 'bypassPermissions', continueAsNewAfterEvents: 20 },
      run: async (session) => {
        for (let turn = 1; turn <= 4; turn += 1)
          await session.executeTurn({
            turnId: `t${turn}`,
            calls: [
              { id: 'a', name: 'Sleep', input: { ms: 1 } },
              { id: 'b', name: 'FakeEdit', input: { file_path: `can-${turn}.txt` } },
            ],
          });
      },
    },
    'client-tool': {
      options: { clientTools: [clickButton] },
      run: async (session) => {
        const turn = session.executeTurn({
          turnId: 't1',
          calls: [
            { id: 's', name: 'Sleep', input: { ms: 1 } },
            { id: 'click', name: 'ClickButton', input: { selector: '#ok' } },
          ],
        });
        await waitFor(
          () => session.pendingClientCalls(),
          (calls) => calls.length === 1,
          { what: 'the parked client call' },
        );
        await session.submitToolResult({ callId: 'click', content: 'clicked #ok' });
        await turn;
      },
    },
    'signed-approval-and-policy': {
      options: { approvers: ['alice'] },
      real: true,
      run: async (session) => {
        const first = session.executeTurn({
          turnId: 't1',
          calls: [{ id: 'w', name: 'Write', input: { file_path: 'signed.txt', content: 'signed\n' } }],
        });
        const [request] = (await waitFor(
          () => session.pendingApprovals(),
          (list) => list.length > 0,
        )) as [ApprovalRequest];
        const fields = {
          requestId: request.requestId,
          inputDigest: request.inputDigest,
          decision: 'allow' as const,
          by: 'alice',
          expiresAt: inTenMinutes(),
        };
        await session.approve({
          ...fields,
          signature: signApproval(approvalSigningPayload(session.sessionId, fields), alice.privateKeyPem),
        });
        await first;
        const second = session.executeTurn({
          turnId: 't2',
          calls: [{ id: 'b', name: 'Bash', input: { command: 'touch policy.txt' } }],
        });
        await waitFor(
          () => session.pendingApprovals(),
          (list) => list.length > 0,
        );
        // An unsigned change is refused; alice's signed one releases the waiting Bash.
        await session.setPolicy({ rules: { allow: ['Bash'] }, by: 'mallory' }).catch(() => undefined);
        await session.setPolicy(
          signPolicyChange({
            sessionId: session.sessionId,
            request: { rules: { allow: ['Bash'] }, reason: 'recorded' },
            by: 'alice',
            expiresAt: inTenMinutes(),
            privateKeyPem: alice.privateKeyPem,
          }),
        );
        await second;
      },
    },
  } satisfies typeof scenarios);

  const temporalShow = async (h: Harness, workflowId: string, runId?: string): Promise<string> =>
    (
      await run(
        inject('temporalBinaryPath') || 'temporal',
        [
          'workflow',
          'show',
          '--address',
          h.address,
          '--namespace',
          h.namespace,
          '--workflow-id',
          workflowId,
          ...(runId === undefined ? [] : ['--run-id', runId]),
          '--output',
          'json',
        ],
        { maxBuffer: 64 * 1024 * 1024 },
      )
    ).stdout;

  if (recording) {
    // Records only scenarios without a fixture in this version's folder: old histories stay, so they keep guarding
    // compatibility.
    it.each(Object.keys(scenarios))('records %s (if missing)', async (name) => {
      await mkdir(recordInto, { recursive: true });
      if (
        await readFile(path.join(recordInto, `${name}.json`)).then(
          () => true,
          () => false,
        )
      )
        return;
      const scenario = scenarios[name];
      if (scenario === undefined) throw new Error(`no scenario ${name}`);
      const used = scenario.real === true ? realHarness : harness;
      await used.withWorker(async () => {
        const session = await used.startSession({ cwd, ...scenario.options });
        await scenario.run(session);
        // The temporal CLI's JSON is the format every SDK's replayer reads. A session that continued as new keeps
        // its first run too (`<name>.first-run.json`, ending in the continue-as-new); `<name>.json` is its last run
        // that ran a workflow task (visibility lists the newest first).
        // A run no worker picked up yet (the last, just continued) holds nothing to replay and is not kept.
        const runs: string[] = [];
        for await (const execution of used.client.client.workflow.list({
          query: `WorkflowId = '${session.sessionId}'`,
        })) {
          const history = await used.client.client.workflow
            .getHandle(session.sessionId, execution.runId)
            .fetchHistory();
          if ((history.events ?? []).some((event) => event.workflowTaskCompletedEventAttributes != null))
            runs.push(execution.runId);
        }
        const [last, ...earlier] = runs;
        if (last === undefined) throw new Error(`no run of ${session.sessionId} to record`);
        await writeFile(path.join(recordInto, `${name}.json`), await temporalShow(used, session.sessionId, last));
        const first = earlier.at(-1);
        if (first !== undefined)
          await writeFile(
            path.join(recordInto, `${name}.first-run.json`),
            await temporalShow(used, session.sessionId, first),
          );
      });
    });
  }

  it('replays every recorded history without a nondeterminism error', async () => {
    const versions = (await readdir(fixtures, { withFileTypes: true }))
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(versions).toContain('0.1.0');
    const files = (
      await Promise.all(
        versions.map(async (folder) =>
          (await readdir(path.join(fixtures, folder)))
            .filter((file) => file.endsWith('.json'))
            .map((file) => `${folder}/${file}`),
        ),
      )
    )
      .flat()
      .sort();
    expect(files.length).toBeGreaterThanOrEqual(6);
    const histories = await Promise.all(
      files.map(async (file) => ({
        workflowId: file,
        history: historyFromJSON(JSON.parse(await readFile(path.join(fixtures, file), 'utf8'))),
      })),
    );
    const results = [];
    for await (const result of Worker.runReplayHistories(
      {
        workflowBundle: { codePath: inject('workflowBundlePath') },
        // Sinks are not called during replay; registering them keeps the replayer from warning about them.
        sinks: {
          switchyardTelemetry: {
            toolCallStarted: { fn: () => undefined },
            toolCallEnded: { fn: () => undefined },
            approvalDecision: { fn: () => undefined },
          },
        },
      },
      histories,
    )) {
      results.push({
        workflowId: result.workflowId,
        error: result.error === undefined ? undefined : String(result.error),
      });
    }
    expect(results).toEqual(files.map((workflowId) => ({ workflowId, error: undefined })));
  });
});
