import { sandboxModes } from '../../contracts/session.js';
import type { SandboxMode } from '../../contracts/session.js';

/**
 * Why a worker whose `SWITCHYARD_SANDBOX` is `workerMode` refuses a session asking for `sessionMode`; undefined when
 * it admits it. `required` on the worker is a floor: a session may ask for `required` (or leave the mode to the
 * worker), never for `auto` (which runs unsandboxed where the sandbox is missing) or `off`. Refused, never lowered nor
 * raised silently: the session's author learns that the mode they chose does not hold here. A worker value that is
 * not a mode refuses every session that names one, naming the value (a floor that cannot be read holds closed). The
 * one answer for both places that ask: the session's admission (src/activities/admit-session.ts) and each process a
 * tool starts (src/tools/sandbox/sandboxed-launch.ts).
 */
export function sandboxFloorRefusal(options: {
  sessionMode: SandboxMode | undefined;
  workerMode: string | undefined;
}): string | undefined {
  const { sessionMode, workerMode } = options;
  if (workerMode !== undefined && !(sandboxModes as readonly string[]).includes(workerMode))
    return `this worker's SWITCHYARD_SANDBOX must be one of ${sandboxModes.join(', ')}, got "${workerMode}": the session is refused until it is fixed`;
  if (workerMode !== 'required' || sessionMode === undefined || sessionMode === 'required') return undefined;
  return `This worker requires the OS sandbox (SWITCHYARD_SANDBOX=required), a floor no session lowers, so the session's sandbox.mode "${sessionMode}" was refused (leave sandbox.mode unset or set it to "required")`;
}
