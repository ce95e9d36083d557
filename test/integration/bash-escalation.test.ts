import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bashTool } from '../../src/tools/builtin/bash.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { waitFor } from '../support/wait-for.js';
import { processExists } from '../support/processes.js';
import { texts } from '../../src/contracts/texts.js';

describe('Bash interrupted through a session escalates SIGTERM to SIGKILL (real server, real processes)', () => {
  let harness: Harness;
  let cwd: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    harness = await createHarness({ tools: [bashTool], defaultCwd: cwd });
  });
  afterAll(async () => harness.close());

  it('an interrupt stops a command that traps SIGTERM and keeps running: SIGKILL ends its process group', async () => {
    const command = [
      "trap 'echo term >> signals.log' TERM",
      'echo $$ > shell.pid',
      'while :; do echo tick >> signals.log; sleep 0.1; done',
    ].join('\n');
    const log = async (): Promise<string[]> =>
      (await readFile(path.join(cwd, 'signals.log'), 'utf8').catch(() => '')).split('\n').filter(Boolean);
    const outcome = await harness.withWorker(async () => {
      // Outside the OS sandbox: there SIGTERM reaches the command's own process group, whose host pid the test follows.
      // In the sandbox the group signal ends bubblewrap, and its pid namespace dies at once (sandbox.test.ts).
      const session = await harness.startSession({
        cwd,
        permissionMode: 'bypassPermissions',
        sandbox: { mode: 'off' },
      });
      const turn = session.executeTurn({ turnId: 't', calls: [{ id: 'stubborn', name: 'Bash', input: { command } }] });
      await waitFor(log, (lines) => lines.includes('tick'), { what: 'the command to run', timeoutMs: 60_000 });
      await session.interrupt('stop it');
      return turn;
    });
    expect(outcome.results[0]).toMatchObject({ status: 'cancelled', modelContent: texts.rejectMessage });
    const pid = Number(await readFile(path.join(cwd, 'shell.pid'), 'utf8'));
    // Its SIGTERM handler ran and the loop went on; only the SIGKILL that follows could end it, and it did.
    await waitFor(
      async () => processExists(-pid),
      (groupExists) => !groupExists,
      { what: 'the process group to be gone', timeoutMs: 30_000 },
    );
    expect(processExists(pid)).toBe(false);
    const lines = await log();
    expect(lines).toContain('term');
    expect(lines.slice(lines.indexOf('term') + 1), 'ticks after SIGTERM').toContain('tick');
  });
});
