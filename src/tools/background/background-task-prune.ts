import { readdir, rm, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { directoryBytes } from '../../artifacts/directory-bytes.js';
import type { BackgroundTaskRecord } from '../../contracts/background-tasks.js';
import type { BackgroundTaskState } from './background-task-processes.js';
import { BackgroundTaskRecords, OUTPUT_FILE, RECORD_FILE, readRecord } from './background-task-records.js';

/** What `prune` removed (or would remove, on a dry run) and how many tasks it left. */
export interface BackgroundPruneReport {
  removed: Array<{ session: string; taskId: string; path: string; bytes: number; lastModified: Date }>;
  /** Tasks left in place: running, or written within the age. */
  kept: number;
}

/**
 * `BackgroundTaskStore.prune` over the tasks under `root` (`<dataDir>/background`), each task's state found by
 * `stateOf`: see there.
 */
export async function pruneBackgroundTasks(
  root: string,
  stateOf: (record: BackgroundTaskRecord) => Promise<BackgroundTaskState>,
  options: { olderThanMs: number; dryRun?: boolean; now?: Date },
): Promise<BackgroundPruneReport> {
  const cutoff = (options.now ?? new Date()).getTime() - options.olderThanMs;
  const report: BackgroundPruneReport = { removed: [], kept: 0 };
  let sessions: string[];
  try {
    sessions = (await readdir(root, { withFileTypes: true }))
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return report;
    throw error;
  }
  for (const segment of sessions.sort()) {
    const sessionDirectory = path.join(root, segment);
    const taskIds = (await readdir(sessionDirectory).catch(() => [] as string[]))
      .filter((entry) => BackgroundTaskRecords.isTaskId(entry))
      .sort();
    for (const taskId of taskIds) {
      const directory = path.join(sessionDirectory, taskId);
      const record = await readRecord(path.join(directory, RECORD_FILE));
      const written = Math.max(
        ...(await Promise.all(
          [directory, path.join(directory, OUTPUT_FILE)].map((file) =>
            stat(file).then(
              (stats) => stats.mtimeMs,
              () => 0,
            ),
          ),
        )),
      );
      const ended = record !== undefined && (await stateOf(record)).status !== 'running';
      if (!ended || written > cutoff) {
        report.kept += 1;
        continue;
      }
      const bytes = await directoryBytes(directory);
      if (options.dryRun !== true) await rm(directory, { recursive: true, force: true });
      report.removed.push({
        session: record.sessionId,
        taskId,
        path: directory,
        bytes,
        lastModified: new Date(written),
      });
    }
    // Only an empty folder goes: rmdir fails, harmlessly, when a task is left or has just been started.
    if (options.dryRun !== true) await rmdir(sessionDirectory).catch(() => undefined);
  }
  return report;
}
