import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WorkflowFailedError } from '@temporalio/client';
import { NativeConnection, bundleWorkflowCode } from '@temporalio/worker';
import type { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { ApprovalRequest, ApprovalSignal } from '../../src/contracts/approval.js';
import type { SessionEvent } from '../../src/contracts/events.js';
import type { SessionOptions } from '../../src/contracts/session.js';
import type { ToolCall } from '../../src/contracts/tool-call.js';
import type { TurnResult } from '../../src/contracts/tool-result.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { createSwitchyardWorker } from '../../src/worker/create-worker.js';
import { createHarness, scratchDir, uniqueName } from '../support/harness.js';
import type { Harness } from '../support/harness.js';

const workflowsPath = fileURLToPath(new URL('../support/run-tool-turn-workflows.ts', import.meta.url));

/** Real built-in tools across three turns: a read group, errors, an approved Write, a denied Bash, a remembered Edit. */
const turns: Array<{ turnId: string; calls: ToolCall[] }> = [
  {
    turnId: 't1',
    calls: [
      { id: 'read', name: 'Read', input: { file_path: 'a.txt' } },
      { id: 'glob', name: 'Glob', input: { pattern: '*.txt' } },
      { id: 'grep', name: 'Grep', input: { pattern: 'hello', output_mode: 'content' } },
      { id: 'unknown', name: 'Nope', input: {} },
      { id: 'bad', name: 'Read', input: {} },
      { id: 'write', name: 'Write', input: { file_path: 'b.txt', content: 'new\n' } },
      { id: 'reread', name: 'Read', input: '{"file_path":"b.txt"}' },
    ],
  },
  {
    turnId: 't2',
    calls: [
      { id: 'rm', name: 'Bash', input: { command: 'rm -f a.txt' } },
      { id: 'edit', name: 'Edit', input: { file_path: 'b.txt', old_string: 'new', new_string: 'newer' } },
    ],
  },
  {
    turnId: 't3',
    calls: [
      { id: 'edit-again', name: 'Edit', input: { file_path: 'b.txt', old_string: 'newer', new_string: 'newest' } },
    ],
  },
];

/** How the test's human answers each request, by tool. */
function answer(request: ApprovalRequest): Omit<ApprovalSignal, 'requestId' | 'inputDigest'> {
  if (request.toolName === 'Bash') return { decision: 'deny', reason: 'not in this test' };
  if (request.toolName === 'Edit') return { decision: 'allow_always' };
  return { decision: 'allow' };
}

/** Answers every request the session shows until `until` settles; returns the tools it answered, in order. */
async function approveUntil(session: SessionHandle, until: Promise<unknown>): Promise<string[]> {
  let settled = false;
  void until.finally(() => {
    settled = true;
  });
  const answered: string[] = [];
  const seen = new Set<string>();
  while (!settled) {
    const pending = await session.pendingApprovals().catch(() => []);
    for (const request of pending.filter((candidate) => !seen.has(candidate.requestId))) {
      seen.add(request.requestId);
      answered.push(request.toolName);
      await session.approve({ requestId: request.requestId, inputDigest: request.inputDigest, ...answer(request) });
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  return answered;
}

/** Results without what differs between two runs by nature: timings, timelines, the workspace path. */
function comparable(results: TurnResult[], cwd: string): unknown {
  const text = JSON.stringify(results).replaceAll(cwd, '<cwd>');
  return (JSON.parse(text) as TurnResult[]).map((turn) => ({
    ...turn,
    results: turn.results.map(({ timings: _timings, timeline: _timeline, ...rest }) => rest),
  }));
}

/** The event log as a comparable list: calls of one group finish in any order, so each turn's events are sorted. */
function eventShape(events: SessionEvent[]): { groups: unknown[]; events: string[] } {
  const groups = events.flatMap((event) =>
    event.type === 'ToolCallScheduled' && event.groups !== undefined ? [event.groups] : [],
  );
  const lines = events
    .map((event) => `${event.turnId} ${event.type} ${'callId' in event ? (event.callId ?? '') : ''}`)
    .sort();
  return { groups, events: lines };
}

async function workspace(): Promise<string> {
  const cwd = await scratchDir('run-tool-turn-');
  await writeFile(path.join(cwd, 'a.txt'), 'hello\nworld\n');
  await mkdir(path.join(cwd, 'sub'));
  await writeFile(path.join(cwd, 'sub', 'c.txt'), 'hello again\n');
  return cwd;
}

describe('runToolTurn in a user workflow', () => {
  let harness: Harness;
  let worker: Worker;
  let running: Promise<void>;
  let connection: NativeConnection;

  beforeAll(async () => {
    harness = await createHarness();
    const { code } = await bundleWorkflowCode({
      workflowsPath,
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
    });
    const codePath = path.join(await scratchDir('run-tool-turn-bundle-'), 'bundle.js');
    await writeFile(codePath, code);
    connection = await NativeConnection.connect({ address: harness.address });
    worker = await createSwitchyardWorker({
      connection,
      namespace: harness.namespace,
      taskQueue: harness.taskQueue,
      tools: builtinTools(),
      workflowBundle: { codePath },
      dataDir: harness.dataDir,
      userSettingsDir: false,
    });
    running = worker.run();
  });
  afterAll(async () => {
    worker.shutdown();
    await running;
    await connection.close();
    await harness.close();
  });

  it('gives the same results, events and approvals as toolSession for the same calls', async () => {
    const options: SessionOptions = {};
    // toolSession, through its executeTurn update.
    const sessionCwd = await workspace();
    const session = await harness.client.startSession(uniqueName('session'), { ...options, cwd: sessionCwd });
    const sessionResults: TurnResult[] = [];
    const sessionAnswered: string[] = [];
    for (const turn of turns) {
      const result = session.executeTurn(turn);
      sessionAnswered.push(...(await approveUntil(session, result)));
      sessionResults.push(await result);
    }

    // The same turns from a user's workflow through runToolTurn; approvals are signals on that workflow.
    const userCwd = await workspace();
    const workflowId = uniqueName('user-workflow');
    const handle = await harness.client.client.workflow.start('toolTurns', {
      workflowId,
      taskQueue: harness.taskQueue,
      args: [{ options: { ...options, cwd: userCwd }, turns }],
    });
    const result = handle.result() as Promise<TurnResult[]>;
    const userAnswered = await approveUntil(harness.client.session(workflowId), result);
    const userResults = await result;

    expect(userAnswered).toEqual(['Write', 'Bash', 'Edit']);
    expect(userAnswered).toEqual(sessionAnswered);
    expect(comparable(userResults, userCwd)).toEqual(comparable(sessionResults, sessionCwd));
    // Spot checks that the pipeline really ran: errors as results, the approved Write seen by the Read after it,
    // the denial's reason, the remembered Edit that did not ask again.
    const byId = new Map(userResults.flatMap((turn) => turn.results).map((entry) => [entry.callId, entry]));
    expect(byId.get('unknown')?.modelContent).toContain('Nope');
    expect(byId.get('bad')?.isError).toBe(true);
    expect(byId.get('reread')?.modelContent).toContain('new');
    expect(byId.get('rm')).toMatchObject({ status: 'denied' });
    expect(byId.get('rm')?.modelContent).toContain('not in this test');
    expect(byId.get('edit-again')).toMatchObject({ status: 'success' });
    expect(await readFile(path.join(userCwd, 'b.txt'), 'utf8')).toBe('newest\n');

    const userEvents = await harness.client.session(workflowId).events(0);
    const sessionEvents = await session.events(0);
    expect(eventShape(userEvents.events)).toEqual(eventShape(sessionEvents.events));
    await session.end();
  });

  it('fails the workflow with InvalidToolTurn, not a workflow task loop, for duplicate call ids', async () => {
    const calls = [
      { id: 'x', name: 'Read', input: { file_path: 'a.txt' } },
      { id: 'x', name: 'Glob', input: { pattern: '*' } },
    ];
    const handle = await harness.client.client.workflow.start('toolTurns', {
      workflowId: uniqueName('user-workflow'),
      taskQueue: harness.taskQueue,
      args: [{ options: { cwd: await workspace() }, turns: [{ turnId: 't', calls }] }],
    });
    const error = await handle.result().then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(WorkflowFailedError);
    expect((error as WorkflowFailedError).cause).toMatchObject({
      type: 'InvalidToolTurn',
      message: expect.stringContaining('duplicate call id "x"'),
    });
  });
});
