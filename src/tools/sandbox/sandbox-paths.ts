/**
 * Which paths the sandbox of one call hides, protects and opens for writing: the file system half of the policy,
 * turned into the `BubblewrapPlan` that `bubblewrap-arguments.ts` writes out. Every path is resolved through its
 * symlinks (a mount applies to the file a path reaches), and only paths that exist are listed (bubblewrap cannot mount
 * onto a path that is not there; a path created later inside cwd is the parser wall's to judge, see SECURITY.md).
 */
import type { Dirent } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
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
}

export interface SandboxPaths extends Omit<BubblewrapPlan, 'network'> {
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
 * Protected paths inside cwd (see `protected-paths.ts`) that exist: read-only in the sandbox. In a `.git` folder only
 * what makes git run programs (`config`, `hooks`) is protected, so `git add` and `git commit` still work.
 */
async function protectedInside(cwd: string, home: string, notes: string[]): Promise<string[]> {
  const found: string[] = [];
  // Below a root whose children are not all protected, only an entry's own name can make it protected: skip the
  // full match for names that cannot (the walk's cost in a large workspace).
  const everyChildProtected =
    protectedPathMatch({ absolutePath: path.join(cwd, 'switchyard-unprotected-probe'), cwd, home }) !== undefined;
  const { capped } = await walk({
    root: cwd,
    maxDepth: SANDBOX_WALK_LIMITS.protectedDepth,
    maxEntries: SANDBOX_WALK_LIMITS.protectedEntries,
    visit: (absolute, entry) => {
      if (UNWALKED.has(entry.name)) return false;
      if (entry.name.toLowerCase() === '.git' && entry.isDirectory()) {
        found.push(path.join(absolute, 'config'), path.join(absolute, 'hooks'));
        return false;
      }
      if (
        (everyChildProtected || mayNameProtectedPath(entry.name)) &&
        protectedPathMatch({ absolutePath: absolute, cwd, home }) !== undefined
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
  return found;
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

  const readOnly: string[] = [];
  for (const root of writable) {
    for (const candidate of await protectedInside(root, home, notes)) {
      const found = await kindOf(candidate);
      if (
        found !== undefined &&
        writable.some((parent) => isInside(found.real, parent)) &&
        !readOnly.includes(found.real)
      )
        readOnly.push(found.real);
    }
  }

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
  const hidden: SandboxPath[] = [];
  for (const pattern of patterns) {
    for (const candidate of await deniedPaths(pattern, { cwd: input.cwd, home, notes })) {
      const found = await kindOf(candidate);
      if (found === undefined || hidden.some((entry) => entry.path === found.real)) continue;
      // Hiding a folder that holds cwd would hide the workspace itself.
      if (found.kind === 'directory' && writable.some((root) => isInside(root, found.real))) {
        notes.push(`${pattern} holds a writable path; it is not hidden`);
        continue;
      }
      hidden.push({ path: found.real, kind: found.kind });
    }
  }
  return { cwd, writable, masked, exposed, readOnly, hidden, notes };
}
