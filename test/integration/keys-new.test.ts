import { execFile } from 'node:child_process';
import { chmod, mkdir, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { scratchDir } from '../support/harness.js';

// `switchyard keys new` run as the real binary from inside a workspace folder: the private key must never land in
// the folder the command runs in (often a workspace whose files a session's commands read), but in Switchyard's data
// directory, mode 600 in a folder of mode 700, unless `--dir` says where.

const BIN = path.resolve('bin/switchyard.js');

async function keysNew(args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv }) {
  return promisify(execFile)(process.execPath, [BIN, 'keys', 'new', ...args], {
    cwd: options.cwd,
    env: options.env,
  });
}

describe('switchyard keys new', { timeout: 120_000 }, () => {
  it('writes the key pair to <data dir>/keys (600 in a 700 folder), not into the current folder, and says where', async () => {
    const workspace = await scratchDir('switchyard-workspace-');
    const dataDir = await scratchDir('switchyard-data-');
    const env = { ...process.env, SWITCHYARD_DATA_DIR: dataDir, HOME: await scratchDir('switchyard-home-') };
    const { stderr } = await keysNew(['alice'], { cwd: workspace, env });
    expect(await readdir(workspace)).toEqual([]);
    const keysDir = path.join(dataDir, 'keys');
    const keyFile = path.join(keysDir, 'alice.key');
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    expect((await stat(keysDir)).mode & 0o777).toBe(0o700);
    expect((await readdir(keysDir)).sort()).toEqual(['alice.key', 'alice.pub']);
    expect(stderr).toContain(keyFile);

    // Without SWITCHYARD_DATA_DIR: under the user's data home; a looser keys folder made earlier is tightened.
    const home = await scratchDir('switchyard-home-');
    const withoutDataDir: NodeJS.ProcessEnv = { ...env, HOME: home };
    delete withoutDataDir.SWITCHYARD_DATA_DIR;
    delete withoutDataDir.XDG_DATA_HOME;
    const homeKeys = path.join(home, '.local', 'share', 'switchyard', 'keys');
    await mkdir(homeKeys, { recursive: true });
    await chmod(homeKeys, 0o755);
    const json = JSON.parse((await keysNew(['bob', '--json'], { cwd: workspace, env: withoutDataDir })).stdout) as {
      privateKeyFile: string;
    };
    expect(json.privateKeyFile).toBe(path.join(homeKeys, 'bob.key'));
    expect((await stat(json.privateKeyFile)).mode & 0o777).toBe(0o600);
    expect((await stat(homeKeys)).mode & 0o777).toBe(0o700);
    expect(await readdir(workspace)).toEqual([]);
  });

  it('--dir still chooses the folder', async () => {
    const workspace = await scratchDir('switchyard-workspace-');
    const chosen = path.join(await scratchDir('switchyard-chosen-'), 'approver-keys');
    const env = { ...process.env, SWITCHYARD_DATA_DIR: await scratchDir('switchyard-data-') };
    const { stderr } = await keysNew(['carol', '--dir', chosen], { cwd: workspace, env });
    expect((await stat(path.join(chosen, 'carol.key'))).mode & 0o777).toBe(0o600);
    expect((await stat(chosen)).mode & 0o777).toBe(0o700);
    expect(stderr).toContain(path.join(chosen, 'carol.key'));
    expect(await readdir(workspace)).toEqual([]);
  });
});
