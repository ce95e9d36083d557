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
 * directory, no user-level settings (no hook files read per call); `options` adds or overrides the rest.
 */
export async function benchWorker(
  options: Pick<SwitchyardWorkerOptions, 'connection' | 'taskQueue'> &
    Partial<SwitchyardWorkerOptions> & { cwd: string; extraTools?: SwitchyardWorkerOptions['tools'] },
): Promise<Worker> {
  const { cwd, extraTools = [], ...rest } = options;
  return await createSwitchyardWorker({
    tools: [...builtinTools(), ...extraTools],
    defaultCwd: cwd,
    userSettingsDir: false,
    dataDir: cwd,
    ...rest,
  });
}
