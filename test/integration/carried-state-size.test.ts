import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';

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
});
