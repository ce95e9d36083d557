import { execFile } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/contracts/events.js';
import { killCli, startCli } from '../support/cli-process.js';
import type { CliProcess } from '../support/cli-process.js';
import { SwitchyardClient } from '../../src/client/switchyard-client.js';
import { createHarness, scratchDir, uniqueName } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { killProcess, spawnWorkerProcess } from '../support/spawn-worker.js';

// docs/CONFIGURATION.md, "Environment variables": variables a worker reads from its environment, each checked on a
// worker process started with it (they are read at worker start, or per call inside the worker, never in the test
// process).

/** A user settings file whose PreToolUse hook blocks every call of `matcher`, saying so on stderr (exit 2). */
async function blockingSettingsDir(dir: string, matcher: string, reason: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const hook = { type: 'command', command: `echo '${reason}' >&2; exit 2` };
  await writeFile(
    path.join(dir, 'settings.json'),
    JSON.stringify({ hooks: { PreToolUse: [{ matcher, hooks: [hook] }] } }),
  );
  return dir;
}

const execFileAsync = promisify(execFile);

const groupsOf = (events: SessionEvent[], turnId: string): string[][] | undefined => {
  const scheduled = events.find(
    (event) => event.type === 'ToolCallScheduled' && event.turnId === turnId && event.groups !== undefined,
  );
  return scheduled?.type === 'ToolCallScheduled' ? scheduled.groups : undefined;
};

describe('environment variables of a worker (worker processes, real server)', { timeout: 240_000 }, () => {
  let harness: Harness;
  let cwd: string;
  const processes: ChildProcess[] = [];
  beforeAll(async () => {
    cwd = await scratchDir();
    for (const name of ['a', 'b', 'c', 'd', 'e']) await writeFile(path.join(cwd, `${name}.txt`), `${name}\n`);
    harness = await createHarness({ defaultCwd: cwd });
  });
  afterAll(async () => {
    await Promise.all(processes.map(killProcess));
    await harness.close();
  });

  describe('one worker started with SWITCHYARD_MAX_TOOL_CONCURRENCY=2, BASH_DEFAULT_TIMEOUT_MS=1500, BASH_MAX_TIMEOUT_MS=3000 and SWITCHYARD_USER_SETTINGS_DIR', () => {
    beforeAll(async () => {
      const settingsDir = await blockingSettingsDir(
        await scratchDir('switchyard-user-'),
        'Grep',
        'blocked by the user settings hook',
      );
      processes.push(
        await spawnWorkerProcess(harness, {
          tools: 'builtin',
          env: {
            SWITCHYARD_MAX_TOOL_CONCURRENCY: '2',
            BASH_DEFAULT_TIMEOUT_MS: '1500',
            BASH_MAX_TIMEOUT_MS: '3000',
            SWITCHYARD_USER_SETTINGS_DIR: settingsDir,
          },
        }),
      );
    });

    it('SWITCHYARD_MAX_TOOL_CONCURRENCY caps the groups of a session that sets no maxConcurrency, not of one that does', async () => {
      const calls = ['a', 'b', 'c', 'd', 'e'].map((id) => ({ id, name: 'Read', input: { file_path: `${id}.txt` } }));
      const capped = await harness.startSession({ cwd });
      const own = await harness.startSession({ cwd, maxConcurrency: 3 });
      const [cappedResult, ownResult] = await Promise.all([
        capped.executeTurn({ turnId: 't', calls }),
        own.executeTurn({ turnId: 't', calls }),
      ]);
      expect(cappedResult.results.map((r) => [r.callId, r.status, r.modelContent])).toEqual(
        ['a', 'b', 'c', 'd', 'e'].map((name) => [name, 'success', `     1\t${name}`]),
      );
      expect(ownResult.results.map((r) => r.status)).toEqual(['success', 'success', 'success', 'success', 'success']);
      expect(groupsOf((await capped.events()).events, 't')).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
      expect(groupsOf((await own.events()).events, 't')).toEqual([
        ['a', 'b', 'c'],
        ['d', 'e'],
      ]);
    });

    it('BASH_DEFAULT_TIMEOUT_MS stops a Bash call that names no timeout, BASH_MAX_TIMEOUT_MS caps one that names more', async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
      const result = await session.executeTurn({
        turnId: 't',
        // Commands that write, so each runs alone (a bare `sleep` is read-only and would join a group whose first
        // failure cancels the others).
        calls: [
          { id: 'default', name: 'Bash', input: { command: 'sleep 100 && touch slept' } },
          { id: 'too-long', name: 'Bash', input: { command: 'sleep 100 && touch slept', timeout: 600_000 } },
          { id: 'shorter', name: 'Bash', input: { command: 'sleep 100 && touch slept', timeout: 1_000 } },
        ],
      });
      expect(result.results.map((r) => [r.callId, r.status, r.errorCode, r.modelContent])).toEqual([
        ['default', 'error', 'command_timeout', 'Command timed out after 1500ms and was killed.'],
        ['too-long', 'error', 'command_timeout', 'Command timed out after 3000ms and was killed.'],
        ['shorter', 'error', 'command_timeout', 'Command timed out after 1000ms and was killed.'],
      ]);
    });

    it('SWITCHYARD_USER_SETTINGS_DIR is where the user-level hooks come from', async () => {
      const session = await harness.startSession({ cwd });
      const result = await session.executeTurn({
        turnId: 't',
        calls: [
          { id: 'grep', name: 'Grep', input: { pattern: 'a' } },
          { id: 'read', name: 'Read', input: { file_path: 'a.txt' } },
        ],
      });
      expect(result.results.map((r) => [r.callId, r.status, r.modelContent])).toEqual([
        ['grep', 'denied', 'blocked by the user settings hook'],
        ['read', 'success', '     1\ta'],
      ]);
    });
  });

  describe('SwitchyardClient.connect() and `switchyard worker` take address, namespace and task queue from the same environment', () => {
    let cli: CliProcess | undefined;
    const taskQueue = uniqueName('env-queue');
    let env: NodeJS.ProcessEnv;
    beforeAll(async () => {
      env = {
        ...process.env,
        HOME: await scratchDir('switchyard-home-'),
        TEMPORAL_ADDRESS: harness.address,
        TEMPORAL_NAMESPACE: harness.namespace,
        SWITCHYARD_TASK_QUEUE: taskQueue,
        SWITCHYARD_DATA_DIR: harness.dataDir,
        SWITCHYARD_LOG_FORMAT: 'json',
        // Empty is unset for both sides.
        SWITCHYARD_WORKER_ROLE: '',
        SWITCHYARD_USER_SETTINGS_DIR: '',
      };
      cli = startCli(['worker', '--cwd', cwd], env);
      await cli.waitForLog(
        (line) => line.msg === 'worker started' && line.taskQueue === taskQueue,
        'the worker to start',
      );
    });
    afterAll(async () => {
      if (cli !== undefined) await killCli(cli);
    });

    /**
     * In a separate process, as a user's agent is: `SwitchyardClient.connect(<connectOptions>)`, then one turn of
     * a Read with start. Prints what the client connected to, then the turn's result and the session's task queue.
     */
    async function connectAndRead(connectOptions: string): Promise<Array<Record<string, unknown>>> {
      const script = `
        import { SwitchyardClient } from ${JSON.stringify(path.resolve('src/index.ts'))};
        const client = await SwitchyardClient.connect(${connectOptions});
        console.log(JSON.stringify({ taskQueue: client.taskQueue, namespace: client.client.options.namespace, connection: client.client.connection.constructor.name }));
        const turn = await client.executeTurnWithStart(process.env.SESSION, { turnId: 't', calls: [{ id: 'read', name: 'Read', input: { file_path: 'a.txt' } }] }, { cwd: process.env.SESSION_CWD });
        const description = await client.client.workflow.getHandle(process.env.SESSION).describe();
        console.log(JSON.stringify({ result: turn.results[0], workflowTaskQueue: description.taskQueue }));
        await client.client.connection.close();
      `;
      const session = uniqueName('env-connect');
      const { stdout } = await execFileAsync(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', script],
        { env: { ...env, SESSION: session, SESSION_CWD: cwd }, timeout: 90_000 },
      );
      return stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    }

    it('a client connected with no options starts its sessions on the queue the worker polls (SWITCHYARD_TASK_QUEUE), empty values unset', async () => {
      const [connected, ran] = await connectAndRead('');
      expect(connected).toEqual({ taskQueue, namespace: harness.namespace, connection: 'Connection' });
      expect(ran).toMatchObject({
        result: { callId: 'read', status: 'success', modelContent: '     1\ta' },
        workflowTaskQueue: taskQueue,
      });
    });

    it("`native: true` connects through the SDK's native connection, with the same environment and the same turns", async () => {
      const [connected, ran] = await connectAndRead('{ native: true }');
      expect(connected).toEqual({ taskQueue, namespace: harness.namespace, connection: 'NativeConnection' });
      expect(ran).toMatchObject({
        result: { callId: 'read', status: 'success', modelContent: '     1\ta' },
        workflowTaskQueue: taskQueue,
      });
    });
  });

  describe('the user settings dir defaults to ~/.switchyard, which test workers never read', () => {
    let home: string;
    let cli: CliProcess | undefined;
    beforeAll(async () => {
      home = await scratchDir('switchyard-home-');
      await blockingSettingsDir(path.join(home, '.switchyard'), 'Read', 'blocked by ~/.switchyard');
    });
    afterAll(async () => {
      if (cli !== undefined) await killCli(cli);
    });
    /** Reads a.txt in a new session on `taskQueue`. */
    const readOn = (taskQueue: string) =>
      new SwitchyardClient({ client: harness.client.client, taskQueue }).executeTurnWithStart(
        uniqueName('home'),
        { turnId: 't', calls: [{ id: 'read', name: 'Read', input: { file_path: 'a.txt' } }] },
        { cwd },
      );

    it('`switchyard worker` with no SWITCHYARD_USER_SETTINGS_DIR reads $HOME/.switchyard/settings.json', async () => {
      const taskQueue = `${harness.taskQueue}-home`;
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        HOME: home,
        TEMPORAL_ADDRESS: harness.address,
        TEMPORAL_NAMESPACE: harness.namespace,
        SWITCHYARD_TASK_QUEUE: taskQueue,
        SWITCHYARD_DATA_DIR: harness.dataDir,
        SWITCHYARD_LOG_FORMAT: 'json',
      };
      delete env.SWITCHYARD_USER_SETTINGS_DIR;
      cli = startCli(['worker', '--cwd', cwd], env);
      await cli.waitForLog(
        (line) => line.msg === 'worker started' && line.taskQueue === taskQueue,
        'the worker to start',
      );
      expect((await readOn(taskQueue)).results[0]).toMatchObject({
        status: 'denied',
        modelContent: 'blocked by ~/.switchyard',
      });
    });

    it('a spawned test worker with that same HOME does not: its user settings dir is empty', async () => {
      const taskQueue = `${harness.taskQueue}-isolated`;
      processes.push(await spawnWorkerProcess({ ...harness, taskQueue }, { env: { HOME: home } }));
      expect((await readOn(taskQueue)).results[0]).toMatchObject({ status: 'success', modelContent: '     1\ta' });
    });
  });
});
