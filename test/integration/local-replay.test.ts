import { Worker } from '@temporalio/worker';
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { builtinTools } from '../../src/tools/builtin.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { abortableSleep } from '../support/test-tools.js';
import { waitFor } from '../support/wait-for.js';

/** A read-only call that waits `ms` (its 20 s deadline is under the local limit, so it runs as a local activity). */
const waitTool = defineTool({
  name: 'Wait',
  description: 'Waits, or stops when cancelled.',
  inputSchema: z.object({ ms: z.number().int() }),
  readOnly: true,
  concurrentSafe: true,
  timeout: { defaultMs: 20_000 },
  async execute(input, context) {
    await abortableSleep(input.ms, context.signal);
    return `waited ${input.ms} ms`;
  },
});

// Local activities' results are recorded as markers, without the workflow activation that delivered each: live they
// arrive one by one, on replay together. The fault run found a session whose history its own code could not replay
// (`Missing associated machine for LocalActivity(11)`); src/workflows/local-activity-barrier.ts is the fix.
describe('local activities that overlap replay as they ran', () => {
  let harness: Harness;
  let cwd: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    harness = await createHarness({
      tools: [...builtinTools(), waitTool],
      defaultCwd: cwd,
      // Preparing a Wait takes 300 ms, so the Prepare of w1 and the Prepare of w2 overlap.
      hooks: { preToolUse: [{ matcher: 'Wait', run: async () => void (await sleep(300)) }] },
    });
  });
  afterAll(async () => harness.close());

  it('a streamed call planned while the call ahead of it prepares: its history replays without a nondeterminism error', async () => {
    const session = await harness.startSession({ approvalTimeoutMs: 1_000 });
    const turn = session.streamTurn('t');
    const first = await harness.startWorker();
    // `write` waits for an approval that never comes (1 s timeout); w1 queues behind it.
    await turn.add({ id: 'write', name: 'Write', input: { file_path: path.join(cwd, 'never.txt'), content: 'no\n' } });
    await turn.add({ id: 'w1', name: 'Wait', input: { ms: 20 } });
    await waitFor(() => session.pendingApprovals(), (pending) => pending.length === 1, { what: 'the Write to wait for approval' });
    first.worker.shutdown();
    await first.done;
    // No worker: the approval timer fires, and w2 arrives. The next workflow task carries both, so the freed w1's
    // Prepare and w2's Plan start in one activation; Plan ends first, w1's Prepare 300 ms later, then w2's Prepare.
    await sleep(1_500);
    const added = turn.add({ id: 'w2', name: 'Wait', input: { ms: 20 } });
    await sleep(500);
    const second = await harness.startWorker();
    try {
      await added;
      await turn.end();
      const statuses: string[] = [];
      for await (const result of turn) statuses.push(result.status);
      expect(statuses).toEqual(['denied', 'success', 'success']);
    } finally {
      second.worker.shutdown();
      await second.done;
    }
    const history = await session.workflow.fetchHistory();
    const replay = await Worker.runReplayHistory(
      {
        workflowBundle: { codePath: inject('workflowBundlePath') },
        sinks: { switchyardTelemetry: { toolCallStarted: { fn: () => undefined }, toolCallEnded: { fn: () => undefined } } },
      },
      history,
      'local-replay',
    ).then(() => 'replayed', (error: unknown) => String(error));
    expect(replay).toBe('replayed');
  });
});
