import { describe, expect, it } from 'vitest';
import { ensureSystemPackages, found, installCommand, testPackages } from '../../scripts/test-prereqs.js';
import type { PrereqEnvironment, SystemPackage } from '../../scripts/test-prereqs.js';

const FakeBox: SystemPackage = { name: 'fakebox', provides: 'fakebox', why: 'a test' };
const FakeDb: SystemPackage = { name: 'fakedb-15', provides: '/usr/lib/fakedb/15/bin/fakedb', why: 'a test' };

/** A machine where `present` is installed and apt-get installs what it is asked (unless it fails). */
function fakeMachine(options: {
  present: string[];
  root: boolean;
  aptExit?: number;
  aptInstalls?: boolean;
}): PrereqEnvironment & { commands: string[]; logs: string[] } {
  const present = new Set(options.present);
  const commands: string[] = [];
  const logs: string[] = [];
  return {
    commands,
    logs,
    isPresent: (pkg) => present.has(pkg.name),
    canInstall: () => options.root,
    run(command, args, env) {
      commands.push([command, ...args].join(' '));
      expect(env.DEBIAN_FRONTEND).toBe('noninteractive');
      if (args[0] === 'install' && (options.aptExit ?? 0) === 0 && options.aptInstalls !== false) {
        for (const name of args.slice(1)) if (!name.startsWith('-')) present.add(name);
      }
      return options.aptExit ?? 0;
    },
    log: (message) => logs.push(message),
  };
}

describe('test prerequisites (scripts/test-prereqs.ts)', () => {
  it('does nothing when every package is present', () => {
    const machine = fakeMachine({ present: ['fakebox', 'fakedb-15'], root: true });
    expect(ensureSystemPackages([FakeBox, FakeDb], machine)).toEqual([]);
    expect(machine.commands).toEqual([]);
    expect(machine.logs).toEqual(['system packages present: fakebox, fakedb-15']);
  });

  it('as root with apt-get: updates once, then installs only the missing packages without recommends, and says so', () => {
    const machine = fakeMachine({ present: ['fakebox'], root: true });
    expect(ensureSystemPackages([FakeBox, FakeDb], machine)).toEqual(['fakedb-15']);
    expect(machine.commands).toEqual([
      'apt-get update -qq',
      'apt-get install -y -qq --no-install-recommends fakedb-15',
    ]);
    expect(machine.logs[0]).toContain('installing fakedb-15 (a test: /usr/lib/fakedb/15/bin/fakedb)');
    expect(machine.logs.at(-1)).toMatch(/^installed fakedb-15 in \d+ ms$/);
  });

  it('without root or apt-get: installs nothing and fails with the one command to run', () => {
    const machine = fakeMachine({ present: [], root: false });
    expect(() => ensureSystemPackages([FakeBox, FakeDb], machine)).toThrow(
      'Install them with:\n  sudo apt-get update && sudo apt-get install -y --no-install-recommends fakebox fakedb-15',
    );
    expect(machine.commands).toEqual([]);
  });

  it('a failing apt-get, or a package that still is not there after it, fails with the command', () => {
    expect(() => ensureSystemPackages([FakeBox], fakeMachine({ present: [], root: true, aptExit: 100 }))).toThrow(
      /apt-get update failed \(exit 100\)[^]*apt-get install -y --no-install-recommends fakebox/,
    );
    expect(() => ensureSystemPackages([FakeBox], fakeMachine({ present: [], root: true, aptInstalls: false }))).toThrow(
      'fakebox is still not found',
    );
  });

  it('the suite asks for bubblewrap (bwrap) and openssl, and finds commands on PATH and absolute files', () => {
    expect(testPackages.map((pkg) => [pkg.name, pkg.provides])).toEqual([
      ['bubblewrap', 'bwrap'],
      ['openssl', 'openssl'],
    ]);
    expect(installCommand(testPackages)).toBe(
      'sudo apt-get update && sudo apt-get install -y --no-install-recommends bubblewrap openssl',
    );
    expect(found('sh')).toBe(true);
    expect(found('/bin/sh')).toBe(true);
    expect(found('no-such-command-fakebox')).toBe(false);
    expect(found('/no/such/file')).toBe(false);
  });
});
