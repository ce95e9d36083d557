import { randomBytes } from 'node:crypto';
import { readdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BackgroundTaskRecord } from '../../contracts/background-tasks.js';

/** Task ids the store makes (`bg_` and 8 hex digits) and accepts: anything else is unknown, never a path. */
const TASK_ID = /^bg_[0-9a-f]{8}$/;

export const RECORD_FILE = 'task.json';
export const OUTPUT_FILE = 'output.log';
export const EXIT_CODE_FILE = 'exit-code';
export const OUTPUT_LIMIT_FILE = 'output-limit-reached';

/** A task's record as written, or undefined when it is missing or unreadable (a task being created). */
export async function readRecord(file: string): Promise<BackgroundTaskRecord | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as BackgroundTaskRecord;
  } catch {
    return undefined;
  }
}

/**
 * Where background tasks live on disk and their records (`task.json`): `<dataDir>/background/<session>/<taskId>/`,
 * one folder per task, per session. The part of `BackgroundTaskStore` (background-task-store.ts) that knows the
 * layout; record updates within this process go one at a time per task.
 */
export class BackgroundTaskRecords {
  readonly root: string;
  /** Serialises record updates per task within this process (two concurrent TaskOutput calls on one task). */
  readonly #locks = new Map<string, Promise<unknown>>();

  constructor(dataDir: string) {
    this.root = path.join(dataDir, 'background');
  }

  static isTaskId(taskId: string): boolean {
    return TASK_ID.test(taskId);
  }

  sessionDirectory(sessionId: string): string {
    // The same encoding as the artifact store's session segment: any session id is one safe path segment.
    const segment = encodeURIComponent(sessionId)
      .replace(/[!'()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`)
      .replace(/^\./, '%2E');
    return path.join(this.root, segment);
  }

  taskDirectory(sessionId: string, taskId: string): string {
    if (!BackgroundTaskRecords.isTaskId(taskId)) throw new Error(`Not a background task id: "${taskId}"`);
    return path.join(this.sessionDirectory(sessionId), taskId);
  }

  outputPath(record: Pick<BackgroundTaskRecord, 'sessionId' | 'taskId'>): string {
    return path.join(this.taskDirectory(record.sessionId, record.taskId), OUTPUT_FILE);
  }

  /** The task's record, or undefined when this session has no such task. */
  async get(sessionId: string, taskId: string): Promise<BackgroundTaskRecord | undefined> {
    if (!BackgroundTaskRecords.isTaskId(taskId)) return undefined;
    try {
      const record = JSON.parse(
        await readFile(path.join(this.taskDirectory(sessionId, taskId), RECORD_FILE), 'utf8'),
      ) as BackgroundTaskRecord;
      return record.sessionId === sessionId && record.taskId === taskId ? record : undefined;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  /** Every task of a session, oldest first. */
  async list(sessionId: string): Promise<BackgroundTaskRecord[]> {
    let entries: string[];
    try {
      entries = await readdir(this.sessionDirectory(sessionId));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const records = await Promise.all(
      entries.filter((entry) => BackgroundTaskRecords.isTaskId(entry)).map((entry) => this.get(sessionId, entry)),
    );
    return records
      .filter((record): record is BackgroundTaskRecord => record !== undefined)
      .sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  }

  protected async writeRecord(record: BackgroundTaskRecord): Promise<void> {
    const file = path.join(this.taskDirectory(record.sessionId, record.taskId), RECORD_FILE);
    const temporary = `${file}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(temporary, `${JSON.stringify(record, null, 2)}\n`);
    await rename(temporary, file);
  }

  protected async withLock<T>(
    record: Pick<BackgroundTaskRecord, 'sessionId' | 'taskId'>,
    work: () => Promise<T>,
  ): Promise<T> {
    const key = `${record.sessionId}/${record.taskId}`;
    const previous = this.#locks.get(key) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    this.#locks.set(key, settled);
    try {
      return await next;
    } finally {
      if (this.#locks.get(key) === settled) this.#locks.delete(key);
    }
  }
}
