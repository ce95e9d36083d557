import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { inject } from 'vitest';
import type { Harness } from './harness.js';

/** What a spawned worker process offers: the test stand-ins (default), the real built-in tools, or those plus Sleep and LedgerAppend. */
export type WorkerProcessTools = 'test' | 'builtin' | 'faults';

/**
 * Starts `test/support/worker-process.ts` in its own process on the harness's task queue and resolves once it
 * polls. `env` adds to (or, with `undefined`, removes from) the parent's environment, for variables a worker reads
 * at start. Without SWITCHYARD_USER_SETTINGS_DIR the worker reads an empty settings dir (see worker-process.ts).
 */
export async function spawnWorkerProcess(
  harness: Pick<Harness, 'address' | 'namespace' | 'taskQueue' | 'dataDir'>,
  options: { tools?: WorkerProcessTools; env?: Record<string, string | undefined> } = {},
): Promise<ChildProcess> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: harness.address,
    TEMPORAL_NAMESPACE: harness.namespace,
    SWITCHYARD_TASK_QUEUE: harness.taskQueue,
    WORKFLOW_BUNDLE: inject('workflowBundlePath'),
    SWITCHYARD_DATA_DIR: harness.dataDir,
    SWITCHYARD_TEST_TOOLS: options.tools ?? 'test',
  };
  // The developer's own settings dir must never reach a test worker through the parent's environment.
  delete env.SWITCHYARD_USER_SETTINGS_DIR;
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  const child = spawn(process.execPath, ['--import', 'tsx', path.resolve('test/support/worker-process.ts')], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('worker ready')) resolve();
    });
    child.once('exit', (code, signal) =>
      reject(new Error(`worker process exited before it was ready (${code ?? signal})`)),
    );
  });
  return child;
}

/** SIGKILLs a process (if still running) and waits until it is gone. */
export async function killProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}
