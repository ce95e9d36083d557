// How Switchyard bundles its workflow code: the options `npm run build` (scripts/build.ts) and a worker that bundles
// at start (`workflowsPath`) both pass to the SDK's bundler. Measured under `npm run bench:profile`; see
// BENCHMARKS.md ("Where the CPU goes").
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BundleOptions } from '@temporalio/worker';
import { payloadConverterPath } from '../config/data-converter.js';

type WebpackConfig = Parameters<NonNullable<BundleOptions['webpackConfigHook']>>[0];

const ownExtension = path.extname(fileURLToPath(import.meta.url));

/**
 * The module that caps `Error.stackTraceLimit` inside the workflow sandbox. It is preloaded, so it runs before the
 * SDK freezes the sandbox's globals.
 */
export const stackTraceLimitModule = fileURLToPath(
  new URL(`../workflows/stack-trace-limit${ownExtension}`, import.meta.url),
);

/**
 * The module that lists what every session's workflow shares in the reusable sandbox (src/workflows/shared-modules.ts
 * says what may be shared). Preloaded after the stack-trace cap, so it loads under it.
 */
export const sharedModulesModule = fileURLToPath(
  new URL(`../workflows/shared-modules${ownExtension}`, import.meta.url),
);

/**
 * Webpack settings on top of the SDK's: TypeScript compiled for ES2022 (Node 20 runs object spread and class fields
 * natively, without the helpers the SDK's ES2017 target emits), and modules joined and unused exports dropped
 * (the SDK bundles in development mode, where every imported name is a getter call).
 */
export function tuneWorkflowWebpack(config: WebpackConfig): WebpackConfig {
  for (const rule of config.module?.rules ?? []) {
    if (rule === null || typeof rule !== 'object' || !('use' in rule)) continue;
    const use = rule.use;
    if (use === null || typeof use !== 'object' || Array.isArray(use) || !('loader' in use)) continue;
    if (typeof use.loader !== 'string' || !use.loader.includes('swc-loader')) continue;
    const options = use.options as { jsc?: { target?: string } } | undefined;
    if (options?.jsc !== undefined) options.jsc.target = 'es2022';
  }
  config.optimization = {
    ...config.optimization,
    providedExports: true,
    usedExports: true,
    sideEffects: true,
    innerGraph: true,
    concatenateModules: true,
    minimize: false,
  };
  return config;
}

/**
 * The bundler options for Switchyard's workflow bundle. `payloadConverterPath` is Switchyard's payload converter
 * (src/config/data-converter.ts); a worker that bundles at start takes it from its `dataConverter` option instead.
 */
export const workflowBundlerOptions = {
  preloadModules: [stackTraceLimitModule, sharedModulesModule],
  webpackConfigHook: tuneWorkflowWebpack,
  payloadConverterPath,
} satisfies Pick<BundleOptions, 'preloadModules' | 'webpackConfigHook' | 'payloadConverterPath'>;

/** The bundler options of a worker with full stack traces: the same, without the stack-trace cap. */
export const stackTracingBundlerOptions = {
  preloadModules: [sharedModulesModule],
  webpackConfigHook: tuneWorkflowWebpack,
} satisfies Pick<BundleOptions, 'preloadModules' | 'webpackConfigHook'>;
