// The "raw Temporal" contender: a minimal session as a user would hand-write it. An update runs a turn's reads as
// plain activities, `Promise.all` per group of 10, and answers their texts in call order. No validation, hooks,
// permissions, budgets or events: the floor that Switchyard is measured against. `rawLocalSession` is the same
// session with local activities, the design Switchyard itself uses for short reads: a reference row, not the ratio's
// denominator.
import { condition, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { rawActivities } from './activities.js';
import { runCallsUpdate, stopSignal } from './messages.js';

const regular = proxyActivities<typeof rawActivities>({ startToCloseTimeout: '1 minute' });
const local = proxyLocalActivities<typeof rawActivities>({ startToCloseTimeout: '1 minute' });

async function session(readFileActivity: (typeof rawActivities)['readFileActivity']): Promise<void> {
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

export async function rawSession(): Promise<void> {
  await session(regular.readFileActivity);
}

export async function rawLocalSession(): Promise<void> {
  await session(local.readFileActivity);
}
