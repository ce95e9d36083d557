import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApprovalRequest } from '../../src/contracts/approval.js';
import { conditionTools } from '../support/condition-tools.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { testTools } from '../support/test-tools.js';
import { waitFor } from '../support/wait-for.js';
import { texts } from '../../src/contracts/texts.js';

describe('interrupts, pipeline exits and continue-as-new on a real server', () => {
  let harness: Harness;
  let cwd: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    harness = await createHarness({
      tools: [...testTools(), ...conditionTools()],
      defaultCwd: cwd,
      hooks: {
        preToolUse: [
          {
            matcher: 'FakeShell',
            run: (input) => {
              const command = (input.toolInput as { command: string }).command;
              if (command.startsWith('rm ')) return { permissionDecision: 'deny' };
              if (command === 'hooked')
                return { permissionDecision: 'allow', additionalContext: 'checked by the test hook' };
              if (command === 'crash') throw new Error('hook crashed');
              return undefined;
            },
          },
        ],
      },
    });
  });
  afterAll(async () => harness.close());

  it('interrupt cancels running cancel-tools and pending approvals, lets block-tools finish, and ends the turn', async () => {
    // The block tool runs until the test releases it, which it does only once the interrupt has cancelled the
    // pending approval: so the interrupt provably arrived while the block tool ran.
    const blockRelease = path.join(cwd, 'block.release');
    const outcome = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, rules: { ask: ['Sleep(*)'], allow: [] } });
      const turn = session.executeTurn({
        turnId: 't',
        calls: [
          { id: 'long', name: 'FakeFetch', input: { url: 'https://x.io' } },
          {
            id: 'block',
            name: 'BlockingWaitForFile',
            input: { release_file: blockRelease, label: 'blocked until released' },
          },
          { id: 'ask', name: 'Sleep', input: { ms: 30_000 } },
          { id: 'later', name: 'FakeEdit', input: { file_path: 'never.txt' } },
        ],
      });
      await waitFor(
        () => session.pendingApprovals(),
        (list: ApprovalRequest[]) => list.length === 1,
        { what: 'the pending approval' },
      );
      await session.interrupt('user pressed Esc');
      await waitFor(
        () => session.pendingApprovals(),
        (list: ApprovalRequest[]) => list.length === 0,
        { what: 'the interrupt to cancel the approval' },
      );
      await writeFile(blockRelease, '');
      const result = await turn;
      return { result, pendingAfter: await session.pendingApprovals() };
    });
    const byId = Object.fromEntries(outcome.result.results.map((r) => [r.callId, r]));
    expect(outcome.result.stopped).toBe(true);
    expect(outcome.result.stopReason).toBe('interrupted: user pressed Esc');
    expect(byId.long?.status).toBe('success'); // finished before the interrupt
    expect(byId.block).toMatchObject({ status: 'success', modelContent: 'blocked until released' });
    expect(byId.ask).toMatchObject({ status: 'cancelled', modelContent: texts.rejectMessage });
    expect(byId.later).toMatchObject({ status: 'cancelled' });
    expect(outcome.pendingAfter).toEqual([]);
  });

  it('interrupt cancels a running cancel-tool through its heartbeat', async () => {
    const result = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      const turn = session.executeTurn({ turnId: 't', calls: [{ id: 's', name: 'Sleep', input: { ms: 60_000 } }] });
      await waitFor(
        async () => (await session.events()).events,
        (events) => events.some((e) => e.type === 'ToolCallStarted'),
        { what: 'the call to start' },
      );
      await session.interrupt();
      return turn;
    });
    expect(result.results[0]).toMatchObject({ status: 'cancelled', isError: true });
    expect(result.results[0]?.timings.totalMs).toBeLessThan(30_000);
    expect(result.stopReason).toBe('interrupted');
  });

  it('gives every pipeline exit its documented text without failing a workflow task', async () => {
    const { result, history } = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, rules: { deny: ['FakeFetch(domain:evil.io)'] } });
      const result = await session.executeTurn({
        turnId: 't',
        calls: [
          { id: 'notfound', name: 'Nope', input: {} },
          { id: 'empty', name: '', input: {} },
          { id: 'schema', name: 'Sleep', input: '{"ms": -1}' },
          { id: 'business', name: 'Refuse', input: {} },
          { id: 'hookdeny', name: 'FakeShell', input: { command: 'rm -rf /' } },
          { id: 'ruledeny', name: 'FakeFetch', input: { url: 'https://api.evil.io/x' } },
          { id: 'timeout', name: 'Slow', input: {} },
          { id: 'hooked', name: 'FakeShell', input: { command: 'hooked' } },
          { id: 'schema-out', name: 'BadOutput', input: {} },
        ],
      });
      return { result, history: await session.workflow.fetchHistory() };
    });
    const byId = Object.fromEntries(result.results.map((r) => [r.callId, r]));
    expect(byId.notfound).toMatchObject({ status: 'error', modelContent: 'Tool not found: Nope' });
    expect(byId.empty).toMatchObject({ status: 'error', modelContent: 'Tool not found: ' });
    expect(byId.schema?.modelContent).toMatch(/^<tool_use_error>InputValidationError: ms: .+<\/tool_use_error>$/);
    expect(byId.business).toMatchObject({
      status: 'error',
      modelContent: '<tool_use_error>nothing to do here</tool_use_error>',
    });
    expect(byId.hookdeny).toMatchObject({
      status: 'denied',
      modelContent: 'Blocked by PreToolUse hook',
      errorCode: 'hook_blocked',
    });
    expect(byId.ruledeny).toMatchObject({
      status: 'denied',
      modelContent: 'Permission to use FakeFetch was denied by the rule FakeFetch(domain:evil.io).',
    });
    expect(byId.timeout).toMatchObject({
      status: 'error',
      modelContent: 'Tool execution timed out after 200ms',
      errorCode: 'timeout',
    });
    // A hook's allow skipped the default ask, and its context reached the model.
    expect(byId.hooked).toMatchObject({
      status: 'success',
      modelContent: 'ran hooked\n\n[Hook additional context]\n1. checked by the test hook',
    });
    expect(byId['schema-out']).toMatchObject({
      status: 'error',
      errorCode: 'output_schema',
      modelContent: 'Tool output failed runtimeOutputSchema validation',
    });
    const failedTasks = history.events?.filter((event) => event.workflowTaskFailedEventAttributes) ?? [];
    expect(failedTasks).toEqual([]);
  });

  it('never runs a call silently when its hook crashes: the normal flow still asks', async () => {
    const outcome = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'dontAsk' });
      return session.executeTurn({
        turnId: 't',
        calls: [{ id: 'crash', name: 'FakeShell', input: { command: 'crash' } }],
      });
    });
    expect(outcome.results[0]).toMatchObject({ status: 'denied' });
    expect(outcome.results[0]?.modelContent).toMatch(/dontAsk/);
  });

  it('answers every call with a clear error when the session was started with an invalid rule', async () => {
    const result = await harness.withWorker(async () => {
      // Started with a raw client: the typed client would refuse these options.
      const handle = await harness.client.client.workflow.start('toolSession', {
        workflowId: `bad-rules-${Date.now()}`,
        taskQueue: harness.taskQueue,
        args: [{ cwd, rules: { deny: ['FakeShell('] } }],
      });
      return harness.client
        .session(handle.workflowId)
        .executeTurn({ turnId: 't', calls: [{ id: 'a', name: 'Sleep', input: { ms: 1 } }] });
    });
    expect(result.results[0]?.status).toBe('error');
    expect(result.results[0]?.modelContent).toMatch(
      /^This session's permission rules are invalid, so no tool may run: Invalid permission rule "FakeShell\("/,
    );
    await expect(harness.client.startSession('never', { rules: { deny: ['FakeShell('] } })).rejects.toThrow(
      /Invalid permission rule/,
    );
  });

  it('continues as new in the middle of a session, keeping remembered approvals and the event cursor', async () => {
    const outcome = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, continueAsNewAfterEvents: 5 });
      const firstRunId = (await session.workflow.describe()).runId;
      const turn = session.executeTurn({
        turnId: 't1',
        calls: [{ id: 'b1', name: 'FakeShell', input: { command: 'make build' } }],
      });
      const [request] = (await waitFor(
        () => session.pendingApprovals(),
        (list) => list.length === 1,
      )) as [ApprovalRequest];
      await session.approve({
        requestId: request.requestId,
        decision: 'allow_always',
        inputDigest: request.inputDigest,
      });
      await turn;
      const before = await session.events();
      // The session continues as new once idle past the threshold.
      await waitFor(
        async () => (await session.workflow.describe()).runId,
        (runId) => runId !== firstRunId,
        { what: 'continue-as-new' },
      );
      const afterRun = await session.events(before.next);
      const second = await session.executeTurn({
        turnId: 't2',
        calls: [{ id: 'b2', name: 'FakeShell', input: { command: 'make build' } }],
      });
      const after = await session.events(before.next);
      const all = await session.events(0);
      return { before, afterRun, second, after, all };
    });
    expect(outcome.afterRun.events).toEqual([]);
    expect(outcome.afterRun.next).toBe(outcome.before.next);
    expect(outcome.second.results[0]).toMatchObject({ status: 'success', modelContent: 'ran make build' });
    // No new approval was needed: the remembered rule crossed continue-as-new.
    expect(outcome.after.events.map((event) => event.type)).not.toContain('PermissionRequested');
    expect(outcome.after.events[0]?.seq).toBe(outcome.before.next);
    const seqs = outcome.all.events.map((event) => event.seq);
    expect(seqs).toEqual(seqs.map((_, index) => index));
  });
});
