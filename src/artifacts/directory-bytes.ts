import type { Dirent } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

/** Bytes of the files below `directory` (symlinks counted as links, never followed); 0 when it does not exist. */
export async function directoryBytes(directory: string): Promise<number> {
  let entries: Dirent[];
  try {
    entries = await readdir(directory, { withFileTypes: true });
  } catch {
    return 0;
  }
  const sizes = await Promise.all(
    entries.map(async (entry) => {
      const file = path.join(directory, entry.name);
      if (entry.isDirectory()) return directoryBytes(file);
      return lstat(file).then(
        (stats) => stats.size,
        () => 0,
      );
    }),
  );
  return sizes.reduce((sum, size) => sum + size, 0);
}
