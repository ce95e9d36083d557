import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { Worker } from '@temporalio/worker';
import { builtinTools } from '../src/tools/builtin.js';
import { defineTool } from '../src/tools/define-tool.js';
import { createSwitchyardWorker } from '../src/worker/create-worker.js';
import type { SwitchyardWorkerOptions } from '../src/worker/create-worker.js';

/** A read-only call that takes `ms` (default 200): ten of them show what running concurrently buys. */
export const slowReadTool = defineTool({
  name: 'SlowRead',
  description: 'Waits, then answers: a read-only call of known duration.',
  inputSchema: z.object({ ms: z.number().int().min(0).default(200) }),
  concurrentSafe: true,
  readOnly: true,
  async execute(input, context) {
    await sleep(input.ms, undefined, { signal: context.signal });
    return `waited ${input.ms} ms`;
  },
});

/** When each `Stamp` call started executing, by call id (the benchmark's worker runs in this process). */
export const stampStarts = new Map<string, number>();

/** A call that needs approval in `default` mode and records when it starts: approval signal → call start. */
export const stampTool = defineTool({
  name: 'Stamp',
  description: 'Records when it starts (needs approval).',
  inputSchema: z.object({ label: z.string() }),
  execute(input) {
    stampStarts.set(input.label, performance.now());
    return Promise.resolve(`stamped ${input.label}`);
  },
});

/**
 * A worker as the benchmarks run one: the built-in tools (and `extraTools`), `cwd` as its default cwd and data
 * directory, and hook settings looked for as a default worker looks for them, in a user settings directory of its own
 * (`benchUserSettingsDir`; no file there unless a benchmark writes one) instead of the user's home; `options` adds or
 * overrides the rest.
 */
/** Where a bench worker whose default cwd is `cwd` looks for its user-level `settings.json`. */
export function benchUserSettingsDir(cwd: string): string {
  return path.join(cwd, 'user-settings');
}

export async function benchWorker(
  options: Pick<SwitchyardWorkerOptions, 'connection' | 'taskQueue'> &
    Partial<SwitchyardWorkerOptions> & { cwd: string; extraTools?: SwitchyardWorkerOptions['tools'] },
): Promise<Worker> {
  const { cwd, extraTools = [], ...rest } = options;
  return await createSwitchyardWorker({
    tools: [...builtinTools(), ...extraTools],
    defaultCwd: cwd,
    userSettingsDir: benchUserSettingsDir(cwd),
    dataDir: cwd,
    ...rest,
  });
}
