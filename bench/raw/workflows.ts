// The "raw Temporal" contender: a minimal session as a user would hand-write it. An update runs a turn's calls as
// plain activities, `Promise.all` per group of 10, and answers their texts in call order. No validation, hooks,
// permissions, budgets or events: the floor that Switchyard is measured against. `rawLocalSession` is the same
// session with local activities, the design Switchyard itself uses for short reads.
import { condition, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { rawActivities } from './activities.js';
import { runCallsUpdate, stopSignal } from './messages.js';
import type { RawCall } from './messages.js';

type RawActivities = typeof rawActivities;

const regular = proxyActivities<RawActivities>({ startToCloseTimeout: '1 minute' });
const local = proxyLocalActivities<RawActivities>({ startToCloseTimeout: '1 minute' });

function runCall(activities: RawActivities, call: RawCall): Promise<string> {
  if ('path' in call) return activities.readFileActivity(call.path);
  if ('waitMs' in call) return activities.waitActivity(call.waitMs);
  if ('write' in call) return activities.writeFileActivity(call.write.path, call.write.content);
  return activities.bashActivity(call.command, call.cwd);
}

async function session(activities: RawActivities): Promise<void> {
  let stopped = false;
  setHandler(runCallsUpdate, async ({ calls }) => {
    const texts: string[] = [];
    for (let start = 0; start < calls.length; start += 10) {
      texts.push(...(await Promise.all(calls.slice(start, start + 10).map((call) => runCall(activities, call)))));
    }
    return texts;
  });
  setHandler(stopSignal, () => {
    stopped = true;
  });
  await condition(() => stopped);
}

export async function rawSession(): Promise<void> {
  await session(regular);
}

export async function rawLocalSession(): Promise<void> {
  await session(local);
}
