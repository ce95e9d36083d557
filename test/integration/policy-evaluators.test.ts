import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { access, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createModelEvaluator } from '../../examples/evaluators/anthropic-model.js';
import { ruleBasedEvaluator } from '../../examples/evaluators/rule-based.js';
import type { ApprovalEvaluator, EvaluationRequest } from '../../src/contracts/policy.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { killCli, startCli, cliEnvironment } from '../support/cli-process.js';
import { allEvents, answer, eventsOfType, waitForPendingApprovals } from '../support/session-probes.js';
import { waitFor } from '../support/wait-for.js';

const exists = (file: string): Promise<boolean> =>
  access(file).then(
    () => true,
    () => false,
  );
const bash = (id: string, command: string) => ({ id, name: 'Bash', input: { command } });

/** An evaluator that never answers until it is cancelled: the human must win the race. */
const slowEvaluator: ApprovalEvaluator = {
  name: 'slow',
  evaluate: () => new Promise(() => undefined),
};

/** A scripted Anthropic Messages API: answers from the command it is shown, and records what it was asked. */
async function scriptedModel(): Promise<{ server: Server; baseUrl: string; prompts: string[] }> {
  const prompts: string[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const parsed = JSON.parse(body) as { messages: Array<{ content: string }> };
      const prompt = parsed.messages[0]?.content ?? '';
      prompts.push(prompt);
      const decision = prompt.includes('rm ')
        ? { decision: 'deny', reason: 'rm deletes files' }
        : { decision: 'allow', reason: 'harmless' };
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ content: [{ type: 'text', text: JSON.stringify(decision) }] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, prompts };
}

describe('approval evaluators race the human (real server, real tools)', () => {
  let harness: Harness;
  let model: Awaited<ReturnType<typeof scriptedModel>>;
  beforeAll(async () => {
    model = await scriptedModel();
    harness = await createHarness({
      tools: builtinTools(),
      evaluators: [
        ruleBasedEvaluator,
        slowEvaluator,
        createModelEvaluator({ apiKey: 'test-key', baseUrl: model.baseUrl }),
      ],
    });
  });
  afterAll(async () => {
    await harness.close();
    model.server.close();
  });

  it('the rule-based evaluator allows a plain call and denies rm; a deny rule is never lifted', async () => {
    const cwd = await scratchDir();
    await harness.withWorker(async () => {
      const session = await harness.startSession({
        cwd,
        approvalEvaluator: 'rule-based',
        rules: { deny: ['Bash(touch forbidden.txt)'] },
      });
      const result = await session.executeTurn({
        turnId: 't1',
        calls: [bash('c1', 'touch plain.txt'), bash('c2', 'rm plain.txt'), bash('c3', 'touch forbidden.txt')],
      });
      expect(result.results.map((entry) => entry.status)).toEqual(['success', 'denied', 'denied']);
      expect(result.results[1]?.modelContent).toContain('runs rm');
      expect(await exists(path.join(cwd, 'plain.txt'))).toBe(true);
      expect(await exists(path.join(cwd, 'forbidden.txt'))).toBe(false);
      const events = await allEvents(session);
      expect(eventsOfType(events, 'PermissionResolved')).toMatchObject([
        { callId: 'c1', source: 'evaluator', by: 'evaluator:rule-based', policyVersion: 1 },
      ]);
      expect(eventsOfType(events, 'PermissionDenied')).toMatchObject([
        { callId: 'c2', source: 'evaluator', by: 'evaluator:rule-based' },
        { callId: 'c3', source: 'rule' },
      ]);
      const decisions =
        await session.workflow.query<Array<{ callId?: string; by?: string; decision?: string }>>('approvalDecisions');
      expect(decisions).toMatchObject([
        { callId: 'c1', by: 'evaluator:rule-based', decision: 'allow' },
        { callId: 'c2', by: 'evaluator:rule-based', decision: 'deny' },
      ]);
    });
  });

  it('an escalation leaves the call to the human', async () => {
    const cwd = await scratchDir();
    await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, approvalEvaluator: 'rule-based' });
      const turn = session.executeTurn({ turnId: 't1', calls: [bash('c1', 'cp a b')] });
      const [request] = await waitForPendingApprovals(session);
      await answer(session, request!, 'deny');
      expect((await turn).results[0]).toMatchObject({ status: 'denied' });
    });
  });

  it('a human who answers before a slow evaluator wins', async () => {
    const cwd = await scratchDir();
    await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, approvalEvaluator: 'slow' });
      const turn = session.executeTurn({ turnId: 't1', calls: [bash('c1', 'touch human.txt')] });
      const [request] = await waitForPendingApprovals(session);
      await answer(session, request!, 'allow');
      expect((await turn).results[0]).toMatchObject({ status: 'success' });
      const decisions = await session.workflow.query<Array<{ by?: string }>>('approvalDecisions');
      expect(decisions.map((entry) => entry.by)).toEqual(['test-approver']);
      expect(eventsOfType(await allEvents(session), 'PermissionResolved')).toMatchObject([
        { callId: 'c1', source: 'user' },
      ]);
    });
  });

  it('the model evaluator asks the Messages API with the command, the rule that asked and the recent history', async () => {
    const cwd = await scratchDir();
    await harness.withWorker(async () => {
      const session = await harness.startSession({
        cwd,
        approvalEvaluator: 'anthropic-model',
        rules: { ask: ['Bash(touch:*)'] },
      });
      await session.executeTurn({ turnId: 't0', calls: [{ id: 'g1', name: 'Glob', input: { pattern: '*' } }] });
      const result = await session.executeTurn({
        turnId: 't1',
        calls: [bash('c1', 'touch model.txt'), bash('c2', 'rm model.txt')],
      });
      expect(result.results.map((entry) => entry.status)).toEqual(['success', 'denied']);
      expect(result.results[1]?.modelContent).toBe('rm deletes files');
      const first = model.prompts.find((prompt) => prompt.includes('touch model.txt')) ?? '';
      expect(first).toContain('The rule Bash(touch:*) requires approval');
      expect(first).toContain('- Glob success');
    });
  });
});

export type { EvaluationRequest };

describe('an approval evaluator and a lost worker', () => {
  it('a worker that stops while its evaluator runs: another worker evaluates again and the call is decided once', async () => {
    const calls: string[] = [];
    let firstStarted: () => void = () => undefined;
    const started = new Promise<void>((resolve) => {
      firstStarted = resolve;
    });
    /** On the first worker it hangs until the worker stops; on the second it allows. */
    const hanging: ApprovalEvaluator = {
      name: 'once',
      evaluate: (request, { signal }) => {
        calls.push(`first:${request.callId}`);
        firstStarted();
        return new Promise((_, reject) =>
          signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true }),
        );
      },
    };
    const allowing: ApprovalEvaluator = {
      name: 'once',
      evaluate: async (request) => {
        calls.push(`second:${request.callId}`);
        return { decision: 'allow', reason: 'second worker' };
      },
    };
    const harness = await createHarness({ tools: builtinTools() });
    const cwd = await scratchDir();
    try {
      const first = await harness.startWorker({ evaluators: [hanging] });
      const session = await harness.startSession({ cwd, approvalEvaluator: 'once', heartbeatTimeoutMs: 2_000 });
      const turn = session.executeTurn({ turnId: 't1', calls: [bash('c1', 'touch once.txt')] });
      await started;
      first.worker.shutdown();
      await first.done;
      await harness.withWorker(
        async () => {
          const result = await turn;
          expect(result.results[0]).toMatchObject({ status: 'success' });
          expect(calls).toEqual(['first:c1', 'second:c1']);
          const decisions =
            await session.workflow.query<Array<{ by?: string; decision?: string }>>('approvalDecisions');
          expect(decisions).toMatchObject([{ by: 'evaluator:once', decision: 'allow' }]);
          expect(decisions).toHaveLength(1);
          expect(eventsOfType(await allEvents(session), 'PermissionResolved')).toHaveLength(1);
          expect(await exists(path.join(cwd, 'once.txt'))).toBe(true);
        },
        { evaluators: [allowing] },
      );
    } finally {
      await harness.close();
    }
  });

  it('a worker SIGKILLed while its evaluator runs: a worker started later evaluates again, and the call is decided and run once', async () => {
    const harness = await createHarness({ tools: builtinTools() });
    const cwd = await scratchDir();
    const scratch = await scratchDir();
    const marker = path.join(scratch, 'evaluator-started');
    // `switchyard worker --evaluator MODULE` (src/cli/worker-commands.ts): the module's evaluator says it was
    // called, then never answers; the process is killed with it still waiting.
    const module = path.join(scratch, 'hanging-evaluator.mjs');
    await writeFile(
      module,
      [
        "import { writeFileSync } from 'node:fs';",
        'export default [{',
        "  name: 'killed',",
        '  evaluate(request) {',
        '    writeFileSync(process.env.EVALUATOR_MARKER, request.callId);',
        '    return new Promise(() => undefined);',
        '  },',
        '}];',
        '',
      ].join('\n'),
    );
    const env: NodeJS.ProcessEnv = await cliEnvironment(harness, { EVALUATOR_MARKER: marker });
    const child = startCli(['worker', '--cwd', cwd, '--evaluator', module], env);
    const evaluated: string[] = [];
    const allowing: ApprovalEvaluator = {
      name: 'killed',
      evaluate: async (request) => {
        evaluated.push(request.callId);
        return { decision: 'allow', reason: 'the second worker' };
      },
    };
    try {
      await child.waitForLog(
        (line) => line.msg === 'worker started' && line.taskQueue === harness.taskQueue,
        'the worker process to start',
      );
      const session = await harness.startSession({ cwd, approvalEvaluator: 'killed', heartbeatTimeoutMs: 2_000 });
      const turn = session.executeTurn({
        turnId: 't1',
        calls: [bash('c1', 'touch killed.txt && echo ran >> runs.log')],
      });
      await waitFor(
        async () => exists(marker),
        (found) => found,
        { what: 'the evaluator in the worker process to be called', timeoutMs: 60_000 },
      );
      child.child.kill('SIGKILL');
      expect(await child.exited).toMatchObject({ code: null, signal: 'SIGKILL' });
      expect(await exists(path.join(cwd, 'killed.txt'))).toBe(false);
      await harness.withWorker(
        async () => {
          const result = await turn;
          expect(result.results[0]).toMatchObject({ callId: 'c1', status: 'success' });
          expect(evaluated).toEqual(['c1']);
          const decisions =
            await session.workflow.query<Array<{ by?: string; decision?: string }>>('approvalDecisions');
          expect(decisions).toMatchObject([{ by: 'evaluator:killed', decision: 'allow' }]);
          expect(decisions).toHaveLength(1);
          expect(eventsOfType(await allEvents(session), 'PermissionResolved')).toHaveLength(1);
          expect(await exists(path.join(cwd, 'killed.txt'))).toBe(true);
          expect(await readFile(path.join(cwd, 'runs.log'), 'utf8')).toBe('ran\n');
        },
        { evaluators: [allowing] },
      );
    } finally {
      await killCli(child);
      await harness.close();
    }
  });
});
