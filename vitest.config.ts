import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { SummaryReporter } from './test/support/summary-reporter.js';

// Two projects: fast unit tests of pure logic, and integration tests against one real Temporal dev server that
// the global setup starts once (and builds the workflow bundle once) for the whole run.
// Every temporary file of the run (scratch dirs, spools, artifacts) lives under one directory, removed when the
// run ends: test processes may be killed rather than exit, so they cannot clean up after themselves.
// The config is evaluated more than once per run (once per project, and again in the test processes): only the first
// evaluation makes the directory. Nesting them would push Chromium's socket paths past the 108-byte limit of a Unix
// socket path, and the browser dies at launch with SIGTRAP.
if (process.env.SWITCHYARD_TEST_RUN_TMP === undefined) {
  const runTmp = mkdtempSync(path.join(os.tmpdir(), 'switchyard-test-run-'));
  process.env.SWITCHYARD_TEST_RUN_TMP = runTmp;
  process.env.TMPDIR = runTmp;
  process.once('exit', () => rmSync(runTmp, { recursive: true, force: true }));
}

/** The package's own name resolves to the sources, as tsconfig.json's `paths` say (examples/ import it so). */
const source = (file: string): string => fileURLToPath(new URL(file, import.meta.url));
const packageAliases = [
  { find: /^temporal-switchyard$/, replacement: source('./src/index.ts') },
  { find: /^temporal-switchyard\/worker$/, replacement: source('./src/worker/index.ts') },
  { find: /^temporal-switchyard\/workflows$/, replacement: source('./src/workflows/public.ts') },
  { find: /^temporal-switchyard\/dev-server$/, replacement: source('./src/server/dev-server.ts') },
];

// The CLI processes the tests start run the sources (bin/switchyard.js would run dist/ where it is newer): the package
// test's `npm pack` rebuilds dist/, removing it first, while other test files start workers and commands.
process.env.SWITCHYARD_USE_SOURCES ??= '1';

export default defineConfig({
  resolve: { alias: packageAliases },
  test: {
    reporters: ['default', new SummaryReporter()],
    // The tools take their settings from the process that runs them; in tests, from the test process's environment.
    setupFiles: ['test/support/tool-settings-setup.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          sequence: { groupOrder: 0 },
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          sequence: { groupOrder: 1 },
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/support/global-setup.ts'],
          pool: 'forks',
          testTimeout: 120_000,
          hookTimeout: 600_000,
          // Two cores: two test files at a time against the shared server.
          maxWorkers: 2,
        },
      },
    ],
  },
});
