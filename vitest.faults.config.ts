import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

// `npm run test:faults`: the large fault-injection run, one scenario at a time (each starts its own dev server).
const runTmp = mkdtempSync(path.join(os.tmpdir(), 'switchyard-faults-run-'));
process.env.TMPDIR = runTmp;
process.once('exit', () => rmSync(runTmp, { recursive: true, force: true }));

export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    environment: 'node',
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 1,
    testTimeout: 3_600_000,
    hookTimeout: 600_000,
  },
});
