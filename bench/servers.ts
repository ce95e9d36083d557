// The bench's second dev server: as src/server/dev-server.ts starts one (the same binary, SQLite in memory with WAL,
// Switchyard's search attribute), but without `system.enableActivityEagerExecution=true`, as `temporal server
// start-dev` runs by default. The mutating scenario runs its contenders on both servers, alternating, so what eager
// activity dispatch changes shows as a same-run ratio.
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { pendingApprovalsSearchAttributeKey } from '../src/contracts/messages.js';
import { findTemporalBinary } from '../src/server/temporal-binary.js';

export interface BenchServer {
  address: string;
  stop(): Promise<void>;
}

export async function startServerWithoutEagerDispatch(): Promise<BenchServer> {
  const found = await findTemporalBinary({});
  if (found === undefined) throw new Error('No Temporal CLI for the second dev server');
  const environment = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: found.path },
      namespace: 'default',
      ip: '127.0.0.1',
      searchAttributes: [pendingApprovalsSearchAttributeKey],
      extraArgs: ['--sqlite-pragma', 'journal_mode=WAL'],
      log: { format: 'json', level: 'error' },
    },
  });
  return { address: environment.address, stop: () => environment.teardown() };
}
