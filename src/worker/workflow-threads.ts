// The threads a Switchyard worker runs its workflows in. The Temporal SDK installs a V8 promise hook in each workflow
// thread, which records where every promise of workflow code was created, for its `__stack_trace` query: two compiled
// functions, a stack capture and two map writes per promise, settled or not. Measured with bench/profile.ts that is
// about a quarter of a call's worker CPU at four Reads per turn and a third at one (BENCHMARKS.md, "Where the CPU
// goes"). Switchyard's workflow bundle caps stack traces anyway (src/workflows/stack-trace-limit.ts), so the records
// held nothing useful: by default the workflow threads start without the hook, and the query answers "Workflow stack
// traces are not enabled on this worker". `workflowStackTraces: true` keeps the SDK's threads, hook and all.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker as Thread } from 'node:worker_threads';
import type { Logger } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import { WatchedThreadClient, threadWatchSource } from './activation-watch.js';
import type { StartedThread, ThreadClient } from './activation-watch.js';

const require = createRequire(import.meta.url);

/** What `Worker.createWorkflowCreator` takes and returns (its types are not exported from the SDK's entry point). */
type CreatorParameters = Parameters<(typeof Worker)['createWorkflowCreator']>;
type CreatorResult = ReturnType<(typeof Worker)['createWorkflowCreator']>;

/** The SDK's thread-pool pieces (not its documented API; the SDK's version is pinned in package.json). */
interface ThreadedVm {
  WorkerThreadClient: new (thread: Thread, logger: Logger, patchActivationCallback?: unknown) => ThreadClient;
  ThreadedVMWorkflowCreator: new (clients: WatchedThreadClient[]) => Awaited<CreatorResult>;
  VMWorkflowThreadProxy: { prototype: WorkflowThreadProxy };
}
/** The main thread's handle on one workflow in a workflow thread. */
interface WorkflowThreadProxy {
  activate(activation: unknown): Promise<unknown>;
  getAndResetSinkCalls(): Promise<SinkCall[]>;
}
/** A sink call as the workflow thread sends it: `now` and `random` cannot cross threads and are put back here. */
interface SinkCall {
  workflowInfo: { unsafe: { now?: () => number; random?: () => number } };
}

const threadedVm = require('@temporalio/worker/lib/workflow/threaded-vm') as ThreadedVm;
const { createUnsafeRandomSource } = require('@temporalio/workflow/lib/random-helpers') as {
  createUnsafeRandomSource(random: () => number): () => number;
};

/** Where a completion carries its activation's sink calls from the thread entry (below) to the main thread. */
const SINK_CALLS_KEY = 'switchyardSinkCalls';
/** Sink calls a completion brought, until the SDK asks for them (one proxy per workflow run). */
const sinkCallsBrought = new WeakMap<WorkflowThreadProxy, SinkCall[]>();

/**
 * After each activation the SDK asks the workflow thread for the sink calls it made (logs, metrics): a second round
 * trip between the threads, on every activation, before the completion reaches the SDK's core. The thread entry puts
 * them on the completion instead (copied as the SDK's own thread handler copies them), and here they are taken off
 * and handed out when the SDK asks. A completion without them (a thread of the SDK's own, with `workflowStackTraces`)
 * leaves the SDK's round trip in place. Installed once per process.
 */
function carrySinkCallsOnCompletions(): void {
  const proxy = threadedVm.VMWorkflowThreadProxy.prototype;
  const activate = proxy.activate;
  const getAndResetSinkCalls = proxy.getAndResetSinkCalls;
  if ((activate as { carriesSinkCalls?: true }).carriesSinkCalls) return;
  const carrying = async function (this: WorkflowThreadProxy, activation: unknown): Promise<unknown> {
    const completion = (await activate.call(this, activation)) as Record<string, unknown> | undefined;
    const calls = completion?.[SINK_CALLS_KEY];
    if (completion !== undefined && Array.isArray(calls)) {
      delete completion[SINK_CALLS_KEY];
      sinkCallsBrought.set(this, [...(sinkCallsBrought.get(this) ?? []), ...(calls as SinkCall[])]);
    }
    return completion;
  };
  proxy.activate = Object.assign(carrying, { carriesSinkCalls: true as const });
  proxy.getAndResetSinkCalls = async function (this: WorkflowThreadProxy): Promise<SinkCall[]> {
    const calls = sinkCallsBrought.get(this);
    if (calls === undefined) return await getAndResetSinkCalls.call(this);
    sinkCallsBrought.delete(this);
    for (const call of calls) {
      call.workflowInfo.unsafe.now = Date.now;
      call.workflowInfo.unsafe.random = createUnsafeRandomSource(Math.random);
    }
    return calls;
  };
}

/**
 * What a workflow thread runs: the SDK's global handlers lose their promise hook, each activation's synchronous part
 * is marked for the main thread's watch (below), then the SDK's own thread entry takes over. Only the hook goes; the
 * SDK's stack-trace preparation stays. Dynamic `import()` of file URLs, because evaluated thread code is an ES module
 * when the process runs with `--input-type=module` (`node --input-type=module -e …`), and CommonJS otherwise;
 * `import()` works in both, and loads the SDK's CommonJS files into the same module cache as its own `require` calls,
 * so the thread entry sees the handlers changed here. Messages posted to the thread before the entry listens wait in
 * its port.
 *
 * The isolate timeout is what turns workflow code stuck in a loop into a failed workflow task instead of a frozen
 * worker. Node enforces a `runInContext` timeout with a watchdog thread it starts and joins on every call (the SDK
 * calls into the sandbox with one about four times per activation). Here the SDK's calls get no timeout; the main
 * thread keeps the timeout instead, from marks the thread leaves around the whole synchronous part of each activation
 * (src/worker/activation-watch.ts), and an activation that outlives it fails with the same "Script execution timed
 * out" message, its thread replaced. Queries, signals, updates and the start of a workflow all arrive as activations;
 * what is not watched (creating and disposing a workflow, collecting sink calls) runs only SDK code. Each completion
 * also carries the sink calls its activation made, collected and copied as the SDK's `extract-sink-calls` handler does
 * (see `carrySinkCallsOnCompletions`), except that calls which saw the same workflow info share one copy of it, as
 * they share the info itself when workflows run on the main thread.
 */
const threadEntry = [
  "import('node:worker_threads')",
  '  .then(({ workerData }) => Promise.all([workerData.watchState,',
  `    import(${JSON.stringify(pathToFileURL(require.resolve('@temporalio/worker/lib/workflow/vm-shared')).href)})]))`,
  '  .then(([watchState, vmSharedModule]) => {',
  '    const vmShared = vmSharedModule.default ?? vmSharedModule;',
  '    vmShared.globalHandlers.setPromiseHook = () => {};',
  threadWatchSource('watchState'),
  '    const activate = vmShared.BaseVMWorkflow.prototype.activate;',
  '    vmShared.BaseVMWorkflow.prototype.activate = function (activation) {',
  '      let pending;',
  '      watch.begin(this.activator.info.runId);',
  '      try {',
  '        pending = activate.call(this, activation);',
  '      } catch (error) {',
  '        return Promise.resolve({ runId: this.activator.info.runId, failed: { failure: this.activator.errorToFailure(error) } });',
  '      } finally {',
  '        watch.end();',
  '      }',
  '      return Promise.resolve(pending).then((completion) => {',
  '        if (completion === null || typeof completion !== "object") return completion;',
  '        const calls = this.activator.getAndResetSinkCalls();',
  '        let info, copy;',
  '        for (const call of calls) {',
  '          if (call.workflowInfo !== info) {',
  '            info = call.workflowInfo;',
  '            copy = { ...info, unsafe: { ...info.unsafe } };',
  '            delete copy.unsafe.now;',
  '            delete copy.unsafe.random;',
  '            copy = structuredClone(copy);',
  '          }',
  '          call.workflowInfo = copy;',
  '        }',
  `        completion[${JSON.stringify(SINK_CALLS_KEY)}] = calls;`,
  '        return completion;',
  '      });',
  '    };',
  `    return import(${JSON.stringify(pathToFileURL(require.resolve('@temporalio/worker/lib/workflow/workflow-worker-thread')).href)});`,
  '  });',
].join('\n');

/**
 * `Worker` whose workflow threads run without the SDK's promise hook, and whose completions carry their sink calls
 * (see `carrySinkCallsOnCompletions`). Debug mode (workflows on the main thread, as replay runs them) and everything
 * else stay the SDK's; the thread pool is set up as the SDK sets up its own.
 */
export class HooklessWorkflowThreadsWorker extends Worker {
  protected static override async createWorkflowCreator(
    ...[workflowBundle, options, logger]: CreatorParameters
  ): CreatorResult {
    if (options.debugMode) return await super.createWorkflowCreator(workflowBundle, options, logger);
    carrySinkCallsOnCompletions();
    const start = (watchState: SharedArrayBuffer): StartedThread => {
      const client = new threadedVm.WorkerThreadClient(
        new Thread(threadEntry, { eval: true, workerData: { watchState } }),
        logger,
        options.patchActivationCallback,
      );
      const ready = client.send({
        type: 'init',
        workflowBundle,
        // No timeout per call into the sandbox: the main thread watches each activation as a whole.
        isolateExecutionTimeoutMs: undefined,
        reuseV8Context: options.reuseV8Context ?? true,
        registeredActivityNames: new Set(options.activities.keys()),
        hasPatchActivationCallback: options.patchActivationCallback !== undefined,
      });
      return { client, ready };
    };
    const clients = Array.from(
      { length: options.workflowThreadPoolSize },
      () => new WatchedThreadClient({ start, timeoutMs: options.isolateExecutionTimeoutMs, logger }),
    );
    await Promise.all(clients.map((client) => client.ready()));
    return new threadedVm.ThreadedVMWorkflowCreator(clients);
  }
}
