import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bashTool } from '../../src/tools/builtin/bash.js';
import type { ToolOutputObject } from '../../src/tools/define-tool.js';
import { scratchDir } from '../support/scratch.js';
import { toolContext } from '../support/tool-context.js';
import { waitFor } from '../support/wait-for.js';
import { processExists } from '../support/processes.js';

/**
 * docs/CONCEPTS.md (Built-in tools): Bash stops a command with SIGTERM to its process group and, 2 s later,
 * SIGKILL. These commands trap TERM and keep running, so only the SIGKILL can end them.
 */
const TERM_IGNORING_COMMAND = [
  "trap 'echo term >> signals.log' TERM",
  'echo $$ > shell.pid',
  'while :; do echo tick >> signals.log; sleep 0.1; done',
].join('\n');

const KILL_GRACE_MS = 2_000;

async function runInScratch(options: {
  timeout?: number;
  signal?: AbortSignal;
}): Promise<{ cwd: string; result: Promise<ToolOutputObject> }> {
  const cwd = await scratchDir();
  const result = Promise.resolve(
    bashTool.execute(
      { command: TERM_IGNORING_COMMAND, ...(options.timeout === undefined ? {} : { timeout: options.timeout }) },
      // Outside the OS sandbox: this tests the executor's own SIGTERM → SIGKILL escalation on the command's process
      // group. Inside it, SIGTERM ends the sandbox's namespace (its init dies), so nothing outlives the first signal.
      toolContext({
        cwd,
        sandbox: { mode: 'off' },
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      }),
    ),
  ).then((output) => (typeof output === 'string' ? { content: output } : output));
  return { cwd, result };
}

const logLines = async (cwd: string): Promise<string[]> =>
  (await readFile(path.join(cwd, 'signals.log'), 'utf8').catch(() => '')).split('\n').filter(Boolean);

/** The command kept running after SIGTERM: its TERM handler ran and the loop ticked on afterwards. */
function expectSurvivedTerm(lines: string[]): void {
  const term = lines.indexOf('term');
  expect(term, lines.join(' ')).toBeGreaterThan(0);
  expect(lines.slice(term + 1), 'ticks after SIGTERM').toContain('tick');
}

describe('Bash escalates SIGTERM to SIGKILL (real processes)', { timeout: 60_000 }, () => {
  it('kills a command that ignores SIGTERM at its timeout, 2 s after the SIGTERM', async () => {
    const started = Date.now();
    const { cwd, result } = await runInScratch({ timeout: 1_000 });
    const output = await result;
    const elapsed = Date.now() - started;
    expect(output).toMatchObject({ isError: true, errorCode: 'command_timeout' });
    expect(output.content).toMatch(/Command timed out after 1000ms and was killed\.$/);
    // SIGTERM at the 1,000 ms timeout did not end it; SIGKILL did, 2 s later.
    expect(elapsed).toBeGreaterThanOrEqual(1_000 + KILL_GRACE_MS - 100);
    expectSurvivedTerm(await logLines(cwd));
    const pid = Number(await readFile(path.join(cwd, 'shell.pid'), 'utf8'));
    expect(processExists(pid)).toBe(false);
    await waitFor(
      async () => processExists(-pid),
      (groupExists) => !groupExists,
      { what: 'the process group to be gone', timeoutMs: 10_000 },
    );
  });

  it('kills a command that ignores SIGTERM when the call is cancelled, 2 s after the SIGTERM', async () => {
    const controller = new AbortController();
    const { cwd, result } = await runInScratch({ signal: controller.signal });
    const settled = result.then(
      () => 'resolved',
      (error: unknown) => error,
    );
    // Cancel once the command runs (it has ticked), not after a guessed delay.
    await waitFor(
      () => logLines(cwd),
      (lines) => lines.includes('tick'),
      { what: 'the command to run', timeoutMs: 30_000 },
    );
    const reason = new Error('turn interrupted');
    const cancelled = Date.now();
    controller.abort(reason);
    expect(await settled).toBe(reason);
    expect(Date.now() - cancelled).toBeGreaterThanOrEqual(KILL_GRACE_MS - 100);
    expectSurvivedTerm(await logLines(cwd));
    const pid = Number(await readFile(path.join(cwd, 'shell.pid'), 'utf8'));
    expect(processExists(pid)).toBe(false);
    await waitFor(
      async () => processExists(-pid),
      (groupExists) => !groupExists,
      { what: 'the process group to be gone', timeoutMs: 10_000 },
    );
  });
});
