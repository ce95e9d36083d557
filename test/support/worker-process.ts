// A Switchyard worker in its own process, so a test can SIGKILL it mid-call.
// Env: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, SWITCHYARD_TASK_QUEUE, WORKFLOW_BUNDLE, SWITCHYARD_DATA_DIR.
import { NativeConnection } from '@temporalio/worker';
import { createSwitchyardWorker } from '../../src/worker/create-worker.js';
import { createLogger } from '../../src/worker/logger.js';
import { installTemporalRuntime } from '../../src/worker/runtime.js';
import { testTools } from './test-tools.js';

const env = process.env;
installTemporalRuntime(createLogger({ env: { SWITCHYARD_LOG_LEVEL: 'warn', SWITCHYARD_LOG_FORMAT: 'json' } }));
const connection = await NativeConnection.connect({ address: env.TEMPORAL_ADDRESS ?? 'localhost:7233' });
const worker = await createSwitchyardWorker({
  connection,
  namespace: env.TEMPORAL_NAMESPACE ?? 'default',
  taskQueue: env.SWITCHYARD_TASK_QUEUE ?? 'switchyard',
  tools: testTools(),
  ...(env.WORKFLOW_BUNDLE ? { workflowBundle: { codePath: env.WORKFLOW_BUNDLE } } : {}),
});
process.stdout.write('worker ready\n');
await worker.run();
