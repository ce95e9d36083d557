import { TestWorkflowEnvironment } from '@temporalio/testing';
import { inject } from 'vitest';
import { pendingApprovalsSearchAttributeKey } from '../../src/contracts/messages.js';
import { findTemporalBinary } from '../../src/server/temporal-binary.js';

export interface PrivateDevServer {
  address: string;
  namespace: string;
  stop(): Promise<void>;
}

/**
 * A dev server of a test's own, for server settings the shared one must not change for every other test — e.g.
 * `limit.historyCount.suggestContinueAsNew`, so Temporal suggests continue-as-new after a handful of events. It
 * uses the binary the global setup found. Create the test's harness first: that installs the Temporal Runtime,
 * which must exist before any worker connects.
 */
export async function startPrivateDevServer(options: {
  dynamicConfig: Readonly<Record<string, string | number | boolean>>;
}): Promise<PrivateDevServer> {
  const binary = inject('temporalBinaryPath') || (await findTemporalBinary({ build: false }))?.path;
  if (binary === undefined || binary === '')
    throw new Error('No temporal binary for a private dev server (set TEMPORAL_CLI_PATH)');
  const namespace = 'default';
  const extraArgs = ['--sqlite-pragma', 'journal_mode=WAL'];
  for (const [key, value] of Object.entries(options.dynamicConfig))
    extraArgs.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  const environment = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: binary },
      namespace,
      ip: '127.0.0.1',
      searchAttributes: [pendingApprovalsSearchAttributeKey],
      extraArgs,
      log: { format: 'json', level: 'error' },
    },
  });
  return { address: environment.address, namespace, stop: () => environment.teardown() };
}
