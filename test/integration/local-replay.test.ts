import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
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

/** Whether the server has admitted the streamed turn's update that adds the call `callId` (no worker needed to ask). */
async function updateAdmitted(workflow: WorkflowHandle, callId: string): Promise<boolean> {
  try {
    await workflow.client.workflowService.pollWorkflowExecutionUpdate({
      namespace: workflow.client.options.namespace,
      updateRef: { workflowExecution: { workflowId: workflow.workflowId }, updateId: `t:add:${callId}:${callId}:1` },
      identity: 'local-replay test',
      waitPolicy: {
        lifecycleStage:
          temporal.api.enums.v1.UpdateWorkflowExecutionLifecycleStage
            .UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED,
      },
    });
    return true;
  } catch {
    return false;
  }
}

/** Local activity markers in history order: activity type, the call ids its result names, when it was scheduled (epoch ms). */
function localActivityMarkers(
  history: temporal.api.history.v1.IHistory,
): { index: number; type: string; callIds: string[]; scheduledAtMs: number }[] {
  const markers: { index: number; type: string; callIds: string[]; scheduledAtMs: number }[] = [];
  for (const event of history.events ?? []) {
    const details = event.markerRecordedEventAttributes?.details;
    const data = details?.data?.payloads?.[0]?.data;
    if (details == null || data == null) continue;
    const marker = JSON.parse(Buffer.from(data).toString()) as {
      activity_type: string;
      original_schedule_time: { seconds: number; nanos: number };
    };
    const result = Buffer.from(details.result?.payloads?.[0]?.data ?? []).toString();
    markers.push({
      index: markers.length,
      type: marker.activity_type,
      callIds: [...result.matchAll(/"callId":"([^"]+)"/g)].map((match) => match[1]!),
      scheduledAtMs: marker.original_schedule_time.seconds * 1_000 + marker.original_schedule_time.nanos / 1e6,
    });
  }
  return markers;
}

/** When (epoch ms) Plan or Prepare evaluated the flags of a Wait of 21 ms (the call w2): its Plan is the first. */
const w2FlagsEvaluated: number[] = [];

/** When each Wait's validation (inside its Prepare local activity) ran. */
const waitPrepares: { id: string; started: number; ended: number }[] = [];

/** A read-only call that waits `ms` (its 20 s deadline is under the local limit, so it runs as a local activity). */
const waitTool = defineTool({
  name: 'Wait',
  description: 'Waits, or stops when cancelled.',
  inputSchema: z.object({ ms: z.number().int() }),
  readOnly: true,
  concurrentSafe: (input) => {
    if (input.ms === 21) w2FlagsEvaluated.push(performance.timeOrigin + performance.now());
    return true;
  },
  timeout: { defaultMs: 20_000 },
  // Preparing a Wait takes 300 ms, so w2's Plan runs while w1's Prepare is still running; the test checks it did.
  // (A validation, not a PreToolUse hook: a Prepare whose calls have hooks runs them in a regular activity.)
  async validateInput(input) {
    const started = performance.now();
    await sleep(300);
    waitPrepares.push({ id: input.ms === 20 ? 'w1' : `ms${input.ms}`, started, ended: performance.now() });
    return { ok: true };
  },
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
  const prepares = waitPrepares;
  beforeAll(async () => {
    cwd = await scratchDir();
    harness = await createHarness({
      tools: [...builtinTools(), waitTool],
      defaultCwd: cwd,
    });
  });
  afterAll(async () => harness.close());

  /**
   * One arrangement of the race in a new session; returns its history and whether the race happened: w1's Prepare
   * scheduled before w2's Plan ran (both local activities in flight at once), w2's Plan result recorded first, while
   * w1's Prepare (its hook) was still running.
   */
  async function arrangeRace(): Promise<{ history: temporal.api.history.v1.IHistory; raced: boolean; seen: string }> {
    prepares.length = 0;
    w2FlagsEvaluated.length = 0;
    const session = await harness.startSession({ approvalTimeoutMs: 1_000 });
    const turn = session.streamTurn('t');
    const first = await harness.startWorker();
    // `write` waits for an approval that never comes (1 s timeout); w1 queues behind it.
    await turn.add({ id: 'write', name: 'Write', input: { file_path: path.join(cwd, 'never.txt'), content: 'no\n' } });
    await turn.add({ id: 'w1', name: 'Wait', input: { ms: 20 } });
    await waitFor(
      () => session.pendingApprovals(),
      (pending) => pending.length === 1,
      { what: 'the Write to wait for approval' },
    );
    first.worker.shutdown();
    await first.done;
    // No worker: the approval timer fires, and w2 arrives. The next workflow task carries both, so the freed w1's
    // Prepare and w2's Plan start in one activation; Plan ends first, w1's Prepare 300 ms later, then w2's Prepare
    // (the two Prepares do not overlap: w2's waits for w1's).
    await waitFor(
      async () => (await session.workflow.fetchHistory()).events ?? [],
      (events) => events.some((event) => event.timerFiredEventAttributes != null),
      { what: 'the approval timer to fire' },
    );
    const added = turn.add({ id: 'w2', name: 'Wait', input: { ms: 21 } });
    // The worker starts only once the server holds w2's update, so its first workflow task carries both.
    await waitFor(
      async () => updateAdmitted(session.workflow, 'w2'),
      (admitted) => admitted,
      { what: 'the server to admit the update adding w2' },
    );
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
    const markers = localActivityMarkers(history);
    const w2Plan = markers.find((marker) => marker.type === 'planCalls' && marker.callIds.includes('w2'));
    const w1Prepare = markers.find((marker) => marker.type === 'prepareCalls' && marker.callIds.includes('w1'));
    const w2Planned = w2FlagsEvaluated[0] ?? Number.NaN;
    const w1Hook = prepares.find((prepare) => prepare.id === 'w1');
    const raced =
      w1Prepare !== undefined &&
      w2Plan !== undefined &&
      w1Hook !== undefined &&
      w1Prepare.scheduledAtMs < w2Planned &&
      w2Plan.index < w1Prepare.index &&
      w2Planned - performance.timeOrigin < w1Hook.ended;
    const seen = JSON.stringify({
      w1PrepareScheduledAtMs: w1Prepare?.scheduledAtMs,
      w2PlannedAtMs: w2Planned,
      w2PlanMarker: w2Plan?.index,
      w1PrepareMarker: w1Prepare?.index,
    });
    return { history, raced, seen };
  }

  /** Writes a history to the temporary directory as JSON; returns `, history in <file>` for a failure message. */
  async function keepHistory(history: temporal.api.history.v1.IHistory): Promise<string> {
    const file = path.join(os.tmpdir(), `switchyard-local-replay-${Date.now()}.json`);
    await writeFile(
      file,
      JSON.stringify(
        temporal.api.history.v1.History.toObject(history as temporal.api.history.v1.History, {
          enums: String,
          longs: String,
          bytes: String,
        }),
      ),
    );
    return `, history in ${file}`;
  }

  const replay = (history: temporal.api.history.v1.IHistory): Promise<string> =>
    Worker.runReplayHistory(
      {
        workflowBundle: { codePath: inject('workflowBundlePath') },
        sinks: {
          switchyardTelemetry: { toolCallStarted: { fn: () => undefined }, toolCallEnded: { fn: () => undefined } },
        },
      },
      history,
      'local-replay',
    ).then(
      () => 'replayed',
      (error: unknown) => String(error),
    );

  it('a streamed call planned while the call ahead of it prepares: its history replays without a nondeterminism error', async () => {
    // Every history must replay. The race is arranged, but a loaded machine can still deliver w2 a workflow task
    // late: the arrangement is tried again (at most four times) until the history shows the race happened.
    const attempts: string[] = [];
    let raced = false;
    for (let attempt = 1; attempt <= 4 && !raced; attempt += 1) {
      const outcome = await arrangeRace();
      const verdict = await replay(outcome.history);
      // A history that does not replay is kept (as JSON in the temporary directory), so the failure can be studied.
      const kept = verdict === 'replayed' ? '' : await keepHistory(outcome.history);
      expect(verdict, `attempt ${attempt} (${outcome.raced ? 'raced' : 'no race'}${kept})`).toBe('replayed');
      attempts.push(outcome.seen);
      raced = outcome.raced;
    }
    expect(raced, `the race never happened: ${attempts.join('; ')}`).toBe(true);
  });
});
