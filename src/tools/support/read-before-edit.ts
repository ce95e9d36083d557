import { stat } from 'node:fs/promises';
import { texts } from '../../contracts/texts.js';
import { ToolUseError } from '../define-tool.js';
import type { ToolExecutionContext } from '../define-tool.js';

/**
 * Read before edit (`SessionOptions.readBeforeEdit`): Read and Write record each file's modification time in the
 * session state under this prefix plus the absolute path; Edit and Write refuse an existing file whose time differs
 * from the record (never read, or changed since). The record travels through the workflow like any session state,
 * so the check is the same on every worker and after continue-as-new.
 */
export const FILE_READ_STATE_PREFIX = 'fileRead:';

interface FileReadRecord {
  mtimeMs: number;
}

/** Throws Claude Code's error when the session must read `filePath` before changing it. */
export async function requireReadBeforeEdit(
  context: Pick<ToolExecutionContext, 'readBeforeEdit' | 'sessionState'>,
  filePath: string,
): Promise<void> {
  if (context.readBeforeEdit !== true) return;
  const info = await stat(filePath).catch(() => undefined);
  if (info === undefined || !info.isFile()) return;
  const record = context.sessionState[`${FILE_READ_STATE_PREFIX}${filePath}`] as FileReadRecord | undefined;
  if (record?.mtimeMs !== info.mtimeMs) throw new ToolUseError(texts.fileNotReadYet, 'file_not_read');
}

/** The session-state change recording that the session now knows `filePath` as it is (none unless the option is on). */
export async function fileReadRecord(
  context: Pick<ToolExecutionContext, 'readBeforeEdit'>,
  filePath: string,
): Promise<Record<string, unknown> | undefined> {
  if (context.readBeforeEdit !== true) return undefined;
  const info = await stat(filePath).catch(() => undefined);
  if (info === undefined) return undefined;
  const record: FileReadRecord = { mtimeMs: info.mtimeMs };
  return { [`${FILE_READ_STATE_PREFIX}${filePath}`]: record };
}
