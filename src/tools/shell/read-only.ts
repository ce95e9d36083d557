/**
 * Whether a whole `Bash` command is read-only, so it may run concurrently with other read-only calls and without
 * approval (pure, dependency-free; FAILS CLOSED: what is not fully understood is not read-only).
 *
 * Read-only (1) accepts one or more simple commands joined only by `|`, `&&`, `||` or `;`, each a command on the read-only
 * list below, named by its bare name, with arguments that are literal words (quotes and backslash escapes are
 * understood; globs and `~` are allowed, except where a glob could expand into a dangerous option).
 *
 * Decisions (documented on purpose):
 * - `git`: git runs programs named by the repository's own `.git/config`, which the workspace (the
 *   model, a cloned repository) controls. Checked against git 2.39: `status`, `diff` (even `--cached`, and with
 *   `--no-ext-diff --no-textconv`), `ls-files` and `blame` read the index or work tree, which runs `core.fsmonitor` and
 *   clean filters (`filter.<driver>.clean`, named by `.gitattributes`, so no fixed `-c` flag can disable them all);
 *   `log`, `show` and `shortlog` run `gpg.program` for signed commits through `log.showSignature`, `format.pretty`,
 *   `pretty.<alias>` or `%G` formats, besides `diff.external` and textconv drivers. So these are NOT read-only at all,
 *   whatever their flags: they ask in `default`, are denied in `plan` and `dontAsk`, and an allow rule such as
 *   `Bash(git status:*)` still allows them for an operator who trusts the repository. Still read-only: `rev-parse`,
 *   `branch` (listing), `remote -v`, and `describe` without `--dirty`/`--broken` (these ran nothing with all of the
 *   above configured).
 * - `tail -f` / `-F` / `--follow` (and obsolete `-5f`, `+5f`): NOT read-only — it never ends, so it must not hold
 *   a concurrency slot or run unapproved.
 * - Commands given by path (`/bin/ls`, `./ls`, `~/bin/ls`): NOT read-only — only bare names on the list are accepted.
 * - Input redirection `< file` IS allowed (it only reads), except from bash's network pseudo-files `/dev/tcp/…` and
 *   `/dev/udp/…`. Here-documents and here-strings (`<<`, `<<<`), `<>` (opens for writing) and `<&` are rejected.
 * - Output redirection is rejected except to `/dev/null` (`>`, `>>`, `>|`, `&>`, `&>>`, `2>` …) and the
 *   duplications `>&1` / `>&2` (`2>&1`, `1>&2`), which write nothing.
 * - Rejected anywhere outside single quotes: `$` (parameter expansion, `$(…)`, `$((…))`, `$'…'`), backticks,
 *   process substitution `<(…)`/`>(…)`, `{`/`}` (brace expansion can forge options: `-{exec,}`), a word starting
 *   with `#` (a comment can hide the rest of a line from this classifier), `(`/`)`, `&`, `|&`, newlines and
 *   other control characters, a leading environment assignment (`FOO=1 ls`).
 * - For commands whose options can run programs or write (`find`, `rg`, `git`, `sort`, `uniq`, `tail`, `date`,
 *   `printf`, `file`, `tree`), an unquoted glob that could expand to a word starting with `-` (`*`, `-*`, `[-]x`)
 *   is rejected; for `uniq` every unquoted glob is (a second operand is an output file). GNU long options may be
 *   abbreviated, so any prefix of a dangerous long option is rejected (`--out` for `--output`, `--p` for `--pre`).
 * - `git`: no option may precede the subcommand (`-c`, `-C`, `--git-dir`, `--no-pager`, … all rejected);
 *   `--output`, `--ext-diff` and `--textconv` (and their prefixes) are rejected. `git branch` takes only `--list`
 *   (with patterns), `-a`, `-r`, `-v`, `-vv`, `--all`, `--remotes`, `--verbose`, `--show-current`; `git remote` only
 *   `-v`/`--verbose`. `HEAD@{1}` must be quoted (braces are rejected).
 * - `rg -z` (which runs fixed decompressors) counts as read-only.
 */

import { lex } from './lexer.js';
import type { Operator, RedirectToken, WordToken } from './lexer.js';

/** Why a command is or is not read-only; `readOnly` false on any doubt. */
export interface CommandClassification {
  readOnly: boolean;
  reason: string;
}

const LIST_OPERATORS = new Set<Operator>(['|', '||', '&&', ';']);

function operatorReason(op: Operator): string {
  switch (op) {
    case ';':
      return '`;` command separator';
    case '&':
      return 'background `&`';
    case '(':
    case ')':
      return 'subshell or grouping `( )`';
    case 'newline':
      return 'more than one line';
    case 'comment':
      return 'a `#` comment';
    case 'process-substitution':
      return 'process substitution `<(...)`/`>(...)`';
    case '|&':
      return '`|&` pipe';
    case '|':
    case '||':
    case '&&':
      return `misplaced \`${op}\``;
  }
}

/** Why a redirection is not read-only, or undefined when it writes nothing. */
export function redirectReason(redirect: RedirectToken, target: WordToken): string | undefined {
  const shown = `${redirect.fd ?? ''}${redirect.op}${target.value}`;
  switch (redirect.op) {
    case '>':
    case '>>':
    case '>|':
    case '&>':
    case '&>>':
      return target.value === '/dev/null' && !target.glob ? undefined : `redirection to a file (\`${shown}\`)`;
    case '>&':
      if (target.value === '1' || target.value === '2' || (target.value === '/dev/null' && !target.glob))
        return undefined;
      return `redirection to a file or descriptor (\`${shown}\`)`;
    case '<':
      return /^\/dev\/(tcp|udp)\//.test(target.value) ? `network redirection (\`${shown}\`)` : undefined;
    case '<<':
    case '<<-':
    case '<<<':
      return 'here-document or here-string';
    case '<>':
      return `\`<>\` opens a file for writing (\`${shown}\`)`;
    case '<&':
      return `input descriptor duplication (\`${shown}\`)`;
  }
}

type ArgsCheck = (args: WordToken[]) => string | undefined;

/** The name of a long option (`--name` or `--name=value`), or undefined when the word is not one. */
function longName(value: string): string | undefined {
  if (!value.startsWith('--') || value === '--') return undefined;
  const eq = value.indexOf('=');
  return value.slice(2, eq < 0 ? undefined : eq);
}

/** Whether a long option name is, or abbreviates (GNU getopt accepts unambiguous prefixes), `option`. */
function abbreviates(name: string | undefined, option: string): boolean {
  return name !== undefined && name !== '' && option.startsWith(name);
}

/** The letters of a short option cluster (`-abc` → `abc`), or undefined when the word is not one. */
function shortCluster(value: string): string | undefined {
  return value.length > 1 && value.startsWith('-') && !value.startsWith('--') ? value.slice(1) : undefined;
}

/**
 * The option letters of a short cluster up to and including the first that takes a value (the rest is that value:
 * `file -m/x/Cfile` is `-m` with `/x/Cfile`, not `-C`), or undefined when the word is not a cluster.
 */
function optionLetters(value: string, valued: string): string | undefined {
  const cluster = shortCluster(value);
  if (cluster === undefined) return undefined;
  for (let k = 0; k < cluster.length; k += 1) if (valued.includes(cluster.charAt(k))) return cluster.slice(0, k + 1);
  return cluster;
}

/** Whether an unquoted glob could expand to a word starting with `-`, i.e. to an option. */
function mayExpandToOption(word: WordToken): boolean {
  return word.glob && (word.startsWithGlob || word.value.startsWith('-'));
}

function globReason(command: string, word: WordToken): string {
  return `unquoted glob \`${word.value}\` could expand to an option of \`${command}\``;
}

/** Runs `perWord` over the arguments after rejecting globs that could forge options. */
function eachArg(command: string, perWord: (word: WordToken) => string | undefined): ArgsCheck {
  return (args) => {
    for (const word of args) {
      if (mayExpandToOption(word)) return globReason(command, word);
      const reason = perWord(word);
      if (reason !== undefined) return reason;
    }
    return undefined;
  };
}

const anyArgs: ArgsCheck = () => undefined;

const FIND_PRIMARIES = new Map<string, string>([
  ['exec', 'runs a program'],
  ['execdir', 'runs a program'],
  ['ok', 'runs a program'],
  ['okdir', 'runs a program'],
  ['delete', 'deletes files'],
  ['fprint', 'writes a file'],
  ['fprint0', 'writes a file'],
  ['fprintf', 'writes a file'],
  ['fls', 'writes a file'],
]);

const checkFind = eachArg('find', ({ value }) => {
  if (!value.startsWith('-')) return undefined;
  const bare = value.replace(/^-+/, '');
  const what = FIND_PRIMARIES.get(bare);
  return what === undefined ? undefined : `\`find -${bare}\` ${what}`;
});

const checkRg = eachArg('rg', ({ value }) => {
  const name = longName(value);
  if (abbreviates(name, 'pre')) return '`rg --pre` runs a program on every file';
  if (abbreviates(name, 'hostname-bin')) return '`rg --hostname-bin` runs a program';
  return undefined;
});

const checkSort = eachArg('sort', ({ value }) => {
  const name = longName(value);
  if (abbreviates(name, 'output') || optionLetters(value, 'kStTo')?.includes('o') === true)
    return '`sort -o`/`--output` writes a file';
  if (abbreviates(name, 'compress-program')) return '`sort --compress-program` runs a program';
  return undefined;
});

const checkTail = eachArg('tail', ({ value }) => {
  if (abbreviates(longName(value), 'follow')) return '`tail --follow` never ends';
  if (/^[-+]/.test(value) && !value.startsWith('--') && /[fF]/.test(value)) return '`tail -f` never ends';
  return undefined;
});

const checkPrintf = eachArg('printf', ({ value }) =>
  value.startsWith('-v') ? '`printf -v` assigns a shell variable' : undefined,
);

const checkFile = eachArg('file', ({ value }) =>
  abbreviates(longName(value), 'compile') || optionLetters(value, 'mfFPe')?.includes('C') === true
    ? '`file -C`/`--compile` writes a magic file'
    : undefined,
);

const checkTree = eachArg('tree', ({ value }) => {
  const cluster = shortCluster(value);
  if (abbreviates(longName(value), 'output') || cluster?.includes('o') === true) return '`tree -o` writes a file';
  if (cluster?.includes('R') === true) return '`tree -R` writes files';
  return undefined;
});

/** `uniq [OPTION]... [INPUT [OUTPUT]]`: a second operand is an output file. */
const checkUniq: ArgsCheck = (args) => {
  let operands = 0;
  let optionsEnded = false;
  for (let k = 0; k < args.length; k += 1) {
    const word = args[k];
    if (word === undefined) break;
    if (word.glob) return `unquoted glob \`${word.value}\` could expand to an output file of \`uniq\``;
    const { value } = word;
    if (optionsEnded || value === '-' || !value.startsWith('-')) {
      operands += 1;
    } else if (value === '--') {
      optionsEnded = true;
    } else if (value.startsWith('--')) {
      if (value === '--skip-fields' || value === '--skip-chars' || value === '--check-chars') k += 1;
    } else {
      const cluster = value.slice(1);
      for (let c = 0; c < cluster.length; c += 1) {
        if ('fsw'.includes(cluster.charAt(c))) {
          if (c === cluster.length - 1) k += 1;
          break;
        }
      }
    }
  }
  return operands > 1 ? '`uniq` with a second operand writes to it (output file)' : undefined;
};

const DATE_FLAGS = new Set(['-u', '-R', '--utc', '--universal', '--rfc-email', '--rfc-2822', '--debug']);
const DATE_VALUE_OPTIONS = new Set(['-d', '-r', '--date', '--reference']);

/** `date` is read-only only with a `+FORMAT`, display options and `-d`/`-r`; an operand or `-s` sets the clock. */
const checkDate: ArgsCheck = (args) => {
  for (let k = 0; k < args.length; k += 1) {
    const word = args[k];
    if (word === undefined) break;
    const { value } = word;
    if (word.glob) return `unquoted glob \`${value}\` in \`date\` arguments`;
    if (value.startsWith('+') || DATE_FLAGS.has(value)) continue;
    if (/^(-I|--iso-8601|--rfc-3339=|--date=|--reference=)/.test(value)) continue;
    if (DATE_VALUE_OPTIONS.has(value)) {
      if (k + 1 >= args.length) return `\`date ${value}\` without a value`;
      k += 1;
      continue;
    }
    if (/^-[dr]./.test(value)) continue;
    if (value.startsWith('-s') || abbreviates(longName(value), 'set')) return '`date -s`/`--set` sets the clock';
    return `\`date ${value}\` is not a known read-only use (an operand sets the clock)`;
  }
  return undefined;
};

/** Git subcommands that never run a program named by the repository's configuration (checked against git 2.39). */
const GIT_SUBCOMMANDS = new Set(['rev-parse', 'branch', 'remote', 'describe']);
/** Git subcommands that can run repository-configured programs whatever their flags, so they always need approval. */
const GIT_CONFIGURED_PROGRAMS = new Map([
  ['status', 'reads the index and work tree, which runs `core.fsmonitor` and clean filters named in `.git/config`'],
  ['diff', 'runs `core.fsmonitor`, clean filters, `diff.external` and textconv drivers named in `.git/config`'],
  ['ls-files', 'reads the index, which runs `core.fsmonitor` named in `.git/config`'],
  ['blame', 'runs `core.fsmonitor`, clean filters and textconv drivers named in `.git/config`'],
  [
    'log',
    'runs `gpg.program` (`log.showSignature`, `format.pretty`, `%G` formats), `diff.external` and textconv drivers named in `.git/config`',
  ],
  [
    'show',
    'runs `gpg.program` (`log.showSignature`, `format.pretty`, `%G` formats), `diff.external` and textconv drivers named in `.git/config`',
  ],
  ['shortlog', 'formats commits, which may run `gpg.program` named in `.git/config`'],
  ['grep', 'runs textconv drivers and reads the index named in `.git/config`'],
]);
const GIT_BRANCH_FLAGS = new Set([
  '--list',
  '-a',
  '-r',
  '-v',
  '-vv',
  '--all',
  '--remotes',
  '--verbose',
  '--show-current',
]);
const GIT_REMOTE_FLAGS = new Set(['-v', '--verbose']);

const checkGit: ArgsCheck = (args) => {
  const [sub, ...rest] = args;
  if (sub === undefined) return '`git` without a subcommand';
  if (sub.value.startsWith('-'))
    return `git option \`${sub.value}\` before the subcommand (may run programs or change the repository)`;
  const configured = GIT_CONFIGURED_PROGRAMS.get(sub.value);
  if (configured !== undefined) return `\`git ${sub.value}\` ${configured}`;
  if (!GIT_SUBCOMMANDS.has(sub.value)) return `\`git ${sub.value}\` is not on the read-only list`;
  const perWord = eachArg('git', ({ value }) => {
    const name = longName(value);
    if (abbreviates(name, 'output')) return `\`git ${sub.value} --output\` writes a file`;
    if (abbreviates(name, 'ext-diff')) return '`git --ext-diff` runs an external diff program';
    if (abbreviates(name, 'textconv')) return '`git --textconv` runs a conversion program';
    if (sub.value === 'describe' && (abbreviates(name, 'dirty') || abbreviates(name, 'broken'))) {
      return '`git describe --dirty` reads the work tree, which runs `core.fsmonitor` and clean filters named in `.git/config`';
    }
    return undefined;
  });
  const reason = perWord(rest);
  if (reason !== undefined) return reason;
  if (sub.value === 'branch') {
    const listing = rest.some((w) => w.value === '--list');
    for (const { value } of rest) {
      if (value.startsWith('-') && !GIT_BRANCH_FLAGS.has(value)) return `\`git branch ${value}\` may change branches`;
      if (!value.startsWith('-') && !listing) return `\`git branch ${value}\` creates a branch`;
    }
  }
  if (sub.value === 'remote') {
    const other = rest.find((w) => !GIT_REMOTE_FLAGS.has(w.value));
    if (other !== undefined) return `\`git remote ${other.value}\` is not read-only`;
  }
  return undefined;
};

/** jq options that load files beyond its operands: modules (`-L`), a filter file, files bound to variables. */
const JQ_LOADING_OPTIONS = ['library-path', 'rawfile', 'slurpfile', 'from-file'];

/** `jq` is read-only only with its filter and inputs: no modules (`import`, `include`, `-L`) and no extra files. */
const checkJq = eachArg('jq', ({ value }) => {
  const name = longName(value);
  if (JQ_LOADING_OPTIONS.some((option) => name === option))
    return `\`jq --${name ?? ''}\` reads files named by its arguments`;
  const cluster = shortCluster(value);
  if (cluster !== undefined && /[Lf]/.test(cluster)) return '`jq -L`/`-f` loads modules or a filter file';
  if (/\b(import|include)\b/.test(value))
    return '`jq` `import`/`include` loads a module or data file named by the filter';
  return undefined;
});

/** `free -s N` repeats until killed, like `tail -f`: it must not hold a concurrency slot or run unapproved. */
const checkFree = eachArg('free', ({ value }) => {
  if (abbreviates(longName(value), 'seconds')) return '`free --seconds` repeats and never ends';
  return optionLetters(value, 'sc')?.includes('s') === true ? '`free -s` repeats and never ends' : undefined;
});

/** `hexdump -f FILE` reads its format from a file that the read checks do not see as a read of the command. */
const checkHexdump = eachArg('hexdump', ({ value }) => {
  if (abbreviates(longName(value), 'format-file')) return '`hexdump --format-file` reads a format file';
  return optionLetters(value, 'efnsL')?.includes('f') === true ? '`hexdump -f` reads a format file' : undefined;
});

/** Listing options of `docker ps` and `docker images` that take a value. */
const DOCKER_VALUED = new Set(['-f', '--filter', '--format', '-n', '--last']);
/** Listing options of `docker ps` and `docker images` that take none. */
const DOCKER_FLAGS = new Set([
  '-a',
  '--all',
  '-q',
  '--quiet',
  '-l',
  '--latest',
  '-s',
  '--size',
  '--no-trunc',
  '--digests',
]);

/**
 * `docker ps` and `docker images` list what the daemon runs and holds; nothing else of docker is read-only. No
 * option may precede the subcommand (`-H`/`--host`, `--context`, `--config`, `--tls…` reach or trust another daemon),
 * and after it only the listing options above, values inline (`--format='{{.ID}}'`) or next, and no operand.
 */
const checkDocker: ArgsCheck = (args) => {
  const [sub, ...rest] = args;
  if (sub === undefined) return '`docker` without a subcommand';
  if (sub.value.startsWith('-'))
    return `docker option \`${sub.value}\` before the subcommand (may reach another daemon or load a configuration)`;
  if (sub.value !== 'ps' && sub.value !== 'images') return `\`docker ${sub.value}\` is not read-only`;
  for (let k = 0; k < rest.length; k += 1) {
    const word = rest[k];
    if (word === undefined) break;
    const { value } = word;
    if (DOCKER_FLAGS.has(value) || /^-[aqls]+$/.test(value)) continue;
    if (DOCKER_VALUED.has(value)) {
      if (k + 1 >= rest.length) return `\`docker ${sub.value} ${value}\` without a value`;
      k += 1;
      continue;
    }
    const eq = value.indexOf('=');
    if (value.startsWith('--') && eq > 0 && DOCKER_VALUED.has(value.slice(0, eq))) continue;
    if (/^-[fn]./.test(value)) continue;
    const shown = eq > 0 ? value.slice(0, eq) : value;
    return `\`docker ${sub.value} ${shown}\` is not a listing option of \`docker ${sub.value}\``;
  }
  return undefined;
};

/** The read-only list: bare command name → check of its arguments. */
const READ_ONLY_COMMANDS = new Map<string, ArgsCheck>([
  ['ls', anyArgs],
  ['cat', anyArgs],
  ['head', anyArgs],
  ['tail', checkTail],
  ['wc', anyArgs],
  ['grep', anyArgs],
  ['egrep', anyArgs],
  ['fgrep', anyArgs],
  ['rg', checkRg],
  ['find', checkFind],
  ['pwd', anyArgs],
  ['echo', anyArgs],
  ['printf', checkPrintf],
  ['which', anyArgs],
  ['file', checkFile],
  ['stat', anyArgs],
  ['du', anyArgs],
  ['df', anyArgs],
  ['sort', checkSort],
  ['uniq', checkUniq],
  ['cut', anyArgs],
  ['tr', anyArgs],
  ['basename', anyArgs],
  ['dirname', anyArgs],
  ['realpath', anyArgs],
  ['readlink', anyArgs],
  ['diff', anyArgs],
  ['cmp', anyArgs],
  ['true', anyArgs],
  ['false', anyArgs],
  ['date', checkDate],
  ['tree', checkTree],
  ['nl', anyArgs],
  ['column', anyArgs],
  ['jq', checkJq],
  ['git', checkGit],
  // Claude Code's read-only programs: none of them writes, runs a program or waits for ever, given the checks here;
  // those that read files (strings, od, hexdump, paste, tac, rev, fold, expand, unexpand, fmt, comm, tsort, pr) have
  // their operands judged as reads like `cat` (command-facts.ts).
  ['sleep', anyArgs],
  ['seq', anyArgs],
  ['uname', anyArgs],
  ['id', anyArgs],
  ['nproc', anyArgs],
  ['uptime', anyArgs],
  ['free', checkFree],
  ['groups', anyArgs],
  ['locale', anyArgs],
  ['getconf', anyArgs],
  ['strings', anyArgs],
  ['od', anyArgs],
  ['hexdump', checkHexdump],
  ['paste', anyArgs],
  ['tac', anyArgs],
  ['rev', anyArgs],
  ['fold', anyArgs],
  ['expand', anyArgs],
  ['unexpand', anyArgs],
  ['fmt', anyArgs],
  ['comm', anyArgs],
  ['numfmt', anyArgs],
  ['tsort', anyArgs],
  ['pr', anyArgs],
  // `expr` and `test` only compute an answer; the shell around them is what could write, and that is checked.
  ['expr', anyArgs],
  ['test', anyArgs],
  ['type', anyArgs],
  ['cal', anyArgs],
  ['docker', checkDocker],
]);

export const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;

/** Why one simple command is not read-only, or undefined when it is. */
export function simpleCommandReason(words: WordToken[]): string | undefined {
  const [first, ...args] = words;
  if (first === undefined) return 'empty command';
  const name = first.value;
  if (ASSIGNMENT.test(name)) return `environment assignment \`${name}\` before the command`;
  if (name.includes('/'))
    return `command given by path (\`${name}\`); only bare names on the read-only list are accepted`;
  const check = READ_ONLY_COMMANDS.get(name);
  if (check === undefined) return `command \`${name}\` is not on the read-only list`;
  // For every command: before `--`, an unquoted glob may expand to an option (a file named `-R` turns `grep x *` into `grep -R`).
  for (const word of args) {
    if (word.value === '--') break;
    if (mayExpandToOption(word)) return globReason(name, word);
  }
  return check(args);
}

function hasControlCharacter(command: string): string | undefined {
  for (let i = 0; i < command.length; i += 1) {
    const code = command.charCodeAt(i);
    if (code === 0x0a || code === 0x0d) return 'more than one line';
    if ((code < 0x20 && code !== 0x09) || code === 0x7f) return 'control character';
  }
  return undefined;
}

/** Classifies a shell command as read-only or not, with the reason; fails closed. */
export function classifyCommand(command: string): CommandClassification {
  const no = (reason: string): CommandClassification => ({ readOnly: false, reason });
  if (command.trim() === '') return no('empty command');
  const control = hasControlCharacter(command);
  if (control !== undefined) return no(control);
  const lexed = lex(command);
  if (!lexed.ok) return no(lexed.reason);
  const { tokens } = lexed;

  // Structure first: expansions and separators anywhere make the whole command doubtful.
  for (const token of tokens) {
    if (token.kind === 'word' && token.unsafe !== undefined) return no(token.unsafe);
    if (token.kind === 'word' && token.ansiC) return no("`$'...'` quoting");
    if (token.kind === 'op' && !LIST_OPERATORS.has(token.op)) return no(operatorReason(token.op));
  }

  const commands: WordToken[][] = [];
  let words: WordToken[] = [];
  let hasRedirect = false;
  for (let k = 0; k < tokens.length; k += 1) {
    const token = tokens[k];
    if (token === undefined) break;
    if (token.kind === 'word') {
      words.push(token);
    } else if (token.kind === 'redirect') {
      const target = tokens[k + 1];
      if (target?.kind !== 'word') return no('redirection without a target');
      const reason = redirectReason(token, target);
      if (reason !== undefined) return no(reason);
      hasRedirect = true;
      k += 1;
    } else {
      if (words.length === 0) return no(`empty command before \`${token.op}\``);
      commands.push(words);
      words = [];
    }
  }
  if (words.length === 0) return no(hasRedirect || commands.length > 0 ? 'empty command at the end' : 'empty command');
  commands.push(words);

  const names: string[] = [];
  for (const command of commands) {
    const reason = simpleCommandReason(command);
    if (reason !== undefined) return no(reason);
    const [first, second] = command;
    const name = first?.value === 'git' && second !== undefined ? `git ${second.value}` : (first?.value ?? '');
    if (!names.includes(name)) names.push(name);
  }
  return { readOnly: true, reason: `read-only: ${names.map((n) => `\`${n}\``).join(', ')}` };
}

/** Whether a shell command is read-only (`classifyCommand(command).readOnly`); false on any doubt. */
export function isReadOnlyCommand(command: string): boolean {
  return classifyCommand(command).readOnly;
}
