import type { Activities } from '../contracts/pipeline.js';
import { backgroundTaskStore } from '../tools/background/background-task-tools.js';

/**
 * The `stopBackgroundTasks` activity: stops every running background task of a session at the session's end
 * (workflow cancellation). Runs on the worker whose data directory holds the tasks (one host; see docs/CONCEPTS.md,
 * "Background tasks").
 */
export function createStopBackgroundTasks(dataDir: string): Activities['stopBackgroundTasks'] {
  return async (input) => {
    const stopped = await backgroundTaskStore(dataDir).stopSession(input.sessionId);
    return {
      tasks: stopped.map(({ record, state }) => ({
        taskId: record.taskId,
        status: state.status === 'running' ? 'killed' : state.status,
        ...(state.exitCode === undefined ? {} : { exitCode: state.exitCode }),
      })),
    };
  };
}
