import type { ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApproverKeyPair } from '../../src/approvals/approval-signature.js';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { ApprovalDecisionRecord } from '../../src/contracts/approval.js';
import type { CallInDoubt } from '../../src/contracts/calls-in-doubt.js';
import { approvalDecisionsQuery } from '../../src/contracts/messages.js';
import type { SessionOptions } from '../../src/contracts/session.js';
import type { TurnResult } from '../../src/contracts/tool-result.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { cliEnvironment, runCli } from '../support/cli-process.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { allEvents, currentRunId, rejectionOf } from '../support/session-probes.js';
import { killProcess, spawnWorkerProcess } from '../support/spawn-worker.js';
import { waitFor } from '../support/wait-for.js';

/**
 * The command every session below runs: its first run writes the idempotency key it sees to `key1` and sleeps (its
 * worker is SIGKILLed then); a later run (the `retry`) finds `key1` and writes the key it sees to `key2`.
 */
const COMMAND =
  'if [ -e key1 ]; then printf %s "$SWITCHYARD_IDEMPOTENCY_KEY" > key2; echo retried; ' +
  'else printf %s "$SWITCHYARD_IDEMPOTENCY_KEY" > key1; sleep 30; fi';

interface InDoubtSession {
  session: SessionHandle;
  cwd: string;
  interrupted: Promise<TurnResult>;
  /** The session's run when it started. */
  firstRunId: string;
}

/**
 * Calls in doubt (docs/SEMANTICS.md, Calls in doubt), through real sessions with the real Bash: a worker process is
 * SIGKILLed while each session's non-idempotent Bash sleeps; each call ends `interrupted` and is listed in doubt, and
 * `switchyard doubt resolve` settles them each of the three ways.
 */
describe('calls in doubt: a person settles a call whose worker died (real server, real Bash, SIGKILL)', () => {
  let harness: Harness;
  let approversFile: string;
  let keyFile: string;
  let env: NodeJS.ProcessEnv;
  const alice = generateApproverKeyPair();
  const children: ChildProcess[] = [];
  let stopWorker: (() => Promise<void>) | undefined;
  const sessions = new Map<string, InDoubtSession>();

  beforeAll(async () => {
    approversFile = path.join(await scratchDir('switchyard-approvers-'), 'approvers.json');
    await writeFile(approversFile, JSON.stringify({ approvers: { alice: { publicKey: alice.publicKeyPem } } }));
    keyFile = path.join(await scratchDir('switchyard-keys-'), 'alice.key');
    await writeFile(keyFile, alice.privateKeyPem, { mode: 0o600 });
    harness = await createHarness({ tools: builtinTools(), approversFile });
    env = await cliEnvironment(harness);
    const doomed = await spawnWorkerProcess(harness, {
      tools: 'builtin',
      env: { SWITCHYARD_APPROVERS_FILE: approversFile },
    });
    children.push(doomed);
    const start = async (name: string, extra: Partial<SessionOptions> = {}): Promise<void> => {
      const cwd = await scratchDir(`switchyard-doubt-${name}-`);
      const session = await harness.startSession({
        cwd,
        heartbeatTimeoutMs: 2_000,
        permissionMode: 'bypassPermissions',
        ...extra,
      });
      const interrupted = session.executeTurn({
        turnId: 't1',
        calls: [{ id: 'b1', name: 'Bash', input: { command: COMMAND } }],
      });
      sessions.set(name, { session, cwd, interrupted, firstRunId: await currentRunId(session) });
    };
    await start('retry');
    await start('ran');
    await start('not-ran');
    await start('approvers', { approvers: ['alice'] });
    await start('permission');
    await start('carried', { continueAsNewAfterEvents: 1 });
    await start('streaming');
    // Every command has started (written key1) before the worker is killed.
    for (const { cwd } of sessions.values())
      await waitFor(
        () => readFile(path.join(cwd, 'key1'), 'utf8').catch(() => ''),
        (text) => text !== '',
        { what: 'the command to start' },
      );
    await killProcess(doomed);
    const { worker, done } = await harness.startWorker();
    stopWorker = async () => {
      worker.shutdown();
      await done;
    };
  });
  afterAll(async () => {
    await Promise.all(children.map(killProcess));
    await stopWorker?.();
    await harness.close();
  });

  const entry = (name: string): InDoubtSession => {
    const found = sessions.get(name);
    if (found === undefined) throw new Error(`no session ${name}`);
    return found;
  };
  const decisions = (session: SessionHandle): Promise<ApprovalDecisionRecord[]> =>
    session.workflow.query(approvalDecisionsQuery);
  const resolve = (session: SessionHandle, outcome: string, ...extra: string[]) =>
    runCli(['doubt', 'resolve', 'b1', '--session', session.sessionId, '--outcome', outcome, ...extra], env);

  it('ends the call interrupted for the model, lists it in doubt with the key the command saw, and says so in an event', async () => {
    for (const { session, cwd, interrupted } of sessions.values()) {
      const result = await interrupted;
      expect(result.results[0]).toMatchObject({ callId: 'b1', status: 'error', errorCode: 'interrupted' });
      const key = `${session.sessionId}:b1:1`;
      expect(await readFile(path.join(cwd, 'key1'), 'utf8')).toBe(key);
      const listed: CallInDoubt[] = await session.callsInDoubt();
      expect(listed).toEqual([
        {
          callId: 'b1',
          turnId: 't1',
          toolName: 'Bash',
          inputSummary: COMMAND,
          inputDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
          idempotencyKey: key,
          startedAt: expect.any(String),
        },
      ]);
      const events = (await allEvents(session)).filter((event) => event.type === 'CallInDoubt');
      expect(events).toMatchObject([{ callId: 'b1', turnId: 't1', toolName: 'Bash', idempotencyKey: key }]);
    }
    const listed = await runCli(['doubt', 'list', '--json'], env);
    const all = JSON.parse(listed.stdout) as Array<CallInDoubt & { sessionId: string }>;
    for (const { session } of sessions.values())
      expect(all.filter((call) => call.sessionId === session.sessionId)).toHaveLength(1);
  });

  it('retry: runs the call again first in the next turn, through the pipeline, with the same idempotency key', async () => {
    const { session, cwd } = entry('retry');
    const resolved = await resolve(session, 'retry', '--by', 'operator', '--json');
    expect(JSON.parse(resolved.stdout)).toMatchObject({ callId: 'b1', outcome: 'retry', verified: false });
    expect(await session.callsInDoubt()).toEqual([]);
    const next = await session.executeTurn({
      turnId: 't2',
      calls: [{ id: 'n1', name: 'Bash', input: { command: 'echo next' } }],
    });
    expect(next.results.map((result) => [result.callId, result.status])).toEqual([
      ['b1', 'success'],
      ['n1', 'success'],
    ]);
    expect(next.results[0]?.modelContent).toContain('retried');
    // The retry saw the key the execution in doubt saw (and callsInDoubt listed).
    expect(await readFile(path.join(cwd, 'key2'), 'utf8')).toBe(await readFile(path.join(cwd, 'key1'), 'utf8'));
    const events = await allEvents(session);
    expect(events.filter((event) => event.type === 'CallInDoubtResolved')).toMatchObject([
      { callId: 'b1', outcome: 'retry', by: 'operator', verified: false },
    ]);
    // Permission again: the retry's call went through the permission chain and started as a call of turn t2.
    expect(events.filter((event) => event.type === 'ToolCallStarted' && event.turnId === 't2')).toMatchObject([
      { callId: 'b1' },
      { callId: 'n1' },
    ]);
    expect((await decisions(session)).filter((record) => record.requestId === 'resolveInDoubt')).toMatchObject([
      { callId: 'b1', outcome: 'accepted', by: 'operator', reason: 'resolveInDoubt: retry', inputSummary: COMMAND },
    ]);
    // A settled call is no longer in doubt: a second resolution is refused.
    await expect(resolve(session, 'not-ran')).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('Unknown call in doubt "b1"'),
    });
  });

  it('ran: the output the person gives is what the next turn reports for the call; nothing runs again', async () => {
    const { session, cwd } = entry('ran');
    await resolve(session, 'ran', '--output', 'it did run: 1 row written', '--by', 'operator');
    expect(await session.callsInDoubt()).toEqual([]);
    const next = await session.executeTurn({
      turnId: 't2',
      calls: [{ id: 'n1', name: 'Bash', input: { command: 'echo next' } }],
    });
    expect(next.results.map((result) => [result.callId, result.status, result.modelContent.trim()])).toEqual([
      ['b1', 'success', 'it did run: 1 row written'],
      ['n1', 'success', 'next'],
    ]);
    await expect(readFile(path.join(cwd, 'key2'), 'utf8')).rejects.toThrow();
    // Reported once: the turn after does not report it again.
    const later = await session.executeTurn({
      turnId: 't3',
      calls: [{ id: 'n2', name: 'Bash', input: { command: 'echo later' } }],
    });
    expect(later.results.map((result) => result.callId)).toEqual(['n2']);
  });

  it('not-ran: recorded in the audit and an event, removed from the list, nothing reported or run', async () => {
    const { session, cwd } = entry('not-ran');
    await resolve(session, 'not-ran', '--by', 'operator');
    expect(await session.callsInDoubt()).toEqual([]);
    const next = await session.executeTurn({
      turnId: 't2',
      calls: [{ id: 'n1', name: 'Bash', input: { command: 'echo next' } }],
    });
    expect(next.results.map((result) => result.callId)).toEqual(['n1']);
    await expect(readFile(path.join(cwd, 'key2'), 'utf8')).rejects.toThrow();
    expect((await allEvents(session)).filter((event) => event.type === 'CallInDoubtResolved')).toMatchObject([
      { callId: 'b1', outcome: 'not-ran' },
    ]);
    expect((await decisions(session)).filter((record) => record.requestId === 'resolveInDoubt')).toMatchObject([
      { callId: 'b1', outcome: 'accepted', reason: 'resolveInDoubt: not-ran', toolName: 'Bash' },
    ]);
  });

  it('in a session with approvers: an unsigned resolution is refused and changes nothing; alice’s signed one settles it', async () => {
    const { session, cwd } = entry('approvers');
    await expect(resolve(session, 'retry', '--by', 'alice')).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('unsigned'),
    });
    expect(await session.callsInDoubt()).toHaveLength(1);
    expect((await decisions(session)).filter((record) => record.requestId === 'resolveInDoubt')).toMatchObject([
      { callId: 'b1', outcome: 'ignored', ignoredBecause: 'unsigned' },
    ]);
    const signed = await resolve(session, 'retry', '--key', keyFile, '--json');
    expect(JSON.parse(signed.stdout)).toMatchObject({ callId: 'b1', outcome: 'retry', verified: true });
    expect(await session.callsInDoubt()).toEqual([]);
    const next = await session.executeTurn({
      turnId: 't2',
      calls: [{ id: 'n1', name: 'Bash', input: { command: 'echo next' } }],
    });
    expect(next.results.map((result) => [result.callId, result.status])).toEqual([
      ['b1', 'success'],
      ['n1', 'success'],
    ]);
    expect(await readFile(path.join(cwd, 'key2'), 'utf8')).toBe(`${session.sessionId}:b1:1`);
    expect((await decisions(session)).filter((record) => record.requestId === 'resolveInDoubt')).toMatchObject([
      { outcome: 'ignored', ignoredBecause: 'unsigned' },
      { callId: 'b1', outcome: 'accepted', by: 'alice', verified: true },
    ]);
  });

  it('an unknown call id is rejected with a clear error', async () => {
    const { session } = entry('not-ran');
    const rejection = await rejectionOf(session.resolveInDoubt({ callId: 'nope', outcome: 'not-ran', by: 'operator' }));
    expect(String(rejection)).toMatch(/Unknown call in doubt "nope"/);
  });

  it('retry runs through permission again: a deny rule set after the resolution denies the retry', async () => {
    const { session, cwd } = entry('permission');
    await resolve(session, 'retry', '--by', 'operator');
    await session.setPolicy({ rules: { deny: ['Bash(if:*)'] }, by: 'operator' });
    const next = await session.executeTurn({
      turnId: 't2',
      calls: [{ id: 'n1', name: 'Bash', input: { command: 'echo next' } }],
    });
    expect(next.results.map((result) => [result.callId, result.status])).toEqual([
      ['b1', 'denied'],
      ['n1', 'success'],
    ]);
    await expect(readFile(path.join(cwd, 'key2'), 'utf8')).rejects.toThrow();
  });

  it('carries calls in doubt and settled ones not yet reported across continue-as-new', async () => {
    const { session, firstRunId } = entry('carried');
    await waitFor(
      () => currentRunId(session),
      (runId) => runId !== firstRunId,
      { what: 'a continue-as-new after the interrupted turn' },
    );
    expect((await session.callsInDoubt()).map((call) => call.callId)).toEqual(['b1']);
    // Idle, the new run waits for an event before it continues as new again: the resolution's event is one.
    const settledRun = await currentRunId(session);
    await resolve(session, 'ran', '--output', 'carried output', '--by', 'operator');
    await waitFor(
      () => currentRunId(session),
      (runId) => runId !== settledRun,
      { what: 'a continue-as-new after the resolution' },
    );
    const next = await session.executeTurn({
      turnId: 't2',
      calls: [{ id: 'n1', name: 'Bash', input: { command: 'echo next' } }],
    });
    expect(next.results.map((result) => [result.callId, result.modelContent.trim()])).toEqual([
      ['b1', 'carried output'],
      ['n1', 'next'],
    ]);
  });

  it('gives a background Bash task the idempotency key in its environment too', async () => {
    const { session, cwd } = entry('retry');
    const writeKey = { command: 'printf %s "$SWITCHYARD_IDEMPOTENCY_KEY" > bgkey', run_in_background: true };
    const started = await session.executeTurn({
      turnId: 'bg',
      calls: [{ id: 'bg1', name: 'Bash', input: writeKey }],
    });
    expect(started.results[0]).toMatchObject({ status: 'success' });
    await waitFor(
      () => readFile(path.join(cwd, 'bgkey'), 'utf8').catch(() => ''),
      (text) => text !== '',
      { what: 'the background task to write its key' },
    );
    expect(await readFile(path.join(cwd, 'bgkey'), 'utf8')).toBe(`${session.sessionId}:bg1:1`);
  });

  it('a streaming next turn reports settled calls first too: the retry, then the model’s calls', async () => {
    const { session, cwd } = entry('streaming');
    await resolve(session, 'retry', '--by', 'operator');
    const turn = session.streamTurn('s2');
    await turn.add({ id: 'n1', name: 'Bash', input: { command: 'echo next' } });
    await turn.end();
    const results = [];
    for await (const result of turn) results.push([result.callId, result.status]);
    expect(results).toEqual([
      ['b1', 'success'],
      ['n1', 'success'],
    ]);
    expect(await readFile(path.join(cwd, 'key2'), 'utf8')).toBe(`${session.sessionId}:b1:1`);
  });
});
