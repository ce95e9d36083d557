import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { serializeOutput } from '../../src/activities/serialize-output.js';
import { FileArtifactStore, pathSegment } from '../../src/artifacts/file-artifact-store.js';
import { sessionDiskQuota } from '../../src/artifacts/session-disk.js';
import { sessionDiskBytesFromEnv } from '../../src/config/environment.js';
import type { BackgroundTaskRecord } from '../../src/contracts/background-tasks.js';
import { BackgroundTaskStore } from '../../src/tools/background/background-task-store.js';
import { taskOutputTool } from '../../src/tools/background/background-task-tools.js';
import { bashTool } from '../../src/tools/builtin/bash.js';
import type { ToolOutputObject } from '../../src/tools/define-tool.js';
import { ToolUseError } from '../../src/tools/define-tool.js';
import { scratchDir } from '../support/scratch.js';
import { toolContext } from '../support/tool-context.js';

const started: BackgroundTaskRecord[] = [];
afterEach(() => {
  for (const record of started.splice(0)) {
    try {
      process.kill(-record.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

async function withQuota<T>(bytes: string, work: () => Promise<T>): Promise<T> {
  const previous = process.env.SWITCHYARD_SESSION_DISK_BYTES;
  process.env.SWITCHYARD_SESSION_DISK_BYTES = bytes;
  try {
    return await work();
  } finally {
    if (previous === undefined) delete process.env.SWITCHYARD_SESSION_DISK_BYTES;
    else process.env.SWITCHYARD_SESSION_DISK_BYTES = previous;
  }
}

/** Fills a session's background folder with `bytes` of earlier task output. */
async function earlierBackgroundOutput(dataDir: string, sessionId: string, bytes: number): Promise<void> {
  const directory = path.join(dataDir, 'background', pathSegment(sessionId), 'bg_old');
  await mkdir(directory, { recursive: true });
  await writeFile(path.join(directory, 'output.log'), 'x'.repeat(bytes));
}

describe('the session disk quota (SWITCHYARD_SESSION_DISK_BYTES)', () => {
  it('defaults to 1 GiB, 0 turns it off, anything else is a clear error', () => {
    expect(sessionDiskBytesFromEnv({})).toBe(1024 * 1024 * 1024);
    expect(sessionDiskBytesFromEnv({ SWITCHYARD_SESSION_DISK_BYTES: '0' })).toBe(0);
    expect(sessionDiskQuota({ dataDir: '/tmp', limitBytes: 0 })).toBeUndefined();
    expect(() => sessionDiskBytesFromEnv({ SWITCHYARD_SESSION_DISK_BYTES: '-1' })).toThrow(
      /SWITCHYARD_SESSION_DISK_BYTES must be a non-negative integer/,
    );
  });

  it("the artifact store refuses a store past the quota, counting the session's background output, not other sessions'", async () => {
    const dataDir = await scratchDir();
    const store = new FileArtifactStore(dataDir, { quota: sessionDiskQuota({ dataDir, limitBytes: 10_000 }) });
    await earlierBackgroundOutput(dataDir, 'a', 4_000);
    await store.put({ sessionId: 'a', callId: 'c1', content: 'y'.repeat(5_000) });
    await expect(store.put({ sessionId: 'a', callId: 'c2', content: 'y'.repeat(2_000) })).rejects.toThrow(
      "The session's disk quota is used up (9000 of 10000 bytes for stored outputs and background output, SWITCHYARD_SESSION_DISK_BYTES, 2000 more needed).",
    );
    // Another session has its own quota.
    await expect(store.put({ sessionId: 'b', callId: 'c1', content: 'y'.repeat(9_000) })).resolves.toMatchObject({
      bytes: 9_000,
    });
  });

  it('a Bash result the store cannot take over quota is truncated instead, and the call still succeeds', async () => {
    const dataDir = await scratchDir();
    const store = new FileArtifactStore(dataDir, { quota: sessionDiskQuota({ dataDir, limitBytes: 50_000 }) });
    await earlierBackgroundOutput(dataDir, 's', 45_000);
    const errors: unknown[] = [];
    const output = await serializeOutput({
      tool: bashTool,
      content: 'line\n'.repeat(10_000),
      store,
      sessionId: 's',
      callId: 'c',
      onStoreError: (error) => errors.push(error),
    });
    expect(output.budget).toMatchObject({ truncated: true, policy: 'truncate' });
    expect(output.modelContent).toContain('[Tool output truncated by resultBudget: 50000 bytes');
    expect(String(errors[0])).toContain("The session's disk quota is used up");
  });

  it('a background task gets only what is left of the quota, and none starts when nothing is', async () => {
    const dataDir = await scratchDir();
    const context = toolContext({ cwd: await scratchDir(), dataDir, sessionId: 'q', sandbox: { mode: 'off' } });
    await earlierBackgroundOutput(dataDir, 'q', 70_000);
    const start = await withQuota(
      '100000',
      async () =>
        (await bashTool.execute({ command: 'yes spam', run_in_background: true }, context)) as ToolOutputObject,
    );
    const taskId = start.backgroundTask?.taskId ?? '';
    started.push((await new BackgroundTaskStore(dataDir).get('q', taskId)) as BackgroundTaskRecord);
    const read = (await taskOutputTool.execute(
      { task_id: taskId, timeout: 10_000 },
      { ...context, callId: 'read' },
    )) as ToolOutputObject;
    expect(read.content).toBe(
      `${'spam\n'.repeat(6_000)}Task ${taskId} was stopped: its output passed the limit of 30000 bytes (SWITCHYARD_BASH_MAX_SPOOL_BYTES for one Bash command, or what was left of the session's disk quota, SWITCHYARD_SESSION_DISK_BYTES, when it started).`,
    );

    await earlierBackgroundOutput(dataDir, 'q', 100_000);
    const refused = await withQuota('100000', async () =>
      bashTool
        .execute({ command: 'echo never', run_in_background: true }, { ...context, callId: 'c2' })
        .catch((error: unknown) => error),
    );
    expect(refused).toBeInstanceOf(ToolUseError);
    expect(refused).toMatchObject({ code: 'disk_quota_exceeded' });
    expect(String((refused as Error).message)).toMatch(
      /^The session's disk quota is used up \(1\d{5} of 100000 bytes.*The background task did not start\.$/,
    );
  }, 20_000);
});
