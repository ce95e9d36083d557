import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { TestProject } from 'vitest/node';
import { startDevServer } from '../../src/server/dev-server.js';
import type { DevServer } from '../../src/server/dev-server.js';
import { workflowsPath } from '../../src/worker/create-worker.js';
import { workflowBundlerOptions } from '../../src/worker/workflow-bundle-options.js';
import { ensureSystemPackages, machine, testPackages } from '../../scripts/test-prereqs.js';
import { testBrowserPath } from './test-browser.js';

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
  await browser;
}

export async function teardown(): Promise<void> {
  await server?.stop();
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
}
