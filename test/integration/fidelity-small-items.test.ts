import { access, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { ToolResult } from '../../src/contracts/tool-result.js';
import { texts } from '../../src/contracts/texts.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { z } from 'zod';
import { defineTool } from '../../src/tools/define-tool.js';
import { conditionTools } from '../support/condition-tools.js';
import { abortableSleep } from '../support/test-tools.js';
import { createHarness, scratchDir, uniqueName } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { waitFor } from '../support/wait-for.js';

async function collect(iterable: AsyncIterable<ToolResult>): Promise<ToolResult[]> {
  const results: ToolResult[] = [];
  for await (const result of iterable) results.push(result);
  return results;
}

/** Whether the session's event log has the end (result or error) of `callId`. */
async function ended(session: SessionHandle, callId: string): Promise<boolean> {
  const { events } = await session.events();
  return events.some(
    (event) => (event.type === 'ToolCallResult' || event.type === 'ToolCallError') && event.callId === callId,
  );
}

/** A stand-in whose deadline depends on its input (`resolveBudgetMs`): it pauses, and stops when cancelled. */
const pauseTool = defineTool({
  name: 'BudgetedPause',
  description: 'Pauses for pause_ms, within a deadline of budget_ms.',
  inputSchema: z.object({ pause_ms: z.number().int(), budget_ms: z.number().int() }),
  readOnly: true,
  concurrentSafe: true,
  timeout: { defaultMs: 60_000, resolveBudgetMs: (input) => (input as { budget_ms: number }).budget_ms },
  async execute(input, context) {
    await abortableSleep(input.pause_ms, context.signal);
    return `paused ${input.pause_ms} ms`;
  },
});

describe('seed fidelity, small items (real server, real Bash)', () => {
  let harness: Harness;
  let cwd: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    await writeFile(path.join(cwd, 'a.txt'), 'alpha\n');
    harness = await createHarness({ tools: [...builtinTools(), ...conditionTools(), pauseTool], defaultCwd: cwd });
  });
  afterAll(async () => harness.close());

  it('cancels a Bash call that joins a streaming group after a Bash sibling of that group failed', async () => {
    const releaseFile = path.join(cwd, `${uniqueName('hold')}.release`);
    const results = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
      const turn = session.streamTurn('late');
      const collected = collect(turn);
      // A call that holds the group open until the test releases it, and a read-only Bash that fails.
      await turn.add(
        { id: 'hold', name: 'WaitForFile', input: { release_file: releaseFile, label: 'held' } },
        { id: 'fails', name: 'Bash', input: { command: 'cat missing.txt' } },
      );
      await waitFor(
        () => ended(session, 'fails'),
        (done) => done,
        { what: 'the failing Bash to end' },
      );
      // The group is still running (hold): a read-only Bash joins it after its Bash sibling failed.
      await turn.add({ id: 'joins', name: 'Bash', input: { command: 'cat a.txt' } });
      await waitFor(
        () => ended(session, 'joins'),
        (done) => done,
        { what: 'the late Bash to end' },
      );
      await writeFile(releaseFile, '');
      await turn.end();
      return collected;
    });
    expect(results.map((result) => [result.callId, result.status])).toEqual([
      ['hold', 'success'],
      ['fails', 'error'],
      ['joins', 'cancelled'],
    ]);
    expect(results[2]).toMatchObject({
      modelContent: texts.siblingErrored('Bash(cat missing.txt)'),
      errorCode: 'sibling_error',
    });
  });

  it('keeps a PreToolUse hook’s context when the input it rewrote fails validation', async () => {
    const hook = path.join(cwd, 'rewrite-invalid.sh');
    await writeFile(
      hook,
      `#!/bin/sh\ncat > /dev/null\necho '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":42},"additionalContext":"the hook looked at this command"}}'\n`,
      { mode: 0o755 },
    );
    const result = await harness.withWorker(async () => {
      const session = await harness.startSession({
        cwd,
        permissionMode: 'bypassPermissions',
        hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: hook }] }] },
      });
      return session.executeTurn({
        turnId: 'rewrite',
        calls: [{ id: 'rewritten', name: 'Bash', input: { command: 'echo original' } }],
      });
    });
    expect(result.results[0]?.status).toBe('error');
    expect(result.results[0]?.modelContent).toMatch(
      /^<tool_use_error>InputValidationError: input rewritten by a PreToolUse hook is invalid: command: .*<\/tool_use_error>\n\n\[Hook additional context\]\n1\. the hook looked at this command$/s,
    );
  });
  it('gives a call the deadline its tool resolves for its input', async () => {
    const result = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
      return session.executeTurn({
        turnId: 'budget',
        calls: [{ id: 'pause', name: 'BudgetedPause', input: { pause_ms: 30_000, budget_ms: 300 } }],
      });
    });
    expect(result.results[0]).toMatchObject({
      status: 'error',
      modelContent: texts.timedOut(300),
      errorCode: 'timeout',
    });
  });

  it("cancels the reply's later groups when a PostToolUse hook says continue: false (a deliberate choice)", async () => {
    const hook = path.join(cwd, 'stop.sh');
    await writeFile(
      hook,
      `#!/bin/sh\ncat > /dev/null\necho '{"continue":false,"stopReason":"the hook has seen enough"}'\n`,
      {
        mode: 0o755,
      },
    );
    const result = await harness.withWorker(async () => {
      const session = await harness.startSession({
        cwd,
        permissionMode: 'bypassPermissions',
        hooks: { PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: hook }] }] },
      });
      return session.executeTurn({
        turnId: 'stop',
        calls: [
          { id: 'first', name: 'Bash', input: { command: 'echo first' } },
          { id: 'later', name: 'Write', input: { file_path: 'later.txt', content: 'later\n' } },
        ],
      });
    });
    expect(result.results[0]).toMatchObject({
      status: 'success',
      turnControl: { stopTurn: true, reason: 'the hook has seen enough' },
    });
    expect(result.results[1]).toMatchObject({
      status: 'cancelled',
      modelContent: texts.turnStopCancelled,
      errorCode: 'turn_stopped',
    });
    expect(result.stopped).toBe(true);
    await expect(access(path.join(cwd, 'later.txt'))).rejects.toThrow();
  });
});
