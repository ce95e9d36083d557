import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** A fresh temporary directory. */
export function scratchDir(prefix = 'switchyard-'): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), prefix));
}
