import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { SwitchyardHooks } from '../../src/hooks/types.js';
import type { ToolCall } from '../../src/contracts/tool-call.js';
import type { ToolResult } from '../../src/contracts/tool-result.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { waitFor } from '../support/wait-for.js';

/**
 * The per-call pipeline runs at the call's turn in the schedule (issue: Prepare per group), with the real built-in
 * tools and the sequences a coding model sends in one reply.
 */
describe('each call is prepared when its group runs (real built-in tools)', () => {
  let harness: Harness;
  /** PreToolUse runs by call id: a call skipped by a turn stop or an interrupt must never appear. */
  const hookRuns = new Map<string, number>();
  const hooks: SwitchyardHooks = {
    preToolUse: [{ run: (input) => void hookRuns.set(input.toolUseId, (hookRuns.get(input.toolUseId) ?? 0) + 1) }],
    postToolUse: [{ matcher: 'Read', run: () => ({ additionalContext: 'read with care' }) }],
  };
  beforeAll(async () => {
    harness = await createHarness({ tools: builtinTools(), hooks });
  });
  afterAll(async () => harness.close());

  const turn = async (session: SessionHandle, turnId: string, calls: ToolCall[]): Promise<ToolResult[]> =>
    (await session.executeTurn({ turnId, calls })).results;

  it('runs Write → Edit → Read of a new file in one turn', async () => {
    const cwd = await scratchDir();
    await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'acceptEdits' });
      const results = await turn(session, 't1', [
        { id: 'w', name: 'Write', input: { file_path: 'new.txt', content: 'alpha\nbeta\n' } },
        { id: 'e', name: 'Edit', input: { file_path: 'new.txt', old_string: 'beta', new_string: 'gamma' } },
        { id: 'r', name: 'Read', input: { file_path: 'new.txt' } },
      ]);
      expect(results.map((result) => result.status)).toEqual(['success', 'success', 'success']);
      expect(results[2]?.modelContent).toContain('gamma');
      expect(results[2]?.modelContent).not.toContain('beta');
      expect(await readFile(path.join(cwd, 'new.txt'), 'utf8')).toBe('alpha\ngamma\n');
    });
  });

  it('reads a file that a Bash call of the same turn creates', async () => {
    const cwd = await scratchDir();
    await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
      const results = await turn(session, 't1', [
        { id: 'b', name: 'Bash', input: { command: 'printf made > made.txt' } },
        { id: 'r', name: 'Read', input: { file_path: 'made.txt' } },
      ]);
      expect(results.map((result) => result.status)).toEqual(['success', 'success']);
      expect(results[1]?.modelContent).toContain('made');
    });
  });

  it('applies Edit a→b then Edit b→c of one file in one turn', async () => {
    const cwd = await scratchDir();
    await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'acceptEdits' });
      await turn(session, 't0', [{ id: 'w', name: 'Write', input: { file_path: 'f.txt', content: 'a\n' } }]);
      const results = await turn(session, 't1', [
        { id: 'e1', name: 'Edit', input: { file_path: 'f.txt', old_string: 'a', new_string: 'b' } },
        { id: 'e2', name: 'Edit', input: { file_path: 'f.txt', old_string: 'b', new_string: 'c' } },
      ]);
      expect(results.map((result) => result.status)).toEqual(['success', 'success']);
      expect(await readFile(path.join(cwd, 'f.txt'), 'utf8')).toBe('c\n');
    });
  });

  it('never runs the hooks of calls that a turn stop skips', async () => {
    const cwd = await scratchDir();
    await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'acceptEdits' });
      const results = await turn(session, 'stop', [
        { id: 'stop-w1', name: 'Write', input: { file_path: 'one.txt', content: '1' } },
        { id: 'stop-submit', name: 'submit_result', input: { result: 'done' } },
        { id: 'stop-w2', name: 'Write', input: { file_path: 'two.txt', content: '2' } },
      ]);
      expect(results.map((result) => result.status)).toEqual(['success', 'success', 'cancelled']);
      expect(hookRuns.get('stop-w1')).toBe(1);
      expect(hookRuns.get('stop-submit')).toBe(1);
      expect(hookRuns.has('stop-w2')).toBe(false);
    });
  });

  it('never runs the hooks of calls that an interrupt skips', async () => {
    const cwd = await scratchDir();
    await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
      const pending = turn(session, 'int', [
        { id: 'int-sleep', name: 'Bash', input: { command: 'sleep 30' } },
        { id: 'int-w', name: 'Write', input: { file_path: 'never.txt', content: 'x' } },
      ]);
      await waitFor(
        () => session.events(),
        (page) => page.events.some((event) => event.type === 'ToolCallStarted' && event.callId === 'int-sleep'),
      );
      await session.interrupt('stop');
      const results = await pending;
      expect(results.map((result) => result.status)).toEqual(['cancelled', 'cancelled']);
      expect(hookRuns.get('int-sleep')).toBe(1);
      expect(hookRuns.has('int-w')).toBe(false);
    });
  });

  it('keeps hook context on a result that the aggregate budget replaces with its envelope', async () => {
    const cwd = await scratchDir();
    await writeFile(path.join(cwd, 'big1.txt'), 'one one one one one one one one\n'.repeat(200));
    await writeFile(path.join(cwd, 'big2.txt'), 'two two two two two two two two\n'.repeat(160));
    await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, aggregateBudgetChars: 7_000 });
      const results = await turn(session, 't1', [
        { id: 'r1', name: 'Read', input: { file_path: 'big1.txt' } },
        { id: 'r2', name: 'Read', input: { file_path: 'big2.txt' } },
      ]);
      // The larger result is replaced; both keep the hook's context after their content.
      expect(results[0]?.modelContent).toContain('<persisted-output>');
      expect(results[0]?.budget?.policy).toBe('artifact');
      expect(results[1]?.modelContent).toContain('two two');
      for (const result of results)
        expect(result.modelContent).toMatch(/\[Hook additional context\]\n1\. read with care$/);
    });
  });

  it('gives the same results for the same calls as a whole turn and as a streaming turn', async () => {
    const calls: ToolCall[] = [
      { id: 'w', name: 'Write', input: { file_path: 'notes.md', content: '# Notes\nfirst\n' } },
      { id: 'e', name: 'Edit', input: { file_path: 'notes.md', old_string: 'first', new_string: 'second' } },
      { id: 'r', name: 'Read', input: { file_path: 'notes.md' } },
      { id: 'g', name: 'Grep', input: { pattern: 'second', output_mode: 'content' } },
      { id: 'l', name: 'Glob', input: { pattern: '*.md' } },
      { id: 'b', name: 'Bash', input: { command: 'wc -l notes.md' } },
      { id: 'x', name: 'Nope', input: {} },
    ];
    const comparable = (results: ToolResult[], cwd: string) =>
      results.map((result) => ({
        callId: result.callId,
        status: result.status,
        modelContent: result.modelContent.split(cwd).join('<cwd>'),
      }));
    const [wholeCwd, streamCwd] = [await scratchDir(), await scratchDir()];
    await harness.withWorker(async () => {
      const whole = await harness.startSession({ cwd: wholeCwd, permissionMode: 'bypassPermissions' });
      const wholeResults = await turn(whole, 'same', calls);
      const streaming = await harness.startSession({ cwd: streamCwd, permissionMode: 'bypassPermissions' });
      const stream = streaming.streamTurn('same');
      await stream.add(...calls.slice(0, 3));
      await stream.add(...calls.slice(3));
      await stream.end();
      const streamResults: ToolResult[] = [];
      for await (const result of stream) streamResults.push(result);
      expect(wholeResults.map((result) => result.status)).toEqual([
        'success',
        'success',
        'success',
        'success',
        'success',
        'success',
        'error',
      ]);
      expect(comparable(streamResults, streamCwd)).toEqual(comparable(wholeResults, wholeCwd));
    });
  });
});
