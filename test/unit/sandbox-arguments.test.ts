import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  bubblewrapArguments,
  cgroupLimitedCommand,
  limitedCommand,
} from '../../src/tools/sandbox/bubblewrap-arguments.js';
import type { BubblewrapPlan } from '../../src/tools/sandbox/bubblewrap-arguments.js';
import { isHostAllowed, proxyDestination } from '../../src/tools/sandbox/domain-proxy.js';
import { effectiveSandboxMode } from '../../src/tools/sandbox/sandboxed-launch.js';
import { SANDBOX_LIMIT_DEFAULTS, sandboxLimitsFromEnv } from '../../src/tools/sandbox/sandbox-limits.js';
import { sandboxPaths } from '../../src/tools/sandbox/sandbox-paths.js';
import { sandboxStartupLine } from '../../src/tools/sandbox/sandbox-report.js';
import { BackgroundTaskStore } from '../../src/tools/background/background-task-store.js';
import { scratchDir } from '../support/scratch.js';

const plan = (overrides: Partial<BubblewrapPlan> = {}): BubblewrapPlan => ({
  cwd: '/work/project',
  writable: ['/work/project'],
  masked: [],
  exposed: [],
  readOnly: [],
  hidden: [],
  network: { kind: 'none' },
  ...overrides,
});

/** The index of the option `name` followed by `values`, or -1. */
function indexOfOption(args: readonly string[], name: string, ...values: string[]): number {
  return args.findIndex(
    (arg, index) => arg === name && values.every((value, offset) => args[index + 1 + offset] === value),
  );
}

describe('bubblewrapArguments', () => {
  it('starts from a read-only root, new namespaces (network too), no capabilities, and dies with its parent', () => {
    const args = bubblewrapArguments(plan());
    for (const option of [
      '--unshare-user',
      '--unshare-pid',
      '--unshare-net',
      '--unshare-ipc',
      '--die-with-parent',
      '--new-session',
    ])
      expect(args).toContain(option);
    expect(indexOfOption(args, '--cap-drop', 'ALL')).toBeGreaterThanOrEqual(0);
    expect(indexOfOption(args, '--ro-bind', '/', '/')).toBeGreaterThanOrEqual(0);
    expect(indexOfOption(args, '--tmpfs', '/tmp')).toBeGreaterThan(indexOfOption(args, '--ro-bind', '/', '/'));
    expect(args.slice(-2)).toEqual(['--chdir', '/work/project']);
    expect(args).not.toContain('--share-net');
  });

  it('binds cwd and allowWrite read-write after the root and the masks, protected paths read-only after them, hidden paths last', () => {
    const args = bubblewrapArguments(
      plan({
        writable: ['/work/project', '/work/cache'],
        masked: ['/home/u/.local/share/switchyard'],
        exposed: ['/home/u/.local/share/switchyard/background/s1'],
        readOnly: ['/work/project/.git/config', '/work/project/.switchyard'],
        hidden: [
          { path: '/home/u/.ssh', kind: 'directory' },
          { path: '/work/project/.env', kind: 'file' },
        ],
      }),
    );
    const mask = indexOfOption(args, '--tmpfs', '/home/u/.local/share/switchyard');
    const expose = indexOfOption(
      args,
      '--ro-bind',
      '/home/u/.local/share/switchyard/background/s1',
      '/home/u/.local/share/switchyard/background/s1',
    );
    const cwd = indexOfOption(args, '--bind', '/work/project', '/work/project');
    const cache = indexOfOption(args, '--bind', '/work/cache', '/work/cache');
    const gitConfig = indexOfOption(args, '--ro-bind', '/work/project/.git/config', '/work/project/.git/config');
    const settings = indexOfOption(args, '--ro-bind', '/work/project/.switchyard', '/work/project/.switchyard');
    const ssh = indexOfOption(args, '--tmpfs', '/home/u/.ssh');
    const dotenv = indexOfOption(args, '--dev-bind', '/dev/null', '/work/project/.env');
    expect([mask, expose, cwd, cache, gitConfig, settings, ssh, dotenv].every((index) => index > 0)).toBe(true);
    expect(mask).toBeLessThan(expose);
    expect(expose).toBeLessThan(cwd);
    expect(cache).toBeLessThan(gitConfig);
    expect(settings).toBeLessThan(ssh);
    // Emptied folders are made read-only once every mount point inside them exists.
    const remounts = [
      indexOfOption(args, '--remount-ro', '/home/u/.local/share/switchyard'),
      indexOfOption(args, '--remount-ro', '/home/u/.ssh'),
    ];
    expect(remounts.every((index) => index > dotenv)).toBe(true);
  });

  it('binds the proxy socket folder only when the session allows some hosts', () => {
    expect(bubblewrapArguments(plan()).join(' ')).not.toContain('switchyard-proxy');
    const args = bubblewrapArguments(plan({ network: { kind: 'proxy', socketDirectory: '/tmp/switchyard-proxy-1' } }));
    expect(indexOfOption(args, '--ro-bind', '/tmp/switchyard-proxy-1', '/tmp/switchyard-proxy-1')).toBeGreaterThan(
      indexOfOption(args, '--tmpfs', '/tmp'),
    );
    // Still a network namespace of its own: the proxy is the only way out.
    expect(args).toContain('--unshare-net');
  });
});

describe('limitedCommand', () => {
  it('sets memory (KiB), processes, file size (KiB blocks) and CPU seconds before it execs the command', () => {
    const argv = limitedCommand({
      limits: { memoryBytes: 512 * 1024 * 1024, processes: 64, fileBytes: 1_000_000, cpuSeconds: 30 },
      command: ['/bin/bash', '-c', 'echo hi'],
    });
    expect(argv.slice(0, 2)).toEqual(['/bin/bash', '-c']);
    expect(argv[2]).toMatch(
      /^ulimit -v "\$1" && ulimit -u "\$2" && ulimit -f "\$3" && ulimit -t "\$4" \|\| exit 126; shift 4; exec "\$@"$/,
    );
    expect(argv.slice(3)).toEqual(['switchyard-sandbox', '524288', '64', '977', '30', '/bin/bash', '-c', 'echo hi']);
  });
});

describe('cgroupLimitedCommand (a root worker with a pids cgroup)', () => {
  it('joins the cgroup and sets memory, file size and CPU outside, then execs bubblewrap; no ulimit -u', () => {
    const argv = cgroupLimitedCommand({
      procsFile: '/sys/fs/cgroup/pids/switchyard/call-1/cgroup.procs',
      limits: { memoryBytes: 1024 * 1024, processes: 64, fileBytes: 2048, cpuSeconds: 5 },
      command: ['bwrap', '--', 'true'],
    });
    expect(argv[2]).toBe(
      'echo $$ > "$1" && ulimit -v "$2" && ulimit -f "$3" && ulimit -t "$4" || exit 126; shift 4; exec "$@"',
    );
    expect(argv.slice(3)).toEqual([
      'switchyard-sandbox',
      '/sys/fs/cgroup/pids/switchyard/call-1/cgroup.procs',
      '1024',
      '2',
      '5',
      'bwrap',
      '--',
      'true',
    ]);
  });
});

describe('sandboxLimitsFromEnv', () => {
  it('has named defaults; the file size follows the Bash spool limit unless set', () => {
    expect(sandboxLimitsFromEnv({})).toEqual({ ...SANDBOX_LIMIT_DEFAULTS, fileBytes: 64 * 1024 * 1024 });
    expect(sandboxLimitsFromEnv({ SWITCHYARD_BASH_MAX_SPOOL_BYTES: '1000' }).fileBytes).toBe(1000);
    expect(
      sandboxLimitsFromEnv({ SWITCHYARD_BASH_MAX_SPOOL_BYTES: '1000', SWITCHYARD_SANDBOX_MAX_FILE_BYTES: '5000' })
        .fileBytes,
    ).toBe(5000);
  });

  it('rejects a malformed value, naming its variable', () => {
    expect(() => sandboxLimitsFromEnv({ SWITCHYARD_SANDBOX_MAX_PROCESSES: 'many' })).toThrow(
      /SWITCHYARD_SANDBOX_MAX_PROCESSES must be a positive integer, got "many"/,
    );
    expect(() => sandboxLimitsFromEnv({ SWITCHYARD_SANDBOX_MEMORY_BYTES: '-1' })).toThrow(
      /SWITCHYARD_SANDBOX_MEMORY_BYTES/,
    );
  });
});

describe('effectiveSandboxMode', () => {
  it('takes the session option, else SWITCHYARD_SANDBOX, else auto; a worker-level required is a floor', () => {
    expect(effectiveSandboxMode(undefined, {})).toBe('auto');
    expect(effectiveSandboxMode(undefined, { SWITCHYARD_SANDBOX: 'required' })).toBe('required');
    expect(effectiveSandboxMode({ mode: 'off' }, { SWITCHYARD_SANDBOX: 'auto' })).toBe('off');
    // Never lowered: the session's "off" is refused at the call (see sandbox-side-doors.test.ts), never run unsandboxed.
    expect(effectiveSandboxMode({ mode: 'off' }, { SWITCHYARD_SANDBOX: 'required' })).toBe('required');
    expect(() => effectiveSandboxMode(undefined, { SWITCHYARD_SANDBOX: 'yes' })).toThrow(
      /SWITCHYARD_SANDBOX must be one of auto, required, off, got "yes"/,
    );
  });

  it('autoAllowBash turns auto into required: a call allowed for running sandboxed never runs outside it', () => {
    expect(effectiveSandboxMode({ autoAllowBash: true }, {})).toBe('required');
    expect(effectiveSandboxMode({ autoAllowBash: true, mode: 'off' }, {})).toBe('off');
  });
});

describe('the domain proxy decides by host name', () => {
  it('allows listed hosts exactly, and subdomains only through *.', () => {
    expect(isHostAllowed('localhost', ['localhost'])).toBe(true);
    expect(isHostAllowed('LOCALHOST.', ['localhost'])).toBe(true);
    expect(isHostAllowed('127.0.0.1', ['localhost'])).toBe(false);
    expect(isHostAllowed('api.example.com', ['example.com'])).toBe(false);
    expect(isHostAllowed('api.example.com', ['*.example.com'])).toBe(true);
    expect(isHostAllowed('example.com', ['*.example.com'])).toBe(false);
    expect(isHostAllowed('evil-example.com', ['*.example.com'])).toBe(false);
    expect(isHostAllowed('example.com.evil.net', ['example.com'])).toBe(false);
    expect(isHostAllowed('', ['example.com'])).toBe(false);
  });

  it('reads the destination of CONNECT and of absolute http:// requests, and nothing else', () => {
    expect(proxyDestination('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n')).toEqual({
      host: 'example.com',
      port: 443,
      connect: true,
    });
    expect(proxyDestination('CONNECT [::1]:8080 HTTP/1.1\r\n\r\n')).toEqual({ host: '::1', port: 8080, connect: true });
    expect(proxyDestination('GET http://Localhost:8080/a?b HTTP/1.1\r\nHost: elsewhere\r\n\r\n')).toEqual({
      host: 'localhost',
      port: 8080,
      connect: false,
    });
    expect(proxyDestination('GET http://user@localhost/ HTTP/1.1\r\n\r\n')).toEqual({
      host: 'localhost',
      port: 80,
      connect: false,
    });
    // Origin-form requests name no host the proxy could check (their Host header is the client's word): refused.
    expect(proxyDestination('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n')).toBeUndefined();
    expect(proxyDestination('GET ftp://example.com/ HTTP/1.1\r\n\r\n')).toBeUndefined();
  });
});

describe('sandboxPaths (the file system half, against a real folder tree)', () => {
  it("hides credentials, Read deny rules and denyRead; protects the .git folder and settings folders; masks the data dir but the session's own tasks", async () => {
    const home = await scratchDir('switchyard-home-');
    const cwd = await scratchDir('switchyard-cwd-');
    const dataDir = await scratchDir('switchyard-data-');
    await mkdir(path.join(home, '.ssh'));
    await writeFile(path.join(home, '.netrc'), 'x');
    await mkdir(path.join(cwd, '.git', 'hooks'), { recursive: true });
    await writeFile(path.join(cwd, '.git', 'config'), '');
    await mkdir(path.join(cwd, '.git', 'objects'));
    await mkdir(path.join(cwd, 'packages', 'a', '.claude'), { recursive: true });
    await mkdir(path.join(cwd, 'node_modules', 'x', '.claude'), { recursive: true });
    await writeFile(path.join(cwd, '.env'), 'x');
    await writeFile(path.join(cwd, 'config.secret'), 'x');
    await mkdir(path.join(cwd, 'secrets'));
    await symlink(path.join(cwd, '.env'), path.join(cwd, 'env-link'));
    const own = new BackgroundTaskStore(dataDir).sessionDirectory('s1');
    await mkdir(own, { recursive: true });
    const paths = await sandboxPaths({
      cwd,
      home,
      sessionId: 's1',
      dataDir,
      denyRules: ['Read(.env)', 'Read(secrets/**)', 'Bash(rm:*)', 'Read(*.secret)'],
      options: { denyRead: ['~/.netrc', 'missing-file'], allowWrite: ['/nonexistent-allow-write'] },
    });
    expect(paths.cwd).toBe(cwd);
    expect(paths.writable).toEqual([cwd]);
    expect(paths.notes).toContain('allowWrite /nonexistent-allow-write does not exist; it stays read-only');
    expect(paths.masked).toContain(dataDir);
    expect(paths.exposed).toEqual([own]);
    expect(paths.readOnly).toEqual(
      expect.arrayContaining([path.join(cwd, '.git'), path.join(cwd, 'packages', 'a', '.claude')]),
    );
    expect(paths.readOnly).not.toContain(path.join(cwd, '.git', 'objects'));
    expect(paths.readOnly).not.toContain(path.join(cwd, 'node_modules', 'x', '.claude'));
    expect(paths.hidden).toEqual(
      expect.arrayContaining([
        { path: path.join(home, '.ssh'), kind: 'directory' },
        { path: path.join(home, '.netrc'), kind: 'file' },
        { path: path.join(cwd, '.env'), kind: 'file' },
        { path: path.join(cwd, 'secrets'), kind: 'directory' },
        { path: path.join(cwd, 'config.secret'), kind: 'file' },
      ]),
    );
    // A credential location that does not exist needs no mount; a path is listed once, by its real path.
    expect(paths.hidden.map((entry) => entry.path)).not.toContain(path.join(home, '.aws'));
    expect(new Set(paths.hidden.map((entry) => entry.path)).size).toBe(paths.hidden.length);
  });

  it('never hides a folder that holds cwd', async () => {
    const home = await scratchDir('switchyard-home-');
    const cwd = path.join(home, '.aws', 'project');
    await mkdir(cwd, { recursive: true });
    const paths = await sandboxPaths({ cwd, home, sessionId: 's', denyRules: [], options: {} });
    expect(paths.hidden.map((entry) => entry.path)).not.toContain(path.join(home, '.aws'));
    expect(paths.notes.join('\n')).toContain('holds a writable path');
  });
});

describe('sandboxStartupLine (the worker says loudly where it cannot sandbox)', () => {
  const available = { available: true as const, binary: 'bwrap' };
  const missing = { available: false as const, reason: 'bubblewrap (bwrap) cannot sandbox here: it is not installed' };

  it('warns when commands will run unsandboxed, or fail under required', () => {
    expect(
      sandboxStartupLine({ availability: missing, workerMode: undefined, root: false, pidsCgroup: false }),
    ).toEqual({
      level: 'warn',
      message:
        'OS sandbox unavailable: bubblewrap (bwrap) cannot sandbox here: it is not installed. Bash and background tasks run UNSANDBOXED, with the worker\'s full rights (sessions with sandbox.mode "required" fail their calls instead)',
    });
    expect(
      sandboxStartupLine({ availability: missing, workerMode: 'required', root: false, pidsCgroup: false }).message,
    ).toContain('will fail with sandbox_unavailable');
    expect(
      sandboxStartupLine({ availability: available, workerMode: 'off', root: false, pidsCgroup: false }),
    ).toMatchObject({ level: 'warn', message: expect.stringContaining('OS sandbox off') });
  });

  it('warns about a root worker without a pids cgroup, and is quiet (info) otherwise', () => {
    expect(
      sandboxStartupLine({ availability: available, workerMode: '', root: true, pidsCgroup: false }),
    ).toMatchObject({ level: 'warn', message: expect.stringContaining('no process limit') });
    expect(sandboxStartupLine({ availability: available, workerMode: '', root: true, pidsCgroup: true })).toEqual({
      level: 'info',
      message: 'OS sandbox on (bwrap, mode auto; process limit by pids cgroup)',
    });
    expect(
      sandboxStartupLine({ availability: available, workerMode: 'required', root: false, pidsCgroup: false }),
    ).toEqual({ level: 'info', message: 'OS sandbox on (bwrap, mode required; process limit by RLIMIT_NPROC)' });
  });
});
