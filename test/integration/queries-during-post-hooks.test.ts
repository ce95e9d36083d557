import { access, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolCall } from '../../src/contracts/tool-call.js';
import { bashTool } from '../../src/tools/builtin/bash.js';
import { readTool } from '../../src/tools/builtin/read.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { callsRunByPlan, localExecuteCallMarkers } from '../support/history-text.js';
import { waitFor } from '../support/wait-for.js';

const exists = (file: string): Promise<boolean> =>
  access(file).then(
    () => true,
    () => false,
  );

/**
 * A read-only Read would run as a local activity, which holds its workflow task open while it runs: a PostToolUse hook
 * inside it kept every query waiting until the hook ended. The hook here says it started, waits for the test's
 * `release` file, and gives up on its own after about 8 s (within the post hook bound), leaving `ended` behind. The
 * query is asked while the hook waits: it must answer while `ended` does not exist yet. Had the query waited for the
 * hook, the hook would have ended first (no release comes before the answer), so the order alone tells.
 */
function waitingPostHook(dir: string): Record<string, unknown> {
  const started = path.join(dir, 'started');
  const release = path.join(dir, 'release');
  const ended = path.join(dir, 'ended');
  return {
    PostToolUse: [
      {
        matcher: 'Read',
        hooks: [
          {
            type: 'command',
            command: `touch '${started}'; i=0; while [ ! -e '${release}' ] && [ $i -lt 160 ]; do sleep 0.05; i=$((i+1)); done; touch '${ended}'`,
            timeout: 60,
          },
        ],
      },
    ],
  };
}

describe('queries while a PostToolUse hook of a read-only call runs (real server, real hooks)', () => {
  let harness: Harness;
  let cwd: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    await writeFile(path.join(cwd, 'a.txt'), 'alpha\n');
    harness = await createHarness({ tools: [bashTool, readTool], defaultCwd: cwd });
  }, 60_000);
  afterAll(async () => harness.close());

  const cases: Array<[string, ToolCall[]]> = [
    ["the turn's first group (Plan's own run)", [{ id: 'r', name: 'Read', input: { file_path: 'a.txt' } }]],
    [
      'a later group (formerly a local activity)',
      [
        { id: 'w', name: 'Bash', input: { command: 'echo b > b.txt' } },
        { id: 'r', name: 'Read', input: { file_path: 'a.txt' } },
      ],
    ],
  ];

  it.each(cases)(
    '%s: queries answer while the hook still waits, and the Read runs off the workflow task',
    async (_name, calls) => {
      const dir = await scratchDir('switchyard-post-hook-gate-');
      await harness.withWorker(async () => {
        const session = await harness.startSession({
          cwd,
          permissionMode: 'bypassPermissions',
          hooks: waitingPostHook(dir),
        });
        const turn = session.executeTurn({ turnId: 't', calls });
        await waitFor(
          () => exists(path.join(dir, 'started')),
          (started) => started,
          { what: 'the hook to start', timeoutMs: 60_000 },
        );
        const asked = Date.now();
        const pending = await session.pendingApprovals();
        const active = await session.activeTurn();
        console.log(
          `[queries-during-post-hooks] ${_name}: queries answered in ${Date.now() - asked} ms while the hook ran`,
        );
        // The hook has not ended: the queries did not wait for it.
        expect(await exists(path.join(dir, 'ended'))).toBe(false);
        expect(pending).toEqual([]);
        expect(active?.turnId).toBe('t');
        await writeFile(path.join(dir, 'release'), '');
        const result = await turn;
        expect(result.results.map((entry) => entry.status)).toEqual(calls.map(() => 'success'));
        expect(result.results.at(-1)?.modelContent).toContain('alpha');
        const history = (await session.workflow.fetchHistory()).events ?? [];
        expect(localExecuteCallMarkers(history)).toBe(0);
        expect(callsRunByPlan(history)).toEqual([]);
      });
    },
    120_000,
  );

  it('a Read without a PostToolUse hook still runs locally (Plan runs its first group)', async () => {
    await harness.withWorker(async () => {
      const session = await harness.startSession({
        cwd,
        permissionMode: 'bypassPermissions',
        hooks: { PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'true' }] }] },
      });
      const result = await session.executeTurn({
        turnId: 't',
        calls: [{ id: 'r', name: 'Read', input: { file_path: 'a.txt' } }],
      });
      expect(result.results[0]?.status).toBe('success');
      const history = (await session.workflow.fetchHistory()).events ?? [];
      expect(callsRunByPlan(history)).toEqual(['r']);
    });
  }, 120_000);
});
