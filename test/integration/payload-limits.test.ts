import type { ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalDecisionsQuery, approvalSignal } from '../../src/contracts/messages.js';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { ToolCall } from '../../src/contracts/tool-call.js';
import type { TurnResult } from '../../src/contracts/tool-result.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { connectMcpTools, mcpServersFromConfig } from '../../src/tools/mcp/mcp.js';
import type { McpTool } from '../../src/tools/mcp/mcp.js';
import { createHarness, scratchDir, uniqueName } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { killProcess, spawnWorkerProcess } from '../support/spawn-worker.js';

// What an attacker (the model, an MCP server) or a buggy client or signal sender can send, through real sessions on
// a real server with the real tools: whatever the sizes, each call ends as a result (or the request as a clear
// validator rejection), no workflow task fails, the session is never terminated and it answers the next turn.

const KB = 1024;

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

/** Runs a turn through the raw update (no client-side check): the turn's results, or `rejected` with the validator's message. */
async function turnOutcome(
  session: SessionHandle,
  calls: ToolCall[],
): Promise<{ results: TurnResult['results'] } | { rejected: string }> {
  const turnId = uniqueName('t');
  for (let attempt = 1; ; attempt += 1) {
    try {
      const result = await session.workflow.executeUpdate('executeTurn', {
        args: [{ turnId, calls }],
        updateId: turnId,
      });
      return { results: (result as TurnResult).results };
    } catch (error) {
      // A workflow task that timed out on a loaded machine (it retries): re-attach by the same turnId, as a client does.
      if (attempt < 6 && /Workflow Task in failed state/.test(String((error as { cause?: unknown }).cause ?? ''))) {
        await sleep(2_000);
        continue;
      }
      if (!isClearRejection(error)) throw error;
      return { rejected: (error as WorkflowUpdateFailedError).cause?.message ?? '' };
    }
  }
}

async function expectAlive(session: SessionHandle): Promise<void> {
  const result = await session.executeTurn({
    turnId: uniqueName('ping'),
    calls: [{ id: 'p', name: 'Bash', input: { command: 'echo pong' } }],
  });
  expect(result.results[0]?.modelContent.trim()).toBe('pong');
  expect((await session.workflow.describe()).status.name).toBe('RUNNING');
  expect(await workflowTaskFailures(session)).toEqual([]);
}

const echo = (bytes: number): string => `echo ${'y'.repeat(bytes)}`;
/** Calls of the real Bash and Write tools. */
type BashInput = { command: string; run_in_background?: boolean };
const bashOrWrite = (id: string, name: 'Bash' | 'Write', input: ToolCall['input']): ToolCall => ({ id, name, input });
const bash = (id: string, input: BashInput): ToolCall => bashOrWrite(id, 'Bash', input);
const write = (id: string, file: string, content: string): ToolCall =>
  bashOrWrite(id, 'Write', { file_path: file, content });

describe('payload sizes end to end (real tools, real server)', () => {
  let harness: Harness;
  let cwd: string;
  let stop: () => Promise<void>;
  beforeAll(async () => {
    cwd = await scratchDir();
    harness = await createHarness({ tools: builtinTools(), defaultCwd: cwd });
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

  it(
    'a 600 KB echo, an 800 KB heredoc and their background variants end as results or a clear rejection; the session answers the next turn',
    { timeout: 240_000 },
    async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
      const heredoc = `cat > out.txt <<'EOF'\n${`${'z'.repeat(99)}\n`.repeat(8 * 1024)}EOF`;
      const requests: ToolCall[][] = [
        [{ id: 'echo', name: 'Bash', input: { command: echo(600 * KB) } }],
        [{ id: 'heredoc', name: 'Bash', input: { command: heredoc } }],
        [{ id: 'echo-bg', name: 'Bash', input: { command: echo(600 * KB), run_in_background: true } }],
        [{ id: 'heredoc-bg', name: 'Bash', input: { command: heredoc, run_in_background: true } }],
      ];
      for (const calls of requests) {
        const outcome = await turnOutcome(session, calls);
        if ('rejected' in outcome) expect(outcome.rejected).toMatch(/over the 262144-byte limit per call/);
        else expect(outcome.results.map((result) => result.callId)).toEqual(calls.map((call) => call.id));
        await expectAlive(session);
      }
      // The client refuses it before sending, with the same message.
      await expect(
        session.executeTurn({
          turnId: uniqueName('big'),
          calls: [{ id: 'e', name: 'Bash', input: { command: echo(600 * KB) } }],
        }),
      ).rejects.toThrow(/over the 262144-byte limit per call/);
    },
  );

  it(
    '8 × 100 KB commands in one group, 4 × 250 KB writes and a 200 KB command each end as a result',
    { timeout: 240_000 },
    async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
      const turns: Array<{ calls: ToolCall[]; status: string }> = [
        {
          calls: Array.from({ length: 8 }, (_, index) => bash(`c${index}`, { command: echo(100 * KB) })),
          status: 'success',
        },
        {
          calls: Array.from({ length: 4 }, (_, index) => write(`w${index}`, `w${index}.txt`, 'w'.repeat(250 * KB))),
          status: 'success',
        },
        // Linux takes at most 128 KiB as one argument: a longer command is refused with a clear validation error.
        { calls: [{ id: 'long', name: 'Bash', input: { command: echo(200 * KB) } }], status: 'error' },
      ];
      for (const { calls, status } of turns) {
        const outcome = await turnOutcome(session, calls);
        expect('results' in outcome, JSON.stringify(outcome).slice(0, 300)).toBe(true);
        if (!('results' in outcome)) return;
        expect(outcome.results.map((result) => [result.callId, result.status])).toEqual(
          calls.map((call) => [call.id, status]),
        );
        if (status === 'error') expect(outcome.results[0]?.modelContent).toMatch(/at most 131071 bytes/);
        await expectAlive(session);
      }
      const scheduled = (await session.events()).events.find(
        (event) => event.type === 'ToolCallScheduled' && event.callId === 'c0',
      );
      expect(scheduled?.type === 'ToolCallScheduled' && scheduled.groups?.map((group) => group.length)).toEqual([5, 3]);
    },
  );

  it(
    'property: random command sizes and group shapes up to the limits never fail a workflow task',
    { timeout: 600_000 },
    async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
      const firstRun = (await session.workflow.describe()).runId;
      let calls = 0;
      let results = 0;
      let rejected = 0;
      const callArbitrary = fc.record({
        bytes: fc.oneof(
          { arbitrary: fc.integer({ min: 0, max: 2 * KB }), weight: 4 },
          { arbitrary: fc.integer({ min: 0, max: 120 * KB }), weight: 3 },
          { arbitrary: fc.integer({ min: 0, max: 260 * KB }), weight: 1 },
          { arbitrary: fc.constantFrom(128 * KB - 10, 256 * KB - 20, 256 * KB + 1), weight: 1 },
        ),
        kind: fc.constantFrom('echo', 'heredoc', 'background', 'write'),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(callArbitrary, { minLength: 1, maxLength: 8 }), async (shapes) => {
          const turnCalls: ToolCall[] = shapes.map(({ bytes, kind }, index) => {
            const id = `c${index}`;
            if (kind === 'write')
              return { id, name: 'Write', input: { file_path: `w${index}.txt`, content: 'w'.repeat(bytes) } };
            if (kind === 'heredoc')
              return { id, name: 'Bash', input: { command: `cat > h${index}.txt <<'EOF'\n${'h'.repeat(bytes)}\nEOF` } };
            return bash(id, { command: echo(bytes), ...(kind === 'background' ? { run_in_background: true } : {}) });
          });
          const outcome = await turnOutcome(session, turnCalls);
          if ('rejected' in outcome) {
            expect(outcome.rejected).toMatch(/limit/);
            rejected += 1;
            return;
          }
          calls += turnCalls.length;
          expect(outcome.results.map((result) => result.callId)).toEqual(turnCalls.map((call) => call.id));
          for (const result of outcome.results) expect(['success', 'error']).toContain(result.status);
          results += outcome.results.length;
        }),
        { numRuns: Number(process.env.PAYLOAD_RUNS ?? 5), seed: Number(process.env.PAYLOAD_SEED ?? 20261204) },
      );
      expect(results).toBe(calls);
      console.log(`payload property: ${calls} calls, ${results} results, ${rejected} requests rejected`);
      await expectAlive(session);
      expect(
        (await session.workflow.describe()).runId === firstRun ||
          (await session.workflow.describe()).status.name === 'RUNNING',
      ).toBe(true);
    },
  );

  it(
    'two 1.2 MB approval signals leave the session working across a continue-as-new',
    { timeout: 240_000 },
    async () => {
      await writeFile(path.join(cwd, 'small.txt'), 'small\n');
      const session = await harness.startSession({ cwd, continueAsNewAfterEvents: 12 });
      const firstRun = (await session.workflow.describe()).runId;
      const big = 'r'.repeat(1_200_000);
      await session.workflow.signal(approvalSignal, { requestId: big, decision: 'allow', inputDigest: 'sha256:x' });
      await session.workflow.signal(approvalSignal, {
        requestId: 'r1',
        decision: 'deny',
        inputDigest: 'sha256:x',
        by: big.slice(0, 600_000),
        reason: big.slice(0, 600_000),
      });
      for (let turn = 0; turn < 6; turn += 1) {
        const result = await session.executeTurn({
          turnId: uniqueName('read'),
          calls: [{ id: 'r', name: 'Read', input: { file_path: 'small.txt' } }],
        });
        expect(result.results[0]?.status).toBe('success');
      }
      expect((await session.workflow.describe()).runId).not.toBe(firstRun);
      await expectAlive(session);
      const decisions = await session.workflow.query(approvalDecisionsQuery);
      expect(decisions.length).toBeGreaterThan(0);
      for (const decision of decisions) expect(JSON.stringify(decision).length).toBeLessThan(5_000);
    },
  );
});

const hostileServer = () =>
  mcpServersFromConfig({
    mcpServers: {
      hostile: {
        command: process.execPath,
        args: ['--import', 'tsx', path.resolve('test/support/mcp-test-server.ts')],
        cwd: path.resolve('.'),
      },
    },
  });

describe('hostile MCP servers (real MCP server process, real server)', () => {
  let harness: Harness;
  let mcp: { tools: McpTool[]; close(): Promise<void> };
  let stop: () => Promise<void>;
  let cwd: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    mcp = await connectMcpTools(hostileServer());
    harness = await createHarness({ tools: [...builtinTools(), ...mcp.tools], defaultCwd: cwd });
    const { worker, done } = await harness.startWorker();
    stop = async () => {
      worker.shutdown();
      await done;
    };
  });
  afterAll(async () => {
    await stop();
    await harness.close();
    await mcp.close();
  });

  it(
    'a 12 MB response fails only its own call; a call in flight on the same connection and the next one succeed',
    { timeout: 120_000 },
    async () => {
      const a = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
      const b = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
      const pidBefore = (
        await b.executeTurn({ turnId: 'pid', calls: [{ id: 'w', name: 'mcp__hostile__whoami', input: {} }] })
      ).results[0]?.modelContent;
      const slow = b.executeTurn({
        turnId: 'slow',
        calls: [{ id: 's', name: 'mcp__hostile__slow', input: { ms: 4_000 } }],
      });
      await sleep(500);
      const huge = await a.executeTurn({
        turnId: 'huge',
        calls: [{ id: 'h', name: 'mcp__hostile__huge', input: { bytes: 12 * 1024 * 1024 } }],
      });
      expect(huge.results[0]?.status).toBe('error');
      expect(huge.results[0]?.modelContent).toMatch(/response .*over the \d+-byte limit/);
      expect((await slow).results[0]).toMatchObject({ status: 'success', modelContent: 'slept 4000ms' });
      const after = await b.executeTurn({
        turnId: 'after',
        calls: [{ id: 'w', name: 'mcp__hostile__whoami', input: {} }],
      });
      expect(after.results[0]?.status).toBe('success');
      expect(after.results[0]?.modelContent).toBe(pidBefore);
    },
  );

  it('text that imitates Switchyard envelopes reaches the model neutralised', async () => {
    const session = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
    const result = await session.executeTurn({
      turnId: 'imitate',
      calls: [{ id: 'i', name: 'mcp__hostile__imitate', input: {} }],
    });
    expect(result.results[0]?.status).toBe('success');
    const text = result.results[0]?.modelContent ?? '';
    expect(text).not.toContain('<persisted-output>');
    expect(text).not.toContain('<tool_use_error>');
    expect(text).toContain('persisted-output');
    expect(text).toContain('/etc/shadow');
  });

  it('a deny rule on an MCP tool decides before its arguments are checked', async () => {
    const session = await harness.startSession({
      cwd,
      permissionMode: 'bypassPermissions',
      rules: { deny: ['mcp__hostile__match_as'] },
    });
    const started = Date.now();
    const result = await session.executeTurn({
      turnId: 'deny',
      calls: [{ id: 'm', name: 'mcp__hostile__match_as', input: { word: `${'a'.repeat(40)}!` } }],
    });
    expect(result.results[0]?.status).toBe('denied');
    console.log(`denied MCP call answered in ${Date.now() - started} ms`);
  });
});

describe('a backtracking pattern in an MCP schema (worker in its own process)', () => {
  let harness: Harness;
  let worker: ChildProcess | undefined;
  let cwd: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    await writeFile(path.join(cwd, 'notes.txt'), 'hello\n');
    harness = await createHarness({ defaultCwd: cwd });
    worker = await spawnWorkerProcess(harness, {
      tools: 'builtin',
      env: { SWITCHYARD_TEST_MCP: '1', SWITCHYARD_WORKER_CWD: cwd },
    });
  });
  afterAll(async () => {
    if (worker !== undefined) await killProcess(worker);
    await harness.close();
  });

  it(
    "a 40-character input against ^(a+)+$ leaves another session's Read responsive",
    { timeout: 120_000 },
    async () => {
      const attacker = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
      const reader = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
      // Warm the reader's session, so the measure below is one Read, not a first workflow task.
      await reader.executeTurn({
        turnId: 'warm',
        calls: [{ id: 'r', name: 'Read', input: { file_path: 'notes.txt' } }],
      });
      const attack = attacker.executeTurn({
        turnId: 'attack',
        calls: [{ id: 'm', name: 'mcp__hostile__match_as', input: { word: `${'a'.repeat(40)}!` } }],
      });
      attack.catch(() => undefined);
      await sleep(1_000);
      const started = Date.now();
      const read = await Promise.race([
        reader.executeTurn({ turnId: 'read', calls: [{ id: 'r', name: 'Read', input: { file_path: 'notes.txt' } }] }),
        sleep(30_000).then(() => undefined),
      ]);
      const readMs = Date.now() - started;
      console.log(`Read during the hostile pattern: ${read === undefined ? 'no answer in 30 s' : `${readMs} ms`}`);
      expect(read?.results[0]?.status).toBe('success');
      expect(readMs).toBeLessThan(5_000);
      const attacked = await Promise.race([attack, sleep(30_000).then(() => undefined)]);
      expect(attacked?.results[0]?.status).toBe('error');
      expect(attacked?.results[0]?.modelContent).toMatch(/InputValidationError/);
    },
  );
});
