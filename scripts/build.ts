/**
 * `npm run build` (also `prepare`, so `npm pack` and an install from git build): compiles src/ to dist/ with
 * tsconfig.build.json — JavaScript, declarations, source maps — then bundles the compiled workflows once into
 * dist/workflow-bundle.js, which the worker loads instead of bundling at every start.
 */
import { spawnSync } from 'node:child_process';
import { copyFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowBundlerOptions } from '../src/worker/workflow-bundle-options.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = path.join(root, 'dist');
const started = Date.now();
const log = (message: string): void => {
  process.stderr.write(`[build] ${message}\n`);
};

await rm(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const compiled = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], {
  cwd: root,
  stdio: 'inherit',
});
if (compiled.status !== 0) {
  log(`tsc failed (${compiled.signal ?? `exit ${compiled.status}`})`);
  process.exit(1);
}
// The payload converter is plain JavaScript (src/contracts/payload-converter.js says why): tsc does not copy it.
for (const file of ['payload-converter.js', 'payload-converter.d.ts']) {
  await copyFile(path.join(root, 'src', 'contracts', file), path.join(dist, 'contracts', file));
}
log(`compiled src/ to dist/ in ${Date.now() - started} ms`);

const bundled = Date.now();
const { code } = await bundleWorkflowCode({
  workflowsPath: path.join(dist, 'workflows', 'index.js'),
  // The same preloaded modules as a worker that bundles at start (src/worker/workflow-bundle-options.ts says why),
  // compiled: each source under src/ has its .js under dist/.
  preloadModules: workflowBundlerOptions.preloadModules.map((module) =>
    path.join(dist, path.relative(path.join(root, 'src'), module)).replace(/\.ts$/, '.js'),
  ),
  webpackConfigHook: workflowBundlerOptions.webpackConfigHook,
  payloadConverterPath: path.join(dist, 'contracts', 'payload-converter.js'),
  logger: {
    log() {},
    trace() {},
    debug() {},
    info() {},
    warn: (message) => log(message),
    error: (message) => log(message),
  },
});
await writeFile(path.join(dist, 'workflow-bundle.js'), code);
log(
  `bundled the workflows into dist/workflow-bundle.js (${Math.round(code.length / 1024)} KiB) in ${Date.now() - bundled} ms`,
);
