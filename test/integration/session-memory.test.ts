import type { ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { ToolCall } from '../../src/contracts/tool-call.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { countInHeapSnapshot, heapProbeEnv, snapshotWorkflowThreads } from '../support/heap-snapshot.js';
import { killProcess, spawnWorkerProcess } from '../support/spawn-worker.js';

// A regression: a worker's memory grew with every turn it ran. Every condition, activity and scope of a turn hung off the
// session's root cancellation scope, whose promise never settles, so a session kept all its finished turns (calls,
// plans, inputs) until continue-as-new. This test looks into the workflow thread's heap after many turns.
const TURNS = 30;

describe('a session keeps none of its finished turns in the worker', () => {
  let harness: Harness;
  let cwd: string;
  let probeDir: string;
  let worker: ChildProcess;
  beforeAll(async () => {
    harness = await createHarness();
    cwd = await scratchDir('memory-');
    probeDir = await scratchDir('heap-probe-');
    await writeFile(path.join(cwd, 'notes.txt'), 'a needle in the notes\n');
    worker = await spawnWorkerProcess(harness, {
      tools: 'builtin',
      env: { ...heapProbeEnv(probeDir), SWITCHYARD_WORKER_CWD: cwd },
    });
  });
  afterAll(async () => {
    await killProcess(worker);
    await harness.close();
  });

  // What a model sends in one reply: two reads, Write a file, Edit it, run a command on it. The Bash description is
  // the marker: it reaches the activities as input but no result, event or display, so only a kept turn holds it.
  const marker = (turn: number): string => `heap-marker-${turn}-description`;
  const out = (turn: number): string => path.join(cwd, `out-${turn}.txt`);
  const reply = (turn: number): ToolCall[] => [
    { id: 'read', name: 'Read', input: { file_path: path.join(cwd, 'notes.txt') } },
    { id: 'grep', name: 'Grep', input: { pattern: 'needle', path: cwd } },
    { id: 'write', name: 'Write', input: { file_path: out(turn), content: `turn ${turn}: draft\n` } },
    { id: 'edit', name: 'Edit', input: { file_path: out(turn), old_string: 'draft', new_string: 'final' } },
    { id: 'bash', name: 'Bash', input: { command: `cat out-${turn}.txt`, description: marker(turn) } },
  ];

  const streamed = async (session: SessionHandle, turnId: string, calls: ToolCall[]): Promise<string[]> => {
    const turn = session.streamTurn(turnId);
    for (const call of calls) await turn.add(call);
    await turn.end();
    const statuses: string[] = [];
    for await (const result of turn) statuses.push(result.status);
    return statuses;
  };

  it(
    `after ${TURNS} turns of real tools (whole and streaming), the workflow thread holds no finished turn`,
    { timeout: 180_000 },
    async () => {
      const session = await harness.startSession({
        cwd,
        permissionMode: 'bypassPermissions',
        continueAsNewAfterEvents: 100_000,
      });
      const firstRun = (await session.workflow.describe()).runId;
      for (let turn = 0; turn < TURNS; turn += 1) {
        const calls = reply(turn);
        const statuses =
          turn % 5 === 4
            ? await streamed(session, `t${turn}`, calls)
            : (await session.executeTurn({ turnId: `t${turn}`, calls })).results.map((result) => result.status);
        expect(statuses).toEqual(['success', 'success', 'success', 'success', 'success']);
      }
      // Still one run: the turns were not released by a continue-as-new.
      expect((await session.workflow.describe()).runId).toBe(firstRun);

      const files = await snapshotWorkflowThreads(worker, probeDir);
      expect(files.length).toBeGreaterThan(0);
      const markers = Array.from({ length: TURNS }, (_, turn) => marker(turn));
      let siblingGroups = 0;
      let inputsKept = 0;
      for (const file of files) {
        const counts = await countInHeapSnapshot(file, { names: ['SiblingGroup'], markers });
        siblingGroups += counts.objects.SiblingGroup ?? 0;
        inputsKept += markers.filter((marker) => (counts.strings[marker] ?? 0) > 0).length;
      }
      // Each turn made a SiblingGroup and sent its calls' inputs to activities; none of it may stay.
      expect({ siblingGroups, turnsWhoseInputsAreKept: inputsKept }).toEqual({
        siblingGroups: 0,
        turnsWhoseInputsAreKept: 0,
      });
    },
  );
});
