import { describe, expect, it } from 'vitest';
import {
  sharedModulesModule,
  stackTracingBundlerOptions,
  stackTraceLimitModule,
  tuneWorkflowWebpack,
  workflowBundlerOptions,
} from '../../src/worker/workflow-bundle-options.js';

/** The shape of the SDK's webpack configuration that the tuning touches (its swc rule and its optimization). */
const sdkConfig = () => ({
  mode: 'development' as const,
  module: {
    rules: [
      { test: /\.js$/, enforce: 'pre' as const, use: ['source-map-loader'] },
      {
        test: /\.ts$/,
        use: { loader: '/x/node_modules/swc-loader/index.js', options: { sourceMap: true, jsc: { target: 'es2017' } } },
      },
    ],
  },
});

describe('workflow bundle options', () => {
  it('compiles TypeScript for ES2022 and joins modules, leaving the other rules alone', () => {
    const config = tuneWorkflowWebpack(sdkConfig());
    const [sourceMaps, swc] = config.module?.rules ?? [];
    expect(sourceMaps).toEqual(sdkConfig().module.rules[0]);
    expect(swc).toMatchObject({ use: { options: { jsc: { target: 'es2022' } } } });
    expect(config.optimization).toMatchObject({ concatenateModules: true, usedExports: true, minimize: false });
    expect(config.mode).toBe('development');
  });

  it('preloads the stack-trace cap, which sets no frames', async () => {
    expect(workflowBundlerOptions.preloadModules).toEqual([stackTraceLimitModule, sharedModulesModule]);
    expect(stackTracingBundlerOptions.preloadModules).toEqual([sharedModulesModule]);
    expect(stackTraceLimitModule).toMatch(/src\/workflows\/stack-trace-limit\.ts$/);
    const limit = Error.stackTraceLimit;
    try {
      await import(stackTraceLimitModule);
      expect(Error.stackTraceLimit).toBe(0);
    } finally {
      Error.stackTraceLimit = limit;
    }
  });
});
