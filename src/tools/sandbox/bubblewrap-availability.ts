import { execFile } from 'node:child_process';
import path from 'node:path';
import { toolSettings } from '../tool-settings.js';
import type { ToolEnvironment } from '../tool-settings.js';
import { TRUSTED_DIRECTORIES, trustedBinary } from './trusted-binaries.js';

/** Whether this worker can sandbox, and if not, why (for the start-up line, results and the Web UI details). */
export type SandboxAvailability = { available: true; binary: string } | { available: false; reason: string };

/** A `SWITCHYARD_BWRAP` that cannot be used safely: the worker does not start, a call does not run. */
export class SandboxSettingError extends Error {
  override readonly name = 'SandboxSettingError';
}

/**
 * The bubblewrap binary, as an absolute path: `SWITCHYARD_BWRAP`, which must be absolute (a bare name or a relative
 * path would be looked up through `PATH` or the cwd, both of which a sandboxed command can plant a program in), else
 * `bwrap` in a system folder (see trusted-binaries.ts), else undefined (not installed there). Never read from `PATH`.
 * `env` (a test's) stands in for the worker's settings (`toolSettings().sandbox.bwrap`).
 */
export function bubblewrapBinary(env?: ToolEnvironment): string | undefined {
  const configured = env === undefined ? toolSettings().sandbox.bwrap : env.SWITCHYARD_BWRAP;
  if (configured === undefined || configured === '') return trustedBinary('bwrap');
  if (!path.isAbsolute(configured))
    throw new SandboxSettingError(
      `SWITCHYARD_BWRAP must be an absolute path to the bubblewrap binary, got "${configured}": a name or a relative path would be looked up through PATH or the cwd, where a sandboxed command can plant its own program`,
    );
  return path.normalize(configured);
}

const PROBE_TIMEOUT_MS = 10_000;
const cache = new Map<string, Promise<SandboxAvailability>>();

function probe(binary: string): Promise<SandboxAvailability> {
  // The namespaces and mounts every sandboxed call uses: a kernel or container that refuses one is caught here, once.
  const args = [
    '--unshare-user',
    '--unshare-pid',
    '--unshare-net',
    '--unshare-ipc',
    '--die-with-parent',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--tmpfs',
    '/tmp',
    '--',
    '/bin/true',
  ];
  return new Promise((resolve) => {
    execFile(
      binary,
      args,
      // A fixed PATH: the worker's own (and a cwd in it) never decides what bubblewrap runs.
      { timeout: PROBE_TIMEOUT_MS, env: { PATH: '/usr/bin:/bin' } },
      (error, _stdout, stderr) => {
        if (error === null) {
          resolve({ available: true, binary });
          return;
        }
        const code = (error as NodeJS.ErrnoException).code;
        const detail =
          code === 'ENOENT'
            ? 'it is not installed (apt-get install bubblewrap, dnf install bubblewrap)'
            : `\`${binary} --ro-bind / / true\` failed: ${String(stderr).trim() || error.message}`;
        resolve({ available: false, reason: `bubblewrap (${binary}) cannot sandbox here: ${detail}` });
      },
    );
  });
}

/**
 * Whether bubblewrap runs here: Linux only, the binary resolved to an absolute path (see `bubblewrapBinary`) and
 * probed once per path (a process-wide cache), so a call pays for the probe at most once. macOS (Seatbelt) and other
 * systems are not supported: there `auto` runs unsandboxed, loudly. Rejects with a `SandboxSettingError` when
 * `SWITCHYARD_BWRAP` is not an absolute path.
 */
export function bubblewrapAvailability(env?: ToolEnvironment): Promise<SandboxAvailability> {
  if (process.platform !== 'linux') {
    return Promise.resolve({
      available: false,
      reason: `the OS sandbox needs Linux with bubblewrap; this worker runs on ${process.platform}`,
    });
  }
  let binary: string | undefined;
  try {
    binary = bubblewrapBinary(env);
  } catch (error) {
    return Promise.reject(error as Error);
  }
  if (binary === undefined) {
    return Promise.resolve({
      available: false,
      reason: `bubblewrap (bwrap) cannot sandbox here: it is not installed in ${TRUSTED_DIRECTORIES.join(', ')} (apt-get install bubblewrap, dnf install bubblewrap), or set SWITCHYARD_BWRAP to its absolute path`,
    });
  }
  let result = cache.get(binary);
  if (result === undefined) {
    result = probe(binary);
    cache.set(binary, result);
  }
  return result;
}
