import { execFileSync } from 'node:child_process';
import { mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { SessionEvent } from '../../src/contracts/events.js';
import type { TurnResult } from '../../src/contracts/tool-result.js';
import { TEMPORAL_CLI_VERSION, cachedBinaryPath } from '../../src/server/temporal-binary.js';
import { killCli, runCli, startCli } from '../support/cli-process.js';
import type { CliProcess } from '../support/cli-process.js';
import { createHarness, scratchDir, uniqueName } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { waitFor } from '../support/wait-for.js';
import { texts } from '../../src/contracts/texts.js';

// README "CLI": each command run as the real binary (`node bin/switchyard.js`, what `npx switchyard` runs) against
// the test's dev server. Every process gets an empty user settings dir and a private HOME and data dir.

/** Pids of every process below `pid`, from /proc. */
async function descendants(pid: number): Promise<number[]> {
  const children = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  const direct = children.split(/\s+/).filter(Boolean).map(Number);
  return [...direct, ...(await Promise.all(direct.map(descendants))).flat()];
}

const commandName = (pid: number): Promise<string> => readFile(`/proc/${pid}/comm`, 'utf8').then((name) => name.trim(), () => '');

describe('the switchyard CLI against a real server', { timeout: 300_000 }, () => {
  let harness: Harness;
  let cwd: string;
  let baseEnv: NodeJS.ProcessEnv;
  const started: CliProcess[] = [];
  beforeAll(async () => {
    cwd = await scratchDir();
    await writeFile(path.join(cwd, 'notes.txt'), 'first line\nsecond line\n');
    harness = await createHarness({ defaultCwd: cwd });
    baseEnv = {
      ...process.env,
      TEMPORAL_ADDRESS: harness.address,
      TEMPORAL_NAMESPACE: harness.namespace,
      SWITCHYARD_TASK_QUEUE: harness.taskQueue,
      SWITCHYARD_DATA_DIR: harness.dataDir,
      SWITCHYARD_USER_SETTINGS_DIR: await scratchDir('switchyard-user-'),
      HOME: await scratchDir('switchyard-home-'),
      SWITCHYARD_LOG_FORMAT: 'json',
      SWITCHYARD_LOG_LEVEL: 'info',
    };
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
      worker = start(['worker', '--cwd', cwd]);
      await workerStarted(worker, harness.taskQueue);
    });

    it('`turn` starts a session, runs the calls and prints the TurnResult; `events` prints its events and the next cursor', async () => {
      const sessionId = uniqueName('cli-turn');
      const callsFile = path.join(cwd, 'calls.json');
      await writeFile(callsFile, JSON.stringify([{ id: 'c1', name: 'Read', input: { file_path: 'notes.txt' } }]));
      const turn = await runCli(['turn', '--session', sessionId, '--calls', `@${callsFile}`, '--turn-id', 'cli-t1', '--cwd', cwd], baseEnv);
      const result = JSON.parse(turn.stdout) as TurnResult;
      expect(result).toMatchObject({ turnId: 'cli-t1', stopped: false });
      expect(result.results.map((r) => [r.callId, r.status, r.modelContent])).toEqual([['c1', 'success', '     1\tfirst line\n     2\tsecond line']]);

      const page = await harness.client.session(sessionId).events();
      const events = await runCli(['events', '--session', sessionId], baseEnv);
      const jsonLines = (text: string): SessionEvent[] => text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as SessionEvent);
      const printed = jsonLines(events.stdout);
      // Exactly the session's event log, as JSON lines, and the cursor to read on from.
      expect(printed).toEqual(page.events);
      expect(printed.map((event) => event.type)).toEqual(['TurnStarted', 'ToolCallScheduled', 'ToolCallStarted', 'ToolCallResult', 'ToolBatchComplete', 'TurnCompleted']);
      expect(events.stderr).toContain(`next cursor: ${page.next}`);
      const later = await runCli(['events', '--session', sessionId, '--since', String(page.next - 1)], baseEnv);
      expect(jsonLines(later.stdout)).toEqual(page.events.slice(-1));
    });

    it('`interrupt` cancels the running turn of a session; the waiting `turn` prints the cancelled result', async () => {
      const sessionId = uniqueName('cli-interrupt');
      await harness.client.startSession(sessionId, { cwd, permissionMode: 'bypassPermissions' });
      const turn = start(['turn', '--session', sessionId, '--turn-id', 'long', '--calls', JSON.stringify([{ id: 'sleep', name: 'Bash', input: { command: 'sleep 300' } }])]);
      await waitFor(
        async () => (await harness.client.session(sessionId).events()).events,
        (events) => events.some((event) => event.type === 'ToolCallStarted' && event.callId === 'sleep'),
        { what: 'the Bash call to start', timeoutMs: 120_000 },
      );
      const interrupt = await runCli(['interrupt', '--session', sessionId, '--reason', 'from the CLI'], baseEnv);
      expect(interrupt.stderr).toContain(`interrupt sent to ${sessionId}`);
      const { code, stdout } = await turn.exited;
      expect(code).toBe(0);
      const result = JSON.parse(stdout) as TurnResult;
      expect(result).toMatchObject({ turnId: 'long', stopped: true, stopReason: 'interrupted: from the CLI' });
      expect(result.results[0]).toMatchObject({ callId: 'sleep', status: 'cancelled', modelContent: texts.rejectMessage });
    });

    it('stops cleanly on Ctrl-C (SIGINT) and exits 0', async () => {
      worker.child.kill('SIGINT');
      const { code } = await worker.exited;
      expect(code).toBe(0);
      expect(worker.logs().some((line) => line.msg === 'worker stopped')).toBe(true);
    });
  });

  it('`switchyard dev` with TEMPORAL_ADDRESS set starts no server: its worker joins that cluster and serves turns', async () => {
    const devCwd = await scratchDir();
    await writeFile(path.join(devCwd, 'dev-notes.txt'), 'served by dev\n');
    const env = { ...baseEnv, SWITCHYARD_TASK_QUEUE: uniqueName('tq-dev') };
    const dev = start(['dev', '--cwd', devCwd, '--headless'], env);
    await dev.waitForLog((line) => line.msg === 'TEMPORAL_ADDRESS is set: using that cluster, no embedded server' && line.address === harness.address, 'the no-server notice');
    await workerStarted(dev, env.SWITCHYARD_TASK_QUEUE);
    // No `temporal` server process below it.
    const below = await Promise.all((await descendants(dev.child.pid ?? 0)).map(commandName));
    expect(below).not.toContain('temporal');
    // Only this dev worker polls its task queue; a session without a cwd works in dev's --cwd.
    const turn = await runCli(['turn', '--session', uniqueName('cli-dev'), '--calls', JSON.stringify([{ id: 'r', name: 'Read', input: { file_path: 'dev-notes.txt' } }])], env);
    expect((JSON.parse(turn.stdout) as TurnResult).results[0]).toMatchObject({ status: 'success', modelContent: '     1\tserved by dev' });
    dev.child.kill('SIGINT');
    expect((await dev.exited).code).toBe(0);
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
      const { stdout } = await runCli(['temporal-path'], { ...baseEnv, TEMPORAL_CLI_PATH: '', PATH: emptyDir, SWITCHYARD_CACHE_DIR: emptyDir, ...env });
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
