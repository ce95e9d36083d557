import { execFile } from 'node:child_process';
import { access, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { SessionOptions } from '../../src/contracts/session.js';
import type { ToolResult } from '../../src/contracts/tool-result.js';
import { bubblewrapAvailability } from '../../src/tools/sandbox/bubblewrap-availability.js';
import { bashTool } from '../../src/tools/builtin/bash.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';

/**
 * Side doors around the sandbox's protected and hidden paths, through real sessions on a real server with the real
 * Bash and real bubblewrap: the `.git` protection walked around by a rename or by files git reads that did not exist
 * yet, a settings file created in the sandbox whose hook would run on the worker, and system secrets a root worker
 * can read. Each attack is judged on the host afterwards (the developer's next `git status` runs nothing).
 */

const run = promisify(execFile);
const exists = (file: string): Promise<boolean> =>
  access(file).then(
    () => true,
    () => false,
  );
const quote = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`;
const git = (cwd: string, ...args: string[]) =>
  run('git', ['-c', 'user.email=dev@example.com', '-c', 'user.name=dev', '-c', 'protocol.file.allow=always', ...args], {
    cwd,
  });

/** A committed repository with one file: the developer's workspace. */
async function repository(prefix = 'switchyard-repo-'): Promise<string> {
  const cwd = await scratchDir(prefix);
  await git(cwd, 'init', '-q');
  await writeFile(path.join(cwd, 'readme.txt'), 'hello\n');
  await git(cwd, 'add', '.');
  await git(cwd, 'commit', '-q', '-m', 'first');
  return cwd;
}

/** What the developer runs on the host after the session: `git status` (recursing into submodules), and the setting. */
async function developerGitStatus(cwd: string): Promise<{ fsmonitor: string | undefined }> {
  await git(cwd, 'status').catch(() => undefined);
  const fsmonitor = await git(cwd, 'config', 'core.fsmonitor').then(
    ({ stdout }) => stdout.trim(),
    () => undefined,
  );
  return { fsmonitor };
}

/** A git config that runs `touch marker` on the next `git status`. */
const plantedConfig = (marker: string): string => `[core]\n\tfsmonitor = touch ${marker}; false\n`;

describe('protected paths that hold against rename and creation, and hidden secrets', { timeout: 180_000 }, () => {
  let harness: Harness;
  let home: string;
  const saved = new Map<string, string | undefined>();
  const setEnv = (values: Record<string, string>): void => {
    for (const [name, value] of Object.entries(values)) {
      if (!saved.has(name)) saved.set(name, process.env[name]);
      process.env[name] = value;
    }
  };
  beforeAll(async () => {
    const availability = await bubblewrapAvailability();
    if (!availability.available) throw new Error(`these tests need bubblewrap: ${availability.reason}`);
    harness = await createHarness({ tools: [bashTool] });
    home = await scratchDir('switchyard-home-');
    setEnv({ HOME: home });
  });
  afterEach(() => {
    for (const [name, value] of saved) {
      if (name === 'HOME') continue;
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
      saved.delete(name);
    }
  });
  afterAll(async () => {
    const previous = saved.get('HOME');
    if (previous === undefined) delete process.env.HOME;
    else process.env.HOME = previous;
    await harness.close();
  });

  const bash = async (session: SessionHandle, turnId: string, command: string): Promise<ToolResult> => {
    const turn = await session.executeTurn({ turnId, calls: [{ id: 'b', name: 'Bash', input: { command } }] });
    const [result] = turn.results;
    if (result === undefined) throw new Error('no result');
    return result;
  };
  const requiredSession = (cwd: string, extra: Partial<SessionOptions> = {}): Promise<SessionHandle> =>
    harness.startSession({ cwd, permissionMode: 'bypassPermissions', sandbox: { mode: 'required' }, ...extra });

  it('mv .git and a planted .git/config: the move fails, the host keeps its .git and its git runs nothing', async () => {
    const cwd = await repository();
    const marker = path.join(await scratchDir('switchyard-marker-'), 'ran');
    await harness.withWorker(async () => {
      const session = await requiredSession(cwd);
      const result = await bash(
        session,
        't1',
        [
          'mv .git .git-moved',
          'mkdir -p .git',
          `printf ${quote(plantedConfig(marker))} > .git/config`,
          `cp -r .git-moved/. .git/ 2>/dev/null`,
          'rm -rf .git 2>/dev/null',
          'echo done',
        ].join('; '),
      );
      expect(result.sandboxed).toBe(true);
      expect(result.modelContent).toContain('done');
    });
    expect(await exists(path.join(cwd, '.git-moved'))).toBe(false);
    expect(await exists(path.join(cwd, '.git', 'HEAD'))).toBe(true);
    expect(await developerGitStatus(cwd)).toEqual({ fsmonitor: undefined });
    expect(await exists(marker)).toBe(false);
    // The repository is whole: its history is still there.
    expect((await git(cwd, 'log', '--oneline')).stdout).toContain('first');
  });

  it('a new .git/commondir pointing at a planted configuration cannot be created', async () => {
    const cwd = await repository();
    const marker = path.join(await scratchDir('switchyard-marker-'), 'ran');
    await harness.withWorker(async () => {
      const session = await requiredSession(cwd);
      const result = await bash(
        session,
        't1',
        [
          'mkdir -p planted/refs planted/objects',
          `printf ${quote(plantedConfig(marker))} > planted/config`,
          'echo ../planted > .git/commondir',
          'echo ../planted > .git/config.worktree',
          'echo done',
        ].join('; '),
      );
      expect(result.sandboxed).toBe(true);
      expect(result.modelContent).toContain('done');
    });
    expect(await exists(path.join(cwd, '.git', 'commondir'))).toBe(false);
    expect(await exists(path.join(cwd, '.git', 'config.worktree'))).toBe(false);
    expect(await developerGitStatus(cwd)).toEqual({ fsmonitor: undefined });
    expect(await exists(marker)).toBe(false);
  });

  it("a submodule's .git/modules/<sub>/config cannot be written, nor its folder swapped for a planted repository", async () => {
    const library = await repository('switchyard-library-');
    const cwd = await repository();
    await git(cwd, 'submodule', 'add', '-q', library, 'libs/sub');
    await git(cwd, 'commit', '-q', '-m', 'submodule');
    const marker = path.join(await scratchDir('switchyard-marker-'), 'ran');
    const moduleConfig = path.join(cwd, '.git', 'modules', 'libs', 'sub', 'config');
    const before = await readFile(moduleConfig, 'utf8');
    await harness.withWorker(async () => {
      const session = await requiredSession(cwd);
      const written = await bash(
        session,
        't1',
        [
          `printf ${quote(plantedConfig(marker))} >> .git/modules/libs/sub/config`,
          `mkdir -p .git/modules/other && printf ${quote(plantedConfig(marker))} > .git/modules/other/config`,
          'echo done',
        ].join('; '),
      );
      expect(written.modelContent).toContain('done');
      // The folder moved aside and a repository of the model's own put in its place.
      const swapped = await bash(
        session,
        't2',
        [
          'mv libs libs-old',
          'mv libs/sub libs/sub-old',
          'rm -rf libs/sub',
          `mkdir -p libs/sub/.git && printf ${quote(plantedConfig(marker))} > libs/sub/.git/config`,
          'echo done',
        ].join('; '),
      );
      expect(swapped).toMatchObject({ sandboxed: true });
      expect(swapped.modelContent).toContain('done');
    });
    expect(await readFile(moduleConfig, 'utf8')).toBe(before);
    expect(await exists(path.join(cwd, '.git', 'modules', 'other'))).toBe(false);
    expect(await exists(path.join(cwd, 'libs-old'))).toBe(false);
    expect(await developerGitStatus(cwd)).toEqual({ fsmonitor: undefined });
    expect(await exists(marker)).toBe(false);
  });

  it('a workspace without .git: a command cannot create one', async () => {
    const parent = await repository();
    const cwd = path.join(parent, 'package');
    await mkdir(cwd);
    const marker = path.join(await scratchDir('switchyard-marker-'), 'ran');
    await harness.withWorker(async () => {
      const session = await requiredSession(cwd);
      const result = await bash(
        session,
        't1',
        [
          'git init -q . 2>/dev/null',
          `mkdir -p .git && printf ${quote(plantedConfig(marker))} > .git/config`,
          'echo done',
        ].join('; '),
      );
      expect(result.modelContent).toContain('done');
    });
    // The developer's git in the package folder still finds the repository above it, and runs nothing.
    expect(await exists(path.join(cwd, '.git', 'config'))).toBe(false);
    expect(await developerGitStatus(cwd)).toEqual({ fsmonitor: undefined });
    expect(await exists(marker)).toBe(false);
  });

  it('autoAllowBash + trustWorkspaceSettings: a sandboxed command cannot create .switchyard or .claude settings', async () => {
    const cwd = await scratchDir();
    const marker = path.join(await scratchDir('switchyard-marker-'), 'hook-ran');
    const settings = JSON.stringify({
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: `touch ${quote(marker)}` }] }] },
    });
    await harness.withWorker(async () => {
      const session = await harness.startSession({
        cwd,
        trustWorkspaceSettings: true,
        sandbox: { autoAllowBash: true },
      });
      const planted = await bash(
        session,
        't1',
        [
          `mkdir -p .switchyard && printf %s ${quote(settings)} > .switchyard/settings.json`,
          `mkdir -p .claude && printf %s ${quote(settings)} > .claude/settings.json`,
          'echo done',
        ].join('; '),
      );
      expect(planted).toMatchObject({ status: 'success', sandboxed: true });
      expect(planted.modelContent).toContain('done');
      const next = await bash(session, 't2', 'echo next');
      expect(next).toMatchObject({ status: 'success', modelContent: 'next\n' });
    });
    expect(await exists(path.join(cwd, '.switchyard', 'settings.json'))).toBe(false);
    expect(await exists(path.join(cwd, '.claude', 'settings.json'))).toBe(false);
    expect(await exists(marker)).toBe(false);
  });

  it("a root worker: /etc/shadow, root's home, other homes and the key files the environment names read as empty", async () => {
    if (process.getuid?.() !== 0) throw new Error('this test plays a root worker: run it as root');
    const cwd = await scratchDir();
    const rootSecret = path.join('/root', `switchyard-secret-${process.pid}`);
    const otherHome = path.join('/home', `switchyard-other-${process.pid}`);
    const keys = await scratchDir('switchyard-keys-');
    const tlsKey = path.join(keys, 'client.key');
    await writeFile(rootSecret, 'ROOT-HOME-SECRET\n');
    await mkdir(otherHome, { recursive: true });
    await writeFile(path.join(otherHome, 'notes.txt'), 'OTHER-HOME-SECRET\n');
    await writeFile(tlsKey, 'TLS-KEY-SECRET\n');
    const shadow = await readFile('/etc/shadow', 'utf8');
    // A TLS key path of the worker's own (the Temporal ones, TEMPORAL_TLS_*, are in the unit test: here they would
    // change the test worker's connection).
    setEnv({ BILLING_API_TLS_CLIENT_KEY_PATH: tlsKey });
    try {
      await harness.withWorker(async () => {
        const session = await requiredSession(cwd);
        const result = await bash(
          session,
          't1',
          `cat /etc/shadow /etc/gshadow ${rootSecret} ${otherHome}/notes.txt ${tlsKey} 2>&1; node -e 'console.log("node runs")'`,
        );
        expect(result.sandboxed).toBe(true);
        for (const secret of ['ROOT-HOME-SECRET', 'OTHER-HOME-SECRET', 'TLS-KEY-SECRET'])
          expect(result.modelContent).not.toContain(secret);
        const firstShadowLine = shadow.split('\n')[0] ?? '';
        expect(firstShadowLine).not.toBe('');
        expect(result.modelContent).not.toContain(firstShadowLine);
        // The worker's node still runs inside (the proxy bridge needs it).
        expect(result.modelContent).toContain('node runs');
      });
    } finally {
      await rm(rootSecret, { force: true });
      await rm(otherHome, { recursive: true, force: true });
    }
  });
});
