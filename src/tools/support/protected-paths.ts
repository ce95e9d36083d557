/**
 * Protected paths: files whose content other programs run, so that writing them turns an edit into code execution
 * on a later call (`git status` runs `core.fsmonitor` from `.git/config`; Switchyard runs the hooks of
 * `.switchyard/settings.json`; a shell runs `.bashrc`). Write and Edit on them always ask, in `default` and
 * `acceptEdits` mode alike, and are denied in `dontAsk` (a `strongAsk` permission fact: no allow rule, remembered
 * approval or hook lifts it).
 *
 * Matching, pure and deliberately broad (a false "ask" costs a click, a miss costs the machine):
 * - directories match as any segment of the path below cwd (or below the home directory, or anywhere for paths
 *   outside both), so `vendor/x/.git/config` is protected too; a protected name above cwd is not a reason;
 * - files match by their name at any depth;
 * - home entries match below the home directory only;
 * - case-insensitively, and with trailing dots and spaces dropped, because the file system may not tell
 *   `.GIT/config` or `.git./config` from `.git/config` (macOS, Windows).
 * Symlinks are the caller's part: `protectedWriteFacts` checks the lexical path and the real one.
 *
 * Not listed, on purpose: project files a build runs (`package.json` scripts, `Makefile`, tests) — running them is
 * an explicit, approved Bash call; `.github/workflows` runs in CI, not here; `.gitattributes` and `.gitmodules`
 * only name drivers and commands that git takes from config.
 */
import path from 'node:path';

const GIT_REASON =
  'git runs programs its configuration names (core.fsmonitor, hooks, diff and filter drivers), even for read-only commands such as git status';
const SHELL_REASON = 'a shell start-up file: every new shell runs it';

/** Directories whose whole content is protected, as any path segment. */
const PROTECTED_DIRECTORIES: ReadonlyMap<string, string> = new Map([
  ['.git', GIT_REASON],
  ['.switchyard', 'Switchyard settings: the hooks they name run on the next tool call'],
  ['.claude', 'Claude Code settings, hooks and commands: they run programs'],
  ['.vscode', 'editor tasks and settings, which run programs when the folder is opened'],
  ['.ssh', 'SSH keys and authorized_keys decide who can log in'],
  ['.hg', 'Mercurial runs the hooks and extensions its .hg/hgrc names'],
]);

const PACKAGE_MANAGER_REASON =
  'package manager configuration: it names programs and scripts that every install or run executes';

/** File names protected at any depth. */
const PROTECTED_FILES: ReadonlyMap<string, string> = new Map([
  ['.mcp.json', 'MCP server definitions: the worker starts the commands they name'],
  ['.gitconfig', GIT_REASON],
  ['.npmrc', 'npm configuration (node-options, script-shell) applies to every npm command'],
  ['.envrc', 'direnv runs it on entering the directory'],
  ...[
    '.yarnrc',
    '.yarnrc.yml',
    '.pnpmfile.cjs',
    '.pnpmfile.mjs',
    '.pnpmfile.js',
    'bunfig.toml',
    'pip.conf',
    'pip.ini',
    '.pypirc',
  ].map((name): [string, string] => [name, PACKAGE_MANAGER_REASON]),
  ['.bazelrc', 'Bazel options, which can name programs every build runs'],
  ['conftest.py', 'pytest imports it (and runs its code) before any test'],
  ['config', "a git repository's configuration when its folder is a bare repository, which git discovers anywhere"],
  ...[
    '.bashrc',
    '.bash_profile',
    '.bash_login',
    '.bash_logout',
    '.profile',
    '.zshrc',
    '.zprofile',
    '.zshenv',
    '.zlogin',
    '.zlogout',
    '.kshrc',
    '.cshrc',
    '.tcshrc',
    '.login',
    '.logout',
  ].map((name): [string, string] => [name, SHELL_REASON]),
]);

/** Git hook names: in a folder `hooks` (a bare repository's layout), git runs them. */
const GIT_HOOKS = new Set([
  'applypatch-msg',
  'pre-applypatch',
  'post-applypatch',
  'pre-commit',
  'pre-merge-commit',
  'prepare-commit-msg',
  'commit-msg',
  'post-commit',
  'pre-rebase',
  'post-checkout',
  'post-merge',
  'pre-push',
  'pre-receive',
  'update',
  'proc-receive',
  'post-receive',
  'post-update',
  'reference-transaction',
  'push-to-checkout',
  'pre-auto-gc',
  'post-rewrite',
  'sendemail-validate',
  'fsmonitor-watchman',
  'p4-changelist',
  'p4-prepare-changelist',
  'p4-post-changelist',
  'p4-pre-submit',
  'post-index-change',
]);

/** Paths (as trailing segments, at any depth) whose content is protected. */
const PROTECTED_TAILS: ReadonlyMap<string, string> = new Map([
  ['.cargo/config', 'Cargo configuration: it names programs (runners, linkers) that cargo commands execute'],
  ['.cargo/config.toml', 'Cargo configuration: it names programs (runners, linkers) that cargo commands execute'],
]);

/** Paths below the home directory whose content is protected (segments, normalised). */
const PROTECTED_HOME_PREFIXES: ReadonlyMap<string, string> = new Map([
  ['.config/git', GIT_REASON],
  ['.config/fish', SHELL_REASON],
]);

/** Lowercased, without trailing dots and spaces: the spellings one file may have on a case-insensitive system. */
function normalizeSegment(segment: string): string {
  return segment.toLowerCase().replace(/[. ]+$/, '');
}

function segmentsBelow(root: string, absolutePath: string): string[] | undefined {
  const relative = path.relative(root, absolutePath);
  if (relative === '') return [];
  if (relative.startsWith('..') || path.isAbsolute(relative)) return undefined;
  return relative.split(path.sep).filter((segment) => segment !== '');
}

/** Every normalised name that can be the last segment of a protected path (see `mayNameProtectedPath`). */
const PROTECTED_NAMES: ReadonlySet<string> = new Set([
  ...PROTECTED_DIRECTORIES.keys(),
  ...PROTECTED_FILES.keys(),
  ...[...PROTECTED_TAILS.keys()].map((tail) => tail.split('/').at(-1) ?? tail),
  ...GIT_HOOKS,
  ...[...PROTECTED_HOME_PREFIXES.keys()].flatMap((prefix) => prefix.split('/')),
]);

/**
 * A quick filter for walks that descend from a folder whose own path is not protected: a path whose parent is not
 * protected can be protected only through its last segment, so when this answers false for that segment
 * `protectedPathMatch` answers undefined. (It does not hold when every child of the walk's root is protected, e.g. a
 * root inside `~/.config/git`; ask `protectedPathMatch` for one made-up child first.)
 */
export function mayNameProtectedPath(name: string): boolean {
  return PROTECTED_NAMES.has(normalizeSegment(name));
}

/**
 * Why writing `absolutePath` (absolute, already resolved) is a protected write, or undefined. Lexical only: call it
 * with the real path too.
 */
export function protectedPathMatch(options: { absolutePath: string; cwd: string; home: string }): string | undefined {
  const absolutePath = path.resolve(options.absolutePath);
  const belowHome = segmentsBelow(options.home, absolutePath);
  const segments = (
    segmentsBelow(options.cwd, absolutePath) ??
    belowHome ??
    absolutePath.split(path.sep).filter((segment) => segment !== '')
  ).map(normalizeSegment);
  const describe = (reason: string): string =>
    `${absolutePath} is a protected path (${reason}), so writing it always asks for approval.`;

  for (const segment of segments) {
    const reason = PROTECTED_DIRECTORIES.get(segment);
    if (reason !== undefined) return describe(reason);
  }
  const fileReason = PROTECTED_FILES.get(segments.at(-1) ?? '');
  if (fileReason !== undefined) return describe(fileReason);
  const tail = segments.slice(-2).join('/');
  const tailReason = PROTECTED_TAILS.get(tail);
  if (tailReason !== undefined) return describe(tailReason);
  if (segments.at(-2) === 'hooks' && GIT_HOOKS.has(segments.at(-1) ?? ''))
    return describe(`${GIT_REASON}; a folder with a hooks/ folder may be a bare repository`);
  if (belowHome !== undefined) {
    const relative = belowHome.map(normalizeSegment).join('/');
    for (const [prefix, reason] of PROTECTED_HOME_PREFIXES) {
      if (relative === prefix || relative.startsWith(`${prefix}/`)) return describe(reason);
    }
  }
  return undefined;
}
