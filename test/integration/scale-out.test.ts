import type { ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TurnResult } from '../../src/contracts/tool-result.js';
import { createHarness, scratchDir, uniqueName } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { killProcess, spawnWorkerProcess } from '../support/spawn-worker.js';

// Scale-out: one workflow-only worker on the sessions' queue, two tool workers each owning one workspace on a queue
// of its own; a session's `toolTaskQueue` sends all of its activities to its workspace's workers.

/**
 * A workspace's own files: without the empty, read-only `.git`, `.claude` and `.switchyard` folders the OS sandbox
 * pins in a cwd that has none (SECURITY.md, "Protected paths"), which a sandboxed Bash call leaves behind.
 */
async function workspaceFiles(workspace: string): Promise<string[]> {
  const pinned = new Set(['.git', '.claude', '.switchyard']);
  const entries = await readdir(workspace, { withFileTypes: true });
  const kept: string[] = [];
  for (const entry of entries) {
    if (pinned.has(entry.name) && entry.isDirectory() && (await readdir(path.join(workspace, entry.name))).length === 0)
      continue;
    kept.push(entry.name);
  }
  return kept.sort();
}

describe('tool workers pinned to their workspace (toolTaskQueue, worker roles)', () => {
  let harness: Harness;
  let workspaceA: string;
  let workspaceB: string;
  const queueA = uniqueName('ws-a');
  const queueB = uniqueName('ws-b');
  const workers: ChildProcess[] = [];
  const toolWorker = (taskQueue: string, cwd: string) =>
    spawnWorkerProcess(
      { ...harness, taskQueue },
      { tools: 'builtin', env: { SWITCHYARD_WORKER_ROLE: 'tools', SWITCHYARD_WORKER_CWD: cwd } },
    );

  beforeAll(async () => {
    harness = await createHarness();
    workspaceA = await scratchDir('workspace-a-');
    workspaceB = await scratchDir('workspace-b-');
    workers.push(await spawnWorkerProcess(harness, { tools: 'builtin', env: { SWITCHYARD_WORKER_ROLE: 'workflows' } }));
  });
  afterAll(async () => {
    for (const worker of workers) await killProcess(worker);
    await harness.close();
  });

  it(
    "each session's files change only in its own workspace; killing one tool worker stalls only its sessions",
    { timeout: 300_000 },
    async () => {
      let workerA = await toolWorker(queueA, workspaceA);
      workers.push(workerA);
      workers.push(await toolWorker(queueB, workspaceB));
      // No cwd: the tool worker's own workspace is the session's working directory.
      const sessionA = await harness.startSession({ toolTaskQueue: queueA, permissionMode: 'bypassPermissions' });
      const sessionB = await harness.startSession({ toolTaskQueue: queueB, permissionMode: 'bypassPermissions' });
      const write = (session: typeof sessionA, turnId: string, file: string) =>
        session.executeTurn({
          turnId,
          calls: [
            { id: 'w', name: 'Write', input: { file_path: file, content: `${turnId}\n` } },
            { id: 'r', name: 'Bash', input: { command: 'pwd && ls' } },
          ],
        });
      const [a1, b1] = await Promise.all([write(sessionA, 'a1', 'a.txt'), write(sessionB, 'b1', 'b.txt')]);
      expect(a1.results.map((r) => r.status)).toEqual(['success', 'success']);
      expect(
        b1.results.map((r) => r.status),
        JSON.stringify(b1.results.map((r) => r.modelContent)),
      ).toEqual(['success', 'success']);
      expect(a1.results[1]?.modelContent).toContain(workspaceA);
      expect(b1.results[1]?.modelContent).toContain(workspaceB);
      expect(await workspaceFiles(workspaceA)).toEqual(['a.txt']);
      expect(await workspaceFiles(workspaceB)).toEqual(['b.txt']);

      // Tool worker A goes away: A's next turn waits, B's goes on.
      await killProcess(workerA);
      let a2Result: TurnResult | undefined;
      const a2 = write(sessionA, 'a2', 'a2.txt').then((result) => (a2Result = result));
      const b2 = await write(sessionB, 'b2', 'b2.txt');
      expect(b2.results.map((r) => r.status)).toEqual(['success', 'success']);
      await sleep(3_000);
      expect(a2Result, "session A's turn must wait for its workspace's worker").toBeUndefined();
      expect(await workspaceFiles(workspaceA)).toEqual(['a.txt']);

      // It comes back: A's turn completes, in A's workspace.
      workerA = await toolWorker(queueA, workspaceA);
      workers.push(workerA);
      await a2;
      expect(a2Result?.results.map((r) => r.status)).toEqual(['success', 'success']);
      expect(await readFile(path.join(workspaceA, 'a2.txt'), 'utf8')).toBe('a2\n');
      expect(await workspaceFiles(workspaceB)).toEqual(['b.txt', 'b2.txt']);
    },
  );
});
