import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileArtifactStore } from '../../src/artifacts/file-artifact-store.js';
import type { ArtifactPutOptions, StoredArtifact } from '../../src/contracts/artifact-store.js';
import { DEFAULT_AGGREGATE_BUDGET_CHARS } from '../../src/contracts/defaults.js';
import type { SessionEvent } from '../../src/contracts/events.js';
import { bashTool } from '../../src/tools/builtin/bash.js';
import { readTool } from '../../src/tools/builtin/read.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';

/** An artifact store whose disk is full: every `put` fails, so no result can be persisted. */
class FullDiskArtifactStore extends FileArtifactStore {
  override put(options: ArtifactPutOptions): Promise<StoredArtifact> {
    return Promise.reject(new Error(`ENOSPC: no space left on device (call ${options.callId})`));
  }
}

/** Eight Bash calls in one reply, each printing 29,000 characters: each fits Bash's own 30,000-byte budget. */
function eightLargeOutputs(): Array<{ id: string; name: string; input: { command: string } }> {
  const command = (index: number): string => `yes line-${index}-abcdefghijklmnopqrstuvwxyz | head -c 29000`;
  const call = (index: number) => ({ id: `big${index}`, name: 'Bash', input: { command: command(index) } });
  return Array.from({ length: 8 }, (_, index) => call(index));
}

function ofType<T extends SessionEvent['type']>(
  events: readonly SessionEvent[],
  type: T,
): Array<Extract<SessionEvent, { type: T }>> {
  return events.filter((event): event is Extract<SessionEvent, { type: T }> => event.type === type);
}

describe('results the model can rely on: slow hooks, the aggregate budget, an envelope it can open (real server)', () => {
  let harness: Harness;
  let cwd: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    harness = await createHarness({ tools: [bashTool, readTool], defaultCwd: cwd });
  }, 60_000);
  afterAll(async () => {
    await harness.close();
  });

  it('leaves a Bash append a success that ran once while a PostToolUse hook outlasts the heartbeat timeout', async () => {
    const result = await harness.withWorker(async () => {
      const session = await harness.startSession({
        cwd,
        permissionMode: 'bypassPermissions',
        heartbeatTimeoutMs: 2_000,
        // Three times the heartbeat timeout, well inside the hook's own timeout.
        hooks: { PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'sleep 6', timeout: 60 }] }] },
      });
      return session.executeTurn({
        turnId: 't',
        calls: [{ id: 'append', name: 'Bash', input: { command: 'echo once >> appended.txt' } }],
      });
    });
    expect(result.results[0]).toMatchObject({ status: 'success', isError: false });
    expect(await readFile(path.join(cwd, 'appended.txt'), 'utf8')).toBe('once\n');
  }, 90_000);

  it('hands the model at most the aggregate budget for eight 29,000-character Bash outputs, and says so in the events', async () => {
    const { result, events } = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
      const turn = await session.executeTurn({ turnId: 't', calls: eightLargeOutputs() });
      return { result: turn, events: (await session.events()).events };
    });
    expect(result.results.map((entry) => entry.status)).toEqual(Array(8).fill('success'));
    const handedOut = result.results.reduce((sum, entry) => sum + entry.modelContent.length, 0);
    expect(handedOut).toBeLessThanOrEqual(DEFAULT_AGGREGATE_BUDGET_CHARS);
    const replaced = result.results.filter((entry) => entry.budget?.truncated === true);
    expect(replaced.length).toBeGreaterThan(0);
    // Each replaced result's last word in the events gives the sizes the model got, not the pre-budget ones.
    for (const entry of replaced) {
      const last = [...ofType(events, 'ToolCallResult'), ...ofType(events, 'ToolCallResultReplaced')]
        .filter((event) => event.callId === entry.callId)
        .sort((a, b) => a.seq - b.seq)
        .at(-1);
      expect(last).toMatchObject({
        callId: entry.callId,
        truncated: true,
        modelBytes: Buffer.byteLength(entry.modelContent),
        originalBytes: 29_000,
      });
    }
  }, 120_000);

  it('hands the model at most the aggregate budget when no output can be persisted (the store fails)', async () => {
    const result = await harness.withWorker(
      async () => {
        const session = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
        return session.executeTurn({ turnId: 't', calls: eightLargeOutputs() });
      },
      { artifacts: new FullDiskArtifactStore(await scratchDir('switchyard-full-disk-')) },
    );
    expect(result.results.map((entry) => entry.status)).toEqual(Array(8).fill('success'));
    const handedOut = result.results.reduce((sum, entry) => sum + entry.modelContent.length, 0);
    expect(handedOut).toBeLessThanOrEqual(DEFAULT_AGGREGATE_BUDGET_CHARS);
    const cut = result.results.filter((entry) => entry.budget?.truncated === true);
    expect(cut.length).toBeGreaterThan(0);
    for (const entry of cut) expect(entry.budget).toMatchObject({ policy: 'truncate', originalBytes: 29_000 });
  }, 120_000);

  it('lets the model Read (with offset) the reference a <persisted-output> envelope gives, and only in its own session', async () => {
    const { later, foreign } = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
      const first = await session.executeTurn({
        turnId: 't1',
        calls: [{ id: 'seq', name: 'Bash', input: { command: 'seq 1 20000' } }],
      });
      const envelope = first.results[0]?.modelContent ?? '';
      expect(envelope).toContain('<persisted-output>');
      // What a model does: take the reference after "Full output saved to:" and Read it.
      const reference = /Full output saved to: (\S+)/.exec(envelope)?.[1] ?? '';
      expect(reference).toMatch(/^switchyard-artifact:\/\//);
      const second = await session.executeTurn({
        turnId: 't2',
        calls: [{ id: 'read', name: 'Read', input: { file_path: reference, offset: 19_998, limit: 5 } }],
      });
      const other = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
      const stolen = await other.executeTurn({
        turnId: 't1',
        calls: [{ id: 'read', name: 'Read', input: { file_path: reference } }],
      });
      return { later: second.results[0], foreign: stolen.results[0] };
    });
    expect(later).toMatchObject({ status: 'success', modelContent: ' 19998\t19998\n 19999\t19999\n 20000\t20000' });
    expect(foreign).toMatchObject({ status: 'error', isError: true });
    expect(foreign?.modelContent).toContain('another session');
  }, 120_000);

  it('treats a Bash that exits non-zero as a failure, as Claude Code does: ToolCallError and PostToolUseFailure, not PostToolUse', async () => {
    const { result, events } = await harness.withWorker(async () => {
      const session = await harness.startSession({
        cwd,
        permissionMode: 'bypassPermissions',
        hooks: {
          PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'touch post-ran.txt' }] }],
          PostToolUseFailure: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'cat > failure-event.json' }] }],
        },
      });
      const turn = await session.executeTurn({
        turnId: 't',
        calls: [{ id: 'exit3', name: 'Bash', input: { command: 'echo partial; exit 3' } }],
      });
      return { result: turn, events: (await session.events()).events };
    });
    expect(result.results[0]).toMatchObject({ status: 'error', isError: true, errorCode: 'exit_code' });
    expect(result.results[0]?.modelContent).toContain('partial');
    expect(ofType(events, 'ToolCallError').map((event) => event.callId)).toEqual(['exit3']);
    expect(ofType(events, 'ToolCallResult')).toEqual([]);
    const failure = JSON.parse(await readFile(path.join(cwd, 'failure-event.json'), 'utf8')) as Record<string, unknown>;
    expect(failure).toMatchObject({ hook_event_name: 'PostToolUseFailure', tool_name: 'Bash', is_interrupt: false });
    await expect(readFile(path.join(cwd, 'post-ran.txt'))).rejects.toThrow();
  }, 60_000);

  it('does not fail the turn when the first group’s PreToolUse hooks run past the plan limit', async () => {
    const result = await harness.withWorker(async () => {
      const session = await harness.startSession({
        cwd,
        permissionMode: 'bypassPermissions',
        // The plan limit (default one minute) made short, and hooks just past it: the real 70 s case, in seconds.
        planTimeoutMs: 2_000,
        hooks: {
          PreToolUse: [
            {
              matcher: 'Bash',
              hooks: [
                { type: 'command', command: 'sleep 1.5', timeout: 60 },
                { type: 'command', command: 'sleep 1.5', timeout: 60 },
              ],
            },
          ],
        },
      });
      return session.executeTurn({
        turnId: 't',
        calls: [{ id: 'slow-hooks', name: 'Bash', input: { command: 'echo after the hooks' } }],
      });
    });
    expect(result.results[0]).toMatchObject({ status: 'success', modelContent: 'after the hooks\n' });
  }, 120_000);
});
