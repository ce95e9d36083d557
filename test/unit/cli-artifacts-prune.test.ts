import { spawn } from 'node:child_process';
import { mkdir, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli-process.js';
import { scratchDir } from '../support/scratch.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** The pid of a process that has come and gone: a task that ended. */
async function deadPid(): Promise<number> {
  const child = spawn('true');
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid ?? 0;
}

/** A data directory with two sessions' artifacts: `idle` last written 30 days ago, `active` today. */
async function dataDirWithSessions(): Promise<string> {
  const dataDir = await scratchDir('switchyard-prune-');
  for (const session of ['idle', 'active']) {
    await mkdir(path.join(dataDir, 'artifacts', session), { recursive: true });
    await writeFile(path.join(dataDir, 'artifacts', session, 'call-tool-result-1'), 'x'.repeat(1_000));
  }
  const old = new Date(Date.now() - 30 * DAY_MS);
  await utimes(path.join(dataDir, 'artifacts', 'idle'), old, old);
  return dataDir;
}

describe('switchyard artifacts prune (the real command)', () => {
  it('reports on a dry run and deletes nothing, then deletes only the sessions idle longer than --older-than', async () => {
    const dataDir = await dataDirWithSessions();
    const env = { ...process.env, SWITCHYARD_DATA_DIR: dataDir };
    const dry = JSON.parse(
      (await runCli(['artifacts', 'prune', '--older-than', '7d', '--dry-run', '--json'], env)).stdout,
    ) as Record<string, unknown>;
    expect(dry).toMatchObject({
      dryRun: true,
      olderThanMs: 7 * DAY_MS,
      kept: 1,
      removed: [{ session: 'idle', bytes: 1_000 }],
    });
    await expect(stat(path.join(dataDir, 'artifacts', 'idle'))).resolves.toBeDefined();

    const { stdout } = await runCli(['artifacts', 'prune', '--older-than', '7d'], env);
    expect(stdout).toContain('removed idle (1000 bytes, last written');
    expect(stdout).toContain('removed 1 session, kept 1');
    await expect(stat(path.join(dataDir, 'artifacts', 'idle'))).rejects.toThrow();
    await expect(stat(path.join(dataDir, 'artifacts', 'active', 'call-tool-result-1'))).resolves.toBeDefined();
  }, 60_000);

  it('deletes the output of background tasks that ended long ago, never a running one, and a session folder left empty', async () => {
    const dataDir = await scratchDir('switchyard-prune-');
    const old = new Date(Date.now() - 30 * DAY_MS);
    const ended = await deadPid();
    const task = async (
      session: string,
      taskId: string,
      pid: number,
      exitCode: string | undefined,
    ): Promise<string> => {
      const directory = path.join(dataDir, 'background', session, taskId);
      await mkdir(directory, { recursive: true });
      const record = {
        taskId,
        sessionId: session,
        turnId: 't1',
        callId: 'c1',
        command: 'npm run dev',
        cwd: dataDir,
        pid,
        startedAt: old.toISOString(),
      };
      await writeFile(path.join(directory, 'task.json'), JSON.stringify(record));
      await writeFile(path.join(directory, 'output.log'), 'y'.repeat(500));
      if (exitCode !== undefined) await writeFile(path.join(directory, 'exit-code'), exitCode);
      for (const file of ['output.log', '.']) await utimes(path.join(directory, file), old, old);
      return directory;
    };
    const finished = await task('done-session', 'bg_00000001', ended, '0');
    // This test's own process stands in for a task still running: its pid is alive.
    const running = await task('live-session', 'bg_00000002', process.pid, undefined);
    const recent = await task('live-session', 'bg_00000003', ended, '1');
    await utimes(recent, new Date(), new Date());
    const env = { ...process.env, SWITCHYARD_DATA_DIR: dataDir };

    const dry = JSON.parse(
      (await runCli(['artifacts', 'prune', '--older-than', '7d', '--dry-run', '--json'], env)).stdout,
    ) as { background: unknown };
    expect(dry.background).toMatchObject({
      kept: 2,
      removed: [{ session: 'done-session', taskId: 'bg_00000001', bytes: expect.any(Number) as number }],
    });
    await expect(stat(finished)).resolves.toBeDefined();

    const { stdout } = await runCli(['artifacts', 'prune', '--older-than', '7d'], env);
    expect(stdout).toContain('removed background task bg_00000001 of done-session');
    expect(stdout).toContain('removed 1 ended background task, kept 2');
    await expect(stat(path.join(dataDir, 'background', 'done-session'))).rejects.toThrow();
    await expect(stat(path.join(running, 'output.log'))).resolves.toBeDefined();
    await expect(stat(path.join(recent, 'output.log'))).resolves.toBeDefined();
  }, 60_000);

  it('refuses a malformed age with a usage error, deleting nothing', async () => {
    const dataDir = await dataDirWithSessions();
    const failed = await runCli(['artifacts', 'prune', '--older-than', 'soon'], {
      ...process.env,
      SWITCHYARD_DATA_DIR: dataDir,
    }).catch((error: unknown) => error as { code: number; stderr: string });
    expect(failed).toMatchObject({ code: 2 });
    expect((failed as { stderr: string }).stderr).toContain(
      '--older-than must be a duration such as 30m, 12h, 7d or 2w; got "soon"',
    );
    await expect(stat(path.join(dataDir, 'artifacts', 'idle'))).resolves.toBeDefined();
  }, 60_000);
});

describe('switchyard artifact (the real command, no server needed)', () => {
  it('a malformed URI is a usage error (exit 2), a well-formed one that is not stored is not found (exit 5)', async () => {
    const env = { ...process.env, SWITCHYARD_DATA_DIR: await scratchDir('switchyard-artifact-') };
    const malformed = (await runCli(['artifact', 'switchyard-artifact://../etc'], env).catch(
      (error: unknown) => error,
    )) as { code: number; stderr: string };
    expect(malformed).toMatchObject({ code: 2 });
    expect(malformed.stderr).toContain('Not a Switchyard artifact URI');
    const missing = (await runCli(['artifact', 'switchyard-artifact://no-session/no-such-artifact'], env).catch(
      (error: unknown) => error,
    )) as { code: number };
    expect(missing).toMatchObject({ code: 5 });
  }, 60_000);
});
