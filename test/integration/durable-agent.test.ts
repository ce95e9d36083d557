import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedModel } from '../../examples/durable-agent/scripted-model.js';
import type { ScriptedModel } from '../../examples/durable-agent/scripted-model.js';
import { agentWorkflowsPath } from '../../examples/durable-agent/worker.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { callsRunByPlan, localExecuteCallMarkers } from '../support/history-text.js';
import { killProcess } from '../support/spawn-worker.js';

/** A process whose stdout the test reads as it comes. */
interface Watched {
  child: ChildProcess;
  output: () => string;
  /** Resolves once stdout matches, with the match; rejects if the process exits first or after `timeoutMs`. */
  waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<RegExpMatchArray>;
}

function watch(child: ChildProcess): Watched {
  let output = '';
  const waiters = new Set<() => void>();
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    for (const waiter of waiters) waiter();
  });
  child.once('exit', () => {
    for (const waiter of waiters) waiter();
  });
  return {
    child,
    output: () => output,
    waitFor: (pattern, timeoutMs = 90_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${String(pattern)}; output so far:\n${output}`));
        }, timeoutMs);
        const check = (): void => {
          const match = output.match(pattern);
          if (match !== null) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(match);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            clearTimeout(timer);
            waiters.delete(check);
            reject(
              new Error(
                `process exited (${child.exitCode ?? child.signalCode}) before ${String(pattern)}; output:\n${output}`,
              ),
            );
          }
        };
        waiters.add(check);
        check();
      }),
  };
}

/**
 * The durable-agent example end to end, on the real server with the real built-in tools: `main.ts` (what
 * `npm run example:agent` runs) drives the agent workflow and asks approvals on its stdin; the agent's worker runs in
 * its own process, killed once while the Edit waits for approval and started again; the scripted model reads, edits,
 * tests and answers.
 */
describe('durable agent example', () => {
  let harness: Harness;
  let model: ScriptedModel;
  let bundlePath: string;
  let env: NodeJS.ProcessEnv;
  const processes: ChildProcess[] = [];

  beforeAll(async () => {
    harness = await createHarness();
    model = await startScriptedModel();
    const { code } = await bundleWorkflowCode({
      workflowsPath: agentWorkflowsPath,
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
    });
    bundlePath = path.join(await scratchDir('agent-bundle-'), 'bundle.js');
    await writeFile(bundlePath, code);
    env = {
      ...process.env,
      TEMPORAL_ADDRESS: harness.address,
      TEMPORAL_NAMESPACE: harness.namespace,
      AGENT_TASK_QUEUE: harness.taskQueue,
      WORKFLOW_BUNDLE: bundlePath,
      ANTHROPIC_API_KEY: 'scripted',
      ANTHROPIC_BASE_URL: model.url,
      SWITCHYARD_DATA_DIR: harness.dataDir,
      SWITCHYARD_USER_SETTINGS_DIR: await scratchDir('agent-user-'),
    };
  });
  afterAll(async () => {
    await Promise.all(processes.map((child) => killProcess(child)));
    await model.close();
    await harness.close();
  });

  const startWorker = async (): Promise<Watched> => {
    const worker = watch(
      spawn(process.execPath, ['--import', 'tsx', 'examples/durable-agent/worker.ts'], {
        env,
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
    processes.push(worker.child);
    await worker.waitFor(/agent worker ready/);
    return worker;
  };

  it('fixes the demo through an approval and a killed worker, running each tool call once', async () => {
    let worker = await startWorker();
    const agent = watch(
      spawn(
        process.execPath,
        ['--import', 'tsx', 'examples/durable-agent/main.ts', 'fix the failing test in ./demo', '--no-worker'],
        { env, stdio: ['pipe', 'pipe', 'inherit'] },
      ),
    );
    processes.push(agent.child);
    const [, workspace] = (await agent.waitFor(/Workspace: (\S+)/)) as [string, string];
    const [, workflowId] = (await agent.waitFor(/Agent (\S+) started/)) as [string, string];

    // Turn 2 waits for the Edit's approval: the worker dies now, and the wait survives it.
    await agent.waitFor(/\? Edit wants approval/);
    await killProcess(worker.child);
    worker = await startWorker();
    agent.child.stdin?.write('y\n');
    await agent.waitFor(/\? Bash wants approval[\s\S]*\$ cd demo && node --test/);
    agent.child.stdin?.write('y\n');
    const [exitCode] = (await once(agent.child, 'exit')) as [number | null];
    expect(exitCode, agent.output()).toBe(0);
    expect(agent.output()).toContain('Agent (answered, 4 model requests): Fixed:');

    // The task is done in the temporary workspace; the repository's demo stays broken for the next run.
    const check = spawn(process.execPath, ['--test'], { cwd: path.join(workspace, 'demo'), stdio: 'ignore' });
    expect(((await once(check, 'exit')) as [number | null])[0]).toBe(0);
    expect(await readFile('examples/durable-agent/demo/sum.js', 'utf8')).toContain('return a - b;');
    expect(await readFile(path.join(workspace, 'demo/sum.js'), 'utf8')).toContain('return a + b;');

    // Each tool call ran once: the two Reads inside their turns' Plan local activities (each turn's only group, read-only
    // and allowed), the approved Edit and Bash as one executeCall scheduled and one completed per call id, none failed
    // or timed out.
    const history = await harness.client.client.workflow.getHandle(workflowId).fetchHistory();
    const events = history.events ?? [];
    const callIdOf = new Map<string, string>();
    for (const event of events) {
      const scheduled = event.activityTaskScheduledEventAttributes;
      if (scheduled?.activityType?.name !== 'executeCall') continue;
      const data = scheduled.input?.payloads?.[0]?.data;
      const input = JSON.parse(Buffer.from(data ?? new Uint8Array()).toString('utf8')) as { plan: { callId: string } };
      callIdOf.set(String(event.eventId), input.plan.callId);
    }
    expect([...callIdOf.values()].sort()).toEqual(['toolu_edit', 'toolu_test']);
    expect(localExecuteCallMarkers(events)).toBe(0);
    expect(callsRunByPlan(events)).toHaveLength(2);
    const completed = events.flatMap((event) => {
      const attributes = event.activityTaskCompletedEventAttributes;
      return attributes === undefined || attributes === null ? [] : [callIdOf.get(String(attributes.scheduledEventId))];
    });
    expect(completed.filter((id) => id !== undefined).sort()).toEqual(['toolu_edit', 'toolu_test']);
    expect(
      events.filter((event) => event.activityTaskFailedEventAttributes || event.activityTaskTimedOutEventAttributes),
    ).toEqual([]);
    // The approvals were answered from the example's prompt, after the restart, and the model saw every result.
    const decisions = await harness.client.client.workflow
      .getHandle(workflowId)
      .query<Array<{ outcome: string; toolName?: string }>>('approvalDecisions');
    expect(decisions.map((decision) => [decision.toolName, decision.outcome])).toEqual([
      ['Edit', 'accepted'],
      ['Bash', 'accepted'],
    ]);
    expect(model.requests.at(-1)?.messages.at(-1)?.content).toEqual([
      expect.objectContaining({
        type: 'tool_result',
        tool_use_id: 'toolu_test',
        content: expect.stringMatching(/# pass 1/),
      }),
    ]);
    await killProcess(worker.child);
  }, 240_000);
});
