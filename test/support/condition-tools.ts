import { access } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineTool } from '../../src/tools/define-tool.js';
import type { Tool } from '../../src/tools/define-tool.js';

/**
 * Test stand-ins that finish when the test says so (a file appears), not after a fixed time: no real tool waits on
 * command, and a test that must observe a call while it runs cannot depend on how long a sleep lasts on a loaded
 * machine.
 */

const POLL_MS = 25;

const exists = (file: string): Promise<boolean> =>
  access(file).then(
    () => true,
    () => false,
  );

/** Resolves once `file` exists; rejects with the signal's reason when the call is cancelled. */
export async function untilFileExists(file: string, signal: AbortSignal): Promise<void> {
  while (!(await exists(file))) await sleep(POLL_MS, undefined, { signal });
}

/** Concurrent and read-only; runs until `release_file` exists, then answers its label. */
export const waitForFileTool = defineTool({
  name: 'WaitForFile',
  description: 'Waits until a file exists, then answers its label.',
  inputSchema: z.object({ release_file: z.string(), label: z.string() }),
  concurrentSafe: true,
  readOnly: true,
  timeout: { kind: 'none' },
  async execute(input, context) {
    await untilFileExists(input.release_file, context.signal);
    return input.label;
  },
});

/** Like WaitForFile, but an interrupt does not stop it (interrupt behaviour `block`). */
export const blockingWaitForFileTool = defineTool({
  name: 'BlockingWaitForFile',
  description: 'Waits until a file exists and cannot be interrupted.',
  inputSchema: z.object({ release_file: z.string(), label: z.string() }),
  concurrentSafe: true,
  readOnly: true,
  interruptBehavior: 'block',
  timeout: { kind: 'none' },
  async execute(input) {
    await untilFileExists(input.release_file, AbortSignal.timeout(110_000));
    return input.label;
  },
});

/**
 * Idempotent (retried after a lost worker) and under a deadline; runs until `release_file` exists and reports its
 * attempt and the budget it started with, so a test can see a retry resume from the last heartbeat.
 */
export const resumableUntilReleasedTool = defineTool({
  name: 'ResumableUntilReleased',
  description: 'Works until a file exists, reporting attempt and remaining budget.',
  inputSchema: z.object({ release_file: z.string(), timeout_ms: z.number().int().positive() }),
  concurrentSafe: true,
  readOnly: true,
  idempotent: true,
  timeout: { defaultMs: 10_000, allowCallOverride: true },
  async execute(input, context) {
    const startedWith = context.deadline.remainingMs();
    await untilFileExists(input.release_file, context.signal);
    return JSON.stringify({
      attempt: context.attempt,
      startedWithRemainingMs: startedWith,
      activeMs: context.deadline.activeMs,
    });
  },
});

export function conditionTools(): Tool[] {
  return [waitForFileTool, blockingWaitForFileTool, resumableUntilReleasedTool];
}
