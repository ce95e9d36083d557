import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wordCountTool } from '../../examples/word-count-tool.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';

// docs/CONCEPTS.md "Workers on one task queue must offer the same tools": two workers on one queue, one of them with
// a tool the other lacks (a custom-tool worker beside `npm start`'s). Before, turns failed at random with a bare
// `Tool not found` from whichever worker happened to plan or run the call.

describe('workers with different tools on one task queue', { timeout: 300_000 }, () => {
  let harness: Harness;
  const stops: Array<() => Promise<void>> = [];
  beforeAll(async () => {
    harness = await createHarness({ defaultCwd: await scratchDir() });
    for (const tools of [builtinTools(), [...builtinTools(), wordCountTool]]) {
      const { worker, done } = await harness.startWorker({ tools });
      stops.push(async () => {
        worker.shutdown();
        await done;
      });
    }
  });
  afterAll(async () => {
    await Promise.all(stops.map((stop) => stop()));
    await harness.close();
  });

  it('a call to a tool one worker lacks never gets a silent `Tool not found`: it runs, or fails naming the worker and the rule', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, async (_, index) => {
        const session = await harness.startSession();
        const turn = await session.executeTurn({
          turnId: `t${index}`,
          calls: [{ id: 'w', name: 'WordCount', input: { text: 'three little words' } }],
        });
        return turn.results[0];
      }),
    );
    for (const result of outcomes) {
      expect(result?.modelContent).not.toBe('Tool not found: WordCount');
      if (result?.status !== 'success') {
        expect(result?.modelContent).toMatch(
          /Worker \d+@\S+ switchyard tools:[0-9a-f]{12} does not offer tool "WordCount"/,
        );
        expect(result?.modelContent).toContain(
          `workers on task queue "${harness.taskQueue}" must offer the same tools`,
        );
      } else {
        expect(result.modelContent).toBe('3 words');
      }
    }
  });

  it('a tool no worker offers (the model invented it) is still `Tool not found` when all workers agree', async () => {
    const single = await createHarness({ defaultCwd: await scratchDir() });
    try {
      const result = await single.withWorker(async () => {
        const session = await single.startSession();
        return session.executeTurn({ turnId: 't', calls: [{ id: 'x', name: 'NoSuchTool', input: {} }] });
      });
      expect(result.results[0]).toMatchObject({ status: 'error', modelContent: 'Tool not found: NoSuchTool' });
    } finally {
      await single.close();
    }
  });
});
