import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/contracts/events.js';
import { bashTool } from '../../src/tools/builtin/bash.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';

function groupsOf(events: readonly SessionEvent[], turnId: string): string[][] {
  const scheduled = events.find((event) => event.type === 'ToolCallScheduled' && event.turnId === turnId);
  if (scheduled?.type !== 'ToolCallScheduled' || scheduled.groups === undefined)
    throw new Error(`no ToolCallScheduled with the grouping for ${turnId}`);
  return scheduled.groups;
}

describe("Bash's read-only table on a real server", () => {
  let harness: Harness;
  let cwd: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    await writeFile(path.join(cwd, 'a.txt'), 'a\n');
    harness = await createHarness({ tools: [bashTool], defaultCwd: cwd });
  }, 60_000);
  afterAll(async () => harness.close());

  it('ten `sleep 0.2; cat a.txt` in one reply run unasked as one read-only group', async () => {
    const input = { command: 'sleep 0.2; cat a.txt' };
    const calls = Array.from({ length: 10 }, (_, index) => ({ id: `s${index}`, name: 'Bash', input }));
    const { result, events } = await harness.withWorker(async () => {
      // dontAsk turns every ask into a denial: only a read-only command runs here without a rule.
      const session = await harness.startSession({ cwd, permissionMode: 'dontAsk' });
      const turn = await session.executeTurn({ turnId: 't', calls });
      return { result: turn, events: (await session.events()).events };
    });
    expect(result.results.map((entry) => entry.status)).toEqual(Array(10).fill('success'));
    for (const entry of result.results) expect(entry.modelContent).toContain('a');
    expect(groupsOf(events, 't')).toEqual([calls.map((call) => call.id)]);
  }, 120_000);

  it('`docker run`, `expr … > file` and `free -s 1` still ask (denied under dontAsk), and write nothing', async () => {
    const result = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'dontAsk' });
      return session.executeTurn({
        turnId: 't',
        calls: [
          { id: 'run', name: 'Bash', input: { command: 'docker run --rm alpine true' } },
          { id: 'expr', name: 'Bash', input: { command: 'expr 1 + 1 > wrote.txt' } },
          { id: 'free', name: 'Bash', input: { command: 'free -s 1' } },
          { id: 'host', name: 'Bash', input: { command: 'docker -H tcp://127.0.0.1:1 ps' } },
        ],
      });
    });
    expect(result.results.map((entry) => entry.status)).toEqual(['denied', 'denied', 'denied', 'denied']);
    await expect(import('node:fs/promises').then((fs) => fs.stat(path.join(cwd, 'wrote.txt')))).rejects.toThrow(
      /ENOENT/,
    );
  }, 120_000);
});
