import { randomUUID } from 'node:crypto';
import { copyFile, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ARTIFACT_URI_SCHEME } from '../contracts/artifact-store.js';
import type { ArtifactStore, StoredArtifact } from '../contracts/artifact-store.js';

/** `SWITCHYARD_DATA_DIR`, else `$XDG_DATA_HOME/switchyard`, else `~/.local/share/switchyard`. */
export function dataDirFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SWITCHYARD_DATA_DIR) return path.resolve(env.SWITCHYARD_DATA_DIR);
  const base = env.XDG_DATA_HOME ? path.resolve(env.XDG_DATA_HOME) : path.join(os.homedir(), '.local', 'share');
  return path.join(base, 'switchyard');
}

const SAFE_SEGMENT = /^[A-Za-z0-9._~%-]+$/;

/** Artifacts as files: `<data dir>/artifacts/<session>/<callId>-tool-result-<uuid>`. */
export class FileArtifactStore implements ArtifactStore {
  readonly root: string;

  constructor(dataDir: string) {
    this.root = path.join(dataDir, 'artifacts');
  }

  async put(options: { sessionId: string; callId: string; content: string } | { sessionId: string; callId: string; file: string }): Promise<StoredArtifact> {
    const session = encodeURIComponent(options.sessionId);
    const id = `${encodeURIComponent(options.callId)}-tool-result-${randomUUID()}`;
    const dir = path.join(this.root, session);
    await mkdir(dir, { recursive: true });
    const target = path.join(dir, id);
    if ('content' in options) {
      await writeFile(target, options.content, { flag: 'wx' });
    } else {
      // Move the spool when it is on the same filesystem; copy otherwise.
      await rename(options.file, target).catch(async () => copyFile(options.file, target));
    }
    const { size } = await stat(target);
    return { uri: `${ARTIFACT_URI_SCHEME}//${session}/${id}`, path: target, bytes: size };
  }

  locate(uri: string): string {
    const match = /^switchyard-artifact:\/\/([^/]+)\/([^/]+)$/.exec(uri);
    if (match === null || match[1] === undefined || match[2] === undefined || !SAFE_SEGMENT.test(match[1]) || !SAFE_SEGMENT.test(match[2]) || match[1].startsWith('.') || match[2].startsWith('.')) {
      throw new Error(`Not a Switchyard artifact URI: ${uri} (expected switchyard-artifact://<session>/<id>)`);
    }
    return path.join(this.root, match[1], match[2]);
  }

  async read(uri: string): Promise<string> {
    const file = this.locate(uri);
    try {
      return await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`Artifact not found: ${uri} (looked in ${file})`, { cause: error });
      throw error;
    }
  }
}
