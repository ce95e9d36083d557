/**
 * A process limit that holds for a worker running as root. The sandbox's `ulimit -u` (RLIMIT_NPROC) counts the
 * processes of its own user namespace, but the kernel never applies it to root; where the worker may create pids
 * cgroups (cgroup v1 `pids` hierarchy, writable), each sandboxed command runs in a cgroup of its own with `pids.max`,
 * and `pids.events` says afterwards whether a fork was refused. Without one, RLIMIT_NPROC is the limit (and a root
 * worker has none: its start-up line says so).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

const PIDS_ROOT = '/sys/fs/cgroup/pids';
const GROUP_PARENT = path.join(PIDS_ROOT, 'switchyard');

let available: Promise<boolean> | undefined;

/** Whether this worker can make pids cgroups (probed once). */
export function pidsCgroupAvailable(): Promise<boolean> {
  available ??= (async () => {
    if (process.platform !== 'linux') return false;
    try {
      await mkdir(GROUP_PARENT, { recursive: true });
      const probe = path.join(GROUP_PARENT, `probe-${randomBytes(4).toString('hex')}`);
      await mkdir(probe);
      await writeFile(path.join(probe, 'pids.max'), '1');
      await rmdir(probe);
      return true;
    } catch {
      return false;
    }
  })();
  return available;
}

export interface CallCgroup {
  /** Write a pid here to move that process (and its future children) into the cgroup. */
  procsFile: string;
  /** Forks the limit refused so far. */
  refusedForks(): Promise<number>;
  /** Removes the cgroup once it is empty (a cgroup still in use stays until a later sweep). */
  remove(): Promise<void>;
}

/**
 * A cgroup younger than this is never swept: between its creation and the moment its command joins it, another
 * call's sweep (in this worker or another one on the host) would find it empty and remove it.
 */
const SWEEP_MIN_AGE_MS = 10 * 60_000;

/** How often this worker looks for stale cgroups (a look lists the parent folder; once a minute is plenty). */
const SWEEP_EVERY_MS = 60_000;
let lastSweep = 0;

/** Removes the empty cgroups that earlier calls left (background tasks that have ended), old enough to be unused. */
async function sweep(): Promise<void> {
  if (Date.now() - lastSweep < SWEEP_EVERY_MS) return;
  lastSweep = Date.now();
  const entries = await readdir(GROUP_PARENT, { withFileTypes: true }).catch(() => []);
  const now = Date.now();
  const stale = entries.filter((entry) => {
    const created = /^call-(\d+)-/.exec(entry.name)?.[1];
    return entry.isDirectory() && created !== undefined && now - Number(created) > SWEEP_MIN_AGE_MS;
  });
  await Promise.all(stale.map((entry) => rmdir(path.join(GROUP_PARENT, entry.name)).catch(() => undefined)));
}

/** A fresh pids cgroup limited to `maxProcesses`, or undefined where the worker cannot make one. */
export async function createCallCgroup(maxProcesses: number): Promise<CallCgroup | undefined> {
  if (!(await pidsCgroupAvailable())) return undefined;
  await sweep();
  const directory = path.join(GROUP_PARENT, `call-${Date.now()}-${randomBytes(6).toString('hex')}`);
  try {
    await mkdir(directory);
    await writeFile(path.join(directory, 'pids.max'), String(maxProcesses));
  } catch {
    return undefined;
  }
  return {
    procsFile: path.join(directory, 'cgroup.procs'),
    async refusedForks() {
      const text = await readFile(path.join(directory, 'pids.events'), 'utf8').catch(() => '');
      const match = /^max (\d+)$/m.exec(text);
      return match?.[1] === undefined ? 0 : Number(match[1]);
    },
    async remove() {
      await rmdir(directory).catch(() => undefined);
    },
  };
}
