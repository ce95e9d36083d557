import { rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const created: string[] = [];
// Scratch directories (some hold 50 MB artifacts) go away with the test process, so repeated runs leave no trace.
process.once('exit', () => {
  for (const dir of created) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temporary directory, removed when the test process exits. */
export async function scratchDir(prefix = 'switchyard-'): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  created.push(dir);
  return dir;
}
