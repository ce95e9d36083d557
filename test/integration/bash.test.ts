import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import { bashTool } from '../../src/tools/builtin/bash.js';
import { readTool } from '../../src/tools/builtin/read.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { blockingSleepTool } from '../support/test-tools.js';
import { waitFor } from '../support/wait-for.js';
import { processExists } from '../support/processes.js';
import { texts } from '../../src/contracts/texts.js';

async function historySize(session: SessionHandle): Promise<number> {
  const description = await session.workflow.describe();
  return Number(description.raw.workflowExecutionInfo?.historySizeBytes ?? 0);
}

describe('Bash through a session (real server, real processes)', () => {
  let harness: Harness;
  let cwd: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    execFileSync('mkfifo', [path.join(cwd, 'never.fifo')]);
    harness = await createHarness({ tools: [readTool, bashTool, blockingSleepTool], defaultCwd: cwd });
  });
  afterAll(async () => harness.close());

  it('interrupt during `sleep 100` leaves no process behind, and a block tool beside it completes', async () => {
    const outcome = await harness.withWorker(async () => {
      // Outside the OS sandbox: the test follows the child by its host pid (sandbox.test.ts covers the sandboxed kill).
      const session = await harness.startSession({
        cwd,
        permissionMode: 'bypassPermissions',
        sandbox: { mode: 'off' },
      });
      const turn = session.executeTurn({
        turnId: 't',
        calls: [{ id: 'sleep', name: 'Bash', input: { command: 'sleep 100 & echo "pid=$!"; wait' } }],
      });
      // The pid arrives as progress in the activity's heartbeat details.
      const description = await waitFor(
        () => session.workflow.describe(),
        (d) =>
          Buffer.from(d.raw.pendingActivities?.[0]?.heartbeatDetails?.payloads?.[0]?.data ?? [])
            .toString()
            .includes('pid='),
        { what: 'the pid in heartbeat progress' },
      );
      const details = Buffer.from(
        description.raw.pendingActivities?.[0]?.heartbeatDetails?.payloads?.[0]?.data ?? [],
      ).toString();
      const pid = Number(/pid=(\d+)/.exec(details)?.[1]);
      expect(processExists(pid)).toBe(true);
      await session.interrupt('stop');
      const result = await turn;
      const blockTurn = session.executeTurn({
        turnId: 't2',
        calls: [
          { id: 'cat', name: 'Bash', input: { command: 'cat never.fifo' } },
          { id: 'block', name: 'BlockingSleep', input: { ms: 1_500 } },
        ],
      });
      await waitFor(
        async () => (await session.events()).events,
        (events) => events.filter((e) => e.type === 'ToolCallStarted' && e.turnId === 't2').length === 2,
      );
      await session.interrupt('stop again');
      return { result, pid, blockResult: await blockTurn };
    });
    expect(outcome.result.results[0]).toMatchObject({ status: 'cancelled', modelContent: texts.rejectMessage });
    await waitFor(
      async () => processExists(outcome.pid),
      (isAlive) => !isAlive,
      { what: 'the sleep to die', timeoutMs: 5_000 },
    );
    expect(outcome.blockResult.results.map((r) => r.status)).toEqual(['cancelled', 'success']);
  });

  it('a failing Bash cancels its running Bash siblings, not other tools and not the turn', async () => {
    const result = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      return session.executeTurn({
        turnId: 't',
        calls: [
          { id: 'blocked', name: 'Bash', input: { command: 'cat never.fifo' } },
          { id: 'fails', name: 'Bash', input: { command: 'ls definitely/not/here' } },
          { id: 'read', name: 'BlockingSleep', input: { ms: 800 } },
          { id: 'after', name: 'Bash', input: { command: 'echo later' } },
        ],
      });
    });
    const [blocked, fails, read, after] = result.results;
    expect(fails).toMatchObject({ status: 'error', errorCode: 'exit_code' });
    expect(blocked).toMatchObject({
      status: 'cancelled',
      errorCode: 'sibling_error',
      modelContent: 'Cancelled: parallel tool call Bash(ls definitely/not/here) errored',
    });
    expect(read?.status).toBe('success');
    expect(after).toMatchObject({ status: 'success', modelContent: 'later\n' });
    expect(result.stopped).toBe(false);
  });

  it('stores 50 MB of output as an artifact with bounded memory, and history grows by less than 20 KB', async () => {
    const outcome = await harness.withWorker(async () => {
      // `/dev/zero` is a read outside cwd: a Read rule allows it.
      const session = await harness.startSession({ cwd, rules: { allow: ['Read(/dev/zero)'] } });
      const warm = await session.executeTurn({
        turnId: 'warm',
        calls: [{ id: 'w', name: 'Bash', input: { command: 'echo warm' } }],
      });
      const before = await historySize(session);
      const rssBefore = process.memoryUsage().rss;
      const result = await session.executeTurn({
        turnId: 'big',
        calls: [{ id: 'big', name: 'Bash', input: { command: 'head -c 52428800 /dev/zero | tr "\\0" x' } }],
      });
      const rssGrowth = process.memoryUsage().rss - rssBefore;
      return { result, warm, growth: (await historySize(session)) - before, rssGrowth };
    });
    const [big] = outcome.result.results;
    expect(big?.status).toBe('success');
    expect(big?.budget).toMatchObject({ truncated: true, originalBytes: 52_428_800, policy: 'artifact' });
    expect(big?.modelContent).toMatch(/^<persisted-output>\nOutput too large \(50\.0 MB\)\. Full output saved to: /);
    const stored = harness.client.artifacts.locate(big?.budget?.artifact ?? '');
    expect(Number(execFileSync('stat', ['-c', '%s', stored]).toString().trim())).toBe(52_428_800);
    // The UI's display is bounded on its own and small when the full output was persisted.
    expect(big?.display).toMatchObject({ type: 'bash_output', exitCode: 0, truncated: true });
    expect(big?.display?.type === 'bash_output' && Buffer.byteLength(big.display.stdout)).toBeLessThanOrEqual(2_048);
    expect(outcome.warm.results[0]?.display).toBeUndefined();
    process.stderr.write(`[50 MB output] history grew by ${outcome.growth} bytes\n`);
    expect(outcome.growth).toBeLessThan(20 * 1024);
    expect(outcome.rssGrowth).toBeLessThan(200 * 1024 * 1024);
  });
});
