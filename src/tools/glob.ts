/**
 * `Glob { pattern, path? }`: files whose path matches a glob (Claude Code's Glob), and the glob matcher and tree
 * walker that Grep reuses.
 *
 * Decisions:
 * - Syntax: `**` as a whole segment matches any number of directories (zero included), `*` any characters but
 *   `/`, `?` one character but `/`, `[abc]`/`[a-z]`/`[!abc]`/`[^abc]` one character of (or not of) a set, `{a,b}`
 *   alternatives (nested, may contain `/`; no `{1..3}` ranges), `\x` a literal `x`. Dotfiles match like other
 *   files. Matching is case-sensitive. POSIX classes (`[[:alpha:]]`) are not supported.
 * - The leading segments of the pattern that hold no glob syntax name the directory to walk: `src/tools/*.ts`
 *   walks `<path>/src/tools`, and an absolute pattern (`/repo/src/**\/*.ts`) its own directory. `resolveInput`
 *   folds them into `path`, so the permission rules, hooks and the approver see the real search directory; that
 *   directory is confined like Read's files (`..` or an absolute path elsewhere is refused unless an allow rule of
 *   this tool names it: `Glob(/tmp/xyz)`, or `Glob(/tmp/xyz/**)`, which also covers `/tmp/xyz` itself).
 * - Results are absolute paths, newest modification time first (ties by path), at most {@link MAX_GLOB_RESULTS}.
 * - Only files are listed. `node_modules` and `.git` directories met during the walk are skipped (naming one in the
 *   pattern's leading segments, `node_modules/zod/*.json`, still searches it). `.gitignore` is not read.
 * - Symlinks: a symlinked directory is never followed (no cycles, nothing outside the tree); a symlinked file is
 *   listed only when its target lies inside the search directory.
 * - A file or directory that a `Read(...)` deny rule of the session names is neither listed nor entered (see
 *   `read-deny.ts`), whichever way it is spelled: as walked, through the real search directory, or as a link's target.
 * - Globs are matched by re2js, in time linear in the path: `*a*a*a*a*a*a*b*` against a long file name stays
 *   instant, where a backtracking RegExp would block the worker for minutes.
 */
import type { Dirent } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { RE2JS, RE2JSException } from 're2js';
import { z } from 'zod';
import { RESULT_BUDGETS, TOOL_TIMEOUTS } from '../contracts/defaults.js';
import { parseRule } from '../contracts/permission-rules.js';
import { defineTool } from './define-tool.js';
import type { ValidationOutcome } from './define-tool.js';
import { checkToolPath, isInside, resolveToolPath } from './paths.js';
import { createReadDenyFilter } from './read-deny.js';
import type { ReadDenyFilter } from './read-deny.js';

/** Largest number of paths Glob returns. */
export const MAX_GLOB_RESULTS = 1_000;

/** Largest number of patterns a brace expansion may produce. */
export const MAX_BRACE_EXPANSIONS = 1_024;

/** Directories a walk does not enter. */
export const SKIPPED_DIRECTORIES: ReadonlySet<string> = new Set(['node_modules', '.git']);

export const GLOB_TRUNCATED_NOTE = '(Results are truncated. Consider using a more specific path or pattern.)';

export class GlobSyntaxError extends Error {
  override readonly name = 'GlobSyntaxError';
}

interface BraceGroup {
  start: number;
  end: number;
  alternatives: string[];
}

/** The first `{…}` with a top-level comma, or undefined; `{a}` and an unclosed `{` are literal. */
function findBraceGroup(text: string): BraceGroup | undefined {
  for (let start = 0; start < text.length; start++) {
    const char = text[start];
    if (char === '\\') {
      start++;
      continue;
    }
    if (char !== '{') continue;
    let depth = 0;
    const commas: number[] = [];
    for (let index = start; index < text.length; index++) {
      const inner = text[index];
      if (inner === '\\') {
        index++;
      } else if (inner === '{') {
        depth++;
      } else if (inner === ',' && depth === 1) {
        commas.push(index);
      } else if (inner === '}') {
        depth--;
        if (depth === 0) {
          if (commas.length === 0) break;
          const bounds = [start, ...commas, index];
          const alternatives = bounds.slice(0, -1).map((from, at) => text.slice(from + 1, bounds[at + 1]));
          return { start, end: index, alternatives };
        }
      }
    }
  }
  return undefined;
}

/** Brace expansion: `src/*.{js,ts}` → `src/*.js`, `src/*.ts` (nested groups too). */
export function expandBraces(pattern: string, limit = MAX_BRACE_EXPANSIONS): string[] {
  const done: string[] = [];
  const pending = [pattern];
  for (let current = pending.shift(); current !== undefined; current = pending.shift()) {
    const group = findBraceGroup(current);
    if (group === undefined) {
      done.push(current);
    } else {
      const head = current.slice(0, group.start);
      const tail = current.slice(group.end + 1);
      pending.push(...group.alternatives.map((alternative) => head + alternative + tail));
    }
    if (done.length + pending.length > limit) throw new GlobSyntaxError(`Glob pattern expands to more than ${limit} alternatives: ${pattern}`);
  }
  return done;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/** Index of the `]` closing the class opened at `open`, or -1. */
function classEnd(pattern: string, open: number): number {
  let index = open + 1;
  if (pattern[index] === '!' || pattern[index] === '^') index++;
  if (pattern[index] === ']') index++;
  for (; index < pattern.length; index++) {
    if (pattern[index] === '\\') index++;
    else if (pattern[index] === ']') return index;
  }
  return -1;
}

function classSource(body: string): string {
  let negated = false;
  let rest = body;
  if (rest.startsWith('!') || rest.startsWith('^')) {
    negated = true;
    rest = rest.slice(1);
  }
  let source = '';
  for (let index = 0; index < rest.length; index++) {
    const char = rest[index] ?? '';
    if (char === '\\') {
      index++;
      source += escapeRegExp(rest[index] ?? '\\');
    } else {
      source += char === '-' ? '-' : escapeRegExp(char);
    }
  }
  return negated ? `[^/${source}]` : `[${source}]`;
}

/** RegExp source of one brace-free glob. */
function globSource(pattern: string): string {
  let source = '';
  for (let index = 0; index < pattern.length; index++) {
    const char = pattern[index] ?? '';
    if (char === '\\') {
      index++;
      source += escapeRegExp(pattern[index] ?? '\\');
    } else if (char === '*') {
      let last = index;
      while (pattern[last + 1] === '*') last++;
      const wholeSegment = (index === 0 || pattern[index - 1] === '/') && (last + 1 === pattern.length || pattern[last + 1] === '/');
      if (last > index && wholeSegment) {
        if (last + 1 === pattern.length) {
          source += '.*';
        } else {
          source += '(?:[^/]*/)*';
          last++;
        }
      } else {
        source += '[^/]*';
      }
      index = last;
    } else if (char === '?') {
      source += '[^/]';
    } else if (char === '[') {
      const end = classEnd(pattern, index);
      if (end === -1) {
        source += '\\[';
      } else {
        source += classSource(pattern.slice(index + 1, end));
        index = end;
      }
    } else {
      source += escapeRegExp(char);
    }
  }
  return source;
}

/** Whole `/`-separated relative paths that match a glob. */
export interface PathMatcher {
  test(relativePath: string): boolean;
}

/** A matcher of whole `/`-separated relative paths against a glob (see the module comment for the syntax). */
export function compileGlob(pattern: string): PathMatcher {
  const sources = expandBraces(pattern).map(globSource);
  try {
    const compiled = RE2JS.compile(`^(?:${sources.join('|')})$`, RE2JS.DOTALL);
    return { test: (relativePath) => compiled.test(relativePath) };
  } catch (error) {
    if (!(error instanceof RE2JSException)) throw error;
    throw new GlobSyntaxError(`Invalid glob pattern ${pattern}: ${error.message.replace(/^error parsing regexp: /, '')}`);
  }
}

/** Whether a path segment holds glob syntax. */
function hasGlobSyntax(segment: string): boolean {
  return /[*?[\]{}\\]/.test(segment);
}

/**
 * Splits a glob into its leading literal directory (`''` when none; `/` for `/*`) and the rest, which always keeps
 * the last segment: `src/tools/*.ts` → `src/tools` + `*.ts`, `src/index.ts` → `src` + `index.ts`.
 */
export function splitGlobBase(pattern: string): { base: string; rest: string } {
  const segments = pattern.split('/');
  let count = 0;
  while (count < segments.length - 1 && !hasGlobSyntax(segments[count] ?? '')) count++;
  let base = segments.slice(0, count).join('/');
  if (base === '' && pattern.startsWith('/')) base = '/';
  return { base, rest: segments.slice(count).join('/') };
}

/** How many segments deep a match can be: unbounded when a `**` may occur. */
export function globDepth(pattern: string): number {
  let depth = 0;
  for (const expanded of expandBraces(pattern)) {
    if (expanded.includes('**')) return Number.POSITIVE_INFINITY;
    depth = Math.max(depth, expanded.split('/').length);
  }
  return depth;
}

/**
 * `checkToolPath` for a directory a search tool walks: as for files, plus a rule naming everything beneath a
 * directory (`Grep(/tmp/xyz/**)`) also allows searching that directory itself.
 */
export async function checkSearchPath(options: { cwd: string; toolName: string; absolutePath: string; allowRules: readonly string[] }): Promise<string | undefined> {
  const derived = options.allowRules.flatMap((text) => {
    try {
      const rule = parseRule(text);
      if (rule.toolName !== options.toolName || rule.content === undefined || !rule.content.endsWith('/**')) return [];
      const parent = rule.content.slice(0, -3);
      return parent === '' || parent === '/' ? [] : [`${rule.toolName}(${parent})`];
    } catch {
      return [];
    }
  });
  return checkToolPath({ ...options, allowRules: [...options.allowRules, ...derived] });
}

/** One file met by {@link walkFiles}. */
export interface WalkedFile {
  absolutePath: string;
  /** Relative to the walk's root, `/`-separated. */
  relativePath: string;
}

function byName(a: Dirent, b: Dirent): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * The files under `root`, depth first, each directory's files (by name) before its subdirectories (by name).
 * Skips {@link SKIPPED_DIRECTORIES} and unreadable directories, never follows a symlinked directory, yields a
 * symlinked file only when its target is inside `root`, skips what `readDeny` names (the root included), descends
 * at most `maxDepth` segments, and checks `signal` at every directory.
 */
export async function* walkFiles(root: string, options: { signal: AbortSignal; maxDepth?: number; readDeny?: ReadDenyFilter | undefined }): AsyncGenerator<WalkedFile> {
  const maxDepth = options.maxDepth ?? Number.POSITIVE_INFINITY;
  const realRoot = await realpath(root).catch(() => root);
  const readDeny = options.readDeny;
  // Each path as walked and through the real root, so a symlink above the root does not hide it from a deny rule.
  const denied = (relativePath: string, ...more: string[]): boolean => {
    if (readDeny === undefined) return false;
    const spellings = relativePath === '' ? [root, realRoot] : [path.join(root, relativePath), path.join(realRoot, relativePath)];
    return readDeny.deniedBy([...spellings, ...more]) !== undefined;
  };
  if (denied('')) return;
  const stack: Array<{ directory: string; relative: string; depth: number }> = [{ directory: root, relative: '', depth: 1 }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    options.signal.throwIfAborted();
    let entries: Dirent[];
    try {
      entries = await readdir(next.directory, { withFileTypes: true });
    } catch {
      continue;
    }
    entries.sort(byName);
    const subdirectories: typeof stack = [];
    for (const entry of entries) {
      const absolutePath = path.join(next.directory, entry.name);
      const relativePath = next.relative === '' ? entry.name : `${next.relative}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRECTORIES.has(entry.name) && next.depth < maxDepth && !denied(relativePath)) {
          subdirectories.push({ directory: absolutePath, relative: relativePath, depth: next.depth + 1 });
        }
      } else if (entry.isFile()) {
        if (!denied(relativePath)) yield { absolutePath, relativePath };
      } else if (entry.isSymbolicLink()) {
        const target = await realpath(absolutePath).catch(() => undefined);
        if (target === undefined || !isInside(realRoot, target) || denied(relativePath, target)) continue;
        const info = await stat(absolutePath).catch(() => undefined);
        if (info?.isFile() === true) yield { absolutePath, relativePath };
      }
    }
    stack.push(...subdirectories.reverse());
  }
}

/** The directory a Glob call walks and the pattern relative to it. */
function globTarget(cwd: string, input: { pattern: string; path?: string | undefined }): { root: string; pattern: string } {
  const { base, rest } = splitGlobBase(input.pattern.replace(/^(?:\.\/)+/, ''));
  return { root: path.resolve(resolveToolPath(cwd, input.path ?? '.'), base), pattern: rest };
}

const globInputSchema = z.strictObject({
  pattern: z.string().min(1).describe('Glob to match file paths against, e.g. "**/*.ts" or "src/*.{js,ts}"'),
  path: z.string().min(1).optional().describe('Directory to search in, absolute (inside cwd) or relative to cwd (default: cwd)'),
});

export const globTool = defineTool({
  name: 'Glob',
  aliases: ['glob'],
  description: 'Lists files under a directory whose paths match a glob pattern, newest first.',
  inputSchema: globInputSchema,
  concurrentSafe: true,
  readOnly: true,
  sideEffectScope: 'none',
  idempotent: true,
  timeout: { defaultMs: TOOL_TIMEOUTS.other.defaultMs },
  resultBudget: RESULT_BUDGETS.Glob,
  ruleContent: (input) => input.path,
  ruleKind: 'path',
  summarize: (input) => (input.path === undefined ? input.pattern : `${input.pattern} in ${input.path}`),
  resolveInput(input, context) {
    const target = globTarget(context.cwd, input);
    return { pattern: target.pattern, path: target.root };
  },
  async validateInput(input, context): Promise<ValidationOutcome> {
    try {
      compileGlob(input.pattern);
    } catch (error) {
      if (error instanceof GlobSyntaxError) return { ok: false, message: error.message, errorCode: 'invalid_pattern' };
      throw error;
    }
    const searchPath = resolveToolPath(context.cwd, input.path ?? '.');
    const check = (absolutePath: string) => checkSearchPath({ cwd: context.cwd, toolName: 'Glob', absolutePath, allowRules: context.allowRules });
    const escape = await check(searchPath);
    if (escape !== undefined) return { ok: false, message: escape, errorCode: 'path_escape' };
    const info = await stat(searchPath).catch(() => undefined);
    if (info === undefined) return { ok: false, message: `Directory does not exist: ${searchPath}`, errorCode: 'not_found' };
    if (!info.isDirectory()) return { ok: false, message: `Path is not a directory: ${searchPath}`, errorCode: 'not_a_directory' };
    const { root } = globTarget(context.cwd, input);
    if (root !== searchPath) {
      const rootEscape = await check(root);
      if (rootEscape !== undefined) return { ok: false, message: rootEscape, errorCode: 'path_escape' };
    }
    return { ok: true };
  },
  async execute(input, context) {
    const { root, pattern } = globTarget(context.cwd, input);
    const info = await stat(root).catch(() => undefined);
    if (info?.isDirectory() !== true) return 'No files found';
    const matcher = compileGlob(pattern);
    const readDeny = await createReadDenyFilter({ cwd: context.cwd, denyRules: context.denyRules });
    const matches: Array<{ path: string; mtimeMs: number }> = [];
    for await (const file of walkFiles(root, { signal: context.signal, maxDepth: globDepth(pattern), readDeny })) {
      if (!matcher.test(file.relativePath)) continue;
      const fileInfo = await stat(file.absolutePath).catch(() => undefined);
      if (fileInfo !== undefined) matches.push({ path: file.absolutePath, mtimeMs: fileInfo.mtimeMs });
    }
    if (matches.length === 0) return 'No files found';
    matches.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    const lines = matches.slice(0, MAX_GLOB_RESULTS).map((match) => match.path);
    if (matches.length > MAX_GLOB_RESULTS) lines.push(GLOB_TRUNCATED_NOTE);
    return lines.join('\n');
  },
});
