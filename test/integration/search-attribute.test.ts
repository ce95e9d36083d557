import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { NativeConnection } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';
import { createSwitchyardWorker } from '../../src/worker/create-worker.js';
import { uniqueName } from '../support/harness.js';
import { testTools } from '../support/test-tools.js';
import { waitFor } from '../support/wait-for.js';

describe('a namespace without the SwitchyardPendingApprovals search attribute', () => {
  it('the worker refuses to start and gives the command that creates it; requireSearchAttribute: false starts it', async () => {
    const binary = inject('temporalBinaryPath');
    const address = inject('temporalAddress');
    if (binary === '')
      return expect.fail(
        'this test needs the Temporal CLI the global setup found (TEMPORAL_CLI_PATH with TEMPORAL_ADDRESS)',
      );
    const namespace = uniqueName('bare').toLowerCase();
    await promisify(execFile)(binary, [
      'operator',
      'namespace',
      'create',
      '--namespace',
      namespace,
      '--address',
      address,
    ]);
    const connection = await NativeConnection.connect({ address });
    try {
      const create = (requireSearchAttribute?: boolean) =>
        createSwitchyardWorker({
          connection,
          namespace,
          taskQueue: uniqueName('tq'),
          tools: testTools(),
          userSettingsDir: false,
          workflowBundle: { codePath: inject('workflowBundlePath') },
          ...(requireSearchAttribute === undefined ? {} : { requireSearchAttribute }),
        });
      const refusal = await waitFor(
        () =>
          create().then(
            () => 'started',
            (error: unknown) => String(error),
          ),
        (outcome) => /SwitchyardPendingApprovals/.test(outcome) || outcome === 'started',
        { what: 'the new namespace to answer', timeoutMs: 30_000 },
      );
      expect(refusal).toContain(
        `temporal operator search-attribute create --namespace ${namespace} --name SwitchyardPendingApprovals --type Int`,
      );
      const worker = await create(false);
      expect(worker.options.namespace).toBe(namespace);
      // A created worker holds the connection until it has run and shut down.
      await worker.runUntil(Promise.resolve());
    } finally {
      await connection.close();
    }
  });
});
