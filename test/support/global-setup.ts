import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DefaultLogger, Runtime, bundleWorkflowCode } from '@temporalio/worker';
import type { TestProject } from 'vitest/node';
import { startDevServer } from '../../src/server/dev-server.js';
import type { DevServer } from '../../src/server/dev-server.js';
import { workflowsPath } from '../../src/worker/create-worker.js';
import { workflowBundlerOptions } from '../../src/worker/workflow-bundle-options.js';
import { ensureSystemPackages, machine, testPackages } from '../../scripts/test-prereqs.js';
import { testBrowserPath } from './test-browser.js';
import { formatReplayReport, replayAllHistories } from './replay-all.js';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalNamespace: string;
    workflowBundlePath: string;
    temporalBinaryPath: string;
  }
}

let server: DevServer | undefined;
let scratch: string | undefined;
/** What the teardown replays: every run the suite started on the server, against the bundle it ran. */
let replayTarget: { address: string; namespace: string; bundlePath: string; since: Date } | undefined;

/** Starts one dev server (unless TEMPORAL_ADDRESS points at one) and bundles the workflows once for all tests. */
export async function setup(project: TestProject): Promise<void> {
  const progress = (message: string): void => {
    process.stderr.write(`[switchyard test setup] ${message}\n`);
  };
  // What `npm test`'s pretest step installs; checked again here for a direct `npx vitest run`.
  ensureSystemPackages(testPackages, machine);
  // Unpacked once per machine; done here so that two browser test files never unpack it side by side.
  const browser = testBrowserPath(progress);
  scratch = await mkdtemp(path.join(os.tmpdir(), 'switchyard-test-'));
  const started = Date.now();
  const since = new Date(started - 1_000);
  if (process.env.TEMPORAL_ADDRESS) {
    project.provide('temporalAddress', process.env.TEMPORAL_ADDRESS);
    project.provide('temporalNamespace', process.env.TEMPORAL_NAMESPACE ?? 'default');
    project.provide('temporalBinaryPath', process.env.TEMPORAL_CLI_PATH ?? '');
  } else {
    server = await startDevServer({ onProgress: progress });
    project.provide('temporalAddress', server.address);
    project.provide('temporalNamespace', server.namespace);
    project.provide('temporalBinaryPath', server.binary.path);
    progress(
      `dev server ${server.address} ready in ${Date.now() - started} ms (${server.binary.source}: ${server.binary.path})`,
    );
  }
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    // As the worker and `npm run build` bundle them: the tests run the workflow code that ships.
    ...workflowBundlerOptions,
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn: (m) => progress(m), error: (m) => progress(m) },
  });
  const bundlePath = path.join(scratch, 'workflow-bundle.js');
  await writeFile(bundlePath, code);
  project.provide('workflowBundlePath', bundlePath);
  replayTarget = {
    address: server?.address ?? process.env.TEMPORAL_ADDRESS ?? '',
    namespace: server?.namespace ?? process.env.TEMPORAL_NAMESPACE ?? 'default',
    bundlePath,
    since,
  };
  await browser;
}

/** Workflow types other test files run from bundles of their own, and the module each bundles. */
const otherWorkflowModules: Record<string, string> = {
  toolTurns: fileURLToPath(new URL('./run-tool-turn-workflows.ts', import.meta.url)),
  durableAgent: fileURLToPath(new URL('../../examples/durable-agent/workflows.ts', import.meta.url)),
};

/**
 * Replays every history the run made (all runs, continue-as-new and faults included) against the workflow bundle:
 * a nondeterminism anywhere fails the run (`npm test`). `SWITCHYARD_REPLAY_ALL=0` skips it.
 */
async function replayEverything(): Promise<void> {
  if (replayTarget === undefined || scratch === undefined || process.env.SWITCHYARD_REPLAY_ALL === '0') return;
  const { address, namespace, bundlePath, since } = replayTarget;
  const bundled = new Map<string, Promise<string>>();
  const dir = scratch;
  // The replayer's workers log their state changes at INFO; only warnings are worth the console here.
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // A runtime is already installed in this process: its logger stays.
  }
  const report = await replayAllHistories({
    address,
    namespace,
    since,
    bundles: (type) => {
      if (type === 'toolSession') return bundlePath;
      const module = otherWorkflowModules[type];
      if (module === undefined) return undefined;
      if (!bundled.has(module))
        bundled.set(
          module,
          bundleWorkflowCode({ workflowsPath: module, logger: quietLogger }).then(async ({ code }) => {
            const file = path.join(dir, `replay-${type}.js`);
            await writeFile(file, code);
            return file;
          }),
        );
      return bundled.get(module);
    },
  });
  process.stderr.write(`${formatReplayReport(report, 'every history of this test run')}\n`);
  if (report.failures.length > 0) {
    // Vitest reports a teardown's error but still exits 0: the exit code is set here.
    process.exitCode = 1;
    throw new Error(
      `${report.failures.length} of ${report.histories} histories of this run did not replay against the workflow bundle (nondeterminism):\n${report.failures.join('\n')}`,
    );
  }
}

const quietLogger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

export async function teardown(): Promise<void> {
  try {
    await replayEverything();
  } finally {
    await server?.stop();
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  }
}
