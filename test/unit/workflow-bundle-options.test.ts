import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
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

  it('shares every src/contracts module the workflows import that may be shared, and only those', async () => {
    const workflows = path.dirname(sharedModulesModule);
    const contracts = path.join(workflows, '..', 'contracts');
    const source = (file: string) => readFile(file, 'utf8');
    /** Modules of `directory` that a file imports for their values (type-only imports load nothing). */
    const valueImports = (text: string, directory: string) =>
      [...text.matchAll(new RegExp(`^import\\s+(?!type\\b)[^;]*?from\\s+'${directory}([\\w-]+)\\.js'`, 'gms'))].map(
        (match) => match[1] as string,
      );
    /**
     * Whether a contracts module may be shared: the SDK deep-freezes what is shared, and zod schemas cache on
     * themselves, so no zod; no module-level variable; no workflow API; and the same for what it imports.
     */
    const mayShare = async (name: string, seen = new Set<string>()): Promise<boolean> => {
      if (seen.has(name)) return true;
      seen.add(name);
      const text = await source(path.join(contracts, `${name}.ts`));
      if (/from 'zod'|from '@temporalio\/workflow'|^(export )?(let|var) /m.test(text)) return false;
      for (const imported of valueImports(text, '\\./')) if (!(await mayShare(imported, seen))) return false;
      return true;
    };
    const shared = valueImports(await source(sharedModulesModule), '\\.\\./contracts/');
    expect(shared.length).toBeGreaterThan(5);
    for (const name of shared) expect(await mayShare(name), `src/contracts/${name}.ts may not be shared`).toBe(true);
    for (const file of await readdir(workflows)) {
      if (!file.endsWith('.ts') || path.join(workflows, file) === sharedModulesModule) continue;
      for (const name of valueImports(await source(path.join(workflows, file)), '\\.\\./contracts/')) {
        if (await mayShare(name)) expect(shared, `src/contracts/${name}.ts, imported by ${file}`).toContain(name);
      }
    }
  });
});
