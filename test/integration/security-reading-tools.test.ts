import { mkdir, symlink, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { ToolResult } from '../../src/contracts/tool-result.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { waitFor } from '../support/wait-for.js';

/** `temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED`: a worker has picked the task up. */
const PENDING_ACTIVITY_STATE_STARTED = 2;

/**
 * Waits until the session's call has started and runs on a worker: a regular activity picked up by a worker, or a
 * local activity (no pending activity at all: it runs inside the workflow worker as soon as the call starts).
 */
async function waitUntilRunning(session: SessionHandle, callId: string): Promise<void> {
  await waitFor(
    async () => (await session.events()).events,
    (events) => events.some((event) => event.type === 'ToolCallStarted' && event.callId === callId),
    {
      what: `ToolCallStarted for ${callId}`,
    },
  );
  await waitFor(
    async () =>
      ((await session.workflow.describe()).raw.pendingActivities ?? []).filter(
        (activity) => activity.activityType?.name === 'executeCall',
      ),
    (activities) =>
      activities.length === 0 ||
      activities.some((activity) => Number(activity.state) === PENDING_ACTIVITY_STATE_STARTED),
    { what: `the activity of ${callId} to run` },
  );
}

describe('reading tools cannot hang the worker or read around a deny rule (real server)', () => {
  let harness: Harness;
  let cwd: string;
  let project: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    // `^(a+)+$` backtracks for about an hour on `a…a!` (40 a's) in a backtracking engine. The file is 512 MiB, mostly a hole that costs
    // no disk, so even a linear engine needs seconds: long enough for another session's call to run meanwhile.
    const attackLines = Array.from({ length: 2_000 }, () => `${'a'.repeat(40)}!`).join('\n');
    await mkdir(path.join(cwd, 'attack'));
    await writeFile(path.join(cwd, 'attack', 'evil.log'), `${attackLines}\n${'a'.repeat(40)}\n`);
    await truncate(path.join(cwd, 'attack', 'evil.log'), 512 * 1024 * 1024);
    await writeFile(path.join(cwd, 'notes.txt'), 'first line\nsecond line\n');
    project = await scratchDir();
    await mkdir(path.join(project, 'src'));
    await writeFile(path.join(project, '.env'), 'API_KEY=sk-live-do-not-leak\n');
    await writeFile(path.join(project, 'src', 'app.ts'), 'const key = process.env.API_KEY;\n');
    harness = await createHarness({ defaultCwd: cwd });
  });
  afterAll(async () => harness.close());

  it('a link retargeted after validation (here by a PreToolUse hook) cannot lead a Read outside cwd: what was opened is checked', async () => {
    const workspace = await scratchDir();
    const outside = await scratchDir();
    await writeFile(path.join(workspace, 'inside.txt'), 'harmless\n');
    await writeFile(path.join(outside, 'secret.txt'), 'OUTSIDE-SECRET\n');
    await symlink(path.join(workspace, 'inside.txt'), path.join(workspace, 'link.txt'));
    const result = await harness.withWorker(async () => {
      // dontAsk: a read outside cwd that no rule allows is denied instead of waiting for a human.
      const session = await harness.startSession({
        cwd: workspace,
        permissionMode: 'dontAsk',
        hooks: {
          PreToolUse: [
            {
              matcher: 'Read',
              hooks: [
                {
                  type: 'command',
                  command: `ln -sfn "${path.join(outside, 'secret.txt')}" "${path.join(workspace, 'link.txt')}"`,
                },
              ],
            },
          ],
        },
      });
      const turn = await session.executeTurn({
        turnId: 't',
        calls: [{ id: 'r', name: 'Read', input: { file_path: 'link.txt' } }],
      });
      return turn.results[0];
    });
    expect(result).toMatchObject({ status: 'error', errorCode: 'path_escape' });
    expect(result?.modelContent).toContain('leads outside the session');
    expect(result?.modelContent).not.toContain('OUTSIDE-SECRET');
  });

  it('a Read in another session completes within seconds while a Grep with ^(a+)+$ runs on the same worker', async () => {
    const outcome = await harness.withWorker(async () => {
      const grepSession = await harness.startSession({ cwd });
      const evilGrep = { pattern: '^(a+)+$', path: 'attack/evil.log', output_mode: 'content', '-n': true };
      const grepStarted = performance.now();
      let grepFinishedAt = Number.POSITIVE_INFINITY;
      const grepTurn = grepSession
        .executeTurn({
          turnId: 'grep',
          calls: [{ id: 'grep', name: 'Grep', input: evilGrep }],
        })
        .then((result) => {
          grepFinishedAt = performance.now();
          return result;
        });
      await waitUntilRunning(grepSession, 'grep');

      const readSession = await harness.startSession({ cwd });
      const readStarted = performance.now();
      const read = await readSession.executeTurn({
        turnId: 'read',
        calls: [{ id: 'read', name: 'Read', input: { file_path: 'notes.txt' } }],
      });
      const readFinishedAt = performance.now();
      const grep = await grepTurn;
      return {
        read: read.results[0],
        readMs: readFinishedAt - readStarted,
        readFinishedAt,
        grep: grep.results[0],
        grepMs: grepFinishedAt - grepStarted,
        grepFinishedAt,
      };
    });
    expect(outcome.read).toMatchObject({ status: 'success', modelContent: '     1\tfirst line\n     2\tsecond line' });
    expect(outcome.readMs).toBeLessThan(5_000);
    // The Read ran while the Grep was still working, not after it.
    expect(outcome.readFinishedAt).toBeLessThan(outcome.grepFinishedAt);
    const grep = outcome.grep as ToolResult;
    expect(grep.status).toBe('success');
    expect(grep.modelContent.split('\n')[0]).toBe(`${path.join(cwd, 'attack', 'evil.log')}:2001:${'a'.repeat(40)}`);
    expect(grep.modelContent).toMatch(/\(Not searched: 1 line longer than \d+ characters/);
    expect(outcome.grepMs).toBeLessThan(30_000);
  });

  it('with deny Read(.env), Grep and Glob over the tree reveal nothing of .env', async () => {
    const result = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd: project, rules: { deny: ['Read(.env)'] } });
      return session.executeTurn({
        turnId: 't',
        calls: [
          { id: 'grep-tree', name: 'Grep', input: { pattern: 'API_KEY', output_mode: 'content' } },
          { id: 'grep-count', name: 'Grep', input: { pattern: 'sk-live', output_mode: 'count' } },
          { id: 'glob', name: 'Glob', input: { pattern: '**/*' } },
          { id: 'grep-file', name: 'Grep', input: { pattern: 'API_KEY', path: '.env', output_mode: 'content' } },
        ],
      });
    });
    const byId = Object.fromEntries(result.results.map((entry) => [entry.callId, entry]));
    expect(byId['grep-tree']).toMatchObject({
      status: 'success',
      modelContent: `${path.join(project, 'src', 'app.ts')}:const key = process.env.API_KEY;`,
    });
    expect(byId['grep-count']).toMatchObject({ status: 'success', modelContent: 'No matches found' });
    expect(byId.glob).toMatchObject({ status: 'success', modelContent: path.join(project, 'src', 'app.ts') });
    // Denied by the permission decision, or refused by the tool itself: either way, not printed.
    expect(byId['grep-file']?.isError).toBe(true);
    for (const entry of result.results) expect(entry.modelContent, entry.callId).not.toContain('sk-live-do-not-leak');
  });
});
