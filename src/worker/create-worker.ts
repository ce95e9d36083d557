import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { WorkerOptions } from '@temporalio/worker';
import type { Logger as PinoLogger } from 'pino';
import { createActivities } from '../activities/index.js';
import { DEFAULT_NAMESPACE, DEFAULT_TASK_QUEUE } from '../contracts/defaults.js';
import { builtinTools } from '../tools/builtin.js';
import type { Tool } from '../tools/define-tool.js';
import { ToolRegistry } from '../tools/registry.js';

/** Path of the workflow bundle's entry, for `workflowsPath` or `bundleWorkflowCode`. */
export const workflowsPath = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export interface SwitchyardWorkerOptions {
  connection: NativeConnection;
  /** Default `TEMPORAL_NAMESPACE` or `default`. */
  namespace?: string;
  /** Default `SWITCHYARD_TASK_QUEUE` or `switchyard`. */
  taskQueue?: string;
  /** Tools offered to sessions. Default: the built-in tools. */
  tools?: readonly Tool[];
  /** Working directory of sessions that name none. Default: the process's. */
  defaultCwd?: string;
  /** Group size for sessions that name none. Default `SWITCHYARD_MAX_TOOL_CONCURRENCY` or 10. */
  defaultMaxConcurrency?: number;
  /** A prebuilt workflow bundle (tests build one and share it); default: bundle `workflowsPath`. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  logger?: PinoLogger;
}

export function taskQueueFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return env.SWITCHYARD_TASK_QUEUE || DEFAULT_TASK_QUEUE;
}

export function namespaceFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return env.TEMPORAL_NAMESPACE || DEFAULT_NAMESPACE;
}

/** Creates a worker that runs `toolSession` workflows and the tool activities. */
export async function createSwitchyardWorker(options: SwitchyardWorkerOptions): Promise<Worker> {
  const registry = new ToolRegistry(options.tools ?? builtinTools());
  const activityDependencies: Parameters<typeof createActivities>[0] = { registry };
  if (options.defaultCwd !== undefined) activityDependencies.defaultCwd = options.defaultCwd;
  if (options.defaultMaxConcurrency !== undefined) activityDependencies.defaultMaxConcurrency = options.defaultMaxConcurrency;
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace ?? namespaceFromEnv(),
    taskQueue: options.taskQueue ?? taskQueueFromEnv(),
    activities: createActivities(activityDependencies),
    ...(options.workflowBundle === undefined ? { workflowsPath } : { workflowBundle: options.workflowBundle }),
  });
}

export { NativeConnection };
