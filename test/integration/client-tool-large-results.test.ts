import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientToolSpec } from '../../src/contracts/client-tools.js';
import { submitToolResultUpdate } from '../../src/contracts/messages.js';
import { PERSISTED_OUTPUT_OPEN_TAG } from '../../src/contracts/persisted-output.js';
import { createHarness, scratchDir, uniqueName } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { waitFor } from '../support/wait-for.js';

// A client answers its tool calls with content of any size: each answer must end as a result the model can use (the
// `<persisted-output>` envelope pointing at the stored whole, which Read opens), never as a turn result too large
// for Temporal that fails every workflow task and leaves the session stuck. Real server, real worker, real Read.

const fetchPage: ClientToolSpec = {
  name: 'FetchPageInBrowser',
  description: "Returns the text of a page open in the user's browser.",
  inputSchema: {
    type: 'object',
    properties: { tab: { type: 'string' } },
    required: ['tab'],
    additionalProperties: false,
  },
  readOnly: true,
};

describe('client-tool results over the payload budget', { timeout: 300_000 }, () => {
  let harness: Harness;
  let cwd: string;

  beforeAll(async () => {
    cwd = await scratchDir('switchyard-client-big-');
    await writeFile(path.join(cwd, 'small.txt'), 'small\n');
    harness = await createHarness({ defaultCwd: cwd });
  });
  afterAll(async () => harness.close());

  it('two 1.5 MB answers in one turn end as stored results the model can Read, and the session takes another turn', async () => {
    const { worker, done } = await harness.startWorker();
    try {
      const session = await harness.client.startSession(uniqueName('client-big'), { cwd, clientTools: [fetchPage] });
      const turn = session.executeTurn({
        turnId: 't1',
        calls: [
          { id: 'page-a', name: 'FetchPageInBrowser', input: { tab: 'a' } },
          { id: 'page-b', name: 'FetchPageInBrowser', input: { tab: 'b' } },
        ],
      });
      await waitFor(
        () => session.pendingClientCalls(),
        (calls) => calls.length === 2,
        { what: 'both client calls parked' },
      );
      const pageA = `${'a'.repeat(99)}\n`.repeat(15_000); // 1.5 MB
      const pageB = `${'b'.repeat(99)}\n`.repeat(15_000);
      await session.submitToolResult({ callId: 'page-a', content: pageA });
      await session.submitToolResult({ callId: 'page-b', content: pageB });
      const result = await turn;
      expect(result.results.map((entry) => entry.status)).toEqual(['success', 'success']);
      const artifacts: string[] = [];
      for (const entry of result.results) {
        expect(entry.modelContent.startsWith(PERSISTED_OUTPUT_OPEN_TAG)).toBe(true);
        expect(entry.modelContent.length).toBeLessThan(10_000);
        expect(entry.budget).toMatchObject({ truncated: true, originalBytes: 1_500_000, policy: 'artifact' });
        const artifact = entry.budget?.artifact;
        expect(artifact).toBeDefined();
        expect(entry.modelContent).toContain(artifact);
        artifacts.push(artifact ?? '');
      }

      // The model reads the stored whole back through the reference, and the session lives on.
      const next = await session.executeTurn({
        turnId: 't2',
        calls: [
          { id: 'read-a', name: 'Read', input: { file_path: artifacts[0], offset: 14_999, limit: 1 } },
          { id: 'read-small', name: 'Read', input: { file_path: 'small.txt' } },
        ],
      });
      expect(next.results.map((entry) => entry.status)).toEqual(['success', 'success']);
      expect(next.results[0]?.modelContent).toContain('a'.repeat(99));
      expect(next.results[1]?.modelContent).toContain('small');
    } finally {
      worker.shutdown();
      await done;
    }
  });

  it('an answer over the server payload limit fails in the client, naming the limit, and the call can still be answered', async () => {
    const { worker, done } = await harness.startWorker();
    try {
      const session = await harness.client.startSession(uniqueName('client-huge'), { cwd, clientTools: [fetchPage] });
      const turn = session.executeTurn({
        turnId: 't1',
        calls: [{ id: 'page', name: 'FetchPageInBrowser', input: { tab: 'a' } }],
      });
      await waitFor(
        () => session.pendingClientCalls(),
        (calls) => calls.length === 1,
        { what: 'the parked client call' },
      );
      await expect(session.submitToolResult({ callId: 'page', content: 'x'.repeat(3_000_000) })).rejects.toThrow(
        /limit of [\d,]+ bytes/,
      );
      await session.submitToolResult({ callId: 'page', content: 'the page, in a file the client wrote instead' });
      expect((await turn).results[0]).toMatchObject({ status: 'success' });
    } finally {
      worker.shutdown();
      await done;
    }
  });

  it('a client that skips the check: an answer over the limit is rejected, one just under it ends as a result', async () => {
    const { worker, done } = await harness.startWorker();
    try {
      const session = await harness.client.startSession(uniqueName('client-raw'), { cwd, clientTools: [fetchPage] });
      const turn = session.executeTurn({
        turnId: 't1',
        calls: [{ id: 'page', name: 'FetchPageInBrowser', input: { tab: 'a' } }],
      });
      await waitFor(
        () => session.pendingClientCalls(),
        (calls) => calls.length === 1,
        { what: 'the parked client call' },
      );
      // Straight to the server, as a client in another language would send it.
      await expect(
        session.workflow.executeUpdate(submitToolResultUpdate, {
          args: [{ callId: 'page', content: 'x'.repeat(2_500_000) }],
        }),
      ).rejects.toThrow();
      await session.workflow.executeUpdate(submitToolResultUpdate, {
        args: [{ callId: 'page', content: 'y'.repeat(1_990_000) }],
      });
      const [result] = (await turn).results;
      expect(result).toMatchObject({ status: 'success', budget: { originalBytes: 1_990_000, policy: 'artifact' } });
      expect(result?.modelContent.startsWith(PERSISTED_OUTPUT_OPEN_TAG)).toBe(true);
      const next = await session.executeTurn({
        turnId: 't2',
        calls: [{ id: 'read-small', name: 'Read', input: { file_path: 'small.txt' } }],
      });
      expect(next.results[0]).toMatchObject({ status: 'success' });
    } finally {
      worker.shutdown();
      await done;
    }
  });
});
