/**
 * Which paths the sandbox of one call hides, protects and opens for writing: the file system half of the policy,
 * turned into the `BubblewrapPlan` that `bubblewrap-arguments.ts` writes out. Every path is resolved through its
 * symlinks (a mount applies to the file a path reaches).
 *
 * Protected paths hold against rename and creation, not only against writes:
 * - a `.git` (folder or file) inside a writable path is read-only as a whole, bound onto itself: a mount point cannot
 *   be renamed or removed (`mv .git`, `rm -rf .git` fail), and nothing inside it can be created (`commondir`,
 *   `config.worktree`), changed (`config`, `modules/<sub>/config`, `worktrees/*`, `info/attributes`) or removed. The
 *   price: `git add` and `git commit` do not work inside the sandbox (git must create `index.lock` in `.git` itself, so
 *   no writable part of it can keep `commondir` out; and a writable index lets a command register a planted nested
 *   repository as a submodule, whose configuration the developer's next `git status` runs). Commit outside it;
 * - a submodule's folder (`.gitmodules` paths, folders holding a nested `.git`) and every folder above it up to the
 *   writable root are pinned (bound onto themselves), so none can be moved aside for a planted one; a submodule that
 *   is not checked out is read-only;
 * - `.git`, `.switchyard` and `.claude` in cwd that do not exist yet become empty read-only folders: bubblewrap
 *   creates each mount point on the host as an empty folder (git reads an empty `.git` folder as no repository and
 *   looks further up, as before; an empty settings folder has no settings). Other protected names that do not exist
 *   yet are the permission rules' to judge (see SECURITY.md).
 * Hidden beyond the worker user's credential list: system secrets (`/etc/shadow`, sudoers, host keys…); `/root`
 * (root's home, for a root worker too) and every folder in `/home` but the worker user's own and one holding a
 * writable path (those keep only the credential list hidden), except the parts that hold cwd, a writable path, the
 * worker's data directory, its node installation (the proxy bridge runs it) or a toolchain on its `PATH`; and the
 * files the worker's environment names in a key, certificate or TLS variable (CA bundles excepted), with the
 * console's users file and the signing keys it names. Hidden files are `/dev/null`: they read as empty.
 */
import type { Dirent } from 'node:fs';
import { lstat, readFile, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { toolSettings } from '../tool-settings.js';
import { GlobSyntaxError, compileGlob, isGlobPattern } from '../../contracts/glob-match.js';
import { parseRule } from '../../contracts/permission-rules.js';
import type { SandboxOptions } from '../../contracts/session.js';
import { BackgroundTaskStore } from '../background/background-task-store.js';
import { mayNameProtectedPath, protectedPathMatch } from '../support/protected-paths.js';
import type { BubblewrapPlan, SandboxPath, SandboxPathKind } from './bubblewrap-arguments.js';

/** Credential locations in the worker user's home directory: never readable inside the sandbox. */
export const HIDDEN_HOME_PATHS: readonly string[] = [
  '.ssh',
  '.aws',
  '.config/gcloud',
  '.docker',
  '.kube',
  '.npmrc',
  '.netrc',
  '.git-credentials',
  '.gnupg',
  '.azure',
  '.config/gh',
  '.pypirc',
  '.cargo/credentials.toml',
];

/** System files and folders that hold secrets: hidden wherever they exist. */
export const HIDDEN_SYSTEM_PATHS: readonly string[] = [
  '/etc/shadow',
  '/etc/shadow-',
  '/etc/gshadow',
  '/etc/gshadow-',
  '/etc/master.passwd',
  '/etc/sudoers',
  '/etc/sudoers.d',
  '/etc/security/opasswd',
  '/etc/ssl/private',
  '/etc/krb5.keytab',
  '/etc/ssh/ssh_host_*_key',
  '/var/lib/sss',
];

/** Folders whose entries are people's home folders, hidden but for the worker user's own and the parts it needs. */
const HOME_ROOTS: readonly string[] = ['/home'];
/** Root's home: hidden like another user's, for a root worker too (its secrets are the machine's). */
const ROOT_HOME = '/root';

/** Settings folders in cwd that must not be created in the sandbox: the worker runs the hooks they name. */
const PROTECTED_EVEN_IF_MISSING: readonly string[] = ['.git', '.switchyard', '.claude'];

/** Environment variables whose value, when it is an absolute path, names a key or certificate file to hide. */
const KEY_VARIABLE = /KEY|CERT|TLS|PEM|SECRET|CREDENTIAL|PASSWORD|TOKEN/i;
/**
 * CA bundles are public, and commands need them for HTTPS: a file a CA variable names, or one in a system trust
 * store, is never hidden (another variable may name the same bundle: `PIP_CERT`).
 */
const CA_VARIABLE = /(^|_)CA($|_)|CA_?BUNDLE|CA_?CERTS?|CAINFO|CAPATH|SSL_CERT_(FILE|DIR)$/i;
const TRUST_STORES: readonly string[] = [
  '/etc/ssl/certs',
  '/etc/pki/tls/certs',
  '/etc/pki/ca-trust',
  '/etc/ca-certificates',
  '/usr/share/ca-certificates',
  '/usr/local/share/ca-certificates',
];
/** The console's per-person logins: tokens, and the signing keys it names. */
const CONSOLE_USERS_VARIABLE = 'SWITCHYARD_CONSOLE_USERS_FILE';

/** System areas hidden as empty folders: /run holds daemons' unix sockets (Docker's among them), which a read-only mount does not close. */
const MASKED_SYSTEM_AREAS: readonly string[] = ['/run', '/var/run'];

/** Bounds of the walks that find protected paths inside cwd and files a glob deny pattern names. */
export const SANDBOX_WALK_LIMITS = {
  protectedDepth: 3,
  protectedEntries: 3_000,
  globDepth: 8,
  globEntries: 5_000,
} as const;

/** Folders a walk for protected paths does not enter: dependencies, not the project's own configuration. */
const UNWALKED = new Set(['node_modules']);

export interface SandboxPathsInput {
  cwd: string;
  home: string;
  sessionId: string;
  /** The worker's data directory: hidden, except the session's own background tasks (read-only). */
  dataDir?: string;
  /** The session's deny rules: the paths of its `Read(...)` rules are hidden. */
  denyRules: readonly string[];
  options: SandboxOptions;
  /**
   * The worker process, for what stays readable (its node installation: the proxy bridge runs `node` inside; the
   * folders of its `PATH`) and what is hidden (files its environment names). Default: this process.
   */
  worker?: { execPath: string; pathDirectories: readonly string[]; env: Readonly<Record<string, string | undefined>> };
}

export interface SandboxPaths extends Omit<BubblewrapPlan, 'network' | 'pinned' | 'placeholders'> {
  pinned: string[];
  placeholders: string[];
  /** What the plan could not cover (a glob walk that hit its bound, an `allowWrite` path that does not exist…). */
  notes: string[];
}

async function kindOf(absolute: string): Promise<{ real: string; kind: SandboxPathKind } | undefined> {
  try {
    const real = await realpath(absolute);
    const stats = await stat(real);
    return { real, kind: stats.isDirectory() ? 'directory' : 'file' };
  } catch {
    return undefined;
  }
}

async function lstatOf(absolute: string): Promise<unknown> {
  return lstat(absolute).catch(() => undefined);
}

function expandPath(entry: string, options: { cwd: string; home: string }): string {
  if (entry === '~') return options.home;
  if (entry.startsWith('~/')) return path.join(options.home, entry.slice(2));
  if (entry.startsWith('//')) return path.resolve(entry.slice(1));
  return path.resolve(options.cwd, entry);
}

function isInside(child: string, parent: string): boolean {
  return child === parent || child.startsWith(parent.endsWith('/') ? parent : `${parent}/`);
}

/** Entries below `root` (no symlinks followed), breadth first, at most `maxDepth` deep and `maxEntries` in all. */
async function walk(options: {
  root: string;
  maxDepth: number;
  maxEntries: number;
  /** Return false to not descend into a directory (it is still visited). */
  visit: (absolute: string, entry: Dirent) => boolean;
}): Promise<{ capped: boolean }> {
  let seen = 0;
  let level = [options.root];
  for (let depth = 1; depth <= options.maxDepth && level.length > 0; depth++) {
    const next: string[] = [];
    // One level's folders are listed at once (the listing is the walk's cost), then visited in order.
    const listings = await Promise.all(
      level.map((directory) => readdir(directory, { withFileTypes: true }).catch(() => [] as Dirent[])),
    );
    for (const [index, directory] of level.entries()) {
      for (const entry of listings[index] ?? []) {
        seen += 1;
        if (seen > options.maxEntries) return { capped: true };
        const absolute = path.join(directory, entry.name);
        if (options.visit(absolute, entry) && entry.isDirectory()) next.push(absolute);
      }
    }
    level = next;
  }
  return { capped: level.length > 0 };
}

/**
 * Protected paths inside a writable root (see `protected-paths.ts`) that exist, to be read-only in the sandbox (a
 * `.git` as a whole), and the folders holding a `.git` (repositories and submodules) below the root.
 */
async function protectedInside(
  root: string,
  home: string,
  notes: string[],
): Promise<{ found: string[]; repositories: string[] }> {
  const found: string[] = [];
  const repositories: string[] = [];
  // Below a root whose children are not all protected, only an entry's own name can make it protected: skip the
  // full match for names that cannot (the walk's cost in a large workspace).
  const everyChildProtected =
    protectedPathMatch({ absolutePath: path.join(root, 'switchyard-unprotected-probe'), cwd: root, home }) !==
    undefined;
  const { capped } = await walk({
    root,
    maxDepth: SANDBOX_WALK_LIMITS.protectedDepth,
    maxEntries: SANDBOX_WALK_LIMITS.protectedEntries,
    visit: (absolute, entry) => {
      if (UNWALKED.has(entry.name)) return false;
      if (entry.name.toLowerCase() === '.git') {
        found.push(absolute);
        repositories.push(path.dirname(absolute));
        return false;
      }
      if (
        (everyChildProtected || mayNameProtectedPath(entry.name)) &&
        protectedPathMatch({ absolutePath: absolute, cwd: root, home }) !== undefined
      ) {
        found.push(absolute);
        return false;
      }
      return true;
    },
  });
  if (capped)
    notes.push(
      `protected paths were looked for in the first ${SANDBOX_WALK_LIMITS.protectedEntries} entries and ${SANDBOX_WALK_LIMITS.protectedDepth} levels of cwd only`,
    );
  return { found, repositories };
}

/** The submodule paths a repository's `.gitmodules` names (`path = …`), absolute; none when it has no such file. */
async function submodulePaths(repository: string): Promise<string[]> {
  const text = await readFile(path.join(repository, '.gitmodules'), 'utf8').catch(() => '');
  const paths: string[] = [];
  for (const match of text.matchAll(/^\s*path\s*=\s*(.+?)\s*$/gim)) {
    const relative = (match[1] ?? '').replace(/^"(.*)"$/, '$1');
    const absolute = path.resolve(repository, relative);
    if (relative !== '' && isInside(absolute, repository) && absolute !== repository) paths.push(absolute);
  }
  return paths;
}

/** How many repositories (the workspace's, nested ones, submodules) one plan reads `.gitmodules` of. */
const MAX_REPOSITORIES = 200;

/** The folder at or above `folder` that holds a `.git` (the repository a developer's git finds from there), if any. */
async function enclosingRepository(folder: string): Promise<string | undefined> {
  for (let current = folder; ; current = path.dirname(current)) {
    if ((await lstatOf(path.join(current, '.git'))) !== undefined) return current;
    if (path.dirname(current) === current) return undefined;
  }
}

/** Every folder from just below `root` down to `folder` (inside it), in order. */
function foldersBetween(root: string, folder: string): string[] {
  const relative = path.relative(root, folder);
  if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) return [];
  const parts = relative.split(path.sep);
  return parts.map((_part, index) => path.join(root, ...parts.slice(0, index + 1)));
}

/**
 * The `.git` of every repository and submodule inside the writable roots, read-only, and the folders above each
 * submodule pinned (see the module comment); `.git`, `.switchyard` and `.claude` in cwd that do not exist yet are
 * placeholders.
 */
async function protectedPlan(options: {
  cwd: string;
  writable: readonly string[];
  home: string;
  notes: string[];
}): Promise<{ readOnly: string[]; pinned: string[]; placeholders: string[] }> {
  const { writable, home, notes } = options;
  const readOnly: string[] = [];
  const pinned: string[] = [];
  const placeholders: string[] = [];
  const insideWritable = (real: string): string | undefined => writable.find((root) => isInside(real, root));
  const addReadOnly = (real: string): void => {
    if (insideWritable(real) !== undefined && !writable.includes(real) && !readOnly.includes(real)) readOnly.push(real);
  };
  const pin = (root: string, folder: string): void => {
    for (const between of foldersBetween(root, folder))
      if (!pinned.includes(between) && !writable.includes(between)) pinned.push(between);
  };
  for (const root of writable) {
    const { found, repositories } = await protectedInside(root, home, notes);
    for (const candidate of found) {
      const real = await kindOf(candidate);
      if (real !== undefined) addReadOnly(real.real);
    }
    // Repositories whose `.gitmodules` may name folders here: the one holding the root (its `.git` may be above it),
    // those found inside, and, one after another, the submodules they name.
    const enclosing = await enclosingRepository(root);
    const queue = [...new Set([...(enclosing === undefined ? [] : [enclosing]), root, ...repositories])];
    for (let index = 0; index < queue.length && index < MAX_REPOSITORIES; index++) {
      const repository = queue[index] ?? root;
      pin(root, repository);
      for (const submodule of await submodulePaths(repository)) {
        if (!isInside(submodule, root) || submodule === root) continue;
        const folder = await kindOf(submodule);
        if (folder === undefined) {
          // Not there at all: an empty read-only folder takes its place, as git leaves one not checked out.
          const parent = await kindOf(path.dirname(submodule));
          if (parent?.kind === 'directory' && isInside(parent.real, root) && !placeholders.includes(submodule)) {
            pin(root, parent.real);
            placeholders.push(path.join(parent.real, path.basename(submodule)));
          }
          continue;
        }
        if (folder.kind !== 'directory' || !isInside(folder.real, root)) continue;
        const dotGit = await kindOf(path.join(folder.real, '.git'));
        if (dotGit === undefined) {
          // Not checked out: nothing may turn it into a repository the developer's git would enter.
          pin(root, path.dirname(folder.real));
          addReadOnly(folder.real);
        } else {
          pin(root, folder.real);
          addReadOnly(dotGit.real);
          if (!queue.includes(folder.real)) queue.push(folder.real);
        }
      }
    }
    if (queue.length > MAX_REPOSITORIES)
      notes.push(`submodules were protected in the first ${MAX_REPOSITORIES} repositories only`);
  }
  const cwdRoot = insideWritable(options.cwd) ?? options.cwd;
  for (const name of PROTECTED_EVEN_IF_MISSING) {
    const absolute = path.join(options.cwd, name);
    const existing = await kindOf(absolute);
    if (existing !== undefined) {
      addReadOnly(existing.real);
      continue;
    }
    // A dangling symlink (or another entry stat cannot follow) cannot take a mount point: say so.
    const entry = await lstatOf(absolute);
    if (entry !== undefined) notes.push(`${absolute} is a link to nothing; it could not be protected`);
    else if (isInside(absolute, cwdRoot)) placeholders.push(absolute);
  }
  return { readOnly, pinned: pinned.filter((folder) => !readOnly.includes(folder)), placeholders };
}

/** The paths one deny pattern (a `Read(...)` rule's content or a `denyRead` entry) names, as they exist now. */
async function deniedPaths(
  pattern: string,
  options: { cwd: string; home: string; notes: string[] },
): Promise<string[]> {
  const absolute = expandPath(pattern.replace(/^\.\//, ''), options);
  if (!isGlobPattern(absolute)) return [absolute];
  const firstGlob = absolute.search(/[*?[{(!+@\\]/);
  const literal = absolute.slice(0, firstGlob);
  if (/^[^*?[{(!+@\\]*\/\*\*$/.test(absolute)) return [absolute.slice(0, -3)];
  const base = literal.slice(0, literal.lastIndexOf('/')) || '/';
  if (base === '/') {
    options.notes.push(`the deny pattern ${pattern} starts at the root: it is enforced by the permission rules only`);
    return [];
  }
  let matcher: { test(candidate: string): boolean };
  try {
    matcher = compileGlob(absolute);
  } catch (error) {
    if (error instanceof GlobSyntaxError) return [absolute];
    throw error;
  }
  const found: string[] = [];
  const { capped } = await walk({
    root: base,
    maxDepth: SANDBOX_WALK_LIMITS.globDepth,
    maxEntries: SANDBOX_WALK_LIMITS.globEntries,
    visit: (candidate) => {
      if (matcher.test(candidate)) {
        found.push(candidate);
        return false;
      }
      return true;
    },
  });
  if (capped)
    options.notes.push(
      `the deny pattern ${pattern} was matched against the first ${SANDBOX_WALK_LIMITS.globEntries} entries below ${base} only`,
    );
  return found;
}

/** The file system half of a call's sandbox (see the module comment). */
export async function sandboxPaths(input: SandboxPathsInput): Promise<SandboxPaths> {
  const notes: string[] = [];
  const cwd = (await kindOf(input.cwd))?.real ?? path.resolve(input.cwd);
  const { home } = input;

  const writable = [cwd];
  for (const entry of input.options.allowWrite ?? []) {
    const found = await kindOf(expandPath(entry, { cwd: input.cwd, home }));
    if (found === undefined) notes.push(`allowWrite ${entry} does not exist; it stays read-only`);
    else if (!writable.includes(found.real)) writable.push(found.real);
  }

  const masked: string[] = [];
  const exposed: string[] = [];
  for (const area of MASKED_SYSTEM_AREAS) {
    const found = await kindOf(area);
    if (found?.kind === 'directory' && !masked.includes(found.real) && !isInside(cwd, found.real))
      masked.push(found.real);
  }
  if (input.dataDir !== undefined) {
    const data = await kindOf(input.dataDir);
    if (data?.kind === 'directory' && !isInside(cwd, data.real)) {
      masked.push(data.real);
      const own = await kindOf(new BackgroundTaskStore(data.real).sessionDirectory(input.sessionId));
      if (own?.kind === 'directory') exposed.push(own.real);
    }
  }

  const { readOnly, pinned, placeholders } = await protectedPlan({ cwd, writable, home, notes });

  const patterns = [
    ...HIDDEN_HOME_PATHS.map((relative) => path.join(home, relative)),
    ...input.denyRules.flatMap((text) => {
      try {
        const rule = parseRule(text);
        return rule.toolName === 'Read' && rule.content !== undefined ? [rule.content] : [];
      } catch {
        return [];
      }
    }),
    ...(input.options.denyRead ?? []),
  ];
  const workerEnvironment = toolSettings().environment;
  const worker = input.worker ?? {
    execPath: process.execPath,
    pathDirectories: (workerEnvironment.PATH ?? '').split(path.delimiter),
    env: workerEnvironment,
  };
  patterns.push(...HIDDEN_SYSTEM_PATHS, ...(await keyFilesNamedBy(worker.env)));
  // What must stay readable inside hidden homes: the workspace, the worker's data directory (masked on its own) and
  // the programs commands run (the node installation, the folders of PATH).
  const programs: string[] = [];
  const programEntries = [path.dirname(path.dirname(worker.execPath)), ...worker.pathDirectories].filter((entry) =>
    path.isAbsolute(entry),
  );
  for (const found of await Promise.all(programEntries.map(kindOf)))
    if (found?.kind === 'directory' && !programs.includes(found.real)) programs.push(found.real);
  const ownHome = (await kindOf(home))?.real ?? home;
  const hidden: SandboxPath[] = [];
  const hide = (entry: SandboxPath): void => {
    if (!hidden.some((seen) => seen.path === entry.path)) hidden.push(entry);
  };
  for (const other of await homesToHide({ ownHome, writable })) {
    // A toolchain on PATH is kept whole (`~/.pyenv` for its shims, `~/.cargo` with `~/.rustup` for rustup's
    // proxies): its programs read their own folder, not only the PATH entry.
    const toolchains = programs.flatMap((program) => {
      const [top] = foldersBetween(other, program);
      if (top === undefined) return [];
      return path.basename(top) === '.cargo' ? [top, path.join(other, '.rustup')] : [top];
    });
    const around = await hiddenAround(other, [...writable, ...exposed, ...masked, ...programs, ...toolchains], notes);
    for (const entry of around) hide(entry);
    if (!around.some((entry) => entry.path === other))
      patterns.push(...HIDDEN_HOME_PATHS.map((relative) => path.join(other, relative)));
  }
  // A home that holds a writable path stays, like the worker user's own, minus its credential list.
  for (const root of HOME_ROOTS) {
    const found = await kindOf(root);
    if (found?.kind !== 'directory') continue;
    for (const entry of await readdir(found.real, { withFileTypes: true }).catch(() => [] as Dirent[])) {
      const folder = path.join(found.real, entry.name);
      if (entry.isDirectory() && folder !== ownHome && writable.some((writablePath) => isInside(writablePath, folder)))
        patterns.push(...HIDDEN_HOME_PATHS.map((relative) => path.join(folder, relative)));
    }
  }
  // Each pattern's paths are looked up at once (dozens of patterns, two system calls each), then taken in order.
  const resolved = await Promise.all(
    [...new Set(patterns)].map(async (pattern) => {
      const ownNotes: string[] = [];
      const candidates = await deniedPaths(pattern, { cwd: input.cwd, home, notes: ownNotes });
      return { pattern, notes: ownNotes, found: await Promise.all(candidates.map(kindOf)) };
    }),
  );
  for (const { pattern, notes: patternNotes, found: candidates } of resolved) {
    notes.push(...patternNotes);
    for (const found of candidates) {
      if (found === undefined || hidden.some((entry) => entry.path === found.real)) continue;
      // Hiding a folder that holds cwd would hide the workspace itself.
      if (found.kind === 'directory' && writable.some((root) => isInside(root, found.real))) {
        notes.push(`${pattern} holds a writable path; it is not hidden`);
        continue;
      }
      hidden.push({ path: found.real, kind: found.kind });
    }
  }
  return { cwd, writable, masked, exposed, pinned, readOnly, placeholders, hidden, notes };
}

/**
 * The home folders hidden (but for what the sandbox needs): `/root`, whoever the worker runs as, and every folder in
 * `/home` but the worker user's own and those that hold a writable path.
 */
async function homesToHide(options: { ownHome: string; writable: readonly string[] }): Promise<string[]> {
  const homes: string[] = [];
  const root = await kindOf(ROOT_HOME);
  if (root?.kind === 'directory') homes.push(root.real);
  for (const parent of HOME_ROOTS) {
    const found = await kindOf(parent);
    if (found?.kind !== 'directory') continue;
    for (const entry of await readdir(found.real, { withFileTypes: true }).catch(() => [] as Dirent[])) {
      const folder = path.join(found.real, entry.name);
      if (!entry.isDirectory() || homes.includes(folder)) continue;
      if (folder === options.ownHome || isInside(options.ownHome, folder)) continue;
      if (options.writable.some((writablePath) => isInside(writablePath, folder))) continue;
      homes.push(folder);
    }
  }
  return homes;
}

/**
 * What hides `folder` but the parts that hold a `kept` path: the folder itself when it holds none, else each of its
 * entries that holds none (folders as empty folders, files as empty files), descending into those that do. Symlinks
 * and special files are left alone (a mount would land on what a link reaches).
 */
async function hiddenAround(
  folder: string,
  kept: readonly string[],
  notes: string[],
  depth = 0,
): Promise<SandboxPath[]> {
  const holds = kept.filter((path) => isInside(path, folder));
  if (holds.length === 0) return [{ path: folder, kind: 'directory' }];
  if (holds.some((path) => path === folder) || kept.some((path) => isInside(folder, path))) return [];
  if (depth >= HIDDEN_AROUND_DEPTH) {
    notes.push(`${folder} holds a path the sandbox needs, deeper than ${HIDDEN_AROUND_DEPTH} levels; it is not hidden`);
    return [];
  }
  const hidden: SandboxPath[] = [];
  for (const entry of await readdir(folder, { withFileTypes: true }).catch(() => [] as Dirent[])) {
    const child = path.join(folder, entry.name);
    if (entry.isDirectory()) hidden.push(...(await hiddenAround(child, kept, notes, depth + 1)));
    else if (entry.isFile()) hidden.push({ path: child, kind: 'file' });
  }
  return hidden;
}

/** How deep `hiddenAround` descends towards a kept path before it gives up hiding (and says so). */
const HIDDEN_AROUND_DEPTH = 12;

/**
 * Files the worker's environment names in a key, certificate or TLS variable (an absolute path; CA bundles are
 * public and stay), and the console's users file with the signing keys it names (relative to it).
 */
async function keyFilesNamedBy(env: Readonly<Record<string, string | undefined>>): Promise<string[]> {
  const files: string[] = [];
  const bundles = new Set(
    Object.entries(env).flatMap(([name, value]) =>
      CA_VARIABLE.test(name) && value !== undefined ? [value.trim()] : [],
    ),
  );
  for (const [name, raw] of Object.entries(env)) {
    const value = raw?.trim();
    if (value === undefined || !KEY_VARIABLE.test(name) || CA_VARIABLE.test(name) || bundles.has(value)) continue;
    if (!/^(\/|~\/)[^:\n]*$/.test(value) || value === '/' || TRUST_STORES.some((store) => isInside(value, store)))
      continue;
    files.push(value);
  }
  const usersFile = env[CONSOLE_USERS_VARIABLE]?.trim();
  if (usersFile !== undefined && usersFile !== '') {
    files.push(usersFile);
    try {
      const parsed = JSON.parse(await readFile(usersFile, 'utf8')) as {
        users?: Record<string, { signingKeyFile?: unknown }>;
      };
      for (const user of Object.values(parsed.users ?? {}))
        if (typeof user.signingKeyFile === 'string')
          files.push(path.resolve(path.dirname(path.resolve(usersFile)), user.signingKeyFile));
    } catch {
      // An unreadable users file stops the console, not the sandbox; the file itself is hidden above.
    }
  }
  return files;
}
