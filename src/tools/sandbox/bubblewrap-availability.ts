import { processEnvironment } from '../../config/environment.js';
import { execFile } from 'node:child_process';

/** Whether this worker can sandbox, and if not, why (for the start-up line, results and the Web UI details). */
export type SandboxAvailability = { available: true; binary: string } | { available: false; reason: string };

/** The bubblewrap binary: `SWITCHYARD_BWRAP` (a path or a name on PATH), else `bwrap`. */
export function bubblewrapBinary(env: NodeJS.ProcessEnv = processEnvironment()): string {
  const configured = env.SWITCHYARD_BWRAP;
  return configured === undefined || configured === '' ? 'bwrap' : configured;
}

const PROBE_TIMEOUT_MS = 10_000;
const cache = new Map<string, Promise<SandboxAvailability>>();

function probe(binary: string, env: NodeJS.ProcessEnv): Promise<SandboxAvailability> {
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
      { timeout: PROBE_TIMEOUT_MS, env: { PATH: env.PATH ?? '/usr/bin:/bin' } },
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
 * Whether bubblewrap runs here: Linux only, probed once per binary and PATH (a process-wide cache), so a call pays for
 * the probe at most once. macOS (Seatbelt) and other systems are not supported: there `auto` runs unsandboxed, loudly.
 */
export function bubblewrapAvailability(env: NodeJS.ProcessEnv = processEnvironment()): Promise<SandboxAvailability> {
  if (process.platform !== 'linux') {
    return Promise.resolve({
      available: false,
      reason: `the OS sandbox needs Linux with bubblewrap; this worker runs on ${process.platform}`,
    });
  }
  const binary = bubblewrapBinary(env);
  const key = `${binary}\0${env.PATH ?? ''}`;
  let result = cache.get(key);
  if (result === undefined) {
    result = probe(binary, env);
    cache.set(key, result);
  }
  return result;
}
