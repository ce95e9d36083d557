import { defineSignal, defineUpdate } from '@temporalio/workflow';

/**
 * One call of the hand-written contender: a file to read (`path`), a wait of `waitMs` (the read-only call of known
 * duration), a file to write (`write`), or a shell command to run (`command`).
 */
export type RawCall =
  | { id: string; path: string }
  | { id: string; waitMs: number }
  | { id: string; write: { path: string; content: string } }
  | { id: string; command: string; cwd: string };

/** The hand-written session's turn: run these calls, answer their texts in call order. */
export const runCallsUpdate = defineUpdate<string[], [{ calls: RawCall[] }]>('runCalls');
export const stopSignal = defineSignal('stop');
