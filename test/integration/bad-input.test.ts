import { WorkflowUpdateFailedError } from '@temporalio/client';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCallsUpdate, approvalSignal, executeTurnUpdate, interruptSignal } from '../../src/contracts/messages.js';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { TurnResult } from '../../src/contracts/tool-result.js';
import { createHarness, scratchDir, uniqueName } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { testTools } from '../support/test-tools.js';

// Property tests on the wire contract against the real server: whatever a client sends, the answer is a clear
// rejection (the update validator's message) or a result per call, the session keeps answering, and no history
// holds a WorkflowTaskFailed. Runs are seeded (fast-check prints the seed and the shrunk counterexample on failure).

const knownTools = ['Sleep', 'FakeEdit', 'Read', 'BigOutput', 'BadOutput', 'FakeShell'];
const oddStrings = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '\u202e',
    '𝔘𝔫𝔦',
    '../../etc/passwd',
    'a'.repeat(300),
    '\ud800',
    'Sleep\n',
    'mcp__x__y',
  ),
);
const jsonish = fc.jsonValue({ maxDepth: 4 });
const callArbitrary = fc.record(
  {
    id: fc.oneof(fc.constantFrom('a', 'b', 'a'), oddStrings),
    name: fc.oneof(fc.constantFrom(...knownTools), oddStrings),
    input: fc.oneof(
      jsonish,
      fc.constant({ ms: 1 }),
      fc.constant({ ms: null }),
      fc.string().map((text) => `{"ms": ${text}`),
      fc.constant('{"ms": 5}'),
      fc.constant({ file_path: 42 }),
    ),
  },
  { requiredKeys: [] },
);
const requestArbitrary = fc.oneof(
  fc.record(
    { turnId: fc.oneof(fc.uuid(), oddStrings), calls: fc.array(callArbitrary, { maxLength: 5 }) },
    { requiredKeys: ['turnId'] },
  ),
  jsonish,
);

/** A deeply nested object: `{ a: { a: { … } } }` `depth` levels down. */
function nested(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let level = 0; level < depth; level += 1) value = { a: value };
  return value;
}

function isClearRejection(error: unknown): boolean {
  if (!(error instanceof WorkflowUpdateFailedError)) return false;
  const cause = error.cause as { message?: string } | undefined;
  return typeof cause?.message === 'string' && cause.message.length > 0;
}

async function workflowTaskFailures(session: SessionHandle): Promise<string[]> {
  const history = await session.workflow.fetchHistory();
  return (history.events ?? [])
    .filter((event) => event.workflowTaskFailedEventAttributes != null)
    .map((event) => event.workflowTaskFailedEventAttributes?.failure?.message ?? '?');
}

describe('bad input on the wire contract (fast-check, real server)', () => {
  let harness: Harness;
  let stop: () => Promise<void>;
  let cwd: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    harness = await createHarness({ tools: testTools(), defaultCwd: cwd });
    const { worker, done } = await harness.startWorker();
    stop = async () => {
      worker.shutdown();
      await done;
    };
  });
  afterAll(async () => {
    await stop();
    await harness.close();
  });

  const stillAnswers = async (session: SessionHandle): Promise<void> => {
    const result = await session.executeTurn({
      turnId: uniqueName('ping'),
      calls: [{ id: 'p', name: 'Sleep', input: { ms: 1, label: 'pong' } }],
    });
    expect(result.results[0]?.modelContent).toBe('pong');
  };

  it(
    'random call lists: a clear rejection or one result per call, and the session stays usable',
    { timeout: 300_000 },
    async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
      let rejected = 0;
      let answered = 0;
      await fc.assert(
        fc.asyncProperty(requestArbitrary, async (request) => {
          let result: TurnResult | undefined;
          try {
            result = await session.workflow.executeUpdate(executeTurnUpdate, {
              args: [request as never],
              updateId: uniqueName('bad'),
            });
          } catch (error) {
            expect(isClearRejection(error), String(error)).toBe(true);
            rejected += 1;
            return;
          }
          answered += 1;
          const calls = (request as { calls: unknown[] }).calls;
          expect(result.results).toHaveLength(calls.length);
          for (const toolResult of result.results)
            expect(['success', 'error', 'cancelled', 'denied']).toContain(toolResult.status);
        }),
        { numRuns: Number(process.env.BAD_INPUT_RUNS ?? 60), seed: Number(process.env.BAD_INPUT_SEED ?? 20261203) },
      );
      expect(rejected).toBeGreaterThan(0);
      expect(answered).toBeGreaterThan(0);
      await stillAnswers(session);
      expect(await workflowTaskFailures(session)).toEqual([]);
    },
  );

  it(
    'signals and streaming updates with missing or wrong-typed fields are ignored or rejected',
    { timeout: 300_000 },
    async () => {
      const session = await harness.startSession({ cwd });
      await fc.assert(
        fc.asyncProperty(jsonish, jsonish, async (approval, interrupt) => {
          await session.workflow.signal(approvalSignal, approval as never);
          await session.workflow.signal(interruptSignal, interrupt as never);
          await session.workflow
            .executeUpdate(addCallsUpdate, { args: [approval as never], updateId: uniqueName('add') })
            .catch((error: unknown) => {
              expect(isClearRejection(error), String(error)).toBe(true);
            });
        }),
        { numRuns: 40, seed: 20261204 },
      );
      await stillAnswers(session);
      expect(await workflowTaskFailures(session)).toEqual([]);
    },
  );

  it(
    'an input over the payload limits is rejected by the validator; a huge result and deep nesting do not wedge the session',
    { timeout: 300_000 },
    async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
      // 3 MB of input. Temporal's frontend accepts the update request (under its 4 MB gRPC limit), but the workflow task
      // that accepts it would carry it twice and fail forever with "GRPC Message too large", wedging the session:
      // the validator rejects it instead, naming the limit, and nothing reaches history.
      const raw = (turnId: string, bytes: number) =>
        session.workflow.executeUpdate(executeTurnUpdate, {
          args: [{ turnId, calls: [{ id: 'a', name: 'Sleep', input: { ms: 1, label: 'x'.repeat(bytes) } }] }],
          updateId: turnId,
        });
      // 1.5 MB: under Temporal's limits, over Switchyard's: the validator rejects it, naming the limit.
      const rejected = await raw(uniqueName('big'), 1_500_000).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(isClearRejection(rejected), String(rejected)).toBe(true);
      expect((rejected as WorkflowUpdateFailedError).cause?.message).toMatch(/over the 1048576-byte limit per request/);
      await stillAnswers(session);
      // 3 MB through the client: refused before it is sent.
      await expect(
        session.executeTurn({
          turnId: uniqueName('big'),
          calls: [{ id: 'a', name: 'Sleep', input: { label: 'x'.repeat(3_000_000) } }],
        }),
      ).rejects.toThrow(/over the 1048576-byte limit/);
      await expect(
        session.streamTurn(uniqueName('big')).add({ id: 'a', name: 'Sleep', input: { label: 'é'.repeat(700_000) } }),
      ).rejects.toThrow(/over the 1048576-byte limit/);
      // 3 MB from a raw client: the server takes it (under gRPC's 4 MB), the speculative workflow task that would
      // reject it cannot echo it back (over 4 MB), so Temporal drops the update with FAILED_PRECONDITION. That task
      // never reaches history, and the session answers the next turn.
      const rawHuge = await raw(uniqueName('huge-raw'), 3_000_000).then(
        () => 'accepted',
        (error: unknown) => String((error as { cause?: unknown }).cause ?? error),
      );
      expect(rawHuge).toMatch(/FAILED_PRECONDITION/);
      await stillAnswers(session);

      // A 3 MB result goes to the artifact store; history holds a preview.
      const huge = await session.executeTurn({
        turnId: uniqueName('huge'),
        calls: [{ id: 'h', name: 'BigOutput', input: { size: 3 * 1024 * 1024 } }],
      });
      expect(huge.results[0]?.status).toBe('success');
      expect(huge.results[0]?.budget?.truncated).toBe(true);
      expect(huge.results[0]?.modelContent.length).toBeLessThan(110_000);

      // 2,000 levels of nesting in a call's input: an error result or a rejection, never a failed workflow task.
      const deep = await session
        .executeTurn({
          turnId: uniqueName('deep'),
          calls: [{ id: 'd', name: 'Sleep', input: nested(2_000) as Record<string, unknown> }],
        })
        .then(
          (result) => result.results[0]?.status,
          (error: unknown) => (isClearRejection(error) ? 'rejected' : String(error)),
        );
      expect(['error', 'rejected']).toContain(deep);
      await stillAnswers(session);
      expect(await workflowTaskFailures(session)).toEqual([]);
    },
  );
});
