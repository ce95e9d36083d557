import { chmod, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { access } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { BackgroundTaskRecord } from '../../src/contracts/background-tasks.js';
import { BackgroundTaskStore } from '../../src/tools/background/background-task-store.js';
import { backgroundWrapperBinaries } from '../../src/tools/background/background-task-wrapper.js';
import { ToolUseError } from '../../src/tools/define-tool.js';
import {
  bubblewrapAvailability,
  bubblewrapBinary,
  SandboxSettingError,
} from '../../src/tools/sandbox/bubblewrap-availability.js';
import { prepareSandboxLaunch } from '../../src/tools/sandbox/sandboxed-launch.js';
import { sandboxFloorRefusal } from '../../src/tools/sandbox/sandbox-floor.js';
import type { SandboxLaunch, SandboxLaunchContext } from '../../src/tools/sandbox/sandboxed-launch.js';
import { probeSandboxStartupLine } from '../../src/tools/sandbox/sandbox-report.js';
import { TRUSTED_DIRECTORIES, trustedBinary, trustedProgram } from '../../src/tools/sandbox/trusted-binaries.js';
import { scratchDir } from '../support/scratch.js';

const exists = (file: string): Promise<boolean> =>
  access(file).then(
    () => true,
    () => false,
  );

/** A folder of programs named like the ones Switchyard wraps a command with, each leaving `marker` when it runs. */
async function plantedPrograms(marker: string, names: readonly string[]): Promise<string> {
  const folder = await scratchDir('switchyard-planted-');
  for (const name of names) {
    const file = path.join(folder, name);
    // Each runs its command unconfined (the planted bwrap skips its options), after leaving the marker.
    const body =
      name === 'bwrap'
        ? 'while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do shift; done; shift; exec "$@"'
        : `exec /usr/bin/${name} "$@"`;
    await writeFile(file, `#!/bin/bash\necho ${name} >> ${JSON.stringify(marker)}\n${body}\n`);
    await chmod(file, 0o755);
  }
  return folder;
}

const launches: SandboxLaunch[] = [];
const savedTmpdir = process.env.TMPDIR;
afterEach(async () => {
  for (const launch of launches.splice(0)) if (launch.sandboxed) await launch.finish();
  if (savedTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmpdir;
});

async function launch(context: Partial<SandboxLaunchContext>, env: NodeJS.ProcessEnv): Promise<SandboxLaunch> {
  const cwd = context.cwd ?? (await scratchDir());
  const prepared = await prepareSandboxLaunch({
    context: { sessionId: 's1', cwd, denyRules: [], sandbox: { mode: 'required' }, ...context },
    env,
  });
  launches.push(prepared);
  return prepared;
}

const refusedWith = async (promise: Promise<unknown>, text: RegExp): Promise<void> => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ToolUseError);
  expect((error as ToolUseError).code).toBe('sandbox_unavailable');
  expect((error as Error).message).toMatch(text);
};

describe('trusted binaries: what confines a command is never looked up through PATH', () => {
  it('finds bwrap, bash and the wrapper programs in the system folders whatever PATH says', async () => {
    const marker = path.join(await scratchDir(), 'ran');
    const planted = await plantedPrograms(marker, ['bwrap', 'stdbuf', 'head', 'wc', 'mv', 'bash']);
    const env = { PATH: `${planted}:/usr/bin:/bin` };
    expect(bubblewrapBinary(env)).toBe('/usr/bin/bwrap');
    const availability = await bubblewrapAvailability(env);
    expect(availability).toEqual({ available: true, binary: '/usr/bin/bwrap' });
    for (const name of ['bwrap', 'bash', 'stdbuf', 'head', 'wc', 'mv']) {
      const found = trustedBinary(name) ?? '';
      expect(
        TRUSTED_DIRECTORIES.some((folder) => found.startsWith(`${folder}/`)),
        `${name}: ${found}`,
      ).toBe(true);
    }
    const wrapper = backgroundWrapperBinaries();
    expect(Object.values({ ...wrapper, ...wrapper.capping }).filter((value) => typeof value === 'string')).toEqual(
      expect.arrayContaining(['/usr/bin/head', '/usr/bin/stdbuf', '/usr/bin/wc', '/usr/bin/mv']),
    );
    const prepared = await launch({}, env);
    if (!prepared.sandboxed) throw new Error('not sandboxed');
    const argv = prepared.argv(['/bin/true']);
    expect(argv).toContain('/usr/bin/bwrap');
    expect(argv).not.toContain('bwrap');
    expect(await exists(marker)).toBe(false);
  });

  it('does not trust a program that others may write, nor one in a folder (up to /) that others may write', async () => {
    const open = await mkdtemp(path.join(os.tmpdir(), 'switchyard-open-'));
    try {
      await chmod(open, 0o777);
      await copyFile('/usr/bin/true', path.join(open, 'true'));
      await chmod(path.join(open, 'true'), 0o755);
      expect(trustedProgram(path.join(open, 'true'))).toBeUndefined();
      // A guarded folder inside /tmp is no better: /tmp itself is writable by everyone.
      await chmod(open, 0o755);
      expect(trustedProgram(path.join(open, 'true'))).toBeUndefined();
      expect(trustedProgram('/usr/bin/bwrap')).toBe('/usr/bin/bwrap');
      expect(trustedProgram('/usr/bin/no-such-program-here')).toBeUndefined();
      expect(trustedProgram('/usr/bin')).toBeUndefined();
    } finally {
      await rm(open, { recursive: true, force: true });
    }
  });

  it('refuses a SWITCHYARD_BWRAP that is not absolute, naming the setting: at start-up and at the call', async () => {
    for (const value of ['bwrap', 'node_modules/.bin/bwrap', './bwrap']) {
      expect(() => bubblewrapBinary({ SWITCHYARD_BWRAP: value })).toThrow(SandboxSettingError);
      expect(() => bubblewrapBinary({ SWITCHYARD_BWRAP: value })).toThrow(/SWITCHYARD_BWRAP must be an absolute path/);
      await expect(probeSandboxStartupLine({ SWITCHYARD_BWRAP: value })).rejects.toThrow(/SWITCHYARD_BWRAP/);
      await refusedWith(launch({}, { SWITCHYARD_BWRAP: value }), /SWITCHYARD_BWRAP must be an absolute path/);
      await refusedWith(
        launch({ sandbox: { mode: 'auto' } }, { SWITCHYARD_BWRAP: value }),
        /SWITCHYARD_BWRAP must be an absolute path/,
      );
    }
    expect(bubblewrapBinary({ SWITCHYARD_BWRAP: '/usr/bin/../bin/bwrap' })).toBe('/usr/bin/bwrap');
  });

  it('refuses to launch through a bubblewrap binary the session can write (inside cwd)', async () => {
    const cwd = await scratchDir();
    await copyFile('/usr/bin/bwrap', path.join(cwd, 'bwrap'));
    await chmod(path.join(cwd, 'bwrap'), 0o755);
    await refusedWith(
      launch({ cwd }, { SWITCHYARD_BWRAP: path.join(cwd, 'bwrap') }),
      /bubblewrap binary .* is inside .*, which this session's sandbox may write/,
    );
  });

  it('names the resolved programs in the start-up line', async () => {
    const line = await probeSandboxStartupLine({ PATH: `/nowhere:${process.env.PATH ?? ''}` });
    expect(line.message).toContain('trusted binaries (never looked up through PATH): bwrap=/usr/bin/bwrap');
    for (const name of ['stdbuf', 'head', 'wc', 'mv']) expect(line.message).toContain(`${name}=/usr/bin/${name}`);
  });
});

describe("the background wrapper never runs a program from the task's PATH", () => {
  const started: BackgroundTaskRecord[] = [];
  afterEach(() => {
    for (const record of started.splice(0)) {
      try {
        process.kill(-record.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  });

  it('caps and records the exit code with the system stdbuf, head, wc and mv, not the planted ones', async () => {
    const marker = path.join(await scratchDir(), 'ran');
    const planted = await plantedPrograms(marker, ['stdbuf', 'head', 'wc', 'mv']);
    const store = new BackgroundTaskStore(await scratchDir());
    const record = await store.start({
      sessionId: 's1',
      turnId: 't',
      callId: 'c',
      command: 'echo out; exit 3',
      cwd: await scratchDir(),
      env: { PATH: `${planted}:/usr/bin:/bin` },
      maxOutputBytes: 1_000,
    });
    started.push(record);
    const state = await store.waitForEnd(record, { timeoutMs: 30_000, pollIntervalMs: 20 });
    expect(state).toEqual({ status: 'exited', exitCode: 3 });
    expect(await readFile(store.outputPath(record), 'utf8')).toBe('out\n');
    expect(await exists(marker)).toBe(false);
  });
});

describe('TMPDIR outside /tmp is hidden from the sandbox', () => {
  it("masks the worker's temporary folder (proxy sockets, spool files) but keeps a cwd inside it working", async () => {
    const temporary = await mkdtemp('/var/tmp/switchyard-tmpdir-');
    try {
      const cwd = path.join(temporary, 'project');
      await mkdir(cwd);
      process.env.TMPDIR = temporary;
      const prepared = await launch({ cwd }, {});
      if (!prepared.sandboxed) throw new Error('not sandboxed');
      const argv = prepared.argv(['/bin/true']);
      const masked = argv.findIndex((arg, index) => arg === '--tmpfs' && argv[index + 1] === temporary);
      const bound = argv.findIndex((arg, index) => arg === '--bind' && argv[index + 1] === cwd);
      expect(masked).toBeGreaterThan(-1);
      expect(bound).toBeGreaterThan(masked);
    } finally {
      await rm(temporary, { recursive: true, force: true });
    }
  });

  it('adds no mask when TMPDIR is inside /tmp (the sandbox has a fresh /tmp already)', async () => {
    const temporary = await mkdtemp('/tmp/switchyard-tmpdir-');
    try {
      process.env.TMPDIR = temporary;
      const prepared = await launch({}, {});
      if (!prepared.sandboxed) throw new Error('not sandboxed');
      expect(prepared.argv(['/bin/true'])).not.toContain(temporary);
    } finally {
      await rm(temporary, { recursive: true, force: true });
    }
  });
});

describe("the worker's SWITCHYARD_SANDBOX=required is a floor at every call", () => {
  it.each(['off', 'auto'] as const)('refuses a session that asked for "%s", naming both settings', async (mode) => {
    const env = { SWITCHYARD_SANDBOX: 'required' };
    expect(sandboxFloorRefusal({ sessionMode: mode, workerMode: env.SWITCHYARD_SANDBOX })).toMatch(
      new RegExp(`requires the OS sandbox \\(SWITCHYARD_SANDBOX=required\\).*sandbox.mode "${mode}" was refused`),
    );
    await refusedWith(launch({ sandbox: { mode } }, env), /SWITCHYARD_SANDBOX=required/);
    await refusedWith(launch({ sandbox: { mode, autoAllowBash: true } }, env), /was refused/);
  });

  it('runs sandboxed where the session asked for required or nothing; other worker modes leave the session free', async () => {
    const env = { SWITCHYARD_SANDBOX: 'required' };
    expect((await launch({ sandbox: { mode: 'required' } }, env)).sandboxed).toBe(true);
    expect((await launch({ sandbox: {} }, env)).sandboxed).toBe(true);
    expect(sandboxFloorRefusal({ sessionMode: 'off', workerMode: 'auto' })).toBeUndefined();
    expect((await launch({ sandbox: { mode: 'off' } }, { SWITCHYARD_SANDBOX: 'auto' })).sandboxed).toBe(false);
  });
});
