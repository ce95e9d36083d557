import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Worker } from '@temporalio/worker';
import type { Tracer } from '@opentelemetry/api';
import { inject } from 'vitest';
import { SwitchyardClient } from '../../src/client/switchyard-client.js';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { SessionOptions } from '../../src/contracts/session.js';
import type { Tool } from '../../src/tools/define-tool.js';
import type { SwitchyardHooks } from '../../src/hooks/types.js';
import type { ArtifactStore } from '../../src/contracts/artifact-store.js';
import { createSwitchyardWorker } from '../../src/worker/create-worker.js';
import { liveToolSettings } from './tool-settings-setup.js';

/**
 * `createSwitchyardWorker` whose tools follow this process's environment: the tests change it between calls of one
 * worker (by default a worker's tools run with what its factory resolved at start).
 */
async function startSwitchyardWorker(
  options: Parameters<typeof createSwitchyardWorker>[0],
): ReturnType<typeof createSwitchyardWorker> {
  return createSwitchyardWorker({ toolSettings: liveToolSettings, ...options });
}
import type { SwitchyardWorkerOptions } from '../../src/worker/create-worker.js';
import { createLogger } from '../../src/worker/logger.js';
import { installTemporalRuntime } from '../../src/worker/runtime.js';

let counter = 0;
let runtimeInstalled = false;

function ensureRuntime(): void {
  if (runtimeInstalled) return;
  installTemporalRuntime(
    createLogger({
      env: { SWITCHYARD_LOG_LEVEL: process.env.SWITCHYARD_LOG_LEVEL ?? 'warn', SWITCHYARD_LOG_FORMAT: 'json' },
    }),
  );
  runtimeInstalled = true;
}

/** A unique name per test, so tests sharing one server stay apart. */
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter}`;
}

import { scratchDir } from './scratch.js';
import { FileArtifactStore } from '../../src/artifacts/file-artifact-store.js';

export { scratchDir };

export interface WorkerOverrides {
  tools?: readonly Tool[];
  defaultCwd?: string;
  hooks?: SwitchyardHooks;
  admissionGates?: Readonly<Record<string, number>>;
  tracer?: Tracer;
  /** Default: a private empty directory, so a developer's ~/.switchyard never leaks into tests. */
  userSettingsDir?: string | false;
  localReadOnlyCalls?: boolean | { maxTimeoutMs?: number; budgetMs?: number };
  operatorRules?: SwitchyardWorkerOptions['operatorRules'];
  evaluators?: SwitchyardWorkerOptions['evaluators'];
  /** The approvers file signed approvals are checked against. */
  approversFile?: string;
  /** Default: a `FileArtifactStore` under the harness's data directory. */
  artifacts?: ArtifactStore;
}

export interface Harness {
  taskQueue: string;
  client: SwitchyardClient;
  address: string;
  namespace: string;
  /** The artifact store's data directory, private to this harness. */
  dataDir: string;
  /** Starts a worker on this harness's task queue; stop it with `worker.shutdown()`. */
  startWorker(options?: WorkerOverrides): Promise<{ worker: Worker; done: Promise<void> }>;
  /** Runs `body` while a worker polls, then shuts the worker down. */
  withWorker<T>(body: () => Promise<T>, options?: WorkerOverrides): Promise<T>;
  startSession(options?: SessionOptions): Promise<SessionHandle>;
  close(): Promise<void>;
}

/** A client and workers on a fresh task queue of the shared test server (see global-setup.ts). */
export async function createHarness(options: WorkerOverrides = {}): Promise<Harness> {
  ensureRuntime();
  const address = inject('temporalAddress');
  const namespace = inject('temporalNamespace');
  const codePath = inject('workflowBundlePath');
  const taskQueue = uniqueName('tq');
  const dataDir = await scratchDir('switchyard-data-');
  const userSettingsDir = await scratchDir('switchyard-user-');
  const connection = await Connection.connect({ address });
  const client = new SwitchyardClient({
    client: new Client({ connection, namespace }),
    taskQueue,
    artifacts: new FileArtifactStore(dataDir),
  });
  const nativeConnections: NativeConnection[] = [];

  const startWorker: Harness['startWorker'] = async (workerOptions = {}) => {
    const nativeConnection = await NativeConnection.connect({ address });
    nativeConnections.push(nativeConnection);
    const worker = await startSwitchyardWorker({
      connection: nativeConnection,
      namespace,
      taskQueue,
      tools: workerOptions.tools ?? options.tools,
      defaultCwd: workerOptions.defaultCwd ?? options.defaultCwd,
      hooks: workerOptions.hooks ?? options.hooks,
      admissionGates: workerOptions.admissionGates ?? options.admissionGates,
      tracer: workerOptions.tracer ?? options.tracer,
      userSettingsDir: workerOptions.userSettingsDir ?? options.userSettingsDir ?? userSettingsDir,
      dataDir,
      ...((workerOptions.artifacts ?? options.artifacts) === undefined
        ? {}
        : { artifacts: workerOptions.artifacts ?? options.artifacts }),
      workflowBundle: { codePath },
      ...((workerOptions.operatorRules ?? options.operatorRules) === undefined
        ? {}
        : { operatorRules: workerOptions.operatorRules ?? options.operatorRules }),
      ...((workerOptions.evaluators ?? options.evaluators) === undefined
        ? {}
        : { evaluators: workerOptions.evaluators ?? options.evaluators }),
      ...((workerOptions.approversFile ?? options.approversFile) === undefined
        ? {}
        : { approversFile: workerOptions.approversFile ?? options.approversFile }),
      ...((workerOptions.localReadOnlyCalls ?? options.localReadOnlyCalls) === undefined
        ? {}
        : { localReadOnlyCalls: workerOptions.localReadOnlyCalls ?? options.localReadOnlyCalls }),
    });
    const done = worker.run();
    return { worker, done };
  };

  return {
    taskQueue,
    client,
    address,
    namespace,
    dataDir,
    startWorker,
    async withWorker(body, workerOptions) {
      const { worker, done } = await startWorker(workerOptions);
      try {
        return await body();
      } finally {
        worker.shutdown();
        await done;
      }
    },
    startSession: (sessionOptions = {}) => client.startSession(uniqueName('session'), sessionOptions),
    async close() {
      await connection.close();
      await Promise.all(nativeConnections.map((c) => c.close()));
    },
  };
}
