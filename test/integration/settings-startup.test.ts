// Settings resolved once, at the edge, through the real `switchyard` binary against the dev server: a bad setting
// stops a command at start with the setting named; every entry point says which security settings are in force; and a
// project's `switchyard.json` names the task queue its sessions run on, so `pending`, `approve` and `audit` run in the
// project see them without SWITCHYARD_TASK_QUEUE.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SwitchyardClient } from '../../src/client/switchyard-client.js';
import { cliEnvironment, killCli, runCli, startCli } from '../support/cli-process.js';
import type { CliProcess } from '../support/cli-process.js';
import { createHarness, scratchDir, uniqueName } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { waitFor } from '../support/wait-for.js';

type Failure = { code: number; stderr: string };
const failureOf = (run: Promise<unknown>): Promise<Failure | undefined> =>
  run.then(
    () => undefined,
    (error: Failure) => error,
  );

describe('settings at the edge, through the real CLI', { timeout: 180_000 }, () => {
  let harness: Harness;
  let env: NodeJS.ProcessEnv;
  const started: CliProcess[] = [];

  beforeAll(async () => {
    harness = await createHarness();
    env = await cliEnvironment(harness);
  });
  afterAll(async () => {
    for (const cli of started) await killCli(cli);
    await harness?.close();
  });

  it.each([
    ['SWITCHYARD_SANDBOX', 'yes'],
    ['SWITCHYARD_TODO_MAX_ITEMS', 'many'],
    ['SWITCHYARD_BWRAP', 'bwrap'],
    ['SWITCHYARD_LOCAL_READ_ONLY_CALLS', 'fasle'],
    ['SWITCHYARD_ENV_INCLUDE', 'NODE ENV'],
  ])('switchyard worker with %s=%s stops at start (exit 2), naming the setting', async (variable, value) => {
    const cwd = await scratchDir('switchyard-bad-setting-');
    const failed = await failureOf(runCli(['worker', '--cwd', cwd], { ...env, [variable]: value }));
    expect(failed?.code).toBe(2);
    expect(failed?.stderr).toContain(`${variable} `);
    expect(failed?.stderr).toContain(value);
  });

  it('switchyard worker never repeats a secret it refuses', async () => {
    const failed = await failureOf(
      runCli(['worker'], { ...env, TEMPORAL_API_KEY: 'sekrit key with a space', SWITCHYARD_CONSOLE_TOKEN: 'a b' }),
    );
    expect(failed?.code).toBe(2);
    expect(failed?.stderr).toContain('TEMPORAL_API_KEY');
    expect(failed?.stderr).toContain('SWITCHYARD_CONSOLE_TOKEN');
    expect(failed?.stderr).not.toContain('sekrit');
  });

  it('switchyard worker logs the security settings in force at start: sandbox mode and binary, files, TLS and key', async () => {
    const cwd = await scratchDir('switchyard-security-line-');
    const worker = startCli(['worker', '--cwd', cwd], {
      ...env,
      SWITCHYARD_SANDBOX: 'required',
      SWITCHYARD_TASK_QUEUE: uniqueName('security-line'),
    });
    started.push(worker);
    const line = await worker.waitForLog(
      (entry) => typeof entry.msg === 'string' && entry.msg.startsWith('security settings:'),
      'the security settings line',
    );
    expect(line).toMatchObject({
      sandbox: 'required',
      approversFile: null,
      policyFile: null,
      temporalTls: 'off',
      temporalApiKey: false,
    });
    expect(typeof line.sandboxBinary).toBe('string');
    await killCli(worker);
  });

  it('switchyard console says at start how it reaches Temporal and what guards its door', async () => {
    const console = startCli(['console', '--port', '0'], env);
    started.push(console);
    await waitFor(
      async () => console.output(),
      (output) => output.includes('Approval console:'),
      { what: 'the console to start', timeoutMs: 60_000 },
    );
    expect(console.output()).toMatch(/security settings: Temporal TLS off, API key off; console users file none;/);
    await killCli(console);
  });

  describe('switchyard.json names the task queue of a project', () => {
    let project: string;
    let elsewhere: string;
    let projectEnv: NodeJS.ProcessEnv;
    const queue = uniqueName('project-queue');

    beforeAll(async () => {
      project = await scratchDir('switchyard-project-');
      elsewhere = await scratchDir('switchyard-elsewhere-');
      await writeFile(path.join(project, 'switchyard.json'), JSON.stringify({ taskQueue: queue }));
      projectEnv = { ...env };
      delete projectEnv.SWITCHYARD_TASK_QUEUE;
    });

    it('a worker started in the project serves its queue; pending, approve and audit run there see its sessions', async () => {
      const worker = startCli(['worker', '--cwd', project], projectEnv, { cwd: project });
      started.push(worker);
      const ready = await worker.waitForLog((entry) => entry.msg === 'worker started', 'the worker to start');
      expect(ready.taskQueue).toBe(queue);

      const client = new SwitchyardClient({ client: harness.client.client, taskQueue: queue });
      const session = await client.startSession(uniqueName('project-session'), { cwd: project });
      const turn = session.executeTurn({
        turnId: 't',
        calls: [{ id: 'w', name: 'Write', input: { file_path: path.join(project, 'made.txt'), content: 'x\n' } }],
      });
      const pending = await waitFor(
        async () =>
          JSON.parse((await runCli(['pending', '--json'], projectEnv, { cwd: project })).stdout) as Array<{
            sessionId: string;
            requestId: string;
          }>,
        (requests) => requests.some((request) => request.sessionId === session.sessionId),
        { what: 'pending, run in the project, to list the session', timeoutMs: 60_000 },
      );
      const request = pending.find((entry) => entry.sessionId === session.sessionId);
      // Elsewhere, without switchyard.json, the CLI looks at the default queue: not this session's.
      const outside = JSON.parse(
        (await runCli(['pending', '--json'], projectEnv, { cwd: elsewhere })).stdout,
      ) as Array<{
        sessionId: string;
      }>;
      expect(outside.some((entry) => entry.sessionId === session.sessionId)).toBe(false);
      // --task-queue wins over everything else.
      const flagged = JSON.parse(
        (await runCli(['pending', '--json', '--task-queue', queue], projectEnv, { cwd: elsewhere })).stdout,
      ) as Array<{ sessionId: string }>;
      expect(flagged.some((entry) => entry.sessionId === session.sessionId)).toBe(true);

      // approve without --session finds the session on the project's queue.
      await runCli(['approve', request?.requestId ?? '', '--by', 'dana'], projectEnv, { cwd: project });
      expect((await turn).results[0]).toMatchObject({ status: 'success' });
      const audit = JSON.parse((await runCli(['audit', '--json'], projectEnv, { cwd: project })).stdout) as Array<{
        sessionId?: string;
        by?: string;
      }>;
      expect(JSON.stringify(audit)).toContain(session.sessionId);
      expect(JSON.stringify(audit)).toContain('dana');
      await killCli(worker);
    });

    it('a switchyard.json that cannot be used stops the command with the file named (exit 2)', async () => {
      const broken = await scratchDir('switchyard-broken-project-');
      await mkdir(broken, { recursive: true });
      await writeFile(path.join(broken, 'switchyard.json'), JSON.stringify({ taskQueue: 'two words' }));
      const bad = await failureOf(runCli(['pending'], projectEnv, { cwd: broken }));
      expect(bad?.code).toBe(2);
      expect(bad?.stderr).toContain(path.join(broken, 'switchyard.json'));
      await writeFile(path.join(broken, 'switchyard.json'), JSON.stringify({ taskQeue: 'typo' }));
      const typo = await failureOf(runCli(['pending'], projectEnv, { cwd: broken }));
      expect(typo?.code).toBe(2);
      expect(typo?.stderr).toMatch(/switchyard\.json.*taskQeue/s);
    });
  });
});
