import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/contracts/events.js';
import type { ToolCall } from '../../src/contracts/tool-call.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { testTools } from '../support/test-tools.js';

function groupsOf(events: SessionEvent[], turnId: string): string[][] {
  const scheduled = events.find((event) => event.type === 'ToolCallScheduled' && event.turnId === turnId);
  if (scheduled?.type !== 'ToolCallScheduled' || scheduled.groups === undefined)
    throw new Error(`no ToolCallScheduled with the grouping for ${turnId}`);
  return scheduled.groups;
}

describe('grouping, turn control and context modifiers on a real server', () => {
  let harness: Harness;
  let cwd: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    await writeFile(path.join(cwd, 'a.txt'), 'a\n');
    await writeFile(path.join(cwd, 'c.txt'), 'c\n');
    await writeFile(path.join(cwd, 'f.txt'), 'f\n');
    // The real built-ins beside the stand-ins (Sleep, FakeShell, FakeEdit…), whose names are their own.
    const builtins = builtinTools();
    const builtinNames = new Set(builtins.map((tool) => tool.name));
    harness = await createHarness({
      tools: [...testTools().filter((tool) => !builtinNames.has(tool.name)), ...builtins],
      defaultCwd: cwd,
    });
  });
  afterAll(async () => harness.close());

  async function runTurn(calls: ToolCall[], options: { maxConcurrency?: number } = {}) {
    return harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'bypassPermissions', ...options });
      const result = await session.executeTurn({ turnId: 't', calls });
      const { events } = await session.events();
      const state = await session.workflow.query<{ state: Record<string, unknown> }>('sessionState');
      return { result, events, groups: groupsOf(events, 't'), state: state.state };
    });
  }

  it('reproduces both reference executors’ grouping examples with the real built-in tools (docs/SEMANTICS.md, Grouping)', async () => {
    const zcode = await runTurn([
      { id: 'a', name: 'Read', input: { file_path: 'a.txt' } },
      { id: 'b', name: 'Read', input: { file_path: 'a.txt', offset: 1 } },
      { id: 'c', name: 'Edit', input: { file_path: 'c.txt', old_string: 'c', new_string: 'C' } },
      // A host that never resolves: the fetch fails, the grouping is what this test reads.
      { id: 'd', name: 'WebFetch', input: { url: 'https://example.invalid/' } },
      { id: 'e', name: 'Bash', input: { command: 'touch e.txt' } },
      { id: 'f', name: 'Read', input: { file_path: 'a.txt' } },
    ]);
    expect(zcode.groups).toEqual([['a', 'b'], ['c'], ['d'], ['e'], ['f']]);
    expect(zcode.result.results.map((r) => [r.callId, r.status])).toEqual([
      ['a', 'success'],
      ['b', 'success'],
      ['c', 'success'],
      ['d', 'error'],
      ['e', 'success'],
      ['f', 'success'],
    ]);

    const claude = await runTurn([
      { id: 'A', name: 'Read', input: { file_path: 'a.txt' } },
      { id: 'B', name: 'Glob', input: { pattern: '*.txt' } },
      { id: 'C', name: 'WebFetch', input: { url: 'https://example.invalid/' } },
      { id: 'D', name: 'Bash', input: { command: 'touch d.txt' } },
      { id: 'E', name: 'Grep', input: { pattern: 'a' } },
      { id: 'F', name: 'Edit', input: { file_path: 'f.txt', old_string: 'f', new_string: 'F' } },
    ]);
    expect(claude.groups).toEqual([['A', 'B', 'C'], ['D'], ['E'], ['F']]);
    expect(claude.result.results.map((r) => r.callId)).toEqual(['A', 'B', 'C', 'D', 'E', 'F']);
    expect(claude.result.results.filter((r) => r.callId !== 'C').every((r) => r.status === 'success')).toBe(true);
  });

  it('lets a read-only Bash join its neighbours (the real classifier decides), and caps groups at maxConcurrency', async () => {
    const mixed = await runTurn([
      { id: 'r1', name: 'Read', input: { file_path: 'a.txt' } },
      { id: 'ls', name: 'Bash', input: { command: 'ls -la' } },
      { id: 'cat', name: 'Bash', input: { command: 'cat a.txt' } },
      // Not read-only to the real classifier (git may run configured programs): it runs alone.
      { id: 'log', name: 'Bash', input: { command: 'git log --oneline' } },
      { id: 'rm', name: 'Bash', input: { command: 'rm -f x' } },
    ]);
    expect(mixed.groups).toEqual([['r1', 'ls', 'cat'], ['log'], ['rm']]);

    const eleven = await runTurn(
      Array.from({ length: 11 }, (_, index) => ({ id: `r${index}`, name: 'Sleep', input: { ms: 1 } })),
    );
    expect(eleven.groups.map((group) => group.length)).toEqual([10, 1]);
    const three = await runTurn(
      Array.from({ length: 5 }, (_, index) => ({ id: `q${index}`, name: 'Sleep', input: { ms: 1 } })),
      { maxConcurrency: 3 },
    );
    expect(three.groups).toEqual([
      ['q0', 'q1', 'q2'],
      ['q3', 'q4'],
    ]);
  });

  it('runs calls of one group at the same time, and groups one after another', async () => {
    const { events } = await runTurn([
      { id: 's1', name: 'Sleep', input: { ms: 600 } },
      { id: 's2', name: 'Sleep', input: { ms: 600 } },
      { id: 'x', name: 'FakeEdit', input: { file_path: 'x.txt' } },
    ]);
    const at = (type: string, callId: string) =>
      Date.parse(events.find((e) => e.type === type && 'callId' in e && e.callId === callId)?.at ?? 'NaN');
    // s2 starts before s1 finishes; x starts only after both finished.
    expect(at('ToolCallStarted', 's2')).toBeLessThan(at('ToolCallResult', 's1'));
    expect(at('ToolCallStarted', 'x')).toBeGreaterThanOrEqual(
      Math.max(at('ToolCallResult', 's1'), at('ToolCallResult', 's2')),
    );
  });

  it('fails closed: unknown tools, invalid input and a throwing classifier run alone', async () => {
    const { groups, result } = await runTurn([
      { id: 'a', name: 'Sleep', input: { ms: 1 } },
      { id: 'unknown', name: 'Teleport', input: {} },
      { id: 'b', name: 'Sleep', input: { ms: 1 } },
      { id: 'invalid', name: 'Sleep', input: { ms: 'soon' } },
      { id: 'c', name: 'Sleep', input: { ms: 1 } },
      { id: 'throws', name: 'FakeShell', input: { command: 'throw-classifier' } },
      { id: 'd', name: 'Sleep', input: { ms: 1 } },
    ]);
    expect(groups).toEqual([['a'], ['unknown'], ['b'], ['invalid'], ['c'], ['throws'], ['d']]);
    expect(result.results[1]).toMatchObject({
      status: 'error',
      modelContent: 'Tool not found: Teleport',
      errorCode: 'tool_not_found',
    });
    expect(result.results[3]?.modelContent).toMatch(/^<tool_use_error>InputValidationError: ms: /);
    expect(result.results[5]?.status).toBe('success');
  });

  it('stops later groups after a turn-stop result, but not after a failure', async () => {
    const stopped = await runTurn([
      { id: 'fail', name: 'FakeShell', input: { command: 'fail' } },
      { id: 'after-fail', name: 'Sleep', input: { ms: 1, label: 'still ran' } },
      { id: 'submit', name: 'submit_result', input: { result: { answer: 42 } } },
      { id: 'late1', name: 'Sleep', input: { ms: 1 } },
      { id: 'late2', name: 'FakeEdit', input: { file_path: 'late.txt' } },
    ]);
    const [fail, afterFail, submit, late1, late2] = stopped.result.results;
    expect(fail).toMatchObject({ status: 'error', isError: true, modelContent: 'command failed with exit code 1' });
    expect(afterFail).toMatchObject({ status: 'success', modelContent: 'still ran' });
    expect(submit).toMatchObject({
      status: 'success',
      modelContent: JSON.stringify({ answer: 42 }, null, 2),
      turnControl: { stopTurn: true },
    });
    for (const late of [late1, late2]) {
      expect(late).toMatchObject({
        status: 'cancelled',
        modelContent: 'Tool cancelled because a previous tool result requested a turn stop.',
      });
    }
    expect(stopped.result.stopped).toBe(true);
    expect(stopped.events.filter((e) => e.type === 'ToolCallStarted').map((e) => 'callId' in e && e.callId)).toEqual([
      'fail',
      'after-fail',
      'submit',
    ]);
  });

  it('applies a concurrent group’s session changes after the group, in call order, not completion order', async () => {
    const { result, state } = await runTurn([
      { id: 'slow', name: 'SetState', input: { key: 'k', value: 'from slow (first call)', delay_ms: 500 } },
      { id: 'fast', name: 'SetState', input: { key: 'k', value: 'from fast (second call)', delay_ms: 0 } },
      { id: 'fence', name: 'FakeEdit', input: { file_path: 'fence.txt' } },
      { id: 'reader', name: 'SetState', input: { key: 'k', value: 'third' } },
    ]);
    // Inside the group neither saw the other's change; the group's changes applied in call order.
    expect(result.results[0]?.modelContent).toBe('saw null');
    expect(result.results[1]?.modelContent).toBe('saw null');
    expect(result.results[3]?.modelContent).toBe('saw "from fast (second call)"');
    expect(state).toEqual({ k: 'third' });
  });
});
