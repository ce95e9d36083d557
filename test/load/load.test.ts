import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { formatDrain, formatSustained, pendingApprovalDrain, sustainedLoad } from './load-run.js';

// `npm run test:load`: LOAD_PENDING_SESSIONS (default 500) sessions waiting for approval on one worker, then
// LOAD_SESSIONS (default 32) sessions for LOAD_SECONDS (default 600). Figures: test/load/results/last-run.json.
const pendingSessions = Number(process.env.LOAD_PENDING_SESSIONS ?? 500);
const sessions = Number(process.env.LOAD_SESSIONS ?? 32);
const seconds = Number(process.env.LOAD_SECONDS ?? 600);

describe('load', () => {
  let harness: Harness;
  let cwd: string;
  const results: Record<string, unknown> = {};
  beforeAll(async () => {
    cwd = await scratchDir();
    harness = await createHarness();
  });
  afterAll(async () => {
    await harness.close();
    const dir = path.resolve('test/load/results');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'last-run.json'), `${JSON.stringify(results, null, 2)}\n`);
  });

  it(`${pendingSessions} sessions waiting for approval are found, approved and drained`, async () => {
    const report = await pendingApprovalDrain(harness, { sessions: pendingSessions, cwd });
    results.pendingDrain = { ...report, line: formatDrain(report) };
    process.stderr.write(`${formatDrain(report)}\n`);
    expect(report.allCompleted).toBe(true);
  });

  it(`${sessions} sessions for ${seconds} s of mixed turns: no errors (the memory trend is reported, not asserted)`, async () => {
    const report = await sustainedLoad(harness, { sessions, seconds, cwd });
    results.sustained = { ...report, line: formatSustained(report) };
    process.stderr.write(`${formatSustained(report)}\n`);
    expect(report.errors).toBe(0);
  });
});
