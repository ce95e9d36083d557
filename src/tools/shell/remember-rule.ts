/**
 * The rule an `allow_always` answer remembers for a `Bash` command: the narrowest useful one, never anything broader
 * than one part of the command.
 *
 * Remembered rules (3): `cmd:*`, `tool sub:*` or `tool run script:*` for one ordinary command; the exact command for
 * shells, interpreters without a script file, runners, wrappers that could not be looked through, `cd`, state-changing
 * builtins, deleting or fetching programs, and subcommand tools with options first (`git -C sub status`). A compound
 * command remembers the rule of its one part that is not read-only (`cd sub && npm test` → `Bash(npm test:*)`), or
 * the exact command when several parts need approval or it is not a plain list: never anything broader than a part.
 */

import { RUNNERS, SHELLS, WRAPPERS, analyse } from './command-facts.js';
import type { AnalysedPart } from './command-facts.js';
import { SUBCOMMAND_TOOLS } from './subcommand-tools.js';

/** `tool run <script>`: the script name is part of the remembered prefix. */
const RUN_SCRIPT = new Set([
  'npm run',
  'npm run-script',
  'pnpm run',
  'yarn run',
  'bun run',
  'uv run',
  'poetry run',
  'pipx run',
  'deno task',
]);
/** Subcommands that run arbitrary code or packages named by their arguments: remembered exactly. */
const RUNS_ANYTHING = new Set([
  'npm exec',
  'npm x',
  'pnpm exec',
  'pnpm dlx',
  'yarn exec',
  'yarn dlx',
  'bun x',
  'go run',
  'docker run',
  'docker exec',
  'kubectl exec',
  'deno run',
  'deno eval',
  'gh api',
  'git config',
  // Installing runs the packages' install scripts; compose runs what a compose file names.
  'docker compose',
  'pip install',
  'pip3 install',
  'pip download',
  'npm install',
  'npm i',
  'npm ci',
  'npm add',
  'npm update',
  'npm rebuild',
  'npm link',
  'pnpm install',
  'pnpm i',
  'pnpm add',
  'pnpm update',
  'yarn add',
  'yarn install',
  'bun install',
  'bun add',
  'uv pip',
  'uv add',
  'poetry add',
  'poetry install',
  'pipx install',
  'cargo install',
  'go generate',
  'go install',
  'gh extension',
  'git submodule',
]);
/** Interpreters: a prefix only together with the script file they run (`python gen.py:*`). */
const INTERPRETERS = new Set([
  'python',
  'python2',
  'python3',
  'node',
  'nodejs',
  'ruby',
  'perl',
  'php',
  'lua',
  'Rscript',
  'osascript',
  'tsx',
  'ts-node',
  'pwsh',
  'powershell',
]);
/** Never a prefix: directory changes, shell state, shells, wrappers, runners, and programs that run or delete what their arguments say. */
const NEVER_PREFIX = new Set([
  'cd',
  'pushd',
  'popd',
  'export',
  'unset',
  'alias',
  'set',
  'shopt',
  'declare',
  'typeset',
  'local',
  'readonly',
  'hash',
  'enable',
  'ulimit',
  'umask',
  'eval',
  'exec',
  'source',
  '.',
  'trap',
  'su',
  'sudo',
  'doas',
  'env',
  'xargs',
  'find',
  'awk',
  'gawk',
  'sed',
  'perl',
  ...SHELLS,
  ...WRAPPERS.keys(),
  ...RUNNERS.keys(),
  'rm',
  'rmdir',
  'dd',
  'shred',
  'truncate',
  'chmod',
  'chown',
  'chgrp',
  'kill',
  'pkill',
  'killall',
  'mkfs',
  'mount',
  'umount',
  'curl',
  'wget',
  'nc',
  'ncat',
  'socat',
  'ssh',
  'scp',
  'rsync',
  'crontab',
  'systemctl',
  'launchctl',
  'shutdown',
  'reboot',
  'mv',
  'cp',
  'ln',
  'install',
  'tee',
  // Programs that run what their arguments (or files they name) say: `tar --checkpoint-action=exec=…`, `zip -TT`,
  // sqlite3 `.shell`, editors and pagers with `!cmd`, debuggers, `patch` (ed scripts), `openssl` engines.
  'tar',
  'zip',
  'unzip',
  'cpio',
  '7z',
  'sqlite3',
  'psql',
  'mysql',
  'vim',
  'vi',
  'nvim',
  'view',
  'ex',
  'ed',
  'emacs',
  'nano',
  'gdb',
  'lldb',
  'less',
  'more',
  'most',
  'man',
  'patch',
  'openssl',
  'expect',
  'tclsh',
  'script',
  'unbuffer',
  'tmux',
  'screen',
  'docker-compose',
  'ssh-agent',
  'git-shell',
  'rlwrap',
  'busybox',
]);
const SUBCOMMAND = /^[A-Za-z][\w:.-]*$/;
const SCRIPT_FILE = /^[\w./-]+\.[A-Za-z0-9]+$/;

/** `Bash(<content>)`: an exact rule (content that rule syntax would read as a prefix or a wildcard cannot be one). */
function exactRule(content: string): string {
  // `Bash(x:*)` would be a prefix rule and `Bash(*)` every command: a trailing space keeps them exact (and unmatched).
  return content === '*' || content.endsWith(':*') ? `Bash(${content} )` : `Bash(${content})`;
}

/** The narrowest useful rule for one part: a subcommand or command prefix, or the exact command. */
function narrowRule(part: AnalysedPart): string {
  const exact = exactRule(part.facts.content);
  if (part.facts.runner === true || part.assignments) return exact;
  const [first = '', second, third] = part.words;
  if (INTERPRETERS.has(first))
    return second !== undefined && SCRIPT_FILE.test(second) ? `Bash(${first} ${second}:*)` : exact;
  if (NEVER_PREFIX.has(first) || !/^[\w@%+=:,./-]+$/.test(first)) return exact;
  if (SUBCOMMAND_TOOLS.has(first)) {
    if (second === undefined || !SUBCOMMAND.test(second)) return exact;
    const pair = `${first} ${second}`;
    if (RUNS_ANYTHING.has(pair)) return exact;
    if (RUN_SCRIPT.has(pair)) {
      return third !== undefined && SUBCOMMAND.test(third) && !INTERPRETERS.has(third) && !NEVER_PREFIX.has(third)
        ? `Bash(${pair} ${third}:*)`
        : exact;
    }
    return `Bash(${pair}:*)`;
  }
  return `Bash(${first}:*)`;
}

/**
 * The rule an `allow_always` answer remembers for a command, the narrowest useful one:
 * - one simple command: `npm test -- --watch` → `Bash(npm test:*)`, `touch a` → `Bash(touch:*)`; wrappers and
 *   harmless assignments are looked through (`timeout 5 npm test` → `Bash(npm test:*)`);
 * - never a prefix of `cd`, shells, interpreters (except with their script file), `sudo`, `env`, `xargs`, wrappers,
 *   programs that delete or fetch (`rm`, `curl`…), a subcommand tool without its subcommand or with options first
 *   (`git -C sub status`, `make`), or a command with assignments that could change it: those are remembered exactly;
 * - a compound command: the rule of its one part that is not read-only (`cd sub && npm test` → `Bash(npm test:*)`);
 *   with several such parts, or when it is not a plain list of simple commands, the exact command.
 */
export function bashRememberRule(command: string): string {
  const out = analyse({ command, cwd: '/', homeDir: '/' });
  if (out.notPlain !== undefined) return exactRule(command);
  const needRule = out.parts.filter((part) => !part.facts.readOnly);
  const [only] = needRule;
  if (needRule.length === 1 && only !== undefined) return narrowRule(only);
  const [single] = out.parts;
  // Asked although read-only (a read outside cwd, an ask rule): only this very command.
  if (needRule.length === 0 && out.parts.length === 1 && single !== undefined) return exactRule(single.facts.content);
  return exactRule(command);
}
