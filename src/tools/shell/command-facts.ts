/**
 * What the permission layer knows about a `Bash` command, found without running anything (pure, dependency-free):
 * the command split into its simple commands, so rules judge every part, and the paths it reads. Everything FAILS
 * CLOSED: what is not fully understood is not a plain list and is never allowed by a prefix rule.
 *
 * Parts (2): the command is split at `;`, `&&`, `||`, `|`, `|&`, `&` and newlines into simple commands, each
 * normalised for rules: quotes and backslashes removed (`\rm`, `'rm'`, `r''m`, `$'rm'` → `rm`), words re-quoted only
 * where needed, single spaces; harmless leading assignments (`NODE_ENV=test`, see `HARMLESS_VARIABLES`) and wrappers
 * (`timeout 5`, `nice -n 5`, `nohup`, `time`, `command`, `builtin`, `exec`, `env [-i] [-u X]`, `stdbuf`) are looked
 * through, so a wrapper is matched as what it runs; any other assignment (`PATH=…`, `LD_PRELOAD=…`) stays in the part,
 * so no prefix rule matches it. Runners (`sudo`, `xargs`, shells, `eval`, `trap`, `su -c`, `find -exec`, `watch`…, and
 * a wrapper with an option it does not know) are allowed only by an exact rule, never by a prefix rule for the runner.
 * Deny and ask rules also see other spellings: the wrapped form, the base name of a command given by path
 * (`/bin/rm`), `git` without global options (`git -C . push` → `git push`), every command inside `$(…)`, backticks,
 * `<(…)`, unquoted here-documents, subshells, groups, compound commands and runners' scripts (`bash -c '…'`), and,
 * when the text cannot be tokenized, a crude split. A command that is not a plain list of simple commands
 * (substitutions, expansions, redirections to files, here-documents, subshells, groups, functions, keywords, comments,
 * assignments alone, empty commands) gets `parsed: false`: no prefix rule can allow it. A `cd` to a literal directory
 * is read-only and later parts joined by `&&` resolve paths from there; any other directory change makes later
 * relative paths unknown. Read paths are the operands of reading commands (`cat`, `head`, `grep` after its pattern,
 * `jq` after its filter, `find` before its expression…), `< file` targets and `cd` targets; `grep -r`/`rg` add
 * `dir/**`; following symlinks (`grep -R`, `rg -L`) and globs through directories cannot be located.
 */

import type { CommandFacts, CommandPartFacts } from '../../contracts/call-plan.js';
import { lex } from './lexer.js';
import type { RedirectToken, Token, WordToken } from './lexer.js';
import { ASSIGNMENT, redirectReason, simpleCommandReason } from './read-only.js';

/** Variables whose assignment before a command cannot change which program runs or what it loads. */
const HARMLESS_VARIABLES = new Set([
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
const LEADING_KEYWORDS = new Set([
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
const NON_COMMAND_KEYWORDS = new Set(['for', 'case', 'select', 'function', '[[', ']]', 'coproc', 'in', '))']);

/** A wrapper runs the command after its options as if it were given alone; rules match that command. */
interface WrapperGrammar {
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
type ReaderKind = 'files' | 'pattern-first' | 'filter-first' | 'find';
const READERS = new Map<string, ReaderKind>([
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

/** Caps that keep the facts (which enter workflow history) small. */
const MAX_NESTING = 5;
const MAX_PARTS = 1_000;
const MAX_SPELLINGS = 2_000;
const MAX_READ_PATHS = 1_000;
const MAX_SUFFIX_SPELLINGS = 8;

type Separator = '|' | '||' | '&&' | '|&' | ';' | '&' | 'newline' | '(' | ')';

interface SimpleCommand {
  words: WordToken[];
  redirects: Array<{ token: RedirectToken; target: WordToken | undefined }>;
  before: Separator | undefined;
  after: Separator | undefined;
}

/** A part as analysed: its facts, plus what the remembered rule needs. */
export interface AnalysedPart {
  facts: CommandPartFacts;
  /** The command's words as rules see them (canonical), after assignments and wrappers. */
  words: string[];
  /** Assignments that stay in `content` (they could change what runs). */
  assignments: boolean;
}

interface Collected {
  parts: AnalysedPart[];
  spellings: Set<string>;
  readPaths: Set<string>;
  notPlain: string | undefined;
  /** A form whose commands or reads cannot be seen at all (`$a`, `rm${IFS}-f`, `echo … | sh`): deny rules cannot be checked. */
  unanalysed: string | undefined;
  /** A cap was reached, so some parts, spellings or paths are missing: deny rules could not all be checked. */
  truncated: boolean;
}

interface Scope {
  /** The directory relative paths resolve against; undefined once it cannot be known (`cd -`, `pushd`). */
  dir: string | undefined;
  home: string;
  depth: number;
  /** Top-level parts are judged by every rule; nested ones (substitutions, runners' commands) by deny and ask only. */
  top: boolean;
}

function markNotPlain(out: Collected, reason: string): void {
  out.notPlain ??= reason;
}

/** The command holds a form no rule can be checked against; it is not plain either. */
function markUnanalysed(out: Collected, reason: string): void {
  out.unanalysed ??= reason;
  markNotPlain(out, reason);
}

function addSpelling(out: Collected, spelling: string): void {
  if (spelling === '') return;
  if (out.spellings.size < MAX_SPELLINGS) out.spellings.add(spelling);
  else out.truncated = true;
}

function addReadPath(out: Collected, readPath: string): void {
  if (out.readPaths.size < MAX_READ_PATHS) out.readPaths.add(readPath);
  else out.truncated = true;
}

/** A word as rules see it: as written when unquoted characters give it meaning (globs, `~`, expansions), else re-quoted only if needed. */
function canonicalWord(word: WordToken): string {
  if (word.unsafe !== undefined || word.glob || word.tilde) return word.raw;
  if (word.value === '') return "''";
  return /^[\w@%+=:,./-]+$/.test(word.value) ? word.value : `'${word.value.replaceAll("'", "'\\''")}'`;
}

function contentOf(words: readonly WordToken[]): string {
  return words.map(canonicalWord).join(' ');
}

/** Normalises an absolute POSIX path (`.`, `..`, repeated slashes). */
function normalizePath(absolute: string): string {
  const segments: string[] = [];
  for (const segment of absolute.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  return `/${segments.join('/')}`;
}

/**
 * Where a path operand points: absolute, a glob pattern, or (not absolute) a place that cannot be known. The result
 * keeps `..` segments as written (`/cwd/d/../x`): after a symlinked directory the kernel goes up from the link's
 * target, not from `d`'s parent, so only the file system can say where it leads (`addOperand` adds both spellings).
 */
function resolveOperand(value: string, options: { tilde: boolean; scope: Scope }): string {
  const { scope } = options;
  let text = value;
  if (options.tilde || text === '~' || text.startsWith('~/')) {
    if (text === '~' || text.startsWith('~/')) text = `${scope.home}${text.slice(1)}`;
    else return text; // `~user/…`: another user's home, which this pure code cannot look up.
  }
  if (text.startsWith('/')) return cleanPath(text);
  if (scope.dir === undefined) return text;
  return cleanPath(`${scope.dir}/${text}`);
}

/** An absolute path without `.` segments and repeated slashes, `..` kept. */
function cleanPath(absolute: string): string {
  const segments = absolute.split('/').filter((segment) => segment !== '' && segment !== '.');
  return `/${segments.join('/')}`;
}

/** Device files that hold no data to disclose and end at once: reading them needs no confinement (`/dev/zero` never ends). */
const DATALESS_DEVICES = new Set(['/dev/null']);

/**
 * Adds a path operand as text resolves it and, when it goes up (`..`), as written, so the file system resolves it
 * component by component (`bash.ts`); a glob through directories (symlinks it matches cannot be checked) is marked
 * as not locatable.
 */
function addOperand(out: Collected, written: string): void {
  const resolved = written.startsWith('/') ? normalizePath(written) : written;
  if (DATALESS_DEVICES.has(resolved)) return;
  addReadPath(out, resolved);
  if (resolved !== written && written.split('/').includes('..')) addReadPath(out, written);
  const firstGlob = resolved.search(/[*?[]/);
  if (
    resolved.startsWith('/') &&
    firstGlob >= 0 &&
    resolved.indexOf('/', firstGlob) >= 0 &&
    !resolved.endsWith('/**')
  ) {
    addReadPath(out, `glob through directories: ${resolved}`);
  }
}

/** A read whose path is an expansion (`cat $X`, `cat ${IFS}.env`): it cannot be located, so `Read(...)` deny rules deny it. */
function addUnlocatableRead(out: Collected, word: WordToken): void {
  addReadPath(out, `an expansion: ${word.raw}`);
}

/** The option words of a wrapper, or undefined when one is not in its grammar (then it is judged as a runner). */
function unwrap(grammar: WrapperGrammar, words: readonly WordToken[]): WordToken[] | undefined {
  let k = 1;
  while (k < words.length) {
    const word = words[k];
    if (word === undefined || word.unsafe !== undefined) return undefined;
    const value = word.value;
    if (value === '--') {
      k += 1;
      break;
    }
    if (!value.startsWith('-')) break;
    if (grammar.flags.includes(value) || (grammar.numericFlags === true && /^-\d+$/.test(value))) {
      k += 1;
    } else if (grammar.valued.includes(value)) {
      k += 2;
    } else if (
      grammar.valued.some((option) =>
        option.startsWith('--')
          ? value.startsWith(`${option}=`)
          : value.startsWith(option) && value.length > option.length,
      )
    ) {
      k += 1;
    } else {
      return undefined;
    }
  }
  for (let operand = 0; operand < (grammar.operands ?? 0); operand += 1) {
    const word = words[k];
    if (word === undefined || word.value.startsWith('-')) return undefined;
    k += 1;
  }
  return words.slice(k);
}

/** Index of the first word after a runner's options (the command it runs). */
function runnerCommandStart(valued: readonly string[], words: readonly WordToken[]): number {
  let k = 1;
  while (k < words.length) {
    const value = words[k]?.value ?? '';
    if (value === '--') return k + 1;
    if (!value.startsWith('-') || value === '-') return k;
    k += valued.includes(value) ? 2 : 1;
  }
  return k;
}

/** The script a shell runs with `-c` (`bash -lc 'x'`), if any. */
function shellScript(words: readonly WordToken[]): string | undefined {
  let sawC = false;
  let k = 1;
  while (k < words.length) {
    const value = words[k]?.value ?? '';
    if (value === '--' || value === '-') {
      k += 1;
      break;
    }
    if (!/^[-+]/.test(value)) break;
    if (['-o', '+o', '-O', '+O', '--rcfile', '--init-file'].includes(value)) {
      k += 2;
      continue;
    }
    if (!value.startsWith('--') && value.slice(1).includes('c')) sawC = true;
    k += 1;
  }
  return sawC ? words[k]?.value : undefined;
}

const GIT_VALUED_GLOBALS = new Set([
  '-C',
  '-c',
  '--git-dir',
  '--work-tree',
  '--namespace',
  '--config-env',
  '--super-prefix',
  '--attr-source',
]);

/** `git` with its global options removed (`git -C x push` → `git push`), or undefined when it has none. */
function gitWithoutGlobals(words: readonly WordToken[]): WordToken[] | undefined {
  let k = 1;
  while (k < words.length && (words[k]?.value ?? '').startsWith('-'))
    k += GIT_VALUED_GLOBALS.has(words[k]?.value ?? '') ? 2 : 1;
  const [git] = words;
  return k === 1 || git === undefined ? undefined : [git, ...words.slice(k)];
}

/** Each tail of a runner's words that starts at a non-option word: deny rules see what it may run. */
function addSuffixSpellings(out: Collected, words: readonly WordToken[]): void {
  let added = 0;
  for (let k = 1; k < words.length && added < MAX_SUFFIX_SPELLINGS; k += 1) {
    if ((words[k]?.value ?? '-').startsWith('-')) continue;
    addSpelling(out, contentOf(words.slice(k)));
    added += 1;
  }
}

/**
 * Short options whose value names a file the program reads, per reader; the value may be glued to the option
 * (`file -m/etc/x`, `grep -fpatterns`), even inside a cluster (`grep -hf/etc/x`). `file -m` takes a `:`-separated
 * list. `jq -L` names a directory of modules (read as a tree).
 */
const FILE_VALUED_SHORT = new Map<string, string>([
  ['grep', 'f'],
  ['egrep', 'f'],
  ['fgrep', 'f'],
  ['rg', 'f'],
  ['file', 'mf'],
  ['du', 'X'],
  ['diff', 'X'],
  ['jq', 'fL'],
]);

/** jq options followed by values: how many words, and which of them (index) is a file read. */
const JQ_VALUED = new Map<string, { words: number; file?: number; tree?: number }>([
  ['--arg', { words: 2 }],
  ['--argjson', { words: 2 }],
  ['--rawfile', { words: 2, file: 1 }],
  ['--slurpfile', { words: 2, file: 1 }],
  ['--indent', { words: 1 }],
  ['-L', { words: 1, tree: 0 }],
  ['--library-path', { words: 1, tree: 0 }],
  ['-f', { words: 1, file: 0 }],
  ['--from-file', { words: 1, file: 0 }],
]);

/** Adds a file (or tree) that an option's value names. */
function addOptionValue(out: Collected, value: string, scope: Scope, tree: boolean): void {
  const written = resolveOperand(value, { tilde: value.startsWith('~'), scope });
  addOperand(out, written);
  if (tree) addTree(out, written);
}

/** A tree read recursively: `dir/**`, spelled as text resolves it and as written when it goes up. */
function addTree(out: Collected, written: string): void {
  if (!written.startsWith('/')) {
    addReadPath(out, written);
    return;
  }
  for (const spelling of new Set([normalizePath(written), written]))
    addReadPath(out, `${spelling === '/' ? '' : spelling}/**`);
}

/** Records the paths a reading command reads (and the trees it reads recursively). */
function addReads(out: Collected, kind: ReaderKind, name: string, args: readonly WordToken[], scope: Scope): void {
  const operands: WordToken[] = [];
  const optionValues: string[] = [];
  const options: string[] = [];
  const fileLetters = FILE_VALUED_SHORT.get(name) ?? '';
  let optionsEnded = false;
  let findExpression = false;
  for (let k = 0; k < args.length; k += 1) {
    const word = args[k];
    if (word === undefined) break;
    const value = word.value;
    if (kind === 'find') {
      // find's paths come before its expression; leading -H/-L/-P/-O/-D are options.
      if (findExpression) continue;
      if (operands.length === 0 && /^-([HLP]|O\d*|D)$/.test(value)) continue;
      if (/^[-(!)]/.test(value)) {
        findExpression = true;
        continue;
      }
      operands.push(word);
      continue;
    }
    if (!optionsEnded && value === '--') {
      optionsEnded = true;
    } else if (!optionsEnded && value.startsWith('-') && value !== '-') {
      options.push(value);
      const eq = value.indexOf('=');
      if (value.startsWith('--') && eq > 0) optionValues.push(value.slice(eq + 1));
      if (name === 'jq') {
        const valued = JQ_VALUED.get(eq > 0 ? value.slice(0, eq) : value);
        if (valued !== undefined && eq < 0) {
          const values = args.slice(k + 1, k + 1 + valued.words);
          if (valued.file !== undefined && values[valued.file] !== undefined)
            addOptionValue(out, values[valued.file]?.value ?? '', scope, false);
          if (valued.tree !== undefined && values[valued.tree] !== undefined)
            addOptionValue(out, values[valued.tree]?.value ?? '', scope, true);
          k += valued.words;
          continue;
        }
      }
      if (!value.startsWith('--')) {
        // A value glued to a short option that names a file: `-m/abs/path`, `-hf/abs/path`.
        for (let letter = 1; letter < value.length - 1; letter += 1) {
          const option = value.charAt(letter);
          if (!fileLetters.includes(option)) continue;
          const glued = value.slice(letter + 1);
          const files = name === 'file' && option === 'm' ? glued.split(':').filter((part) => part !== '') : [glued];
          for (const file of files) addOptionValue(out, file, scope, name === 'jq' && option === 'L');
        }
      }
    } else if (value !== '-') {
      operands.push(word);
    }
  }
  const shortCluster = (letters: RegExp) =>
    options.some((option) => !option.startsWith('--') && letters.test(option.slice(1)));
  const long = (...names: string[]) =>
    options.some((option) => names.some((name) => option === name || option.startsWith(`${name}=`)));
  if (kind === 'pattern-first' && !shortCluster(/[ef]/) && !long('--regexp', '--file', '--files', '--expression'))
    operands.shift();
  if (kind === 'filter-first' && !shortCluster(/f/) && !long('--from-file')) operands.shift();

  let recursive = false;
  let follows = false;
  if (name === 'grep' || name === 'egrep' || name === 'fgrep') {
    recursive =
      shortCluster(/[rR]/) ||
      long('--recursive', '--dereference-recursive', '--directories=recurse') ||
      options.includes('-d');
    follows = shortCluster(/R/) || long('--dereference-recursive');
  } else if (name === 'rg') {
    recursive = true;
    follows = shortCluster(/L/) || long('--follow');
  } else if (name === 'diff' || name === 'cp') {
    recursive = shortCluster(/[rRa]/) || long('--recursive', '--archive');
    follows = recursive;
  }
  if (recursive && operands.length === 0 && name !== 'cp') {
    operands.push({ ...(args[0] ?? blankWord()), value: '.', raw: '.', glob: false, tilde: false, unsafe: undefined });
  }
  for (const word of operands) {
    if (word.unsafe !== undefined) {
      addUnlocatableRead(out, word);
      continue;
    }
    const written = resolveOperand(word.value, { tilde: word.tilde, scope });
    addOperand(out, written);
    if (recursive) addTree(out, written);
    if (follows)
      addReadPath(out, `symlinks followed under ${written.startsWith('/') ? normalizePath(written) : written}`);
  }
  for (const value of optionValues) addOperand(out, resolveOperand(value, { tilde: false, scope }));
}

function blankWord(): WordToken {
  return {
    kind: 'word',
    value: '',
    raw: '',
    start: 0,
    glob: false,
    startsWithGlob: false,
    quoted: false,
    tilde: false,
    ansiC: false,
    unsafe: undefined,
    substitutions: [],
  };
}

/** A `cd`'s destination: a path, or undefined when it cannot be known (`cd -`, an expansion). */
function cdDestination(args: readonly WordToken[], scope: Scope): { path: string | undefined } {
  const operands = args.filter((word) => !/^-[LPe@]+$/.test(word.value));
  if (operands.length > 1) return { path: undefined };
  const [target] = operands;
  if (target === undefined) return { path: scope.home };
  if (target.unsafe !== undefined || target.glob || target.value === '-' || target.value === '')
    return { path: undefined };
  const resolved = resolveOperand(target.value, { tilde: target.tilde, scope });
  return { path: resolved.startsWith('/') ? resolved : undefined };
}

/** Whether a shell runs its standard input: no script operand (or `-s`). */
function readsScriptFromInput(words: readonly WordToken[]): boolean {
  for (let k = 1; k < words.length; k += 1) {
    const value = words[k]?.value ?? '';
    if (value === '--' || value === '-') return k + 1 >= words.length;
    if (!/^[-+]/.test(value)) return false;
    if (!value.startsWith('--') && value.slice(1).includes('s')) return true;
    if (['-o', '+o', '-O', '+O', '--rcfile', '--init-file'].includes(value)) k += 1;
  }
  return true;
}

/** The script-file operand of a shell run without `-c` (`sh script.sh args`): the first word after its options. */
function scriptFileWord(words: readonly WordToken[]): WordToken | undefined {
  for (let k = 1; k < words.length; k += 1) {
    const value = words[k]?.value ?? '';
    if (value === '--' || value === '-') return words[k + 1];
    if (!/^[-+]/.test(value)) return words[k];
    if (['-o', '+o', '-O', '+O', '--rcfile', '--init-file'].includes(value)) k += 1;
  }
  return undefined;
}

/** The value of a short option (`-c x`, `-qc x`, `-cx`) or long option (`--command x`, `--command=x`). */
function clusterValue(words: readonly WordToken[], letter: string, long: string): string | undefined {
  for (let k = 1; k < words.length; k += 1) {
    const value = words[k]?.value ?? '';
    if (value === long) return words[k + 1]?.value;
    if (value.startsWith(`${long}=`)) return value.slice(long.length + 1);
    if (/^-[^-]/.test(value)) {
      const at = value.indexOf(letter, 1);
      if (at < 0) continue;
      return at === value.length - 1 ? words[k + 1]?.value : value.slice(at + 1);
    }
  }
  return undefined;
}

/** `git -c` keys that name no program and no alias. */
const GIT_SAFE_CONFIG =
  /^(user\.(name|email)|color\.[\w.-]+|advice\.[\w.-]+|init\.defaultbranch|safe\.directory|core\.(quotepath|autocrlf|safecrlf|filemode|ignorecase|abbrev|precomposeunicode)|commit\.gpgsign|tag\.gpgsign|log\.showsignature|pull\.(rebase|ff)|push\.default|merge\.ff|i18n\.[\w.-]+|column\.ui|protocol\.version|credential\.interactive)$/i;

/**
 * `git -c key=value` / `--config-env` before the subcommand: an alias `!cmd` is a shell script (collected); any key
 * that may name a program (`core.pager`, `core.sshCommand`, an alias to another subcommand…) cannot be checked.
 * Returns whether the part sets any configuration (then only an exact rule allows it).
 */
function gitConfigPrograms(words: readonly WordToken[], scope: Scope, out: Collected): boolean {
  let configured = false;
  for (let k = 1; k < words.length && (words[k]?.value ?? '').startsWith('-'); k += 1) {
    const option = words[k]?.value ?? '';
    if (GIT_VALUED_GLOBALS.has(option) && option !== '-c' && option !== '--config-env') {
      k += 1;
      continue;
    }
    if (option !== '-c' && option !== '--config-env' && !option.startsWith('--config-env=')) continue;
    configured = true;
    const setting = option.startsWith('--config-env=')
      ? option.slice('--config-env='.length)
      : (words[k + 1]?.value ?? '');
    if (!option.startsWith('--config-env=')) k += 1;
    const eq = setting.indexOf('=');
    const key = eq < 0 ? setting : setting.slice(0, eq);
    const value = eq < 0 ? '' : setting.slice(eq + 1);
    if (option === '-c' && /^alias\./i.test(key) && value.startsWith('!')) collectScript(value.slice(1), scope, out);
    else if (option !== '-c' || !GIT_SAFE_CONFIG.test(key))
      markUnanalysed(out, `\`git ${option} ${setting}\` may name a program to run`);
  }
  return configured;
}

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
const PREFIX_UNSAFE_OPTIONS = new Map<string, (words: readonly WordToken[]) => boolean>([
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

/** What one simple command means for rules; nested commands it runs are collected on the way. */
function analyseCommand(
  command: SimpleCommand,
  scope: Scope,
  out: Collected,
): { part: AnalysedPart; cd?: { path: string | undefined }; losesDirectory?: boolean } | undefined {
  let plainHere = true;
  const notPlain = (reason: string): void => {
    plainHere = false;
    markNotPlain(out, reason);
  };
  const nested: Scope = { ...scope, depth: scope.depth + 1, top: false };
  for (const word of command.words) {
    if (word.unsafe !== undefined) notPlain(word.unsafe);
    for (const script of word.substitutions) collectScript(script, nested, out);
  }
  for (const { token, target } of command.redirects) {
    for (const script of token.bodySubstitutions ?? []) collectScript(script, nested, out);
    if (target === undefined) {
      notPlain('redirection without a target');
      continue;
    }
    for (const script of target.substitutions) collectScript(script, nested, out);
    if (target.unsafe !== undefined) notPlain(target.unsafe);
    const reason = redirectReason(token, target);
    if (reason !== undefined) notPlain(reason);
    else if (token.op === '<' && target.unsafe !== undefined) addUnlocatableRead(out, target);
    else if (token.op === '<') addOperand(out, resolveOperand(target.value, { tilde: target.tilde, scope }));
  }

  let words = command.words;
  while (words[0] !== undefined && words[0].raw === words[0].value && LEADING_KEYWORDS.has(words[0].value)) {
    notPlain(`shell keyword \`${words[0].value}\``);
    words = words.slice(1);
  }
  const first = words[0];
  if (first !== undefined && first.raw === first.value && NON_COMMAND_KEYWORDS.has(first.value)) {
    notPlain(`shell keyword \`${first.value}\``);
    if (first.value === 'coproc' || first.value === 'function') {
      // `coproc [NAME] command`, `function name [()] { body; }`: what follows runs (now or when called).
      nestedCommand(words.slice(1), nested, out);
      nestedCommand(words.slice(2), nested, out);
      if (words[2]?.value === '()') nestedCommand(words.slice(3), nested, out);
    }
    return undefined;
  }

  const keptAssignments: WordToken[] = [];
  const spellings: string[] = [];
  let runner = false;
  let wrappersReadOnly = true;
  let query = false;
  for (let guard = 0; guard < 8 && words.length > 0; guard += 1) {
    while (words[0] !== undefined && ASSIGNMENT.test(words[0].raw)) {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(words[0].raw)?.[0] ?? '';
      if (!HARMLESS_VARIABLES.has(name) || words[0].unsafe !== undefined || /^[^=]*[[+]/.test(words[0].raw))
        keptAssignments.push(words[0]);
      words = words.slice(1);
    }
    const head = words[0];
    if (head === undefined) break;
    const name = head.value;
    if (head.unsafe !== undefined || head.glob) {
      markUnanalysed(out, `the command name is an expansion or a pattern (\`${head.raw}\`)`);
      break;
    }
    if (keptAssignments.length > 0) spellings.push(contentOf([...keptAssignments, ...words]));
    if (name === 'command' && /^-[vV]$/.test(words[1]?.value ?? '')) {
      query = true;
      break;
    }
    const grammar = WRAPPERS.get(name);
    if (grammar !== undefined) {
      const rest = unwrap(grammar, words);
      if (rest === undefined) {
        runner = true;
        addSuffixSpellings(out, words);
        if (name === 'env') {
          // `env -S 'cmd args'` splits its value into a command.
          const split = words.find((word) => /^(-S|--split-string)/.test(word.value));
          const index = split === undefined ? -1 : words.indexOf(split);
          const script =
            split === undefined
              ? undefined
              : split.value.length > 2 && split.value.startsWith('-S')
                ? split.value.slice(2)
                : split.value.includes('=')
                  ? split.value.slice(split.value.indexOf('=') + 1)
                  : words[index + 1]?.value;
          if (script !== undefined) collectScript(script, nested, out);
        }
        break;
      }
      if (rest.length === 0) break;
      spellings.push(contentOf(words));
      wrappersReadOnly &&= grammar.readOnly;
      words = rest;
      continue;
    }
    const valued = RUNNERS.get(name);
    if (valued !== undefined) {
      runner = true;
      addSuffixSpellings(out, words);
      const start = runnerCommandStart(valued, words);
      if (start < words.length) nestedCommand(words.slice(start), nested, out);
      if (name === 'xargs') {
        const file = words.findIndex((word) => word.value === '-a' || word.value === '--arg-file');
        if (file >= 0 && words[file + 1] !== undefined)
          addOperand(
            out,
            resolveOperand(words[file + 1]?.value ?? '', { tilde: words[file + 1]?.tilde ?? false, scope }),
          );
      }
      break;
    }
    if (SHELLS.has(name) || name === 'su') {
      runner = true;
      const script = name === 'su' ? suScript(words) : shellScript(words);
      if (script !== undefined) collectScript(script, nested, out);
      else addSuffixSpellings(out, words);
      if (script === undefined && name !== 'su' && readsScriptFromInput(words)) {
        // No `-c` and no script file: the shell runs its input. A here-string or here-document is read here; a pipe cannot be.
        const input = command.redirects.find(
          ({ token }) => token.op === '<<<' || token.op === '<<' || token.op === '<<-',
        );
        if (input?.token.op === '<<<' && input.target !== undefined && input.target.unsafe === undefined)
          collectScript(input.target.value, nested, out);
        else if (input !== undefined && input.token.op !== '<<<' && input.token.body !== undefined)
          collectScript(input.token.body, nested, out);
        else if (
          input !== undefined ||
          command.before === '|' ||
          command.before === '|&' ||
          command.redirects.some(({ token }) => token.op === '<' || token.op === '<&')
        ) {
          markUnanalysed(out, `\`${name}\` runs commands from its input, which cannot be checked`);
        }
      }
      if (
        script === undefined &&
        name !== 'su' &&
        !readsScriptFromInput(words) &&
        scriptFileWord(words)?.unsafe !== undefined
      ) {
        // `sh $(…)`: the script file's name is an expansion, so not even which file runs can be known.
        markUnanalysed(out, `\`${name}\` runs a script whose name is an expansion, which cannot be checked`);
      }
      break;
    }
    if (name === 'eval' || name === 'trap') {
      runner = true;
      const operands =
        name === 'trap'
          ? words
              .slice(1)
              .filter(
                (word, index, all) => !(/^-/.test(word.value) && all.slice(0, index).every((w) => /^-/.test(w.value))),
              )
          : words.slice(1);
      const script = name === 'eval' ? operands.map((word) => word.value).join(' ') : operands[0]?.value;
      if (script !== undefined) collectScript(script, nested, out);
      if (operands.some((word) => word.unsafe !== undefined)) markUnanalysed(out, `\`${name}\` runs an expansion`);
      break;
    }
    if (name === 'script') {
      // util-linux `script -c 'cmd'` runs cmd in a new terminal.
      runner = true;
      const script = clusterValue(words, 'c', '--command');
      if (script !== undefined) collectScript(script, nested, out);
      break;
    }
    if (name === 'source' || name === '.') {
      runner = true;
      break;
    }
    if (name === 'find') {
      for (let k = 1; k < words.length; k += 1) {
        if (!/^-(exec|execdir|ok|okdir)$/.test(words[k]?.value ?? '')) continue;
        runner = true;
        let end = k + 1;
        while (end < words.length && words[end]?.value !== ';' && words[end]?.value !== '+') end += 1;
        if (end > k + 1) nestedCommand(words.slice(k + 1, end), nested, out);
        k = end;
      }
    }
    break;
  }

  const head = words[0];
  if (head === undefined) {
    if (keptAssignments.length > 0) notPlain('a variable assignment changes what later commands run');
    return undefined;
  }
  if (head.unsafe !== undefined || head.glob) notPlain('the command name is an expansion or a glob');
  const name = head.value;
  if (name.includes('/') && !name.endsWith('/'))
    spellings.push(
      contentOf([
        {
          ...head,
          value: name.slice(name.lastIndexOf('/') + 1),
          raw: name.slice(name.lastIndexOf('/') + 1),
          glob: false,
          tilde: false,
        },
        ...words.slice(1),
      ]),
    );
  if (name === 'git') {
    const plainGit = gitWithoutGlobals(words);
    if (plainGit !== undefined) spellings.push(contentOf(plainGit));
    const configured = gitConfigPrograms(words, nested, out);
    if (configured) runner = true;
  }
  if (PREFIX_UNSAFE_OPTIONS.get(name)?.(words) === true) runner = true;

  let readOnly: boolean;
  let cd: { path: string | undefined } | undefined;
  if (name === 'cd') {
    cd = cdDestination(words.slice(1), scope);
    if (cd.path !== undefined) addOperand(out, cd.path);
    readOnly = cd.path !== undefined;
  } else {
    readOnly = query || simpleCommandReason(words) === undefined;
    const reader = READERS.get(name);
    if (reader !== undefined) addReads(out, reader, name, words.slice(1), scope);
  }
  readOnly &&= plainHere && !runner && wrappersReadOnly && keptAssignments.length === 0;

  const content = contentOf([...keptAssignments, ...words]);
  if (keptAssignments.length > 0) spellings.push(contentOf(words));
  for (const spelling of spellings) if (spelling !== content) addSpelling(out, spelling);
  const facts: CommandPartFacts = runner ? { content, readOnly: false, runner: true } : { content, readOnly };
  const losesDirectory = name === 'pushd' || name === 'popd' || name === 'source' || name === '.' || name === 'eval';
  return {
    part: { facts, words: words.map(canonicalWord), assignments: keptAssignments.length > 0 },
    ...(cd === undefined ? {} : { cd }),
    ...(losesDirectory ? { losesDirectory } : {}),
  };
}

/** The script `su -c` runs, if any. */
function suScript(words: readonly WordToken[]): string | undefined {
  for (let k = 1; k < words.length; k += 1) {
    const value = words[k]?.value ?? '';
    if (value === '-c' || value === '--command') return words[k + 1]?.value;
    if (value.startsWith('--command=')) return value.slice('--command='.length);
    if (/^-c./.test(value)) return value.slice(2);
  }
  return undefined;
}

/** Analyses the words of a command that another command runs (`sudo X`, `xargs X`, `find -exec X`): deny and ask rules see it. */
function nestedCommand(words: WordToken[], scope: Scope, out: Collected): void {
  if (scope.depth > MAX_NESTING) return;
  const analysed = analyseCommand({ words, redirects: [], before: undefined, after: undefined }, scope, out);
  if (analysed !== undefined) addSpelling(out, analysed.part.facts.content);
}

/** Groups tokens into simple commands and the separators between them; marks what is not a plain list. */
function groupCommands(tokens: readonly Token[], scope: Scope, out: Collected): SimpleCommand[] {
  const commands: SimpleCommand[] = [];
  let current: SimpleCommand = { words: [], redirects: [], before: undefined, after: undefined };
  const nested: Scope = { ...scope, depth: scope.depth + 1, top: false };
  for (let k = 0; k < tokens.length; k += 1) {
    const token = tokens[k];
    if (token === undefined) break;
    if (token.kind === 'word') {
      current.words.push(token);
      continue;
    }
    if (token.kind === 'redirect') {
      const target = tokens[k + 1];
      if (target?.kind === 'word') k += 1;
      current.redirects.push({ token, target: target?.kind === 'word' ? target : undefined });
      continue;
    }
    switch (token.op) {
      case 'comment':
        markNotPlain(out, 'a `#` comment');
        continue;
      case 'process-substitution':
        markNotPlain(out, 'process substitution `<(...)`/`>(...)`');
        if (token.script !== undefined) collectScript(token.script, nested, out);
        continue;
      case '(':
      case ')':
        markNotPlain(out, 'subshell or grouping `( )`');
        break;
      case '|':
      case '||':
      case '&&':
      case '|&':
      case ';':
      case '&':
      case 'newline':
        break;
    }
    const separator: Separator = token.op;
    if (current.words.length === 0 && current.redirects.length === 0) {
      const afterGroup = current.before === '(' || current.before === ')';
      if (separator !== 'newline' && separator !== '(' && separator !== ')' && !afterGroup)
        markNotPlain(out, `empty command before \`${separator}\``);
      current = { words: [], redirects: [], before: separator, after: undefined };
      continue;
    }
    commands.push({ ...current, after: separator });
    current = { words: [], redirects: [], before: separator, after: undefined };
  }
  if (current.words.length > 0 || current.redirects.length > 0) commands.push(current);
  else if (current.before === '&&' || current.before === '||' || current.before === '|' || current.before === '|&')
    markNotPlain(out, `the command ends with \`${current.before}\``);
  return commands;
}

/** Best-effort command spellings of text that cannot be tokenized (deny rules still see them; the call asks). */
function crudeSpellings(script: string, out: Collected): void {
  for (const segment of script.split(/[;&|\n\r()`]|\$\(/)) {
    const words = segment
      .trim()
      .split(/\s+/)
      .map((word) => word.replace(/["'\\]/g, ''))
      .filter((word) => word !== '');
    if (words.length === 0) continue;
    addSpelling(out, words.join(' '));
    let added = 0;
    for (let k = 1; k < words.length && added < MAX_SUFFIX_SPELLINGS; k += 1) {
      if ((words[k] ?? '-').startsWith('-')) continue;
      addSpelling(out, words.slice(k).join(' '));
      added += 1;
    }
  }
}

function controlCharacterReason(script: string): string | undefined {
  for (let i = 0; i < script.length; i += 1) {
    const code = script.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09 && code !== 0x0a) || code === 0x7f) return 'a control character';
  }
  return undefined;
}

/** Splits a script into simple commands: parts (top level) or spellings (nested), read paths, and doubts. */
function collectScript(script: string, scope: Scope, out: Collected): void {
  if (scope.depth > MAX_NESTING) {
    markNotPlain(out, 'commands nested too deeply to check');
    crudeSpellings(script, out);
    return;
  }
  const control = controlCharacterReason(script);
  if (control !== undefined) markNotPlain(out, control);
  const lexed = lex(script);
  if (!lexed.ok) {
    markNotPlain(out, lexed.reason);
    crudeSpellings(script, out);
    return;
  }
  let dir = scope.dir;
  /** A `cd` whose destination holds only while the commands after it are joined by `&&` (or piped). */
  let inCdChain = false;
  for (const command of groupCommands(lexed.tokens, scope, out)) {
    if (inCdChain && command.before !== '&&' && command.before !== '|' && command.before !== '|&') {
      dir = undefined;
      inCdChain = false;
    }
    const analysed = analyseCommand(command, { ...scope, dir }, out);
    if (analysed === undefined) continue;
    if (scope.top) {
      if (out.parts.length < MAX_PARTS) out.parts.push(analysed.part);
      else out.truncated = true;
    } else {
      addSpelling(out, analysed.part.facts.content);
    }
    if (analysed.cd !== undefined) {
      const follows =
        command.before !== '||' &&
        command.before !== '|' &&
        command.before !== '|&' &&
        (command.after === undefined || command.after === '&&');
      dir = follows ? analysed.cd.path : undefined;
      inCdChain = follows && dir !== undefined;
    } else if (analysed.losesDirectory === true) {
      dir = undefined;
    }
  }
}

export function analyse(options: { command: string; cwd: string; homeDir: string }): Collected {
  const out: Collected = {
    parts: [],
    spellings: new Set(),
    readPaths: new Set(),
    notPlain: undefined,
    unanalysed: undefined,
    truncated: false,
  };
  collectScript(
    options.command,
    { dir: normalizePath(options.cwd), home: normalizePath(options.homeDir), depth: 0, top: true },
    out,
  );
  if (out.parts.length === 0) markNotPlain(out, 'no command to run');
  return out;
}

/**
 * What the permission chain needs to know about a shell command, found without running anything: its simple
 * commands (normalised, each with whether it is read-only), other spellings deny and ask rules must see, whether it
 * is a plain list at all, and the paths its commands read (resolved against `cwd`, `~` against `homeDir`). A command
 * too large to check in full is denied: deny rules must hold for every part of it.
 */
export function bashPermissionFacts(options: { command: string; cwd: string; homeDir: string }): {
  commands: CommandFacts;
  readPaths: string[];
  deny?: { reason: string };
} {
  const out = analyse(options);
  const parts = out.parts.map((part) => part.facts);
  const contents = new Set(parts.map((part) => part.content));
  const otherSpellings = [...out.spellings].filter((spelling) => !contents.has(spelling));
  const unanalysed = out.unanalysed === undefined ? {} : { unanalysed: out.unanalysed };
  const commands: CommandFacts =
    out.notPlain === undefined
      ? { parsed: true, parts, otherSpellings }
      : { parsed: false, reason: out.notPlain, parts, otherSpellings, ...unanalysed };
  const facts = { commands, readPaths: [...out.readPaths] };
  if (!out.truncated) return facts;
  return {
    ...facts,
    deny: {
      reason: `The command is too large to check against permission rules (more than ${MAX_PARTS} commands, ${MAX_SPELLINGS} spellings or ${MAX_READ_PATHS} paths); split it into smaller commands.`,
    },
  };
}
