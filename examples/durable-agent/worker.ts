// The agent's worker: Switchyard's worker (built-in tools and the executor's activities) with the agent's workflow
// and its model activity added. Run alone (`npx tsx examples/durable-agent/worker.ts`) or from `main.ts`.
// Env: where Temporal is, as the `temporal` CLI reads it — TEMPORAL_ADDRESS (default localhost:7233),
// TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*, TEMPORAL_PROFILE of temporal.toml; AGENT_TASK_QUEUE (default `durable-agent`),
// ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL / ANTHROPIC_MODEL (without a key: the scripted model, offline),
// WORKFLOW_BUNDLE (a prebuilt bundle of workflows.ts; default: bundled at start).
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Worker } from '@temporalio/worker';
import { builtinTools, createSwitchyardWorker } from 'temporal-switchyard/worker';
import type { NativeConnection, SwitchyardWorkerOptions, Tool } from 'temporal-switchyard/worker';
import { createAgentActivities } from './model.js';
import type { ModelOptions } from './model.js';
import { startScriptedModel } from './scripted-model.js';
import type { ScriptedModel } from './scripted-model.js';

/** The agent's workflows module, for `workflowsPath` or `bundleWorkflowCode`. */
export const agentWorkflowsPath = fileURLToPath(new URL('./workflows.ts', import.meta.url));

/** Task queue of the agent's workflows and tools: its own, so `npm start`'s worker (no agent workflow) never polls it. */
export const agentTaskQueue = (env: NodeJS.ProcessEnv = process.env): string => env.AGENT_TASK_QUEUE || 'durable-agent';

/**
 * The model from the environment: Anthropic's API with `ANTHROPIC_API_KEY` (and optional `ANTHROPIC_BASE_URL`,
 * `ANTHROPIC_MODEL`); without a key, the scripted model started here (say so: `scripted` is set).
 */
export async function modelFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ model: Omit<ModelOptions, 'tools'>; scripted?: ScriptedModel }> {
  const apiKey = env.ANTHROPIC_API_KEY;
  if (apiKey !== undefined && apiKey !== '') {
    return {
      model: {
        apiKey,
        ...(env.ANTHROPIC_BASE_URL ? { baseUrl: env.ANTHROPIC_BASE_URL } : {}),
        ...(env.ANTHROPIC_MODEL ? { model: env.ANTHROPIC_MODEL } : {}),
      },
    };
  }
  const scripted = await startScriptedModel();
  return { model: { apiKey: 'scripted', baseUrl: scripted.url }, scripted };
}

export interface AgentWorkerOptions {
  connection: NativeConnection;
  model: Omit<ModelOptions, 'tools'>;
  namespace?: string;
  taskQueue?: string;
  /** Default: the built-in tools (Read, Edit, Write, Bash, Glob, Grep, …). */
  tools?: readonly Tool[];
  workflowBundle?: SwitchyardWorkerOptions['workflowBundle'];
  userSettingsDir?: SwitchyardWorkerOptions['userSettingsDir'];
  dataDir?: string;
}

/** A worker for the agent: its workflow, its model activity, and Switchyard's tools and activities. */
export async function createAgentWorker(options: AgentWorkerOptions): Promise<Worker> {
  const tools = options.tools ?? builtinTools();
  return createSwitchyardWorker({
    connection: options.connection,
    taskQueue: options.taskQueue ?? agentTaskQueue(),
    tools,
    activities: { ...createAgentActivities({ ...options.model, tools }) },
    ...(options.workflowBundle === undefined
      ? { workflowsPath: agentWorkflowsPath }
      : { workflowBundle: options.workflowBundle }),
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
    ...(options.userSettingsDir === undefined ? {} : { userSettingsDir: options.userSettingsDir }),
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
  });
}

async function main(): Promise<void> {
  const { NativeConnection, createLogger, installTemporalRuntime, temporalConnectConfigFromEnv } =
    await import('temporal-switchyard/worker');
  installTemporalRuntime(
    createLogger({
      env: {
        SWITCHYARD_LOG_LEVEL: process.env.SWITCHYARD_LOG_LEVEL ?? 'warn',
        SWITCHYARD_LOG_FORMAT: process.env.SWITCHYARD_LOG_FORMAT ?? 'json',
      },
    }),
  );
  // Address, namespace, TLS and API key as the `temporal` CLI resolves them (environment, temporal.toml profile).
  const temporal = temporalConnectConfigFromEnv();
  const connection = await NativeConnection.connect(temporal.connectionOptions);
  const { model, scripted } = await modelFromEnv();
  const worker = await createAgentWorker({
    connection,
    model,
    namespace: temporal.namespace,
    ...(process.env.WORKFLOW_BUNDLE ? { workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE } } : {}),
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => worker.shutdown());
  process.stdout.write(
    `agent worker ready on task queue ${agentTaskQueue()}${scripted === undefined ? '' : ` (scripted model at ${scripted.url})`}\n`,
  );
  await worker.run();
  await scripted?.close();
  await connection.close();
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
