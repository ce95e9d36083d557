import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `probe` until `accept` holds: for state only observable by asking (queries, visibility), never a fixed wait.
 */
export async function waitFor<T>(
  probe: () => Promise<T>,
  accept: (value: T) => boolean,
  options: { timeoutMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  let last: T | undefined;
  for (;;) {
    last = await probe();
    if (accept(last)) return last;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${options.what ?? 'a condition'}; last value: ${JSON.stringify(last)}`);
    await sleep(100);
  }
}
