import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { builtinTools } from '../../src/tools/builtin.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import { abortableSleep } from '../support/test-tools.js';
import { waitFor } from '../support/wait-for.js';

// `npm run test:replay-race` (scripts/replay-race.ts): the local-replay scenario of test/integration/local-replay.test.ts
// run RACE_RUNS times (default 300) in RACE_LANES parallel lanes (default 3, each its own task queue and workers)
// beside RACE_BURNERS busy processes (default 2), each history replayed against the workflow bundle at once. A
// history that does not replay is kept in test/faults/results/ (temporal CLI JSON, the fixtures' format).
const runs = Number(process.env.RACE_RUNS ?? 300);
const lanes = Math.max(1, Number(process.env.RACE_LANES ?? 3));
const burners = Math.max(0, Number(process.env.RACE_BURNERS ?? 2));
/** How long a Wait's PreToolUse hook takes (default 300 ms); over 8 s it outlasts the workflow task's heartbeat. */
const hookMs = Number(process.env.RACE_HOOK_MS ?? 300);
const exec = promisify(execFile);
const resultsDir = path.resolve('test/faults/results');

/** Whether the server has admitted the streamed turn's update that adds the call `callId`. */
async function updateAdmitted(workflow: WorkflowHandle, callId: string): Promise<boolean> {
  try {
    await workflow.client.workflowService.pollWorkflowExecutionUpdate({
      namespace: workflow.client.options.namespace,
      updateRef: { workflowExecution: { workflowId: workflow.workflowId }, updateId: `t:add:${callId}:${callId}:1` },
      identity: 'replay-race',
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

/** One lane: a harness whose Wait tool and PreToolUse hook are its own (the scenario's timing is per lane). */
async function createLane(): Promise<{ harness: Harness; arrange: (session: SessionHandle) => Promise<void> }> {
  const cwd = await scratchDir();
  const waitTool = defineTool({
    name: 'Wait',
    description: 'Waits, or stops when cancelled.',
    inputSchema: z.object({ ms: z.number().int() }),
    readOnly: true,
    timeout: { defaultMs: 20_000 },
    async execute(input, context) {
      await abortableSleep(input.ms, context.signal);
      return `waited ${input.ms} ms`;
    },
  });
  const harness = await createHarness({
    tools: [...builtinTools(), waitTool],
    defaultCwd: cwd,
    hooks: { preToolUse: [{ matcher: 'Wait', run: async () => void (await sleep(hookMs)) }] },
  });
  // As local-replay.test.ts arranges it: a Write waits for an approval that times out while no worker runs; the
  // next workflow task carries the timer and the update adding w2, so w1's Prepare and w2's Plan overlap.
  const arrange = async (session: SessionHandle): Promise<void> => {
    const turn = session.streamTurn('t');
    const first = await harness.startWorker();
    try {
      const never = { file_path: path.join(cwd, 'never.txt'), content: 'no\n' };
      await turn.add({ id: 'write', name: 'Write', input: never });
      await turn.add({ id: 'w1', name: 'Wait', input: { ms: 20 } });
      await waitFor(
        () => session.pendingApprovals(),
        (pending) => pending.length === 1,
        { what: 'the Write to wait for approval' },
      );
    } finally {
      first.worker.shutdown();
      await first.done;
    }
    await waitFor(
      async () => (await session.workflow.fetchHistory()).events ?? [],
      (events) => events.some((event) => event.timerFiredEventAttributes != null),
      { what: 'the approval timer to fire' },
    );
    const added = turn.add({ id: 'w2', name: 'Wait', input: { ms: 21 } });
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
  };
  return { harness, arrange };
}

const replay = (history: temporal.api.history.v1.IHistory, id: string): Promise<string | undefined> =>
  Worker.runReplayHistory(
    {
      workflowBundle: { codePath: inject('workflowBundlePath') },
      sinks: {
        switchyardTelemetry: { toolCallStarted: { fn: () => undefined }, toolCallEnded: { fn: () => undefined } },
      },
    },
    history,
    id,
  ).then(
    () => undefined,
    (error: unknown) => String(error),
  );

describe(`the local-replay race, ${runs} runs in ${lanes} lanes beside ${burners} busy processes`, () => {
  const busy: ChildProcess[] = [];
  afterAll(() => {
    for (const child of busy) child.kill('SIGKILL');
  });

  it('every history replays', { timeout: 3_600_000 }, async () => {
    for (let index = 0; index < burners; index += 1)
      busy.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
    const started = Date.now();
    const failures: string[] = [];
    let next = 0;
    let events = 0;
    /** Runs whose arrangement did not complete (a loaded machine missed the 1 s approval window): replayed too. */
    const missed: string[] = [];
    const lane = async (): Promise<void> => {
      const { harness, arrange } = await createLane();
      try {
        while (next < runs) {
          next += 1;
          const index = next;
          const session = await harness.startSession({ approvalTimeoutMs: 1_000 });
          const workflow = session.workflow;
          await arrange(session).catch((error: unknown) => {
            missed.push(`${workflow.workflowId}: ${String(error)}`);
          });
          if (index % 25 === 0)
            process.stderr.write(
              `[replay-race] ${index} runs started, ${failures.length} failures, ${missed.length} not arranged\n`,
            );
          const history = await workflow.fetchHistory();
          events += history.events?.length ?? 0;
          const error = await replay(history, workflow.workflowId);
          if (error === undefined) continue;
          await mkdir(resultsDir, { recursive: true });
          const file = path.join(resultsDir, `replay-race-${workflow.workflowId}.json`);
          const { stdout } = await exec(
            inject('temporalBinaryPath') || 'temporal',
            [
              'workflow',
              'show',
              '--address',
              harness.address,
              '--namespace',
              harness.namespace,
              '--workflow-id',
              workflow.workflowId,
              '--output',
              'json',
            ],
            { maxBuffer: 64 * 1024 * 1024 },
          );
          await writeFile(file, stdout);
          failures.push(`${workflow.workflowId}: ${error} (history in ${file})`);
          process.stderr.write(`[replay-race] FAILED ${failures.at(-1)}\n`);
        }
      } finally {
        await harness.close();
      }
    };
    await Promise.all(Array.from({ length: lanes }, lane));
    const summary = `[replay-race] ${runs} runs, ${lanes} lanes, ${burners} busy processes, ${events} events replayed, ${failures.length} failures, ${missed.length} runs not arranged (replayed too), ${Math.round((Date.now() - started) / 1000)} s`;
    process.stderr.write(`${summary}\n`);
    await mkdir(resultsDir, { recursive: true });
    await writeFile(path.join(resultsDir, 'replay-race.txt'), `${summary}\n${[...failures, ...missed].join('\n')}\n`);
    expect(failures).toEqual([]);
  });
});
