import { randomUUID } from 'node:crypto';
import { copyFile, lstat, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ARTIFACT_URI_SCHEME } from '../contracts/artifact-store.js';
import type { ArtifactPutOptions, ArtifactStore, StoredArtifact } from '../contracts/artifact-store.js';
import { directoryBytes } from './directory-bytes.js';
import { pathSegment } from './path-segment.js';
import { diskQuotaText } from './session-disk.js';
import type { SessionDiskQuota } from './session-disk.js';

export { pathSegment } from './path-segment.js';

const SAFE_SEGMENT = /^[A-Za-z0-9._~%-]+$/;

/** What `prune` removed (or, on a dry run, would remove). */
export interface PruneReport {
  removed: Array<{ session: string; path: string; bytes: number; lastModified: Date }>;
  /** Session directories left in place. */
  kept: number;
}

/** Artifacts as files: `<data dir>/artifacts/<session>/<callId>-tool-result-<uuid>`. */
export class FileArtifactStore implements ArtifactStore {
  readonly root: string;

  /** The per-session disk quota a store checks before it writes (see session-disk.ts); none when absent. */
  readonly quota: SessionDiskQuota | undefined;

  constructor(dataDir: string, options: { quota?: SessionDiskQuota } = {}) {
    this.root = path.join(dataDir, 'artifacts');
    this.quota = options.quota;
  }

  async put(options: ArtifactPutOptions): Promise<StoredArtifact> {
    if (this.quota !== undefined) {
      const neededBytes =
        'content' in options
          ? Buffer.byteLength(options.content, 'utf8')
          : 'data' in options
            ? options.data.byteLength
            : (await stat(options.file)).size;
      const usedBytes = await this.quota.usedBytes(options.sessionId);
      if (usedBytes + neededBytes > this.quota.limitBytes)
        throw new Error(diskQuotaText({ limitBytes: this.quota.limitBytes, usedBytes, neededBytes }));
    }
    const session = pathSegment(options.sessionId);
    const id = `${pathSegment(options.callId)}-tool-result-${randomUUID()}`;
    const dir = path.join(this.root, session);
    await mkdir(dir, { recursive: true });
    const target = path.join(dir, id);
    if ('content' in options) {
      await writeFile(target, options.content, { flag: 'wx' });
    } else if ('data' in options) {
      await writeFile(target, options.data, { flag: 'wx' });
    } else {
      // Move the spool when it is on the same filesystem; copy otherwise.
      await rename(options.file, target).catch(async () => copyFile(options.file, target));
    }
    const { size } = await stat(target);
    return { uri: `${ARTIFACT_URI_SCHEME}//${session}/${id}`, path: target, bytes: size };
  }

  locate(uri: string): string {
    const match = /^switchyard-artifact:\/\/([^/]+)\/([^/]+)$/.exec(uri);
    if (
      match === null ||
      match[1] === undefined ||
      match[2] === undefined ||
      !SAFE_SEGMENT.test(match[1]) ||
      !SAFE_SEGMENT.test(match[2]) ||
      match[1].startsWith('.') ||
      match[2].startsWith('.')
    ) {
      throw new Error(`Not a Switchyard artifact URI: ${uri} (expected switchyard-artifact://<session>/<id>)`);
    }
    return path.join(this.root, match[1], match[2]);
  }

  /**
   * Deletes session directories whose last change (the directory's mtime: a new artifact updates it) is older than
   * `olderThanMs`. Only real directories directly under the root count; a symlink is never followed. With `dryRun`,
   * reports what it would delete.
   */
  async prune(options: { olderThanMs: number; dryRun?: boolean; now?: Date }): Promise<PruneReport> {
    if (!Number.isFinite(options.olderThanMs) || options.olderThanMs < 0)
      throw new RangeError(`olderThanMs must be a non-negative number, got ${options.olderThanMs}`);
    const cutoff = (options.now ?? new Date()).getTime() - options.olderThanMs;
    let entries;
    try {
      entries = await readdir(this.root, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { removed: [], kept: 0 };
      throw error;
    }
    const report: PruneReport = { removed: [], kept: 0 };
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (!entry.isDirectory()) continue;
      const dir = path.join(this.root, entry.name);
      const { mtime } = await lstat(dir);
      if (mtime.getTime() > cutoff) {
        report.kept += 1;
        continue;
      }
      const bytes = await directoryBytes(dir);
      if (options.dryRun !== true) await rm(dir, { recursive: true, force: true });
      report.removed.push({ session: entry.name, path: dir, bytes, lastModified: mtime });
    }
    return report;
  }

  async read(uri: string): Promise<string> {
    return Buffer.from(await this.readBytes(uri)).toString('utf8');
  }

  async readBytes(uri: string): Promise<Uint8Array> {
    const file = this.locate(uri);
    try {
      return await readFile(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT')
        throw new Error(`Artifact not found: ${uri} (looked in ${file})`, { cause: error });
      throw error;
    }
  }
}
