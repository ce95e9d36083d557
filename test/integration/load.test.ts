import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatDrain, formatSustained, pendingApprovalDrain, sustainedLoad } from '../load/load-run.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';

// CI-sized slice of `npm run test:load` (figures of the full sizes: RELIABILITY.md).
describe('load (CI slice): many waiting sessions on one worker, and a short sustained mixed load', () => {
  let harness: Harness;
  let cwd: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    harness = await createHarness();
  });
  afterAll(async () => harness.close());

  it(
    '40 sessions each waiting for approval: one visibility query finds them all, a script approves them, all complete',
    { timeout: 300_000 },
    async () => {
      const report = await pendingApprovalDrain(harness, { sessions: 40, cwd });
      process.stderr.write(`${formatDrain(report)}\n`);
      expect(report.allCompleted).toBe(true);
    },
  );

  it('4 sessions running turns back to back for 20 s: no errors', { timeout: 300_000 }, async () => {
    const report = await sustainedLoad(harness, { sessions: 4, seconds: 20, cwd });
    process.stderr.write(`${formatSustained(report)}\n`);
    expect(report.errors).toBe(0);
    expect(report.turns).toBeGreaterThan(8);
  });
});
