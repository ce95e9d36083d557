import type { AdmitSessionInput, SessionAdmission } from '../contracts/pipeline.js';
import { sandboxModes } from '../contracts/session.js';
import type { SandboxMode } from '../contracts/session.js';

/**
 * Why a worker whose `SWITCHYARD_SANDBOX` is `workerMode` refuses a session asking for `sessionMode`; undefined when
 * it admits it. `required` on the worker is a floor: a session may ask for `required` (or leave the mode to the
 * worker), never for `auto` (which runs unsandboxed where the sandbox is missing) or `off`. A worker value that is
 * not a mode refuses every session that names one, naming the value (a floor that cannot be read holds closed).
 */
export function sandboxFloorRefusal(options: {
  sessionMode: SandboxMode | undefined;
  workerMode: string | undefined;
}): string | undefined {
  const { sessionMode, workerMode } = options;
  if (workerMode !== undefined && !(sandboxModes as readonly string[]).includes(workerMode))
    return `this worker's SWITCHYARD_SANDBOX must be one of ${sandboxModes.join(', ')}, got "${workerMode}": the session is refused until it is fixed`;
  if (workerMode !== 'required' || sessionMode === undefined || sessionMode === 'required') return undefined;
  return `this worker runs with SWITCHYARD_SANDBOX=required, a floor no session lowers: the session's sandbox.mode "${sessionMode}" is refused (leave sandbox.mode unset or set it to "required")`;
}

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
