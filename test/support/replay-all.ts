import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';

/** The figures of one replay of every history a server holds. */
export interface ReplayAllReport {
  /** Histories replayed, and their events. */
  histories: number;
  events: number;
  /** `<workflowId>/<runId> (<type>): <error>` for each history that did not replay. */
  failures: string[];
  /** Histories of workflow types no bundle here holds (test fixtures of their own), by type: not replayed. */
  skipped: Record<string, number>;
  ms: number;
}

/**
 * Replays every workflow run the server's visibility lists (optionally only those started at or after `since`),
 * each against the bundle its workflow type came from (`bundles`: type → bundle file, bundled with the options its
 * workers used). A run still open replays up to its last completed workflow task. The determinism guard of the whole
 * suite: hundreds of real histories, faults, continue-as-new and all.
 */
export async function replayAllHistories(options: {
  address: string;
  namespace: string;
  bundles: (type: string) => Promise<string | undefined> | string | undefined;
  since?: Date;
  concurrency?: number;
}): Promise<ReplayAllReport> {
  const started = Date.now();
  // A history page can hold payloads up to Temporal's limits (the payload tests make some of several MB): past
  // gRPC's default 4 MB a page would not arrive at all.
  const connection = await Connection.connect({
    address: options.address,
    channelArgs: { 'grpc.max_receive_message_length': 256 * 1024 * 1024 },
  });
  const report: Omit<ReplayAllReport, 'ms'> = { histories: 0, events: 0, failures: [], skipped: {} };
  try {
    const client = new Client({ connection, namespace: options.namespace });
    const query = options.since === undefined ? undefined : `StartTime >= '${options.since.toISOString()}'`;
    const runs: { workflowId: string; runId: string; type: string }[] = [];
    for await (const execution of client.workflow.list(query === undefined ? {} : { query }))
      runs.push({ workflowId: execution.workflowId, runId: execution.runId, type: execution.type });
    const byBundle = new Map<string, typeof runs>();
    for (const run of runs) {
      const bundle = await options.bundles(run.type);
      if (bundle === undefined) {
        report.skipped[run.type] = (report.skipped[run.type] ?? 0) + 1;
        continue;
      }
      byBundle.set(bundle, [...(byBundle.get(bundle) ?? []), run]);
    }
    for (const [codePath, group] of byBundle) {
      const histories = fetchAll(client, group, options.concurrency ?? 8, (history) => {
        report.events += history.events?.length ?? 0;
      });
      for await (const result of Worker.runReplayHistories(
        {
          workflowBundle: { codePath },
          // Sinks are not called during replay; registering them keeps the replayer from warning about them.
          sinks: {
            switchyardTelemetry: {
              toolCallStarted: { fn: () => undefined },
              toolCallEnded: { fn: () => undefined },
              approvalDecision: { fn: () => undefined },
            },
          },
        },
        histories,
      )) {
        report.histories += 1;
        if (result.error !== undefined) {
          const run = group.find((entry) => `${entry.workflowId}/${entry.runId}` === result.workflowId);
          report.failures.push(`${result.workflowId} (${run?.type ?? '?'}): ${String(result.error)}`);
        }
      }
    }
  } finally {
    await connection.close();
  }
  return { ...report, ms: Date.now() - started };
}

/** The histories of `runs`, fetched `concurrency` at a time, in order. */
async function* fetchAll(
  client: Client,
  runs: readonly { workflowId: string; runId: string }[],
  concurrency: number,
  seen: (history: temporal.api.history.v1.IHistory) => void,
): AsyncGenerator<{ workflowId: string; history: temporal.api.history.v1.IHistory }> {
  const fetch = (run: { workflowId: string; runId: string }) =>
    client.workflow
      .getHandle(run.workflowId, run.runId)
      .fetchHistory()
      .then((history) => ({ workflowId: `${run.workflowId}/${run.runId}`, history }));
  const queue = runs.slice(0, concurrency).map(fetch);
  for (let index = concurrency; queue.length > 0; index += 1) {
    const next = await queue.shift()!;
    if (index < runs.length) queue.push(fetch(runs[index]!));
    // A run no worker has picked up yet (a continue-as-new's last run, just started) has nothing to replay, and the
    // replayer waits forever on it.
    if (!(next.history.events ?? []).some((event) => event.workflowTaskCompletedEventAttributes != null)) continue;
    seen(next.history);
    yield next;
  }
}

/** One line for the console: `replayed N histories (E events) in S s: F failures[, skipped …]`. */
export function formatReplayReport(report: ReplayAllReport, what: string): string {
  const skipped = Object.entries(report.skipped).map(([type, count]) => `${count} ${type}`);
  return (
    `[switchyard replay] ${what}: replayed ${report.histories} histories (${report.events} events) against the ` +
    `workflow bundle in ${(report.ms / 1000).toFixed(1)} s: ${report.failures.length} failures` +
    (skipped.length === 0 ? '' : `; not replayed (types without a bundle here): ${skipped.join(', ')}`) +
    report.failures.map((failure) => `\n  ${failure}`).join('')
  );
}
