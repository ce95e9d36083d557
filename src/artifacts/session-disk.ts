/**
 * A session's disk quota: the bytes its stored outputs (`<dataDir>/artifacts/<session>/`) and its background tasks'
 * output (`<dataDir>/background/<session>/`) may take together. It is checked where those bytes are about to be
 * written: before an output is stored (a store over quota fails, and the result is truncated instead), and when a
 * background task starts (it may write at most what is left, and does not start when nothing is). Tasks already
 * running are not recounted, so several started at once can go over together by at most their own limits.
 */
import path from 'node:path';
import { directoryBytes } from './directory-bytes.js';
import { pathSegment } from './path-segment.js';

export const DISK_QUOTA_EXCEEDED = 'disk_quota_exceeded';

export interface SessionDiskQuota {
  /** The quota in bytes (`SWITCHYARD_SESSION_DISK_BYTES`). */
  limitBytes: number;
  /** Bytes the session's artifacts and background output take now. */
  usedBytes(sessionId: string): Promise<number>;
  /** Bytes the session may still write (0 when the quota is used up). */
  remainingBytes(sessionId: string): Promise<number>;
}

/** The quota of every session under `dataDir`; undefined when `limitBytes` is 0 (no quota). */
export function sessionDiskQuota(options: { dataDir: string; limitBytes: number }): SessionDiskQuota | undefined {
  const { dataDir, limitBytes } = options;
  if (limitBytes === 0) return undefined;
  const usedBytes = async (sessionId: string): Promise<number> => {
    const segment = pathSegment(sessionId);
    const [artifacts, background] = await Promise.all([
      directoryBytes(path.join(dataDir, 'artifacts', segment)),
      directoryBytes(path.join(dataDir, 'background', segment)),
    ]);
    return artifacts + background;
  };
  return {
    limitBytes,
    usedBytes,
    async remainingBytes(sessionId) {
      return Math.max(0, limitBytes - (await usedBytes(sessionId)));
    },
  };
}

/** The text of a store or start the quota refused. */
export function diskQuotaText(options: { limitBytes: number; usedBytes: number; neededBytes?: number }): string {
  const needed = options.neededBytes === undefined ? '' : `, ${options.neededBytes} more needed`;
  return `The session's disk quota is used up (${options.usedBytes} of ${options.limitBytes} bytes for stored outputs and background output, SWITCHYARD_SESSION_DISK_BYTES${needed}).`;
}
