import type { AdmitSessionInput, SessionAdmission } from '../contracts/pipeline.js';
import { sandboxFloorRefusal } from '../tools/sandbox/sandbox-floor.js';

/**
 * The `admitSession` activity: the workflow asks its own worker, at the start of each run, whether the worker's
 * settings admit the session's options (workflow code cannot read the worker's environment). `workerMode` is the
 * worker's `SWITCHYARD_SANDBOX` as its factory read it at start.
 */
export function createAdmitSession(
  workerMode: string | undefined,
): (input: AdmitSessionInput) => Promise<SessionAdmission> {
  return async (input) => {
    const reason = sandboxFloorRefusal({ sessionMode: input.sandboxMode, workerMode });
    return reason === undefined ? { admitted: true } : { admitted: false, reason };
  };
}
