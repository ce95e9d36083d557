// A Switchyard worker in its own process, so a test can SIGKILL it mid-call or give it its own environment.
// Env: where Temporal is, as the `temporal` CLI reads it (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
// TEMPORAL_TLS_*, TEMPORAL_PROFILE), SWITCHYARD_TASK_QUEUE, WORKFLOW_BUNDLE, SWITCHYARD_DATA_DIR,
// SWITCHYARD_USER_SETTINGS_DIR, SWITCHYARD_TEST_TOOLS (`test`: the stand-ins, the default; `builtin`: the real tools;
// `faults`: the real tools plus the stand-ins Sleep and LedgerAppend),
// SWITCHYARD_WORKER_CWD (the worker's default cwd), SWITCHYARD_WORKER_ROLE (read by createSwitchyardWorker),
// SWITCHYARD_APPROVERS_FILE and SWITCHYARD_POLICY_FILE (read by createSwitchyardWorker itself, as for any worker),
// SWITCHYARD_TEST_MCP=1 (adds the tools of test/support/mcp-test-server.ts as MCP server `hostile`).
// Isolated from the developer's machine: without SWITCHYARD_USER_SETTINGS_DIR it reads an empty settings dir, never
// ~/.switchyard, and without SWITCHYARD_DATA_DIR it stores artifacts in a temporary dir, never under HOME.
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { temporalConnectConfigFromEnv } from '../../src/config/environment.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { connectMcpTools, mcpServersFromConfig } from '../../src/tools/mcp/mcp.js';
import { createSwitchyardWorker } from '../../src/worker/create-worker.js';
import { createLogger } from '../../src/worker/logger.js';
import { installTemporalRuntime } from '../../src/worker/runtime.js';
import { conditionTools } from './condition-tools.js';
import { ledgerAppendTool, sleepTool, testTools } from './test-tools.js';

const env = process.env;
const temporaryDir = (prefix: string): Promise<string> => mkdtemp(path.join(os.tmpdir(), prefix));
const toolSet = env.SWITCHYARD_TEST_TOOLS ?? 'test';
const toolSets = {
  test: () => [...testTools(), ...conditionTools()],
  builtin: () => builtinTools(),
  faults: () => [...builtinTools(), sleepTool, ledgerAppendTool],
};
if (!(toolSet in toolSets))
  throw new Error(`SWITCHYARD_TEST_TOOLS must be one of ${Object.keys(toolSets).join(', ')}, got "${toolSet}"`);

const mcpTools =
  env.SWITCHYARD_TEST_MCP === '1'
    ? (
        await connectMcpTools(
          mcpServersFromConfig({
            mcpServers: {
              hostile: {
                command: process.execPath,
                args: ['--import', 'tsx', path.resolve('test/support/mcp-test-server.ts')],
                cwd: path.resolve('.'),
              },
            },
          }),
        )
      ).tools
    : [];

installTemporalRuntime(createLogger({ env: { SWITCHYARD_LOG_LEVEL: 'warn', SWITCHYARD_LOG_FORMAT: 'json' } }));
const temporal = temporalConnectConfigFromEnv();
const connection = await NativeConnection.connect(temporal.connectionOptions);
const worker = await createSwitchyardWorker({
  connection,
  namespace: temporal.namespace,
  taskQueue: env.SWITCHYARD_TASK_QUEUE ?? 'switchyard',
  tools: [...toolSets[toolSet as keyof typeof toolSets](), ...mcpTools],
  ...(env.SWITCHYARD_WORKER_CWD ? { defaultCwd: env.SWITCHYARD_WORKER_CWD } : {}),
  // Set in the environment, the worker reads these itself (that is what the environment-variable tests check).
  ...(env.SWITCHYARD_USER_SETTINGS_DIR ? {} : { userSettingsDir: await temporaryDir('switchyard-user-') }),
  ...(env.SWITCHYARD_DATA_DIR ? {} : { dataDir: await temporaryDir('switchyard-data-') }),
  ...(env.WORKFLOW_BUNDLE ? { workflowBundle: { codePath: env.WORKFLOW_BUNDLE } } : {}),
});
process.stdout.write('worker ready\n');
await worker.run();
