import { defineSignal, defineUpdate } from '@temporalio/workflow';

/** One call of the hand-written contender: the file to read. */
export interface RawCall {
  id: string;
  path: string;
}

/** The hand-written session's turn: run these reads, answer their texts in call order. */
export const runCallsUpdate = defineUpdate<string[], [{ calls: RawCall[] }]>('runCalls');
export const stopSignal = defineSignal('stop');
