import { access, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { ToolCall } from '../../src/contracts/tool-call.js';
import { bashTool } from '../../src/tools/builtin/bash.js';
import { readTool } from '../../src/tools/builtin/read.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { waitFor } from '../support/wait-for.js';

const exists = (file: string): Promise<boolean> =>
  access(file).then(
    () => true,
    () => false,
  );

/**
 * Whether the session's workflow has a workflow task open (started, not yet completed): while one is, the server holds
 * every query back. A local activity keeps its workflow task open for as long as it runs.
 */
async function workflowTaskOpen(session: SessionHandle): Promise<boolean> {
  const events = (await session.workflow.fetchHistory()).events ?? [];
  let open = false;
  for (const event of events) {
    const type = String(event.eventType ?? '');
    if (/WORKFLOW_TASK_STARTED|WorkflowTaskStarted/.test(type) || type === '7') open = true;
    if (/WORKFLOW_TASK_(COMPLETED|FAILED|TIMED_OUT)|WorkflowTask(Completed|Failed|TimedOut)/.test(type)) open = false;
    if (['8', '9', '10'].includes(type)) open = false;
  }
  return open;
}

describe('queries and interrupts while a PreToolUse hook runs (real server, real hooks)', () => {
  let harness: Harness;
  let cwd: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    await writeFile(path.join(cwd, 'a.txt'), 'a\n');
    harness = await createHarness({ tools: [bashTool, readTool], defaultCwd: cwd });
  }, 60_000);
  afterAll(async () => harness.close());

  /** A hook that says it started, then waits until the test creates `release` (or its own timeout kills it). */
  function waitingHook(dir: string): Record<string, unknown> {
    const started = path.join(dir, 'started');
    const release = path.join(dir, 'release');
    return {
      PreToolUse: [
        {
          matcher: 'Read',
          hooks: [
            {
              type: 'command',
              command: `echo $$ > '${started}.pid'; touch '${started}'; while [ ! -e '${release}' ]; do sleep 0.05; done`,
              timeout: 120,
            },
          ],
        },
      ],
    };
  }

  const cases: Array<[string, ToolCall[]]> = [
    ["the turn's first group (prepared with the Plan)", [{ id: 'r', name: 'Read', input: { file_path: 'a.txt' } }]],
    [
      'a later group',
      [
        { id: 'w', name: 'Bash', input: { command: 'echo b > b.txt' } },
        { id: 'r', name: 'Read', input: { file_path: 'a.txt' } },
      ],
    ],
  ];

  it.each(cases)(
    '%s: a query answers while the hook still waits for it, and no workflow task is held open',
    async (_name, calls) => {
      const dir = await scratchDir('switchyard-hook-gate-');
      await harness.withWorker(async () => {
        const session = await harness.startSession({
          cwd,
          permissionMode: 'bypassPermissions',
          hooks: waitingHook(dir),
        });
        const turn = session.executeTurn({ turnId: 't', calls });
        await waitFor(
          () => exists(path.join(dir, 'started')),
          (started) => started,
          { what: 'the hook to start', timeoutMs: 60_000 },
        );
        const asked = Date.now();
        const active = await session.activeTurn();
        const answeredMs = Date.now() - asked;
        // The hook cannot have finished: it waits for `release`, which exists only from the next line on.
        expect(await exists(path.join(dir, 'release'))).toBe(false);
        expect(active?.turnId).toBe('t');
        expect(await workflowTaskOpen(session)).toBe(false);
        console.log(`[queries-during-hooks] ${_name}: query answered in ${answeredMs} ms while the hook ran`);
        await writeFile(path.join(dir, 'release'), '');
        const result = await turn;
        expect(result.results.map((entry) => entry.status)).toEqual(calls.map(() => 'success'));
      });
    },
    120_000,
  );

  it('an interrupt while the hook waits ends the turn and stops the hook, before the hook could have finished', async () => {
    const dir = await scratchDir('switchyard-hook-gate-');
    await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'bypassPermissions', hooks: waitingHook(dir) });
      const turn = session.executeTurn({
        turnId: 't',
        calls: [{ id: 'r', name: 'Read', input: { file_path: 'a.txt' } }],
      });
      await waitFor(
        () => exists(path.join(dir, 'started')),
        (started) => started,
        { what: 'the hook to start', timeoutMs: 60_000 },
      );
      const asked = Date.now();
      await session.interrupt('user pressed escape');
      const result = await turn;
      console.log(`[queries-during-hooks] interrupt: turn ended ${Date.now() - asked} ms after the signal`);
      expect(await exists(path.join(dir, 'release'))).toBe(false);
      expect(result.results[0]?.status).not.toBe('success');
      // The cancellation reaches the hook's activity with a heartbeat's answer and kills the hook.
      const pid = Number((await readFile(path.join(dir, 'started.pid'), 'utf8')).trim());
      await waitFor(
        async () => {
          try {
            process.kill(pid, 0);
            return true;
          } catch {
            return false;
          }
        },
        (alive) => !alive,
        { what: 'the interrupted hook to be killed', timeoutMs: 60_000 },
      );
    });
  }, 120_000);
});
