import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatReport, runFaultScenario } from './fault-run.js';
import type { FaultRunReport } from './fault-run.js';

// `npm run test:faults`: the large fault-injection run. FAULT_KILLS (default 200) worker kills spread over scenarios of
// FAULT_KILLS_PER_SCENARIO (default 25), each with its own seed (FAULT_SEED, default the time, then +1 per scenario).
// Figures go to test/faults/results/last-run.json and the console; RELIABILITY.md quotes them.
const totalKills = Number(process.env.FAULT_KILLS ?? 200);
const perScenario = Number(process.env.FAULT_KILLS_PER_SCENARIO ?? 25);
const firstSeed = Number(process.env.FAULT_SEED ?? Date.now() % 1_000_000);
const scenarioCount = Math.max(1, Math.ceil(totalKills / perScenario));

describe(`fault injection: ${totalKills} worker kills from seed ${firstSeed}`, () => {
  const reports: FaultRunReport[] = [];
  for (let index = 0; index < scenarioCount; index += 1) {
    const seed = firstSeed + index;
    const kills = Math.min(perScenario, totalKills - index * perScenario);
    it(`seed ${seed}: ${kills} kills`, { timeout: 3_600_000 }, async () => {
      const report = await runFaultScenario({
        seed,
        kills,
        sessions: 3,
        serverRestartChance: 0.1,
        log: (line) => process.stderr.write(`${line}\n`),
      });
      reports.push(report);
      process.stderr.write(`${formatReport(report)}\n`);
      const dir = path.resolve('test/faults/results');
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, 'last-run.json'), `${JSON.stringify(reports, null, 2)}\n`);
      expect(report.violations).toEqual([]);
    });
  }
});
