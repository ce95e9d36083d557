import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { SessionEvent } from '../../src/contracts/events.js';
import type { TurnResult } from '../../src/contracts/tool-result.js';
import { TEMPORAL_CLI_VERSION, cachedBinaryPath } from '../../src/server/temporal-binary.js';
import { SwitchyardClient } from '../../src/client/switchyard-client.js';
import { killCli, runCli, startCli, cliEnvironment } from '../support/cli-process.js';
import type { CliProcess } from '../support/cli-process.js';
import { createHarness, scratchDir, uniqueName } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { freePort } from '../support/free-port.js';
import { waitFor } from '../support/wait-for.js';
import { texts } from '../../src/contracts/texts.js';

// docs/CLI.md: each command run as the real binary (`node bin/switchyard.js`, what `npx switchyard` runs) against
// the test's dev server. Every process gets an empty user settings dir and a private HOME and data dir.

/** Pids of every process below `pid`, from /proc. */
async function descendants(pid: number): Promise<number[]> {
  const children = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  const direct = children.split(/\s+/).filter(Boolean).map(Number);
  return [...direct, ...(await Promise.all(direct.map(descendants))).flat()];
}

const commandName = (pid: number): Promise<string> =>
  readFile(`/proc/${pid}/comm`, 'utf8').then(
    (name) => name.trim(),
    () => '',
  );

describe('the switchyard CLI against a real server', { timeout: 300_000 }, () => {
  let harness: Harness;
  let cwd: string;
  let baseEnv: NodeJS.ProcessEnv;
  const started: CliProcess[] = [];
  beforeAll(async () => {
    cwd = await scratchDir();
    await writeFile(path.join(cwd, 'notes.txt'), 'first line\nsecond line\n');
    harness = await createHarness({ defaultCwd: cwd });
    baseEnv = await cliEnvironment(harness);
  });
  afterAll(async () => {
    await Promise.all(started.map(killCli));
    await harness.close();
  });

  const start = (args: string[], env: NodeJS.ProcessEnv = baseEnv): CliProcess => {
    const cli = startCli(args, env);
    started.push(cli);
    return cli;
  };
  const workerStarted = (cli: CliProcess, taskQueue: string) =>
    cli.waitForLog((line) => line.msg === 'worker started' && line.taskQueue === taskQueue, 'the worker to start');

  describe('`switchyard worker`', () => {
    let worker: CliProcess;
    beforeAll(async () => {
      worker = start(['worker', '--cwd', cwd, '--tools', path.resolve('examples/word-count-tool.ts')]);
      await workerStarted(worker, harness.taskQueue);
    });

    it('`turn` starts a session, runs the calls and prints the TurnResult; `events` prints its events and the next cursor', async () => {
      const sessionId = uniqueName('cli-turn');
      const callsFile = path.join(cwd, 'calls.json');
      await writeFile(callsFile, JSON.stringify([{ id: 'c1', name: 'Read', input: { file_path: 'notes.txt' } }]));
      const turn = await runCli(
        ['turn', '--session', sessionId, '--calls', `@${callsFile}`, '--turn-id', 'cli-t1', '--cwd', cwd],
        baseEnv,
      );
      const result = JSON.parse(turn.stdout) as TurnResult;
      expect(result).toMatchObject({ turnId: 'cli-t1', stopped: false });
      expect(result.results.map((r) => [r.callId, r.status, r.modelContent])).toEqual([
        ['c1', 'success', '     1\tfirst line\n     2\tsecond line'],
      ]);

      const page = await harness.client.session(sessionId).events();
      const events = await runCli(['events', '--session', sessionId], baseEnv);
      const jsonLines = (text: string): SessionEvent[] =>
        text
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as SessionEvent);
      const printed = jsonLines(events.stdout);
      // Exactly the session's event log, as JSON lines, and the cursor to read on from.
      expect(printed).toEqual(page.events);
      expect(printed.map((event) => event.type)).toEqual([
        'TurnStarted',
        'ToolCallScheduled',
        'ToolCallStarted',
        'ToolCallResult',
        'ToolBatchComplete',
        'TurnCompleted',
      ]);
      expect(events.stderr).toContain(`next cursor: ${page.next}`);
      const later = await runCli(['events', '--session', sessionId, '--since', String(page.next - 1)], baseEnv);
      expect(jsonLines(later.stdout)).toEqual(page.events.slice(-1));
    });

    it('`interrupt` cancels the running turn of a session; the waiting `turn` prints the cancelled result', async () => {
      const sessionId = uniqueName('cli-interrupt');
      await harness.client.startSession(sessionId, { cwd, permissionMode: 'bypassPermissions' });
      const turn = start([
        'turn',
        '--session',
        sessionId,
        '--turn-id',
        'long',
        '--calls',
        JSON.stringify([{ id: 'sleep', name: 'Bash', input: { command: 'sleep 300' } }]),
      ]);
      await waitFor(
        async () => (await harness.client.session(sessionId).events()).events,
        (events) => events.some((event) => event.type === 'ToolCallStarted' && event.callId === 'sleep'),
        { what: 'the Bash call to start', timeoutMs: 120_000 },
      );
      const interrupt = await runCli(['interrupt', '--session', sessionId, '--reason', 'from the CLI'], baseEnv);
      expect(interrupt.stderr).toContain(`interrupt sent to ${sessionId}`);
      const { code, stdout } = await turn.exited;
      expect(code).toBe(4); // the turn ran, a call did not succeed
      const result = JSON.parse(stdout) as TurnResult;
      expect(result).toMatchObject({ turnId: 'long', stopped: true, stopReason: 'interrupted: from the CLI' });
      expect(result.results[0]).toMatchObject({
        callId: 'sleep',
        status: 'cancelled',
        modelContent: texts.rejectMessage,
      });
    });

    it('`sessions` names the label a session was started with (`SessionOptions.label`), in its text and with --json', async () => {
      const sessionId = uniqueName('cli-label');
      const label = 'Fix the login bug · take 2';
      await harness.client.startSession(sessionId, { cwd, label });
      // From visibility (eventually consistent): wait for the session to be listed at all.
      const listedJson = await waitFor(
        async () =>
          JSON.parse((await runCli(['sessions', '--json'], baseEnv)).stdout) as Array<{
            sessionId: string;
            label?: string;
          }>,
        (list) => list.some((entry) => entry.sessionId === sessionId),
        { what: 'the labelled session in `sessions --json`', timeoutMs: 60_000 },
      );
      expect(listedJson.find((entry) => entry.sessionId === sessionId)?.label).toBe(label);
      const listed = await runCli(['sessions'], baseEnv);
      const row = listed.stdout.split('\n').find((line) => line.startsWith(`${sessionId} `));
      // The label closes the session's row, after its start time.
      expect(row).toMatch(new RegExp(`^${sessionId}\\s+running\\s+0\\s+\\S+  ${label}$`));
    });

    it("`--tools MODULE` adds the module's defineTool tools to the worker", async () => {
      const turn = await runCli(
        [
          'turn',
          '--session',
          uniqueName('cli-tools'),
          '--calls',
          JSON.stringify([{ id: 'w', name: 'WordCount', input: { text: 'three little words' } }]),
        ],
        baseEnv,
      );
      expect((JSON.parse(turn.stdout) as TurnResult).results[0]).toMatchObject({
        status: 'success',
        modelContent: '3 words',
      });
    });

    it('`run FILE` waits for approval, `sessions --pending` and `pending` show it, `approve` lets it run; `events --follow` prints the turn live', async () => {
      const sessionId = uniqueName('cli-run');
      const callsFile = path.join(cwd, 'run-calls.json');
      await writeFile(
        callsFile,
        JSON.stringify([
          { id: 'r1', name: 'Read', input: { file_path: 'notes.txt' } },
          { id: 'b1', name: 'Bash', input: { command: 'echo approved > approved.txt && echo wrote it' } },
        ]),
      );
      const run = start(['run', callsFile, '--session', sessionId, '--turn-id', 'run-1', '--cwd', cwd]);
      const requests = await waitFor(
        async () => {
          const { stdout } = await runCli(['pending', '--session', sessionId, '--json'], baseEnv).catch(() => ({
            stdout: '[]',
          }));
          return JSON.parse(stdout) as Array<{ requestId: string; callId: string; sessionId: string }>;
        },
        (list) => list.length === 1,
        { what: 'the Bash call to wait for approval', timeoutMs: 120_000 },
      );
      const request = requests[0] as { requestId: string; callId: string; sessionId: string };
      expect(request).toMatchObject({ callId: 'b1', sessionId });
      const follow = start(['events', sessionId, '--follow']); // the session exists now
      // Across sessions, from visibility (eventually consistent).
      await waitFor(
        async () =>
          JSON.parse((await runCli(['sessions', '--pending', '--json'], baseEnv)).stdout) as Array<{
            sessionId: string;
            pendingApprovals: number;
          }>,
        (list) => list.some((entry) => entry.sessionId === sessionId && entry.pendingApprovals === 1),
        { what: 'the session in `sessions --pending`', timeoutMs: 60_000 },
      );
      const human = await runCli(['pending'], baseEnv);
      expect(human.stdout).toContain(`switchyard approve ${request.requestId} --session ${sessionId}`);
      expect(human.stdout).toContain('$ echo approved > approved.txt && echo wrote it');
      const listed = await runCli(['sessions'], baseEnv);
      expect(listed.stdout).toMatch(new RegExp(`${sessionId}\\s+running\\s+1\\s`));
      await waitFor(
        async () => run.output(),
        (text) => text.includes('b1 Bash: waiting for approval'),
        { what: 'run to show the wait', timeoutMs: 60_000 },
      );
      // The approve command on a line of its own, whole, ready to copy.
      expect(run.output()).toContain(`\n  approve: switchyard approve ${request.requestId} --session ${sessionId}\n`);

      // The short id that `pending` shows is enough: the session gets the full request id.
      const approve = await runCli(['approve', request.requestId.slice(0, 6)], baseEnv);
      expect(approve.stderr).toContain('allowed: Bash ($ echo approved > approved.txt && echo wrote it)');
      const { code, stdout } = await run.exited;
      expect(code, run.output()).toBe(0);
      expect(stdout).toContain('r1 Read: success\n       1\tfirst line');
      expect(stdout).toContain('b1 Bash: success\n  wrote it');
      expect(await readFile(path.join(cwd, 'approved.txt'), 'utf8')).toBe('approved\n');
      // Not a terminal: a line per change on stderr.
      expect(run.output()).toMatch(/b1 Bash: queued[\s\S]*b1 Bash: waiting for approval[\s\S]*b1 Bash: success/);
      // The request is gone: a second answer is "not found", exit 5.
      await expect(runCli(['approve', request.requestId, '--session', sessionId], baseEnv)).rejects.toMatchObject({
        code: 5,
      });

      await waitFor(
        async () => follow.output(),
        (text) => text.includes('"type":"TurnCompleted"'),
        { what: 'events --follow to print the turn', timeoutMs: 60_000 },
      );
      follow.child.kill('SIGINT');
      expect((await follow.exited).code).toBe(0);
      const types = follow.exited.then(({ stdout: out }) =>
        out
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => (JSON.parse(line) as { type: string }).type),
      );
      expect(await types).toEqual(
        expect.arrayContaining(['PermissionRequested', 'PermissionResolved', 'ToolCallResult', 'TurnCompleted']),
      );
    });

    it('`deny REQUEST --reason` gives the model the reason; `run` exits 4 when a call did not succeed', async () => {
      const sessionId = uniqueName('cli-deny');
      const callsFile = path.join(cwd, 'deny-calls.json');
      await writeFile(
        callsFile,
        JSON.stringify({ calls: [{ id: 'b1', name: 'Bash', input: { command: 'touch denied.txt' } }] }),
      );
      const run = start(['run', callsFile, '--session', sessionId, '--json']);
      const request = await waitFor(
        async () =>
          (
            await harness.client
              .session(sessionId)
              .pendingApprovals()
              .catch(() => [])
          )[0],
        (found) => found !== undefined,
        { what: 'the approval request', timeoutMs: 120_000 },
      );
      const deny = await runCli(
        ['deny', request?.requestId ?? '', '--session', sessionId, '--reason', 'not on a Friday', '--json'],
        baseEnv,
      );
      expect(JSON.parse(deny.stdout)).toMatchObject({
        requestId: request?.requestId,
        decision: 'deny',
        outcome: 'accepted',
        reason: 'not on a Friday',
      });
      const { code, stdout } = await run.exited;
      expect(code).toBe(4);
      const result = JSON.parse(stdout) as TurnResult;
      expect(result.results[0]).toMatchObject({ callId: 'b1', status: 'denied' });
      expect(result.results[0]?.modelContent).toContain('Reason: not on a Friday');
    });

    it('a session cwd that does not exist fails its calls at once, saying so', async () => {
      const missing = path.join(cwd, 'no-such-dir');
      const started = Date.now();
      const failed = await runCli(
        [
          'turn',
          '--session',
          uniqueName('cli-nocwd'),
          '--cwd',
          missing,
          '--calls',
          JSON.stringify([{ id: 'b', name: 'Bash', input: { command: 'echo hi' } }]),
        ],
        baseEnv,
      ).catch((error: { code: number; stdout: string }) => error);
      expect(Date.now() - started).toBeLessThan(60_000); // not Bash's 120 s deadline
      expect(failed).toMatchObject({ code: 4 });
      const result = JSON.parse((failed as { stdout: string }).stdout) as TurnResult;
      expect(result.results[0]?.modelContent).toContain(`the session's cwd ${missing} does not exist`);
    });

    it('stops cleanly on Ctrl-C (SIGINT) and exits 0', async () => {
      worker.child.kill('SIGINT');
      const { code } = await worker.exited;
      expect(code).toBe(0);
      expect(worker.logs().some((line) => line.msg === 'worker stopped')).toBe(true);
    });
  });

  it('`switchyard dev --existing-server` starts no server: its worker joins the TEMPORAL_ADDRESS cluster and serves turns', async () => {
    const devCwd = await scratchDir();
    await writeFile(path.join(devCwd, 'dev-notes.txt'), 'served by dev\n');
    const env = { ...baseEnv, SWITCHYARD_TASK_QUEUE: uniqueName('tq-dev') };
    const dev = start(['dev', '--existing-server', '--console-port', String(await freePort()), '--cwd', devCwd], env);
    await dev.waitForLog(
      (line) =>
        typeof line.msg === 'string' && line.msg.startsWith('--existing-server: ') && line.address === harness.address,
      'the no-server notice',
    );
    await workerStarted(dev, env.SWITCHYARD_TASK_QUEUE);
    // No `temporal` server process below it.
    const below = await Promise.all((await descendants(dev.child.pid ?? 0)).map(commandName));
    expect(below).not.toContain('temporal');
    // Only this dev worker polls its task queue; a session without a cwd works in dev's --cwd.
    const turn = await runCli(
      [
        'turn',
        '--session',
        uniqueName('cli-dev'),
        '--calls',
        JSON.stringify([{ id: 'r', name: 'Read', input: { file_path: 'dev-notes.txt' } }]),
      ],
      env,
    );
    expect((JSON.parse(turn.stdout) as TurnResult).results[0]).toMatchObject({
      status: 'success',
      modelContent: '     1\tserved by dev',
    });
    dev.child.kill('SIGINT');
    expect((await dev.exited).code).toBe(0);
  });

  /** Pids of the processes whose command line contains `text` (arguments joined by NUL). */
  const processesWith = async (text: string): Promise<number[]> => {
    const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name)).map(Number);
    const matching = await Promise.all(
      pids.map(async (pid) =>
        (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).includes(text) ? pid : undefined,
      ),
    );
    return matching.filter((pid): pid is number => pid !== undefined && pid !== process.pid);
  };

  /**
   * Starts `dev` on free ports with its own server, and a background Bash task through it. Returns the task's marker
   * (in its wrapper shell's command line) and what finds the server process (`start-dev --port N`).
   */
  const devWithBackgroundTask = async (extra: string[], options: { viaShell?: boolean; ownGroup?: boolean } = {}) => {
    const port = await freePort();
    // The private HOME has no cached `temporal` binary: use the suite's.
    const env = {
      ...baseEnv,
      SWITCHYARD_TASK_QUEUE: uniqueName('tq-devbg'),
      npm_command: 'run-script',
      TEMPORAL_CLI_PATH: inject('temporalBinaryPath'),
    };
    const dev = startCli(
      ['dev', '--headless', '--port', String(port), '--console-port', String(await freePort()), '--cwd', cwd, ...extra],
      env,
      options,
    );
    started.push(dev);
    // A dev server and a workflow bundle from the sources: slow on a loaded machine.
    await dev.waitForLog(
      (line) => line.msg === 'worker started' && line.taskQueue === env.SWITCHYARD_TASK_QUEUE,
      'the worker to start',
      400_000,
    );
    const marker = uniqueName('bgmark');
    const client = await SwitchyardClient.connect({
      address: `127.0.0.1:${port}`,
      namespace: 'default',
      taskQueue: env.SWITCHYARD_TASK_QUEUE,
    });
    const session = await client.startSession(uniqueName('devbg'), { cwd, permissionMode: 'bypassPermissions' });
    const turn = await session.executeTurn({
      turnId: 't1',
      calls: [{ id: 'b', name: 'Bash', input: { command: `sleep 600 && echo ${marker}`, run_in_background: true } }],
    });
    expect(turn.results[0]?.status).toBe('success');
    await client.client.connection.close();
    expect(await processesWith(marker)).not.toEqual([]);
    return { dev, marker, server: `start-dev\0--port\0${port}\0` };
  };

  it(
    '`dev` starts its own server even with TEMPORAL_ADDRESS set, saying so; when npm (its parent) goes, it stops the server and the background tasks its worker started',
    { timeout: 900_000 },
    async () => {
      const { dev, marker, server } = await devWithBackgroundTask([], { viaShell: true });
      expect(
        dev
          .logs()
          .some(
            (line) =>
              typeof line.msg === 'string' &&
              line.msg.startsWith(`TEMPORAL_ADDRESS is set (${harness.address}) but \`dev\` starts its own server`),
          ),
      ).toBe(true);
      expect(await processesWith(server)).not.toEqual([]);
      const devProcess = (await descendants(dev.child.pid ?? 0)).filter(Boolean);
      // npm forwards SIGTERM to its shell only; the shell dies and passes nothing on (SIGKILL stands for that here).
      dev.child.kill('SIGKILL');
      await dev.exited;
      await waitFor(
        () => Promise.all(devProcess.map(commandName)),
        (left) => left.every((name) => name !== 'node'),
        { what: 'dev to exit', timeoutMs: 300_000 },
      );
      expect(await processesWith(server)).toEqual([]);
      expect(await processesWith(marker)).toEqual([]);
      const log = dev.output();
      expect(log).toContain('is gone: stopping as on SIGTERM');
      expect(log).toContain(
        'stopped 1 background task(s) this worker started (the in-memory server forgets their sessions)',
      );
      expect(log).toContain('dev server stopped');
    },
  );

  it(
    'Ctrl-C at the terminal of `npm start` (SIGINT to the whole group, twice: npm forwards it) stops the worker, then the server, the background tasks, and exits 0',
    { timeout: 900_000 },
    async () => {
      const { dev, marker, server } = await devWithBackgroundTask([], { ownGroup: true });
      const group = dev.child.pid ?? 0;
      // The server runs in a session of its own: the terminal's Ctrl-C does not reach it before dev stops its worker.
      expect(await processesWith(server)).not.toEqual([]);
      // The server may log "Frontend is not healthy yet" while it starts on a loaded machine; only what follows
      // Ctrl-C tells whether the server went before the worker.
      const beforeSignal = dev.output().length;
      process.kill(-group, 'SIGINT');
      await new Promise((resolve) => setTimeout(resolve, 50));
      process.kill(-group, 'SIGINT');
      const { code } = await dev.exited;
      const log = dev.output();
      expect(log).not.toContain('again: exiting now');
      expect(code, log).toBe(0);
      const order = dev.logs().map((line) => line.msg);
      expect(order.indexOf('worker stopped'), log).toBeGreaterThanOrEqual(0);
      expect(order.indexOf('worker stopped')).toBeLessThan(order.indexOf('dev server stopped'));
      expect(log.slice(beforeSignal)).not.toMatch(/Frontend is not healthy|UNAVAILABLE/);
      await waitFor(
        () => processesWith(server),
        (left) => left.length === 0,
        { what: 'the server to stop', timeoutMs: 60_000 },
      );
      expect(await processesWith(marker)).toEqual([]);
    },
  );

  it(
    '`dev --db-file` stopped by SIGTERM keeps its background tasks running and says how to stop them',
    { timeout: 900_000 },
    async () => {
      const dbFile = path.join(await scratchDir(), 'dev.db');
      const { dev, marker } = await devWithBackgroundTask(['--db-file', dbFile]);
      dev.child.kill('SIGTERM');
      expect((await dev.exited).code).toBe(0);
      const kept = await processesWith(marker);
      try {
        expect(kept).not.toEqual([]);
        const notice = dev
          .logs()
          .find((line) => typeof line.msg === 'string' && line.msg.startsWith('1 background task(s) keep running'));
        expect(notice?.msg).toContain(`their sessions are kept in ${dbFile}`);
        expect(notice?.msg).toMatch(/kill -- -\d+/);
      } finally {
        for (const pid of kept) {
          try {
            process.kill(-pid, 'SIGKILL');
          } catch {
            // not a group leader, or already gone
          }
        }
      }
    },
  );

  describe('help, usage errors, signals and an unreachable server', () => {
    const COMMANDS = [
      'dev',
      'worker',
      'sessions',
      'run',
      'turn',
      'pending',
      'approve',
      'deny',
      'interrupt',
      'events',
      'tasks',
      'doubt',
      'artifact',
      'artifacts',
      'console',
      'temporal-path',
    ];

    it('every command prints its help with --help and exits 0, starting nothing (`dev --help` starts no server)', async () => {
      // No TEMPORAL_ADDRESS: before the fix `dev --help` started a dev server.
      const env = { ...baseEnv, TEMPORAL_ADDRESS: '' };
      const helps = await Promise.all(
        COMMANDS.map(async (command) => ({ command, ...(await runCli([command, '--help'], env)) })),
      );
      for (const { command, stdout } of helps) {
        expect(stdout, command).toMatch(new RegExp(`^Usage: switchyard ${command}\\b`));
        expect(stdout, command).not.toMatch(/DESIGN\.md|\.ts\b/); // names no file a user does not have
      }
      expect((await runCli(['help', 'pending'], env)).stdout).toBe(
        helps.find((entry) => entry.command === 'pending')?.stdout,
      );
      expect((await runCli(['help'], env)).stdout).toContain('Exit codes:');
    });

    it('a usage error exits 2 at once, with no hang (`worker --bogus` used to hang, ignoring SIGTERM)', async () => {
      for (const args of [
        ['worker', '--bogus'],
        ['dev', '--bogus'],
        ['dev', '--existing-server', '--db-file', 'x.db'],
        ['deny', 'abcd1234'],
        ['deny', 'abcd1234', '--reason', ' '],
        ['pending', '--bogus'],
        ['run'],
        ['approve'],
        ['worker', '--cwd', '/no/such/dir'],
        ['nonsense'],
      ]) {
        const cli = start(args);
        const exited = await Promise.race([
          cli.exited,
          new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 60_000)),
        ]);
        expect(exited, args.join(' ')).toBeDefined();
        expect(exited?.code, args.join(' ')).toBe(2);
        expect(cli.output(), args.join(' ')).toMatch(
          /^switchyard: .*\nRun `switchyard( \S+)? (--)?help` for usage\.\n$/,
        );
      }
    });

    it('`help --help` exits 0; a missing artifact exits 5; output piped into a reader that closes early ends quietly (exit 0)', async () => {
      expect((await runCli(['help', '--help'], baseEnv)).stdout).toContain('Exit codes:');
      const missing = (await runCli(['artifact', 'switchyard-artifact://no-session/no-such-artifact'], baseEnv).catch(
        (error: unknown) => error,
      )) as { code: number; stderr: string };
      expect(missing.code).toBe(5);
      expect(missing.stderr).toMatch(
        /^switchyard: no stored output switchyard-artifact:\/\/no-session\/no-such-artifact under /,
      );
      // `switchyard help | head -0`: the reader is gone before the command writes; the write meets EPIPE.
      const child = spawn(process.execPath, ['bin/switchyard.js', 'help', 'dev'], {
        env: baseEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout.destroy();
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const [code] = (await once(child, 'close')) as [number | null];
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    });

    it('SIGTERM stops a running worker cleanly (exit 0)', async () => {
      const worker = start(['worker', '--cwd', cwd], { ...baseEnv, SWITCHYARD_TASK_QUEUE: uniqueName('tq-term') });
      await worker.waitForLog((line) => line.msg === 'worker started', 'the worker to start');
      worker.child.kill('SIGTERM');
      expect((await worker.exited).code).toBe(0);
      expect(worker.logs().some((line) => line.msg === 'worker stopped')).toBe(true);
    });

    it('an unreachable server gets one readable line saying where it looked and what to run (exit 3)', async () => {
      const env = { ...baseEnv, TEMPORAL_ADDRESS: '127.0.0.1:1' };
      for (const args of [['worker', '--cwd', cwd], ['sessions'], ['pending']]) {
        const failed = (await runCli(args, env).catch((error: unknown) => error)) as { code: number; stderr: string };
        expect(failed.code, args[0]).toBe(3);
        expect(failed.stderr, args[0]).toBe(
          'switchyard: cannot reach a Temporal server at 127.0.0.1:1 (TEMPORAL_ADDRESS). Start one with `npx switchyard dev` (or `npm start`) in another terminal, or set TEMPORAL_ADDRESS to your cluster.\n',
        );
      }
    });

    it('a rejected turn shows its cause, not only "Workflow Update failed"', async () => {
      const env = { ...baseEnv, SWITCHYARD_TASK_QUEUE: uniqueName('tq-dup') };
      const worker = start(['worker', '--cwd', cwd], env);
      await worker.waitForLog((line) => line.msg === 'worker started', 'the worker to start');
      const calls = [
        { id: 'same', name: 'Read', input: { file_path: 'notes.txt' } },
        { id: 'same', name: 'Read', input: { file_path: 'notes.txt' } },
      ];
      const failed = (await runCli(
        ['turn', '--session', uniqueName('cli-dup'), '--calls', JSON.stringify(calls)],
        env,
      ).catch((error: unknown) => error)) as { code: number; stderr: string };
      expect(failed.code).toBe(1);
      expect(failed.stderr).toMatch(/^switchyard: .*duplicate.*same/i);
      worker.child.kill('SIGINT');
      await worker.exited;
    });
  });

  describe('`switchyard temporal-path` finds the binary in the documented order', () => {
    let binary: string;
    let emptyDir: string;
    beforeAll(async () => {
      binary = inject('temporalBinaryPath') || cachedBinaryPath();
      emptyDir = await scratchDir('switchyard-empty-');
    });
    /** A directory holding `relative` as a symlink to the real binary. */
    const linkedBinary = async (relative: string): Promise<string> => {
      const file = path.join(await scratchDir('switchyard-bin-'), relative);
      await mkdir(path.dirname(file), { recursive: true });
      await symlink(binary, file);
      return file;
    };
    const temporalPath = async (env: NodeJS.ProcessEnv): Promise<string> => {
      const { stdout } = await runCli(['temporal-path'], {
        ...baseEnv,
        TEMPORAL_CLI_PATH: '',
        PATH: emptyDir,
        SWITCHYARD_CACHE_DIR: emptyDir,
        ...env,
      });
      return stdout.trim();
    };

    it('TEMPORAL_CLI_PATH first, then `temporal` on PATH, then the user-level cache; it prints a binary that runs', async () => {
      const explicit = await linkedBinary('explicit/temporal');
      const onPath = await linkedBinary('on-path/temporal');
      const cached = await linkedBinary(`cache/temporal-cli-${TEMPORAL_CLI_VERSION}/temporal`);
      const cacheDir = path.dirname(path.dirname(cached));
      const [fromEnv, fromPath, fromCache] = await Promise.all([
        temporalPath({ TEMPORAL_CLI_PATH: explicit, PATH: path.dirname(onPath), SWITCHYARD_CACHE_DIR: cacheDir }),
        temporalPath({ PATH: path.dirname(onPath), SWITCHYARD_CACHE_DIR: cacheDir }),
        temporalPath({ SWITCHYARD_CACHE_DIR: cacheDir }),
      ]);
      expect([fromEnv, fromPath, fromCache]).toEqual([explicit, onPath, cached]);
      // The cache entry was found, not built: nothing else appeared in the cache dir.
      expect(await readdir(cacheDir)).toEqual([`temporal-cli-${TEMPORAL_CLI_VERSION}`]);
      expect(execFileSync(fromCache, ['--version']).toString()).toMatch(/^temporal version /);
    });
  });
});
