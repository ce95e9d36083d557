/**
 * The program tables behind `command-facts.ts`: harmless variables, leading and non-command keywords, wrappers and
 * their option grammars, runners, shells, which commands read the files their operands name, and the options that make
 * a program run other code.
 */

import type { WordToken } from './lexer.js';

/** Variables whose assignment before a command cannot change which program runs or what it loads. */
export const HARMLESS_VARIABLES = new Set([
  'NODE_ENV',
  'CI',
  'DEBUG',
  'FORCE_COLOR',
  'NO_COLOR',
  'TERM',
  'TZ',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'LC_CTYPE',
  'LC_MESSAGES',
  'COLUMNS',
  'LINES',
  'RUST_LOG',
  'RUST_BACKTRACE',
  'GOOS',
  'GOARCH',
  'CGO_ENABLED',
  'PYTHONUNBUFFERED',
  'PYTHONDONTWRITEBYTECODE',
  'PYTHONIOENCODING',
  'NODE_NO_WARNINGS',
  'LOG_LEVEL',
  'VERBOSE',
]);

/** Reserved words that may begin a part of a compound command, before the command itself (`then rm x`). */
export const LEADING_KEYWORDS = new Set([
  'if',
  'then',
  'else',
  'elif',
  'do',
  'while',
  'until',
  '!',
  '{',
  '}',
  'fi',
  'done',
  'esac',
]);
/** Reserved words after which no simple command follows in the same part (`for f in *`, `case x in`). */
export const NON_COMMAND_KEYWORDS = new Set(['for', 'case', 'select', 'function', '[[', ']]', 'coproc', 'in', '))']);

/** A wrapper runs the command after its options as if it were given alone; rules match that command. */
export interface WrapperGrammar {
  /** Options whose value is the next word unless attached (`-n5`, `--adjustment=5`). */
  valued: readonly string[];
  flags: readonly string[];
  /** Words between the options and the command (`timeout`'s duration). */
  operands?: number;
  /** Numeric flags such as `nice -5`. */
  numericFlags?: boolean;
  /** The wrapper adds no effect of its own, so a read-only command stays read-only inside it. */
  readOnly: boolean;
}

export const WRAPPERS = new Map<string, WrapperGrammar>([
  [
    'timeout',
    {
      valued: ['-s', '--signal', '-k', '--kill-after'],
      flags: ['--preserve-status', '--foreground', '-v', '--verbose'],
      operands: 1,
      readOnly: true,
    },
  ],
  ['nice', { valued: ['-n', '--adjustment'], flags: [], numericFlags: true, readOnly: true }],
  // nohup may create nohup.out, so what it runs is not read-only.
  ['nohup', { valued: [], flags: [], readOnly: false }],
  ['time', { valued: [], flags: ['-p'], readOnly: true }],
  ['command', { valued: [], flags: ['-p'], readOnly: true }],
  ['builtin', { valued: [], flags: [], readOnly: true }],
  ['exec', { valued: ['-a'], flags: ['-c', '-l', '-cl', '-lc'], readOnly: true }],
  ['env', { valued: ['-u', '--unset'], flags: ['-i', '--ignore-environment', '-', '-0', '--null'], readOnly: true }],
  ['stdbuf', { valued: ['-i', '-o', '-e', '--input', '--output', '--error'], flags: [], readOnly: true }],
]);

/** Programs that run a command they are given, with their options that take a value (the command follows them). */
export const RUNNERS = new Map<string, readonly string[]>([
  [
    'sudo',
    [
      '-u',
      '-g',
      '-h',
      '-p',
      '-C',
      '-D',
      '-r',
      '-t',
      '-T',
      '-U',
      '--user',
      '--group',
      '--host',
      '--prompt',
      '--close-from',
      '--chdir',
      '--role',
      '--type',
      '--command-timeout',
      '--other-user',
    ],
  ],
  ['doas', ['-u', '-C']],
  [
    'xargs',
    [
      '-a',
      '-d',
      '-E',
      '-I',
      '-L',
      '-n',
      '-P',
      '-s',
      '--arg-file',
      '--delimiter',
      '--eof',
      '--replace',
      '--max-lines',
      '--max-args',
      '--max-procs',
      '--max-chars',
      '--process-slot-var',
    ],
  ],
  ['watch', ['-n', '-d', '--interval', '--differences']],
  ['flock', ['-w', '-E', '--timeout', '--conflict-exit-code']],
  ['ionice', ['-c', '-n', '--class', '--classdata']],
  ['strace', ['-e', '-o', '-s', '-u', '-p']],
  ['runuser', ['-u', '-g', '-G', '--user', '--group']],
  ['pkexec', ['--user']],
  ['caffeinate', ['-t', '-w']],
  ['setsid', []],
  ['chroot', []],
  ['unshare', []],
  ['nsenter', ['-t', '-S', '-G']],
  ['taskset', []],
  ['chrt', []],
  ['ltrace', []],
  ['parallel', []],
  ['firejail', []],
  ['unbuffer', []],
]);

/** Shells: they run a script given with `-c`, a file, or their input. */
export const SHELLS = new Set([
  'bash',
  'sh',
  'zsh',
  'dash',
  'ksh',
  'mksh',
  'ash',
  'fish',
  'csh',
  'tcsh',
  'rbash',
  'busybox',
]);

/** Commands that read the files named by their operands: how to find those operands. */
export type ReaderKind = 'files' | 'pattern-first' | 'filter-first' | 'find';
export const READERS = new Map<string, ReaderKind>([
  ...[
    'cat',
    'head',
    'tail',
    'wc',
    'nl',
    'sort',
    'uniq',
    'cut',
    'column',
    'diff',
    'cmp',
    'file',
    'stat',
    'du',
    'ls',
    'tree',
    'realpath',
    'readlink',
    'less',
    'more',
    'base64',
    'xxd',
    'od',
    'hexdump',
    'strings',
    'tac',
    'rev',
    'fold',
    'fmt',
    'paste',
    'join',
    'comm',
    'md5sum',
    'sha1sum',
    'sha224sum',
    'sha256sum',
    'sha384sum',
    'sha512sum',
    'shasum',
    'cksum',
    'b2sum',
    'iconv',
    'expand',
    'unexpand',
    'zcat',
    'bat',
    'cp',
    'pr',
    'tsort',
    // `test -e path` tells whether a file exists, as `ls path` does: its operands are judged as reads too.
    'test',
  ].map((name) => [name, 'files'] as const),
  ...['grep', 'egrep', 'fgrep', 'rg', 'awk', 'sed'].map((name) => [name, 'pattern-first'] as const),
  ['jq', 'filter-first'],
  ['find', 'find'],
]);

/** The words before `--` (what the program itself parses as options). */
function beforeDoubleDash(words: readonly WordToken[]): string[] {
  const values = words.map((word) => word.value);
  const end = values.indexOf('--');
  return end < 0 ? values : values.slice(0, end);
}

/** npm's options that only change output; any other is configuration (`--node-options`, `--script-shell`, `--prefix`…). */
const NPM_HARMLESS_OPTIONS =
  /^(-s|-q|-d|-dd|-ddd|--silent|--quiet|--verbose|--json|--if-present|--workspaces|--ws|--no-audit|--no-fund|--no-color|--include-workspace-root|--(loglevel|color|workspace|w)=[\w@./-]+|-w)$/;

/**
 * Options that make a program run other code or read its configuration elsewhere: a part with one is allowed only
 * by an exact rule, so `Bash(npm test:*)` does not allow `npm test --node-options=--import=…`.
 */
export const PREFIX_UNSAFE_OPTIONS = new Map<string, (words: readonly WordToken[]) => boolean>([
  [
    'npm',
    (words) =>
      beforeDoubleDash(words)
        .slice(1)
        .some((value) => value.startsWith('-') && !NPM_HARMLESS_OPTIONS.test(value)),
  ],
  [
    'npx',
    (words) =>
      beforeDoubleDash(words)
        .slice(1)
        .some(
          (value) =>
            /^--(node-options|script-shell|userconfig|globalconfig|prefix|call|shell)/.test(value) || /^-c/.test(value),
        ),
  ],
  [
    'pnpm',
    (words) =>
      beforeDoubleDash(words)
        .slice(1)
        .some((value) =>
          /^(--(config|node-options|script-shell|shell-emulator|dir|prefix|global-dir|userconfig|npmrc)|-C)/.test(
            value,
          ),
        ),
  ],
  [
    'yarn',
    (words) =>
      beforeDoubleDash(words)
        .slice(1)
        .some((value) => /^--(cwd|use-yarnrc|rc-filename|modules-folder|global-folder|script-shell)/.test(value)),
  ],
  [
    'bun',
    (words) =>
      beforeDoubleDash(words)
        .slice(1)
        .some((value) => /^(--(preload|config|cwd|require|import|shell)|-[rc]$)/.test(value)),
  ],
  [
    'make',
    (words) =>
      beforeDoubleDash(words)
        .slice(1)
        .some((value) => /^(--(file|makefile|directory|eval|include-dir)|-[^-]*[fCEI])/.test(value)),
  ],
  [
    'git',
    (words) =>
      beforeDoubleDash(words)
        .slice(1)
        .some((value) => /^--(upload-pack|receive-pack|exec|config|template|separate-git-dir)/.test(value)) ||
      (words[1]?.value === 'clone' && beforeDoubleDash(words).some((value) => /^-[^-]*[uc]/.test(value))),
  ],
  [
    'cargo',
    (words) =>
      beforeDoubleDash(words)
        .slice(1)
        .some((value) => /^(--config|-Z|--manifest-path)/.test(value)),
  ],
]);
