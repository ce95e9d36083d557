/**
 * `Glob { pattern, path?, include_ignored? }`: files whose path matches a glob (Claude Code's Glob), and the tree
 * walker that Grep reuses.
 *
 * Decisions:
 * - Syntax: picomatch's, the same dialect as path permission rules (see `contracts/glob-match.ts`): `**` any number
 *   of directories, `*`, `?`, `[abc]`, `[!abc]`, `{a,b}`, `\x`. Dotfiles match like other files. Case-sensitive.
 *   Matched by re2js in time linear in the path: `*a*a*a*a*a*a*b*` against a long file name stays instant, where
 *   picomatch's own backtracking RegExp would block the worker for minutes.
 * - The leading segments of the pattern that hold no glob syntax name the directory to walk: `src/tools/*.ts`
 *   walks `<path>/src/tools`, and an absolute pattern (`/repo/src/**\/*.ts`) its own directory. `resolveInput`
 *   folds them into `path`, so the permission rules, hooks and the approver see the real search directory; that
 *   directory is confined like Read's files (`..` or an absolute path elsewhere is refused unless an allow rule of
 *   this tool names it: `Glob(/tmp/xyz)`, or `Glob(/tmp/xyz/**)`, which also covers `/tmp/xyz` itself).
 * - Results are absolute paths, newest modification time first (ties by path), at most {@link MAX_GLOB_RESULTS}.
 * - The walk is tinyglobby's. Only files are listed. Files that `.gitignore` excludes are skipped, and so are
 *   `node_modules` directories met during the walk, unless `include_ignored` is true; `.git` is never entered.
 *   Naming an ignored directory in the pattern's leading segments or as `path` (`node_modules/zod/*.json`) still
 *   searches it. The `.gitignore` files read are those in the walked tree and those above it up to the repository's
 *   top (the directory holding `.git`); a deeper file's `!negation` wins over a shallower file's rule.
 * - Symlinks are not followed and not listed, files or directories (ripgrep's default, without `--follow`): nothing
 *   outside the tree, no cycles.
 * - A file or directory that a `Read(...)` deny rule of the session names is not listed (see `read-deny.ts`),
 *   whichever way it is spelled: as walked or through the real search directory.
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import ignore from 'ignore';
import type { Ignore } from 'ignore';
import { glob as walkTree } from 'tinyglobby';
import { z } from 'zod';
import { RESULT_BUDGETS, TOOL_TIMEOUTS } from '../../contracts/defaults.js';
import { GlobSyntaxError, compileGlob, splitGlobBase } from '../../contracts/glob-match.js';
import { parseRule } from '../../contracts/permission-rules.js';
import { ToolUseError, defineTool } from '../define-tool.js';
import type { ValidationOutcome } from '../define-tool.js';
import { checkToolPath, isInside, realPathFacts, rememberRealPaths, resolveToolPath } from '../paths.js';
import type { RealPath } from '../paths.js';
import { createReadDenyFilter } from '../support/read-deny.js';
import type { ReadDenyFilter } from '../support/read-deny.js';
import { relativeToCwd, searchDisplay } from '../support/displays.js';
import { DISPLAY_LIMITS } from '../../contracts/defaults.js';

/** Largest number of paths Glob returns. */
export const MAX_GLOB_RESULTS = 1_000;

/** Directories a walk does not enter unless ignored files are included (`.git` is never entered). */
const IGNORED_DIRECTORY_GLOBS = ['**/node_modules/**'];
const NEVER_WALKED_GLOBS = ['**/.git/**'];

/** Largest `.gitignore` file read; a larger one is not read. */
const MAX_GITIGNORE_BYTES = 1_000_000;

export const GLOB_TRUNCATED_NOTE = '(Results are truncated. Consider using a more specific path or pattern.)';

/** How many segments deep a match can be: unbounded when a `**` may occur (an upper bound: braces may hold `/`). */
export function globDepth(pattern: string): number {
  return pattern.includes('**') ? Number.POSITIVE_INFINITY : pattern.split('/').length;
}

/**
 * `checkToolPath` for a directory a search tool walks: as for files, plus a rule naming everything beneath a
 * directory (`Grep(/tmp/xyz/**)`) also allows searching that directory itself.
 */
export async function checkSearchPath(options: {
  cwd: string;
  toolName: string;
  absolutePath: string;
  allowRules: readonly string[];
  realPath?: RealPath;
}): Promise<string | undefined> {
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

/**
 * At execution, where a search may go, checked again on the file system as it is now: Prepare checked it earlier,
 * and a link in the path may have been retargeted since (by a process the session started, for one). Throws a
 * `path_escape` error as validation words it. Answers the search root's real path, from the same resolution the
 * check judged (the path may change again at any moment; what is judged is what is used), the cwd's real path from
 * that resolution too, and whether the root lies outside the real cwd (where an allow rule let it).
 */
export async function searchRootNow(options: {
  cwd: string;
  toolName: string;
  absolutePath: string;
  allowRules: readonly string[];
}): Promise<{ realRoot: string; realCwd: string; outsideCwd: boolean }> {
  const realPath = rememberRealPaths();
  const escape = await checkSearchPath({ ...options, realPath });
  if (escape !== undefined) throw new ToolUseError(escape, 'path_escape');
  const [realRoot, realCwdNow] = await Promise.all([
    realPath(options.absolutePath).catch(() => options.absolutePath),
    realPath(options.cwd).catch(() => path.resolve(options.cwd)),
  ]);
  return { realRoot, realCwd: realCwdNow, outsideCwd: !isInside(realCwdNow, realRoot) };
}

/** One file met by {@link walkFiles}. */
export interface WalkedFile {
  absolutePath: string;
  /** Relative to the walk's root, `/`-separated. */
  relativePath: string;
}

/** The rules of one `.gitignore` file and the directory (absolute) they are relative to. */
interface GitignoreLayer {
  directory: string;
  rules: Ignore;
}

async function readGitignore(directory: string): Promise<GitignoreLayer | undefined> {
  const file = path.join(directory, '.gitignore');
  const info = await stat(file).catch(() => undefined);
  if (info?.isFile() !== true || info.size > MAX_GITIGNORE_BYTES) return undefined;
  const text = await readFile(file, 'utf8').catch(() => undefined);
  return text === undefined ? undefined : { directory, rules: ignore().add(text) };
}

/** `.gitignore` layers above `root`, up to the repository's top; none when no `.git` is found above. */
async function gitignoresAbove(root: string): Promise<GitignoreLayer[]> {
  const layers: GitignoreLayer[] = [];
  if ((await stat(path.join(root, '.git')).catch(() => undefined)) !== undefined) return layers;
  for (let directory = path.dirname(root); ; directory = path.dirname(directory)) {
    const layer = await readGitignore(directory);
    if (layer !== undefined) layers.push(layer);
    if ((await stat(path.join(directory, '.git')).catch(() => undefined)) !== undefined) return layers;
    if (path.dirname(directory) === directory) return [];
  }
}

/** Whether git would ignore a path (`/`-terminated for a directory): the deepest layer with a say decides. */
function gitIgnores(layers: readonly GitignoreLayer[], absolutePath: string): boolean {
  for (const layer of layers) {
    const relative = path.relative(layer.directory, absolutePath);
    if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) continue;
    const verdict = layer.rules.test(absolutePath.endsWith('/') ? `${relative}/` : relative);
    if (verdict.unignored) return false;
    if (verdict.ignored) return true;
  }
  return false;
}

/** Sorts walked paths depth first: each directory's files (by name) before its subdirectories (by name). */
function walkOrder(a: string, b: string): number {
  const left = a.split('/');
  const right = b.split('/');
  for (let index = 0; ; index++) {
    const x = left[index] ?? '';
    const y = right[index] ?? '';
    if (x === y) continue;
    const xIsFile = index === left.length - 1;
    const yIsFile = index === right.length - 1;
    if (xIsFile !== yIsFile) return xIsFile ? -1 : 1;
    return x < y ? -1 : 1;
  }
}

/**
 * The files under `root` (tinyglobby), in walk order: each directory's files (by name) before its subdirectories.
 * Never enters `.git`; skips what `.gitignore` excludes and `node_modules` unless `includeIgnored`; lists no
 * symlink; skips what `readDeny` names (the root, a file, or a directory above it); descends at most `maxDepth`
 * segments; stops at `signal`.
 */
export async function* walkFiles(
  root: string,
  options: { signal: AbortSignal; maxDepth?: number; readDeny?: ReadDenyFilter | undefined; includeIgnored?: boolean },
): AsyncGenerator<WalkedFile> {
  const maxDepth = options.maxDepth ?? Number.POSITIVE_INFINITY;
  const realRoot = await realpath(root).catch(() => root);
  const readDeny = options.readDeny;
  // Each path as walked and through the real root, so a symlink above the root does not hide it from a deny rule.
  const deniedCache = new Map<string, boolean>();
  const denied = (relativePath: string): boolean => {
    if (readDeny === undefined) return false;
    const known = deniedCache.get(relativePath);
    if (known !== undefined) return known;
    const spellings =
      relativePath === '' ? [root, realRoot] : [path.join(root, relativePath), path.join(realRoot, relativePath)];
    const verdict =
      readDeny.deniedBy(spellings) !== undefined ||
      (relativePath !== '' && denied(path.posix.dirname(relativePath) === '.' ? '' : path.posix.dirname(relativePath)));
    deniedCache.set(relativePath, verdict);
    return verdict;
  };
  if (denied('')) return;
  const includeIgnored = options.includeIgnored === true;
  const found = await walkTree('**', {
    cwd: root,
    dot: true,
    onlyFiles: true,
    followSymbolicLinks: false,
    expandDirectories: false,
    ignore: includeIgnored ? NEVER_WALKED_GLOBS : [...NEVER_WALKED_GLOBS, ...IGNORED_DIRECTORY_GLOBS],
    signal: options.signal,
    ...(Number.isFinite(maxDepth) ? { deep: Math.max(0, maxDepth - 1) } : {}),
  });
  options.signal.throwIfAborted();
  found.sort(walkOrder);
  let layers: GitignoreLayer[] = [];
  if (!includeIgnored) {
    // Layers above the root that exclude the root itself are skipped: a directory named as the search is searched.
    const above = (await gitignoresAbove(root)).filter((layer) => !gitIgnores([layer], `${root}/`));
    const within = await Promise.all(
      found
        .filter((file) => path.posix.basename(file) === '.gitignore')
        .map((file) => readGitignore(path.join(root, path.posix.dirname(file)))),
    );
    layers = [...within.filter((layer) => layer !== undefined), ...above].sort(
      (a, b) => b.directory.length - a.directory.length,
    );
  }
  for (const relativePath of found) {
    const absolutePath = path.join(root, relativePath);
    if (layers.length > 0 && gitIgnores(layers, absolutePath)) continue;
    if (denied(relativePath)) continue;
    yield { absolutePath, relativePath };
  }
}

/** The directory a Glob call walks and the pattern relative to it. */
function globTarget(
  cwd: string,
  input: { pattern: string; path?: string | undefined },
): { root: string; pattern: string } {
  const { base, rest } = splitGlobBase(input.pattern.replace(/^(?:\.\/)+/, ''));
  return { root: path.resolve(resolveToolPath(cwd, input.path ?? '.'), base), pattern: rest };
}

const globInputSchema = z.strictObject({
  pattern: z.string().min(1).describe('Glob to match file paths against, e.g. "**/*.ts" or "src/*.{js,ts}"'),
  path: z
    .string()
    .min(1)
    .optional()
    .describe('Directory to search in, absolute (inside cwd) or relative to cwd (default: cwd)'),
  include_ignored: z
    .boolean()
    .optional()
    .describe('Also list files that .gitignore excludes and files under node_modules (default: false)'),
});

export const globTool = defineTool({
  name: 'Glob',
  aliases: ['glob'],
  description:
    'Lists files under a directory whose paths match a glob pattern, newest first. Skips files that .gitignore excludes and node_modules unless include_ignored is true.',
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
    return { ...input, pattern: target.pattern, path: target.root };
  },
  permissionFacts: (input, context) => realPathFacts(context.cwd, resolveToolPath(context.cwd, input.path ?? '.')),
  async validateInput(input, context): Promise<ValidationOutcome> {
    try {
      compileGlob(input.pattern);
    } catch (error) {
      if (error instanceof GlobSyntaxError) return { ok: false, message: error.message, errorCode: 'invalid_pattern' };
      throw error;
    }
    const searchPath = resolveToolPath(context.cwd, input.path ?? '.');
    const check = (absolutePath: string) =>
      checkSearchPath({ cwd: context.cwd, toolName: 'Glob', absolutePath, allowRules: context.allowRules });
    const escape = await check(searchPath);
    if (escape !== undefined) return { ok: false, message: escape, errorCode: 'path_escape' };
    const info = await stat(searchPath).catch(() => undefined);
    if (info === undefined)
      return { ok: false, message: `Directory does not exist: ${searchPath}`, errorCode: 'not_found' };
    if (!info.isDirectory())
      return { ok: false, message: `Path is not a directory: ${searchPath}`, errorCode: 'not_a_directory' };
    const { root } = globTarget(context.cwd, input);
    if (root !== searchPath) {
      const rootEscape = await check(root);
      if (rootEscape !== undefined) return { ok: false, message: rootEscape, errorCode: 'path_escape' };
    }
    return { ok: true };
  },
  async execute(input, context) {
    const { root, pattern } = globTarget(context.cwd, input);
    await searchRootNow({
      cwd: context.cwd,
      toolName: 'Glob',
      absolutePath: root,
      allowRules: context.allowRules ?? [],
    });
    const info = await stat(root).catch(() => undefined);
    const display = (files: string[], count: number) =>
      searchDisplay({
        tool: 'Glob',
        pattern: input.pattern,
        files: count,
        results: files.slice(0, DISPLAY_LIMITS.searchFirstMatches).map((file) => relativeToCwd(context.cwd, file)),
        truncated: count > DISPLAY_LIMITS.searchFirstMatches,
      });
    if (info?.isDirectory() !== true) return { content: 'No files found', display: display([], 0) };
    const matcher = compileGlob(pattern);
    const readDeny = await createReadDenyFilter({ cwd: context.cwd, denyRules: context.denyRules });
    const matches: Array<{ path: string; mtimeMs: number }> = [];
    const walk = walkFiles(root, {
      signal: context.signal,
      maxDepth: globDepth(pattern),
      readDeny,
      includeIgnored: input.include_ignored === true,
    });
    for await (const file of walk) {
      if (!matcher.test(file.relativePath)) continue;
      const fileInfo = await stat(file.absolutePath).catch(() => undefined);
      if (fileInfo !== undefined) matches.push({ path: file.absolutePath, mtimeMs: fileInfo.mtimeMs });
    }
    if (matches.length === 0) return { content: 'No files found', display: display([], 0) };
    matches.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    const lines = matches.slice(0, MAX_GLOB_RESULTS).map((match) => match.path);
    if (matches.length > MAX_GLOB_RESULTS) lines.push(GLOB_TRUNCATED_NOTE);
    return { content: lines.join('\n'), display: display(lines, matches.length) };
  },
});
