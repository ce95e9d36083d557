// The "raw Temporal" contender: a minimal session as a user would hand-write it. An update runs a turn's reads as
// plain activities, `Promise.all` per group of 10, and answers their texts in call order. No validation, hooks,
// permissions, budgets or events: the floor that Switchyard is measured against.
import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { rawActivities } from './activities.js';
import { runCallsUpdate, stopSignal } from './messages.js';

const { readFileActivity } = proxyActivities<typeof rawActivities>({ startToCloseTimeout: '1 minute' });

export async function rawSession(): Promise<void> {
  let stopped = false;
  setHandler(runCallsUpdate, async ({ calls }) => {
    const texts: string[] = [];
    for (let start = 0; start < calls.length; start += 10) {
      texts.push(...(await Promise.all(calls.slice(start, start + 10).map((call) => readFileActivity(call.path)))));
    }
    return texts;
  });
  setHandler(stopSignal, () => {
    stopped = true;
  });
  await condition(() => stopped);
}
