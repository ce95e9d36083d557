import { mkdir, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli-process.js';
import { scratchDir } from '../support/scratch.js';

const DAY_MS = 24 * 60 * 60 * 1000;

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
    const dry = JSON.parse((await runCli(['artifacts', 'prune', '--older-than', '7d', '--dry-run', '--json'], env)).stdout) as Record<string, unknown>;
    expect(dry).toMatchObject({ dryRun: true, olderThanMs: 7 * DAY_MS, kept: 1, removed: [{ session: 'idle', bytes: 1_000 }] });
    await expect(stat(path.join(dataDir, 'artifacts', 'idle'))).resolves.toBeDefined();

    const { stdout } = await runCli(['artifacts', 'prune', '--older-than', '7d'], env);
    expect(stdout).toContain('removed idle (1000 bytes, last written');
    expect(stdout).toContain('removed 1 session, kept 1');
    await expect(stat(path.join(dataDir, 'artifacts', 'idle'))).rejects.toThrow();
    await expect(stat(path.join(dataDir, 'artifacts', 'active', 'call-tool-result-1'))).resolves.toBeDefined();
  }, 60_000);

  it('refuses a malformed age with a usage error, deleting nothing', async () => {
    const dataDir = await dataDirWithSessions();
    const failed = await runCli(['artifacts', 'prune', '--older-than', 'soon'], { ...process.env, SWITCHYARD_DATA_DIR: dataDir }).catch((error: unknown) => error as { code: number; stderr: string });
    expect(failed).toMatchObject({ code: 2 });
    expect((failed as { stderr: string }).stderr).toContain('--older-than must be a duration such as 30m, 12h, 7d or 2w; got "soon"');
    await expect(stat(path.join(dataDir, 'artifacts', 'idle'))).resolves.toBeDefined();
  }, 60_000);
});
