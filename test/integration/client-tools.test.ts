import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientToolSpec } from '../../src/contracts/client-tools.js';
import { texts } from '../../src/contracts/texts.js';
import { createHarness, scratchDir, uniqueName } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { waitFor } from '../support/wait-for.js';

// Client tools: calls of tools the client runs itself go through the pipeline up to execution, then park until the
// client answers with the update `submitToolResult`. Real sessions on the test server, with the real Read and Glob.

const clickButton: ClientToolSpec = {
  name: 'ClickButton',
  description: "Clicks a button in the user's browser.",
  inputSchema: {
    type: 'object',
    properties: { selector: { type: 'string', minLength: 1 } },
    required: ['selector'],
    additionalProperties: false,
  },
  readOnly: true,
};

let harness: Harness;
let cwd: string;

beforeAll(async () => {
  harness = await createHarness();
  cwd = await scratchDir('switchyard-client-tools-');
  await writeFile(path.join(cwd, 'hello.txt'), 'hello\n');
});

afterAll(async () => {
  await harness.close();
});

describe('client tools', () => {
  it('park after permission while the rest of the group completes, survive a worker restart, and take one answer', async () => {
    let worker = await harness.startWorker({ defaultCwd: cwd });
    const session = await harness.client.startSession(uniqueName('client-tools'), { cwd, clientTools: [clickButton] });
    const turn = session.executeTurn({
      turnId: 't1',
      calls: [
        { id: 'read', name: 'Read', input: { file_path: 'hello.txt' } },
        { id: 'click', name: 'ClickButton', input: { selector: '#ok' } },
        { id: 'glob', name: 'Glob', input: { pattern: '*.txt' } },
      ],
    });
    const parked = await waitFor(
      () => session.pendingClientCalls(),
      (calls) => calls.length === 1,
      { what: 'the parked client call' },
    );
    expect(parked[0]).toMatchObject({
      callId: 'click',
      turnId: 't1',
      toolName: 'ClickButton',
      input: { selector: '#ok' },
    });
    // Its siblings in the same read-only group finished while it waits.
    const events = await waitFor(
      () => session.events(),
      (page) =>
        ['read', 'glob'].every((id) =>
          page.events.some((event) => event.type === 'ToolCallResult' && event.callId === id),
        ),
      { what: "the siblings' results" },
    );
    expect(events.events.some((event) => event.type === 'ClientToolRequested' && event.callId === 'click')).toBe(true);
    const scheduled = events.events.filter((event) => event.type === 'ToolCallScheduled');
    expect(new Set(scheduled.map((event) => (event as { groupIndex: number }).groupIndex)).size).toBe(1);

    // A worker restart while the call is parked loses nothing.
    worker.worker.shutdown();
    await worker.done;
    worker = await harness.startWorker({ defaultCwd: cwd });
    try {
      await expect(session.submitToolResult({ callId: 'nope', content: 'x' })).rejects.toThrow(/No client call "nope"/);
      expect(await session.submitToolResult({ callId: 'click', content: 'clicked #ok' })).toEqual({
        callId: 'click',
        accepted: true,
      });
      const result = await turn;
      expect(result.results.map((entry) => [entry.callId, entry.status])).toEqual([
        ['read', 'success'],
        ['click', 'success'],
        ['glob', 'success'],
      ]);
      expect(result.results[1]?.modelContent).toBe('clicked #ok');
      // A second answer to the same call is rejected, not taken for another one: through the client, and as any
      // Temporal client sends it (the validator's reason is the failure's cause).
      await expect(session.submitToolResult({ callId: 'click', content: 'again' })).rejects.toThrow(/already answered/);
      const raw = await session.workflow
        .executeUpdate('submitToolResult', { args: [{ callId: 'click', content: 'again' }] })
        .catch((error: unknown) => error);
      expect(((raw as Error).cause as Error).message).toMatch(/Client call "click" was already answered/);
      expect(await session.pendingClientCalls()).toEqual([]);
    } finally {
      worker.worker.shutdown();
      await worker.done;
    }
  });

  it('validates the input against the JSON Schema and applies permission rules before parking', async () => {
    await harness.withWorker(
      async () => {
        const session = await harness.client.startSession(uniqueName('client-tools-rules'), {
          cwd,
          clientTools: [clickButton, { ...clickButton, name: 'DeleteAccount', readOnly: false }],
          rules: { deny: ['DeleteAccount'] },
        });
        const result = await session.executeTurn({
          turnId: 't1',
          calls: [
            { id: 'bad', name: 'ClickButton', input: { selector: '' } },
            { id: 'denied', name: 'DeleteAccount', input: { selector: '#delete' } },
          ],
        });
        expect(result.results[0]).toMatchObject({ status: 'error', errorCode: 'input_validation' });
        expect(result.results[0]?.modelContent).toMatch(/^<tool_use_error>InputValidationError: .*selector/);
        expect(result.results[1]).toMatchObject({ status: 'denied' });
        expect(await session.pendingClientCalls()).toEqual([]);
      },
      { defaultCwd: cwd },
    );
  });

  it('ends a parked call as cancelled when the turn is interrupted', async () => {
    await harness.withWorker(
      async () => {
        const session = await harness.client.startSession(uniqueName('client-tools-interrupt'), {
          cwd,
          clientTools: [clickButton],
        });
        const turn = session.executeTurn({
          turnId: 't1',
          calls: [{ id: 'click', name: 'ClickButton', input: { selector: '#go' } }],
        });
        await waitFor(
          () => session.pendingClientCalls(),
          (calls) => calls.length === 1,
          { what: 'the parked client call' },
        );
        await session.interrupt('the user pressed stop');
        const result = await turn;
        expect(result.results[0]).toMatchObject({ status: 'cancelled', modelContent: texts.rejectMessage });
        await expect(session.submitToolResult({ callId: 'click', content: 'too late' })).rejects.toThrow(
          /already answered/,
        );
      },
      { defaultCwd: cwd },
    );
  });

  it('ends a parked call with a clear error after clientToolTimeoutMs', async () => {
    await harness.withWorker(
      async () => {
        const session = await harness.client.startSession(uniqueName('client-tools-timeout'), {
          cwd,
          clientTools: [clickButton],
          clientToolTimeoutMs: 1_000,
        });
        const result = await session.executeTurn({
          turnId: 't1',
          calls: [{ id: 'click', name: 'ClickButton', input: { selector: '#go' } }],
        });
        expect(result.results[0]).toMatchObject({
          status: 'error',
          errorCode: 'timeout',
          modelContent: texts.clientToolTimedOut('ClickButton', 1_000),
        });
      },
      { defaultCwd: cwd },
    );
  });
});
