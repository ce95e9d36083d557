import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

// The long suites, one test file at a time: `npm run test:faults` (test/faults), `npm run test:load` (test/load) and `npm run test:cluster` (test/cluster).
// Made once per run (see vitest.config.ts: nested run directories break Chromium's socket paths).
if (process.env.SWITCHYARD_TEST_RUN_TMP === undefined) {
  const runTmp = mkdtempSync(path.join(os.tmpdir(), 'switchyard-long-run-'));
  process.env.SWITCHYARD_TEST_RUN_TMP = runTmp;
  process.env.TMPDIR = runTmp;
  process.once('exit', () => rmSync(runTmp, { recursive: true, force: true }));
}

// The CLI processes the tests start run the sources (bin/switchyard.js would run dist/ where it is newer): the package
// test's `npm pack` rebuilds dist/, removing it first, while other test files start workers and commands.
process.env.SWITCHYARD_USE_SOURCES ??= '1';

export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts', 'test/load/**/*.test.ts', 'test/cluster/**/*.test.ts'],
    environment: 'node',
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 1,
    testTimeout: 3_600_000,
    hookTimeout: 600_000,
  },
});
