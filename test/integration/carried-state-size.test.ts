import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CarriedSessionState } from '../../src/workflows/session-state.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';

/** What the session's current run started from: the bytes of its start input (options and carried state), parsed. */
async function startInput(workflow: WorkflowHandle): Promise<{ bytes: number; carried: CarriedSessionState }> {
  const history = await workflow.fetchHistory();
  const payloads = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
  const bytes = payloads.reduce((sum, payload) => sum + (payload.data?.length ?? 0), 0);
  const carried = payloads[1]?.data;
  if (carried === undefined || carried === null)
    throw new Error('the current run carries nothing: it did not continue as new');
  return { bytes, carried: JSON.parse(Buffer.from(carried).toString('utf8')) as CarriedSessionState };
}

/** `startInput` once the current run carries `turnId` (the session continues as new just after a turn ends). */
async function startInputCarrying(
  workflow: WorkflowHandle,
  turnId: string,
): Promise<{ bytes: number; carried: CarriedSessionState }> {
  let input = await startInput(workflow);
  for (let wait = 0; !input.carried.completedTurns.some((turn) => turn.turnId === turnId) && wait < 50; wait++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    input = await startInput(workflow);
  }
  return input;
}

// A session carries its last turns' results across continue-as-new (so a retried turnId re-attaches). Results can be
// large (a Read returns up to 256 KB), and Temporal refuses a payload over 2 MB: carried whole, 50 turns of big reads
// would make the continue-as-new input too large, and the session would wedge at its next continue-as-new.
describe('the state a session carries across continue-as-new stays under the payload limit', () => {
  let harness: Harness;
  let cwd: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    await writeFile(path.join(cwd, 'big.txt'), `${'x'.repeat(99)}\n`.repeat(1_800)); // 180 KB
    harness = await createHarness({ defaultCwd: cwd });
  });
  afterAll(async () => harness.close());

  it(
    '24 turns that each read 180 KB, continuing as new every few turns, all complete',
    { timeout: 240_000 },
    async () => {
      await harness.withWorker(async () => {
        const session = await harness.startSession({
          cwd,
          permissionMode: 'bypassPermissions',
          continueAsNewAfterEvents: 20,
        });
        const firstRun = (await session.workflow.describe()).runId;
        for (let turn = 0; turn < 24; turn += 1) {
          const result = await session.executeTurn({
            turnId: `t${turn}`,
            calls: [{ id: 'r', name: 'Read', input: { file_path: path.join(cwd, 'big.txt') } }],
          });
          expect(result.results[0]?.status).toBe('success');
        }
        expect((await session.workflow.describe()).runId).not.toBe(firstRun);
        // The latest turn is still re-attachable by its id after the continue-as-new.
        const again = await session.executeTurn({
          turnId: 't23',
          calls: [{ id: 'r', name: 'Read', input: { file_path: path.join(cwd, 'big.txt') } }],
        });
        expect(again.results[0]?.status).toBe('success');
      });
    },
  );

  // Temporal's SDK logs a warning (TMPRL1103) for every upload of payloads over 512 KiB: a session whose turns fill
  // the old 1 MiB allowance put one in the worker's log at each continue-as-new.
  it(
    'a session of 60 KB turns carries less than the 512 KiB at which Temporal warns, and its newest turn re-attaches',
    { timeout: 240_000 },
    async () => {
      const file = path.join(cwd, 'sixty.txt');
      await writeFile(file, `${'a'.repeat(99)}\n`.repeat(600)); // 60 KB
      await harness.withWorker(async () => {
        // Continue as new after every turn: each run starts from what the previous one carried.
        const session = await harness.startSession({ cwd, continueAsNewAfterEvents: 1 });
        const read = [{ id: 'r', name: 'Read', input: { file_path: file } }];
        for (let turn = 0; turn < 20; turn += 1) {
          const result = await session.executeTurn({ turnId: `t${turn}`, calls: read });
          expect(result.results[0]?.status).toBe('success');
        }
        const input = await startInputCarrying(session.workflow, 't19');
        const carriedIds = input.carried.completedTurns.map((turn) => turn.turnId);
        expect(input.bytes).toBeLessThan(512 * 1_024);
        // The room was used: several of the newest turns, in order, ending with the last one.
        expect(carriedIds.length).toBeGreaterThanOrEqual(4);
        expect(carriedIds.at(-1)).toBe('t19');
        expect(carriedIds).toEqual(carriedIds.map((_, index) => `t${20 - carriedIds.length + index}`));
        // Re-attaching the newest turn answers from the carried result: the file has changed since, and a run
        // would read the new content.
        await writeFile(file, 'changed\n');
        const again = await session.executeTurn({ turnId: 't19', calls: read });
        expect(again.results[0]?.modelContent).toContain('a'.repeat(99));
        expect(again.results[0]?.modelContent).not.toContain('changed');
      });
    },
  );

  it(
    'a newest turn larger than that is carried anyway, so a client that lost its answer still re-attaches',
    { timeout: 240_000 },
    async () => {
      const file = path.join(cwd, 'big-newest.txt');
      await writeFile(file, `${'b'.repeat(99)}\n`.repeat(1_800)); // 180 KB
      await harness.withWorker(async () => {
        const session = await harness.startSession({
          cwd,
          continueAsNewAfterEvents: 1,
          // Three 180 KB results stay whole in the turn (the default aggregate budget would store them elsewhere).
          aggregateBudgetChars: 2_000_000,
        });
        const reads = ['x', 'y', 'z'].map((id) => ({ id, name: 'Read', input: { file_path: file } }));
        await session.executeTurn({
          turnId: 'small',
          calls: [{ id: 'r', name: 'Read', input: { file_path: file, limit: 1 } }],
        });
        const big = await session.executeTurn({ turnId: 'big', calls: reads });
        expect(big.results.map((result) => result.status)).toEqual(['success', 'success', 'success']);
        const input = await startInputCarrying(session.workflow, 'big');
        // Over the target alone (three 180 KB results), it is the only turn carried.
        expect(input.carried.completedTurns.map((turn) => turn.turnId)).toEqual(['big']);
        expect(input.bytes).toBeGreaterThan(512 * 1_024);
        await writeFile(file, 'changed\n');
        const again = await session.executeTurn({ turnId: 'big', calls: reads });
        expect(again.results.map((result) => result.modelContent)).toEqual(
          big.results.map((result) => result.modelContent),
        );
      });
    },
  );
});
