import { execFile } from 'node:child_process';
import { access, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { ApprovalRequest } from '../../src/contracts/approval.js';
import type { SessionEvent } from '../../src/contracts/events.js';
import { untilFileExists } from '../support/condition-tools.js';
import { createHarness, scratchDir, uniqueName } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { testTools } from '../support/test-tools.js';
import { waitFor } from '../support/wait-for.js';

const run = promisify(execFile);

describe('durable approvals on a real server', () => {
  let harness: Harness;
  let cwd: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    harness = await createHarness({ tools: testTools(), defaultCwd: cwd });
  });
  afterAll(async () => harness.close());

  /** Sends the approval signal with the temporal CLI binary, not with project code. */
  async function signalWithCli(session: SessionHandle, payload: Record<string, unknown>): Promise<void> {
    const binary = inject('temporalBinaryPath') || 'temporal';
    await run(binary, [
      'workflow',
      'signal',
      '--address',
      harness.address,
      '--namespace',
      harness.namespace,
      '--workflow-id',
      session.sessionId,
      '--name',
      'approval',
      '--input',
      JSON.stringify(payload),
    ]);
  }

  const pending = (session: SessionHandle, count = 1) =>
    waitFor(
      () => session.pendingApprovals(),
      (list) => list.length >= count,
      { what: `${count} pending approval(s)` },
    );
  const eventsOf = async (session: SessionHandle, type: SessionEvent['type']) =>
    (await session.events()).events.filter((event) => event.type === type);

  it('waits for approval, ignores a wrong digest, an unknown id and a second answer, and runs the approved input once', async () => {
    const { worker, done } = await harness.startWorker();
    try {
      const session = await harness.startSession({ cwd });
      const turn = session.executeTurn({
        turnId: 't1',
        calls: [{ id: 'e1', name: 'FakeEdit', input: { file_path: 'out.txt', text: 'hello\n' } }],
      });
      const [request] = (await pending(session)) as [ApprovalRequest];
      expect(request).toMatchObject({
        turnId: 't1',
        callId: 'e1',
        toolName: 'FakeEdit',
        input: { file_path: path.join(cwd, 'out.txt'), text: 'hello\n' },
        preview: `append "hello\\n" to ${path.join(cwd, 'out.txt')}`,
      });
      expect(request.inputDigest).toMatch(/^[0-9a-f]{64}$/);

      await signalWithCli(session, { requestId: request.requestId, decision: 'allow', inputDigest: 'f'.repeat(64) });
      await signalWithCli(session, {
        requestId: 'no-such-request',
        decision: 'allow',
        inputDigest: request.inputDigest,
      });
      await waitFor(
        () => eventsOf(session, 'ApprovalIgnored'),
        (events) => events.length === 2,
        { what: 'two ignored approvals' },
      );
      expect(await session.pendingApprovals()).toHaveLength(1);

      await signalWithCli(session, {
        requestId: request.requestId,
        decision: 'allow',
        inputDigest: request.inputDigest,
        by: 'cli-user',
      });
      const result = await turn;
      expect(result.results[0]).toMatchObject({
        status: 'success',
        modelContent: `appended to ${path.join(cwd, 'out.txt')}`,
      });
      expect(result.results[0]?.timings.permissionWaitMs).toBeGreaterThan(0);

      await signalWithCli(session, {
        requestId: request.requestId,
        decision: 'deny',
        inputDigest: request.inputDigest,
      });
      const ignored = await waitFor(
        () => eventsOf(session, 'ApprovalIgnored'),
        (events) => events.length === 3,
        { what: 'third ignored approval' },
      );
      expect(ignored.map((event) => event.type === 'ApprovalIgnored' && event.reason)).toEqual([
        'digest_mismatch',
        'unknown',
        'already_decided',
      ]);
      expect(await eventsOf(session, 'PermissionResolved')).toMatchObject([
        { callId: 'e1', decision: 'allow', source: 'user', by: 'cli-user' },
      ]);
      expect(await readFile(path.join(cwd, 'out.txt'), 'utf8')).toBe('hello\n');
      expect(await session.pendingApprovals()).toEqual([]);
    } finally {
      worker.shutdown();
      await done;
    }
  });

  it('publishes the pending count in the SwitchyardPendingApprovals search attribute and the current details', async () => {
    const { worker, done } = await harness.startWorker();
    try {
      const session = await harness.startSession({ cwd });
      const turn = session.executeTurn({
        turnId: 't',
        calls: [{ id: 'e', name: 'FakeEdit', input: { file_path: 'sa.txt' } }],
      });
      const [request] = (await pending(session)) as [ApprovalRequest];
      const query = `WorkflowId = '${session.sessionId}' AND SwitchyardPendingApprovals > 0`;
      await waitFor(
        async () => {
          const found: string[] = [];
          for await (const execution of harness.client.client.workflow.list({ query }))
            found.push(execution.workflowId);
          return found;
        },
        (found) => found.includes(session.sessionId),
        { what: 'visibility to list the waiting session' },
      );
      // What the Web UI shows as the workflow's current details (the built-in metadata query).
      const metadata = await session.workflow.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
      const details = metadata.currentDetails ?? '';
      expect(details).toContain('Waiting for 1 approval(s)');
      // The resolved path a human approves, and since when it waits.
      expect(details).toContain(
        `**1. FakeEdit** \`${path.join(cwd, 'sa.txt')}\` — waiting since ${request.requestedAt}`,
      );
      // The ready-to-paste signal input is the one that approves: sent as written there, the turn completes.
      const pasted = JSON.parse(/```json\n([^`]*)\n```/.exec(details)?.[1] ?? 'null') as Record<string, unknown>;
      expect(pasted).toEqual({ requestId: request.requestId, decision: 'allow', inputDigest: request.inputDigest });
      // The static summary set at start (the Web UI shows it instead of "No summary available").
      const description = await session.workflow.describe();
      expect(await description.staticSummary()).toBe(
        `Switchyard session ${session.sessionId} · cwd ${cwd} · mode default`,
      );
      expect(await description.staticDetails()).toContain('Send a Signal, name `approval`');
      await signalWithCli(session, pasted);
      expect((await turn).results[0]).toMatchObject({ status: 'success' });
    } finally {
      worker.shutdown();
      await done;
    }
  });

  it('answers two asks of one group in reverse order, and runs both', async () => {
    const result = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, rules: { ask: ['Sleep'] } });
      const turn = session.executeTurn({
        turnId: 't',
        calls: [
          { id: 'first', name: 'Sleep', input: { ms: 1, label: 'one' } },
          { id: 'second', name: 'Sleep', input: { ms: 1, label: 'two' } },
        ],
      });
      const requests = await pending(session, 2);
      const byCall = new Map(requests.map((request) => [request.callId, request]));
      for (const callId of ['second', 'first']) {
        const request = byCall.get(callId);
        if (request === undefined) throw new Error(`no request for ${callId}`);
        await session.approve({ requestId: request.requestId, decision: 'allow', inputDigest: request.inputDigest });
      }
      const result = await turn;
      const { events } = await session.events();
      return {
        result,
        groups:
          events.find((e) => e.type === 'ToolCallScheduled')?.type === 'ToolCallScheduled'
            ? (events.find((e) => e.type === 'ToolCallScheduled') as { groups: string[][] }).groups
            : [],
      };
    });
    expect(result.groups).toEqual([['first', 'second']]);
    expect(result.result.results.map((r) => [r.callId, r.status, r.modelContent])).toEqual([
      ['first', 'success', 'one'],
      ['second', 'success', 'two'],
    ]);
  });

  it('turns a deny into a denied result, and a missed approvalTimeoutMs into a denial that says so', async () => {
    const outcome = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      const turn = session.executeTurn({
        turnId: 't',
        calls: [{ id: 'e', name: 'FakeEdit', input: { file_path: 'denied.txt' } }],
      });
      const [request] = (await pending(session)) as [ApprovalRequest];
      await session.approve({
        requestId: request.requestId,
        decision: 'deny',
        inputDigest: request.inputDigest,
        reason: 'not today',
      });
      const denied = await turn;
      const timed = await harness.startSession({ cwd, approvalTimeoutMs: 300 });
      const timedOut = await timed.executeTurn({
        turnId: 't',
        calls: [{ id: 'e', name: 'FakeEdit', input: { file_path: 'late.txt' } }],
      });
      return { denied, timedOut, deniedEvents: await eventsOf(session, 'PermissionDenied') };
    });
    expect(outcome.denied.results[0]).toMatchObject({
      status: 'denied',
      isError: true,
      modelContent: 'The user denied permission to use FakeEdit. Reason: not today',
    });
    expect(outcome.deniedEvents).toHaveLength(1);
    expect(outcome.timedOut.results[0]).toMatchObject({
      status: 'denied',
      modelContent: 'Permission to use FakeEdit was denied: no approval arrived within 300ms (approvalTimeoutMs).',
    });
  });

  it('remembers allow_always as a session rule that later calls match, but never above an ask rule', async () => {
    const outcome = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, rules: { ask: ['FakeShell(npm publish:*)'] } });
      const first = session.executeTurn({
        turnId: 't1',
        calls: [{ id: 'b1', name: 'FakeShell', input: { command: 'npm test -- --run' } }],
      });
      const [request] = (await pending(session)) as [ApprovalRequest];
      await session.approve({
        requestId: request.requestId,
        decision: 'allow_always',
        inputDigest: request.inputDigest,
      });
      await first;
      const second = await session.executeTurn({
        turnId: 't2',
        calls: [{ id: 'b2', name: 'FakeShell', input: { command: 'npm test' } }],
      });
      const third = session.executeTurn({
        turnId: 't3',
        calls: [{ id: 'b3', name: 'FakeShell', input: { command: 'npm publish' } }],
      });
      const [publish] = (await pending(session)) as [ApprovalRequest];
      await session.approve({ requestId: publish.requestId, decision: 'deny', inputDigest: publish.inputDigest });
      const state = await session.workflow.query<{ rememberedRules: string[] }>('sessionState');
      return {
        second,
        third: await third,
        requested: await eventsOf(session, 'PermissionRequested'),
        rules: state.rememberedRules,
      };
    });
    expect(outcome.rules).toEqual(['FakeShell(npm test:*)']);
    expect(outcome.second.results[0]).toMatchObject({ status: 'success', modelContent: 'ran npm test' });
    expect(outcome.requested.map((event) => event.type === 'PermissionRequested' && event.callId)).toEqual([
      'b1',
      'b3',
    ]);
    expect(outcome.third.results[0]?.status).toBe('denied');
  });

  it('races PermissionRequest hooks against the human: the first decision wins, a crashing hook decides nothing', async () => {
    // The slow hook answers only after the test releases it, which the test does once the human's answer is
    // recorded: the human wins that race by construction, never by a hook's sleep outlasting a signal.
    const slowHookStarted = path.join(cwd, 'slow-hook.started');
    const slowHookRelease = path.join(cwd, 'slow-hook.release');
    const hooks = {
      permissionRequest: [
        {
          matcher: 'FakeEdit',
          run: async (input: { toolInput: unknown }) => {
            const file = path.basename((input.toolInput as { file_path: string }).file_path);
            if (file === 'auto.txt') return { behavior: 'allow' as const };
            if (file === 'blocked.txt') return { behavior: 'deny' as const, message: 'blocked by policy hook' };
            if (file === 'crash.txt') throw new Error('hook crashed');
            if (file === 'slow.txt') {
              await writeFile(slowHookStarted, '');
              await untilFileExists(slowHookRelease, AbortSignal.timeout(100_000));
              return { behavior: 'deny' as const, message: 'too late' };
            }
            return undefined;
          },
        },
      ],
    };
    const outcome = await harness.withWorker(
      async () => {
        const session = await harness.startSession({ cwd });
        const hooked = await session.executeTurn({
          turnId: 't1',
          calls: [
            { id: 'auto', name: 'FakeEdit', input: { file_path: 'auto.txt' } },
            { id: 'blocked', name: 'FakeEdit', input: { file_path: 'blocked.txt' } },
          ],
        });
        const human = session.executeTurn({
          turnId: 't2',
          calls: [
            { id: 'crash', name: 'FakeEdit', input: { file_path: 'crash.txt' } },
            { id: 'slow', name: 'FakeEdit', input: { file_path: 'slow.txt' } },
          ],
        });
        const answer = async (callId: string): Promise<void> => {
          const list = await waitFor(
            () => session.pendingApprovals(),
            (requests) => requests.some((r) => r.callId === callId),
            { what: `the approval of ${callId}` },
          );
          const request = list.find((r) => r.callId === callId) as ApprovalRequest;
          await session.approve({ requestId: request.requestId, decision: 'allow', inputDigest: request.inputDigest });
          await waitFor(
            () => eventsOf(session, 'PermissionResolved'),
            (events) => events.some((e) => e.type === 'PermissionResolved' && e.callId === callId),
            {
              what: `the decision on ${callId}`,
            },
          );
        };
        await answer('crash');
        // The slow hook is running (it wrote its marker) while the human answers.
        await waitFor(
          () =>
            access(slowHookStarted).then(
              () => true,
              () => false,
            ),
          (started) => started,
          { what: 'the slow hook to start' },
        );
        await answer('slow');
        await writeFile(slowHookRelease, '');
        return {
          hooked,
          human: await human,
          resolved: await eventsOf(session, 'PermissionResolved'),
          denied: await eventsOf(session, 'PermissionDenied'),
        };
      },
      { hooks },
    );
    expect(outcome.hooked.results.map((r) => [r.callId, r.status, r.modelContent])).toEqual([
      ['auto', 'success', `appended to ${path.join(cwd, 'auto.txt')}`],
      ['blocked', 'denied', 'blocked by policy hook'],
    ]);
    expect(outcome.human.results.map((r) => [r.callId, r.status, r.modelContent])).toEqual([
      ['crash', 'success', `appended to ${path.join(cwd, 'crash.txt')}`],
      ['slow', 'success', `appended to ${path.join(cwd, 'slow.txt')}`],
    ]);
    expect(outcome.resolved.map((e) => e.type === 'PermissionResolved' && [e.callId, e.source])).toEqual([
      ['auto', 'hook'],
      ['crash', 'user'],
      ['slow', 'user'],
    ]);
    // The hook's late deny changed nothing.
    expect(outcome.denied.map((e) => e.type === 'PermissionDenied' && e.callId)).toEqual(['blocked']);
  });

  it('lists and answers approvals with the switchyard CLI', async () => {
    const cli = async (...args: string[]) =>
      run(process.execPath, [path.resolve('bin/switchyard.js'), ...args], {
        env: {
          ...process.env,
          TEMPORAL_ADDRESS: harness.address,
          TEMPORAL_NAMESPACE: harness.namespace,
          SWITCHYARD_TASK_QUEUE: harness.taskQueue,
        },
      });
    const result = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      const turn = session.executeTurn({
        turnId: 't',
        calls: [{ id: 'e', name: 'FakeEdit', input: { file_path: 'cli.txt' } }],
      });
      await pending(session);
      const listed = JSON.parse(
        (await cli('pending', '--session', session.sessionId, '--json')).stdout,
      ) as ApprovalRequest[];
      expect(listed).toHaveLength(1);
      await cli('deny', listed[0]?.requestId ?? '', '--session', session.sessionId, '--reason', 'from the CLI');
      return turn;
    });
    expect(result.results[0]).toMatchObject({
      status: 'denied',
      modelContent: 'The user denied permission to use FakeEdit. Reason: from the CLI',
    });
    await expect(cli('approve', '--session', 'x')).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('approve needs the request id'),
    });
  });

  it('keeps a pending approval across a worker restart, and runs the call exactly once', async () => {
    const session = await harness.startSession({ cwd });
    const target = path.join(cwd, `${uniqueName('restart')}.txt`);
    const first = await harness.startWorker();
    const turn = session.executeTurn({
      turnId: 't',
      calls: [{ id: 'e', name: 'FakeEdit', input: { file_path: target, text: 'once\n' } }],
    });
    const [request] = (await pending(session)) as [ApprovalRequest];
    first.worker.shutdown();
    await first.done;

    const second = await harness.startWorker();
    try {
      await session.approve({ requestId: request.requestId, decision: 'allow', inputDigest: request.inputDigest });
      const result = await turn;
      expect(result.results[0]?.status).toBe('success');
      expect(await readFile(target, 'utf8')).toBe('once\n');
      expect((await eventsOf(session, 'ToolCallStarted')).length).toBe(1);
    } finally {
      second.worker.shutdown();
      await second.done;
    }
  });
});
