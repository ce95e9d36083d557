/**
 * The system packages the test suites need that npm cannot install: run by `pretest` (before `npm test`) and
 * `pretest:cluster`, and by the integration tests' global setup, so `npm install && npm test` works on a fresh
 * Debian machine. A package that is missing is installed when this process can (root, apt-get): `apt-get update`
 * once, then `apt-get install -y --no-install-recommends <packages>`. Otherwise it fails with the one command to
 * run. Nothing is downloaded outside Debian's packages; the browser tests' Chromium comes from the npm package
 * `@sparticuz/chromium` (test/support/test-browser.ts), not from here.
 *
 *   tsx scripts/test-prereqs.ts            # what `npm test` needs
 *   tsx scripts/test-prereqs.ts cluster    # plus what `npm run test:cluster` needs
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** One Debian package, present when its command is found on PATH or its file exists. */
export interface SystemPackage {
  /** Debian's package name. */
  name: string;
  /** A command on PATH (`bwrap`) or an absolute file (`/usr/lib/postgresql/15/bin/postgres`) the package provides. */
  provides: string;
  /** Why the tests need it, printed when it is missing. */
  why: string;
}

/** `bwrap` confines Bash calls in the sandbox tests; `openssl` makes the TLS tests' certificates. */
export const testPackages: SystemPackage[] = [
  { name: 'bubblewrap', provides: 'bwrap', why: 'the Bash sandbox (bwrap)' },
  { name: 'openssl', provides: 'openssl', why: "the TLS tests' certificates" },
];

/** The cluster suite runs a Temporal server on Debian's PostgreSQL 15. */
export const clusterPackages: SystemPackage[] = [
  { name: 'postgresql-15', provides: '/usr/lib/postgresql/15/bin/postgres', why: "the cluster suite's database" },
];

/** What the step does to the machine; the real ones run commands, tests pass their own. */
export interface PrereqEnvironment {
  isPresent(pkg: SystemPackage): boolean;
  /** Whether apt-get can install here: root and apt-get on PATH. */
  canInstall(): boolean;
  /** Runs a command with the output shown; returns its exit code. */
  run(command: string, args: string[], env: NodeJS.ProcessEnv): number;
  log(message: string): void;
}

/** The one command a person runs to install `packages` themselves. */
export function installCommand(packages: SystemPackage[]): string {
  const names = packages.map((pkg) => pkg.name).join(' ');
  return `sudo apt-get update && sudo apt-get install -y --no-install-recommends ${names}`;
}

/** Installs what is missing of `packages` (or throws saying how); returns the names it installed. */
export function ensureSystemPackages(packages: SystemPackage[], environment: PrereqEnvironment): string[] {
  const missing = packages.filter((pkg) => !environment.isPresent(pkg));
  if (missing.length === 0) {
    environment.log(`system packages present: ${packages.map((pkg) => pkg.name).join(', ')}`);
    return [];
  }
  const list = missing.map((pkg) => `${pkg.name} (${pkg.why}: ${pkg.provides})`).join(', ');
  if (!environment.canInstall()) {
    throw new Error(
      `The tests need Debian packages that are not installed: ${list}. Install them with:\n  ${installCommand(missing)}`,
    );
  }
  const names = missing.map((pkg) => pkg.name);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  environment.log(`installing ${list}: apt-get update`);
  let started = Date.now();
  const updated = environment.run('apt-get', ['update', '-qq'], env);
  if (updated !== 0)
    throw new Error(
      `apt-get update failed (exit ${updated}); install the packages with:\n  ${installCommand(missing)}`,
    );
  environment.log(`apt-get update took ${Date.now() - started} ms; apt-get install ${names.join(' ')}`);
  started = Date.now();
  const installed = environment.run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...names], env);
  if (installed !== 0)
    throw new Error(
      `apt-get install ${names.join(' ')} failed (exit ${installed}); install them with:\n  ${installCommand(missing)}`,
    );
  const still = missing.filter((pkg) => !environment.isPresent(pkg));
  if (still.length > 0)
    throw new Error(
      `apt-get installed ${names.join(' ')} but ${still.map((pkg) => pkg.provides).join(', ')} is still not found`,
    );
  environment.log(`installed ${names.join(', ')} in ${Date.now() - started} ms`);
  return names;
}

const executable = (file: string): boolean => {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** `command` on PATH, or an absolute file. */
export function found(provides: string): boolean {
  if (path.isAbsolute(provides)) return executable(provides);
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .some((dir) => dir !== '' && executable(path.join(dir, provides)));
}

/** This machine: root with apt-get installs, anyone else is told the command. */
export const machine: PrereqEnvironment = {
  isPresent: (pkg) => found(pkg.provides),
  canInstall: () => process.getuid?.() === 0 && found('apt-get'),
  run: (command, args, env) => spawnSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'], env }).status ?? 1,
  log: (message) => process.stderr.write(`[switchyard test prereqs] ${message}\n`),
};

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const packages = process.argv.includes('cluster') ? [...testPackages, ...clusterPackages] : testPackages;
  try {
    ensureSystemPackages(packages, machine);
  } catch (error) {
    process.stderr.write(`[switchyard test prereqs] ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
