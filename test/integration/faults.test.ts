import { describe, expect, it } from 'vitest';
import { formatReport, runFaultScenario } from '../faults/fault-run.js';

// The CI-sized slice of the fault-injection run (`npm run test:faults` is the large one; RELIABILITY.md has both).
// Fixed seeds, so a failure here replays with `FAULT_SEED=<seed> npm run test:faults`.
const scenarios = [
  { seed: 1201, kills: 5, sessions: 2, serverRestartChance: 0 },
  { seed: 1202, kills: 4, sessions: 2, serverRestartChance: 0.5 },
];

describe('fault injection (CI slice): worker SIGKILLs and server restarts during mixed turns', () => {
  for (const scenario of scenarios) {
    it(
      `seed ${scenario.seed}: ${scenario.kills} kills, nothing lost, nothing run twice, no failed workflow task`,
      { timeout: 600_000 },
      async () => {
        const report = await runFaultScenario({ ...scenario, log: (line) => process.stderr.write(`${line}\n`) });
        process.stderr.write(`${formatReport(report)}\n`);
        expect(report.violations).toEqual([]);
        expect(report.kills).toBe(scenario.kills);
        // The scenario did real work across the kills: turns completed and the ledger saw appends.
        expect(report.turns).toBeGreaterThan(scenario.kills);
        expect(report.ledgerAppends).toBeGreaterThan(0);
      },
    );
  }
});
