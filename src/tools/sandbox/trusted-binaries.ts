/**
 * The programs Switchyard itself starts to confine or wrap a model's process (bubblewrap, the background wrapper's
 * `stdbuf`, `head`, `wc`, `mv`) are found here, once per process, in the system's own folders: never through `PATH`.
 * Started the README way (`npx switchyard worker` in the project folder), `PATH` begins with
 * `<cwd>/node_modules/.bin`, a folder the sandboxed command may write; a program found there would be the model's.
 *
 * A program counts only when the file and the folders it is in belong to root (or the worker's own user) and no one
 * else may write them, so a file planted in a system folder that a sandbox binds writable is not taken either.
 */
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import path from 'node:path';

/** Where trusted programs are looked up, in this order (the distribution's own first). */
export const TRUSTED_DIRECTORIES: readonly string[] = [
  '/usr/bin',
  '/bin',
  '/usr/sbin',
  '/sbin',
  '/usr/local/bin',
  '/usr/local/sbin',
];

/** Whether `file` (a file or a folder) belongs to root or to this process's user, and no one else may write it. */
function ownedAndGuarded(file: string): boolean {
  const stats = statSync(file);
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  return (stats.uid === 0 || stats.uid === uid) && (stats.mode & 0o022) === 0;
}

/** The real path of `candidate` when it is a program that can be trusted (see the module comment), else undefined. */
export function trustedProgram(candidate: string): string | undefined {
  try {
    const real = realpathSync(candidate);
    if (!statSync(real).isFile()) return undefined;
    accessSync(real, constants.X_OK);
    if (!ownedAndGuarded(real)) return undefined;
    // Every folder from the program up to `/`: a folder that others may write lets them swap the file.
    for (let folder = path.dirname(real); ; folder = path.dirname(folder)) {
      if (!ownedAndGuarded(folder)) return undefined;
      if (folder === '/') break;
    }
    return real;
  } catch {
    return undefined;
  }
}

const found = new Map<string, string | undefined>();

/**
 * The absolute (real) path of the program `name` in the first of `TRUSTED_DIRECTORIES` that holds a trusted one, or
 * undefined when none does. Looked up once per name for the life of the process: a later `PATH`, cwd or a file
 * planted afterwards never changes it.
 */
export function trustedBinary(name: string): string | undefined {
  if (name === '' || name.includes('/')) throw new Error(`a trusted program is named without a folder, got "${name}"`);
  if (!found.has(name)) {
    let resolved: string | undefined;
    for (const directory of TRUSTED_DIRECTORIES) {
      resolved = trustedProgram(path.join(directory, name));
      if (resolved !== undefined) break;
    }
    found.set(name, resolved);
  }
  return found.get(name);
}
