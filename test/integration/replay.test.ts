import { readFile, readdir, writeFile } from 'node:fs/promises';
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

const fixtures = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));
const recording = process.env.SWITCHYARD_RECORD_HISTORIES === '1';
const run = promisify(execFile);
// Loaded through Node's require: under Vitest's ESM loader the proto reflection objects end up duplicated.
const { historyFromJSON } = createRequire(import.meta.url)(
  '@temporalio/common/lib/proto-utils',
) as typeof import('@temporalio/common/lib/proto-utils.js');

/**
 * Determinism guard (invariant 1): histories recorded from real sessions are replayed against today's workflow
 * code. Re-record deliberately, after a reviewed, versioned change: `npm run record-histories`.
 */
describe('replay of recorded session histories', () => {
  let harness: Harness;
  let cwd: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    harness = await createHarness({ tools: testTools(), defaultCwd: cwd, evaluators: [ruleBasedEvaluator] });
  });
  afterAll(async () => harness.close());

  const approveNext = async (session: SessionHandle, decision: 'allow' | 'allow_always' | 'deny') => {
    const [request] = (await waitFor(
      () => session.pendingApprovals(),
      (list) => list.length > 0,
    )) as [ApprovalRequest];
    await session.approve({ requestId: request.requestId, decision, inputDigest: request.inputDigest });
  };

  const scenarios: Record<string, { options: SessionOptions; run: (session: SessionHandle) => Promise<void> }> = {
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
    'grouping-stop-and-errors': {
      options: { rules: { allow: ['FakeShell'] } },
      run: async (session) => {
        await session.executeTurn({
          turnId: 't1',
          calls: [
            { id: 'a', name: 'Sleep', input: { ms: 1 } },
            { id: 'b', name: 'Nope', input: {} },
            { id: 'c', name: 'FakeShell', input: { command: 'fail' } },
            { id: 'd', name: 'submit_result', input: { result: 1 } },
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

  if (recording) {
    // Records only scenarios without a fixture: old histories stay, so they keep guarding compatibility.
    it.each(Object.keys(scenarios))('records %s (if missing)', async (name) => {
      if (
        await readFile(path.join(fixtures, `${name}.json`)).then(
          () => true,
          () => false,
        )
      )
        return;
      await harness.withWorker(async () => {
        const scenario = scenarios[name];
        if (scenario === undefined) throw new Error(`no scenario ${name}`);
        const session = await harness.startSession({ cwd, ...scenario.options });
        await scenario.run(session);
        // The temporal CLI's JSON is the format every SDK's replayer reads.
        const { stdout } = await run(
          inject('temporalBinaryPath') || 'temporal',
          [
            'workflow',
            'show',
            '--address',
            harness.address,
            '--namespace',
            harness.namespace,
            '--workflow-id',
            session.sessionId,
            '--output',
            'json',
          ],
          { maxBuffer: 64 * 1024 * 1024 },
        );
        await writeFile(path.join(fixtures, `${name}.json`), stdout);
      });
    });
  }

  it('replays every recorded history without a nondeterminism error', async () => {
    const files = (await readdir(fixtures)).filter((file) => file.endsWith('.json')).sort();
    expect(files.length).toBeGreaterThanOrEqual(3);
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
          switchyardTelemetry: { toolCallStarted: { fn: () => undefined }, toolCallEnded: { fn: () => undefined } },
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
