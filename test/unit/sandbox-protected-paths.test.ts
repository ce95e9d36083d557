// What the sandbox's plan protects against renames and creation (`.git` as a whole, submodule folders, settings
// folders that do not exist yet) and what it hides beyond the worker user's credentials (system secrets, other homes,
// key files the worker's environment names). Against real folder trees; the kernel's side is in
// test/integration/sandbox-protected-paths.test.ts.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bubblewrapArguments } from '../../src/tools/sandbox/bubblewrap-arguments.js';
import { sandboxPaths } from '../../src/tools/sandbox/sandbox-paths.js';
import { scratchDir } from '../support/scratch.js';

function indexOfOption(args: readonly string[], name: string, ...values: string[]): number {
  return args.findIndex(
    (arg, index) => arg === name && values.every((value, offset) => args[index + 1 + offset] === value),
  );
}

/** A worker with no PATH folders, the node binary where it is, and no key files in its environment. */
const plainWorker = { execPath: process.execPath, pathDirectories: [], env: {} };

describe('sandboxPaths: protected paths that hold against rename and creation', () => {
  it('keeps the whole .git folder read-only (a mount point of its own), and pins the folders of submodules', async () => {
    const home = await scratchDir('switchyard-home-');
    const cwd = await scratchDir('switchyard-cwd-');
    await mkdir(path.join(cwd, '.git', 'hooks'), { recursive: true });
    await writeFile(path.join(cwd, '.git', 'config'), '');
    await mkdir(path.join(cwd, '.git', 'modules', 'sub'), { recursive: true });
    await writeFile(path.join(cwd, '.git', 'modules', 'sub', 'config'), '');
    await mkdir(path.join(cwd, 'libs', 'deep', 'sub'), { recursive: true });
    await writeFile(path.join(cwd, 'libs', 'deep', 'sub', '.git'), 'gitdir: ../../../.git/modules/sub\n');
    await mkdir(path.join(cwd, 'empty-sub'));
    await writeFile(
      path.join(cwd, '.gitmodules'),
      '[submodule "sub"]\n\tpath = libs/deep/sub\n\turl = x\n[submodule "e"]\n\tpath = empty-sub\n\turl = y\n',
    );
    const paths = await sandboxPaths({
      cwd,
      home,
      sessionId: 's',
      denyRules: [],
      options: {},
      worker: plainWorker,
    });
    expect(paths.readOnly).toEqual(
      expect.arrayContaining([
        path.join(cwd, '.git'),
        path.join(cwd, 'libs', 'deep', 'sub', '.git'),
        // A submodule not checked out: nothing may make it one.
        path.join(cwd, 'empty-sub'),
      ]),
    );
    expect(paths.pinned).toEqual(
      expect.arrayContaining([
        path.join(cwd, 'libs'),
        path.join(cwd, 'libs', 'deep'),
        path.join(cwd, 'libs', 'deep', 'sub'),
      ]),
    );
    // Settings folders that do not exist yet are kept empty and read-only; .git exists, so it is no placeholder.
    expect(paths.placeholders).toEqual(
      expect.arrayContaining([path.join(cwd, '.switchyard'), path.join(cwd, '.claude')]),
    );
    expect(paths.placeholders).not.toContain(path.join(cwd, '.git'));
  });

  it('keeps a .git that does not exist yet empty and read-only', async () => {
    const cwd = await scratchDir('switchyard-cwd-');
    await mkdir(path.join(cwd, '.claude'));
    const paths = await sandboxPaths({
      cwd,
      home: await scratchDir('switchyard-home-'),
      sessionId: 's',
      denyRules: [],
      options: {},
      worker: plainWorker,
    });
    expect(paths.placeholders).toEqual(expect.arrayContaining([path.join(cwd, '.git'), path.join(cwd, '.switchyard')]));
    expect(paths.placeholders).not.toContain(path.join(cwd, '.claude'));
    expect(paths.readOnly).toContain(path.join(cwd, '.claude'));
  });
});

describe('sandboxPaths: hidden beyond the credential list', () => {
  it("hides system secrets, other users' homes and root's home, and key files the environment names", async () => {
    const home = await scratchDir('switchyard-home-');
    const cwd = await scratchDir('switchyard-cwd-');
    const keys = await scratchDir('switchyard-keys-');
    const clientKey = path.join(keys, 'client.key');
    const caCert = path.join(keys, 'ca.pem');
    const usersFile = path.join(keys, 'console-users.json');
    const signingKey = path.join(keys, 'alice.key');
    for (const file of [clientKey, caCert, signingKey]) await writeFile(file, 'x');
    await writeFile(usersFile, JSON.stringify({ users: { alice: { token: 't', signingKeyFile: 'alice.key' } } }));
    const paths = await sandboxPaths({
      cwd,
      home,
      sessionId: 's',
      denyRules: [],
      options: {},
      worker: {
        execPath: process.execPath,
        pathDirectories: [],
        env: {
          TEMPORAL_TLS_CLIENT_KEY_PATH: clientKey,
          SSL_CERT_FILE: caCert,
          SWITCHYARD_CONSOLE_USERS_FILE: usersFile,
          SOME_API_KEY: 'not-a-path',
        },
      },
    });
    const hidden = paths.hidden.map((entry) => entry.path);
    expect(hidden).toEqual(expect.arrayContaining(['/etc/shadow', '/root', clientKey, usersFile, signingKey]));
    // A CA bundle is public and commands need it for HTTPS.
    expect(hidden).not.toContain(caCert);
    // The worker user's own home stays (minus its credential list).
    expect(hidden).not.toContain(home);
  });

  it("keeps the parts of root's home that hold cwd, and a toolchain on PATH whole (but its credentials); hides the rest", async () => {
    const probe = path.join('/root', `switchyard-probe-${process.pid}`);
    const toolchain = path.join('/root', `.switchyard-toolchain-${process.pid}`);
    const cwd = path.join(probe, 'work');
    const bin = path.join(toolchain, 'bin');
    await mkdir(cwd, { recursive: true });
    await mkdir(path.join(toolchain, 'versions'), { recursive: true });
    await mkdir(bin, { recursive: true });
    await writeFile(path.join(probe, 'secret.txt'), 'x');
    try {
      const paths = await sandboxPaths({
        cwd,
        home: await scratchDir('switchyard-home-'),
        sessionId: 's',
        denyRules: [],
        options: {},
        worker: { execPath: process.execPath, pathDirectories: [bin], env: {} },
      });
      const hidden = paths.hidden.map((entry) => entry.path);
      expect(hidden).not.toContain('/root');
      expect(hidden).toEqual(expect.arrayContaining([path.join(probe, 'secret.txt'), '/root/.npmrc']));
      // Nothing on the way to cwd or in the toolchain (its versions folder included) is hidden.
      expect(hidden.some((entry) => cwd.startsWith(entry) || entry.startsWith(toolchain))).toBe(false);
    } finally {
      await rm(probe, { recursive: true, force: true });
      await rm(toolchain, { recursive: true, force: true });
    }
  });

  it('pins the folders of submodules an enclosing repository names, and keeps a missing one empty', async () => {
    const repository = await scratchDir('switchyard-repo-');
    await mkdir(path.join(repository, '.git'));
    const cwd = path.join(repository, 'packages');
    await mkdir(path.join(cwd, 'lib', 'sub'), { recursive: true });
    await writeFile(path.join(cwd, 'lib', 'sub', '.git'), 'gitdir: ../../../.git/modules/sub\n');
    await writeFile(
      path.join(repository, '.gitmodules'),
      '[submodule "sub"]\n\tpath = packages/lib/sub\n[submodule "gone"]\n\tpath = packages/gone\n',
    );
    const paths = await sandboxPaths({
      cwd,
      home: await scratchDir('switchyard-home-'),
      sessionId: 's',
      denyRules: [],
      options: {},
      worker: plainWorker,
    });
    expect(paths.pinned).toEqual(expect.arrayContaining([path.join(cwd, 'lib'), path.join(cwd, 'lib', 'sub')]));
    expect(paths.readOnly).toContain(path.join(cwd, 'lib', 'sub', '.git'));
    expect(paths.placeholders).toEqual(expect.arrayContaining([path.join(cwd, 'gone'), path.join(cwd, '.git')]));
  });
});

describe('bubblewrapArguments: pinned folders and placeholders', () => {
  it('binds pinned folders onto themselves after cwd, and mounts placeholders as empty read-only folders', () => {
    const args = bubblewrapArguments({
      cwd: '/w',
      writable: ['/w'],
      masked: [],
      exposed: [],
      pinned: ['/w/libs'],
      readOnly: ['/w/.git'],
      placeholders: ['/w/.switchyard'],
      hidden: [],
      network: { kind: 'none' },
    });
    const cwd = indexOfOption(args, '--bind', '/w', '/w');
    const pinned = indexOfOption(args, '--bind', '/w/libs', '/w/libs');
    const git = indexOfOption(args, '--ro-bind', '/w/.git', '/w/.git');
    const placeholder = indexOfOption(args, '--tmpfs', '/w/.switchyard');
    const remount = indexOfOption(args, '--remount-ro', '/w/.switchyard');
    expect([cwd, pinned, git, placeholder, remount].every((index) => index > 0)).toBe(true);
    expect(cwd).toBeLessThan(pinned);
    expect(pinned).toBeLessThan(git);
    expect(placeholder).toBeLessThan(remount);
  });
});
