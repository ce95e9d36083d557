/**
 * What the permission layer knows about a `Bash` command, found without running anything (pure, dependency-free):
 * 1. `classifyCommand`: whether the whole command is read-only, so it may run concurrently with other read-only calls;
 * 2. `bashPermissionFacts`: the command split into its simple commands, so rules judge every part;
 * 3. `bashRememberRule`: the narrowest useful rule an `allow_always` answer remembers.
 * Everything FAILS CLOSED: what is not fully understood is not read-only, not a plain list, and never a broad rule.
 *
 * Read-only (1) accepts one or more simple commands joined only by `|`, `&&` or `||`, each a command on the read-only
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
 *   with `#` (a comment can hide the rest of a line from this classifier), `(`/`)`, `;`, `&`, `|&`, newlines and
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
 *
 * Remembered rules (3): `cmd:*`, `tool sub:*` or `tool run script:*` for one ordinary command; the exact command for
 * shells, interpreters without a script file, runners, wrappers that could not be looked through, `cd`, state-changing
 * builtins, deleting or fetching programs, and subcommand tools with options first (`git -C sub status`). A compound
 * command remembers the rule of its one part that is not read-only (`cd sub && npm test` → `Bash(npm test:*)`), or
 * the exact command when several parts need approval or it is not a plain list: never anything broader than a part.
 */

import type { CommandFacts, CommandPartFacts } from '../contracts/call-plan.js';

/** Why a command is or is not read-only; `readOnly` false on any doubt. */
export interface CommandClassification {
  readOnly: boolean;
  reason: string;
}

type Operator = '|' | '||' | '&&' | '|&' | ';' | '&' | '(' | ')' | 'newline' | 'comment' | 'process-substitution';
type RedirectOperator = '>' | '>>' | '>|' | '>&' | '&>' | '&>>' | '<' | '<<' | '<<-' | '<<<' | '<>' | '<&';

interface WordToken {
  kind: 'word';
  /** The word after quote removal. */
  value: string;
  /** The word as written (rules see it so for words whose meaning depends on unquoted characters). */
  raw: string;
  /** Where the word starts in the input. */
  start: number;
  /** Whether the word holds an unquoted glob character (`*`, `?`, `[`). */
  glob: boolean;
  /** Whether the first character of the word is an unquoted glob character. */
  startsWithGlob: boolean;
  /** Whether any part of the word was quoted or escaped. */
  quoted: boolean;
  /** Whether the word begins with an unquoted `~` (tilde expansion). */
  tilde: boolean;
  /** Whether `$'…'` quoting was used (decoded into `value`; the read-only classifier refuses it). */
  ansiC: boolean;
  /** Why the word is unsafe (an expansion or construct this classifier refuses), if it is. */
  unsafe: string | undefined;
  /** The scripts of the command substitutions (`$(…)`, backticks) inside the word. */
  substitutions: string[];
}
interface OperatorToken {
  kind: 'op';
  op: Operator;
  /** The script of a process substitution `<(…)`/`>(…)`. */
  script?: string;
}
interface RedirectToken {
  kind: 'redirect';
  op: RedirectOperator;
  fd: string | undefined;
  /** For a here-document whose body undergoes expansion: the command substitutions found in the body. */
  bodySubstitutions?: string[];
}
type Token = WordToken | OperatorToken | RedirectToken;
type LexResult = { ok: true; tokens: Token[] } | { ok: false; reason: string };

const GLOB_CHARS = new Set(['*', '?', '[']);

/** Index of the `)` closing a `$(` or `<(` whose body starts at `from`, or undefined when there is none. */
function findSubstitutionEnd(input: string, from: number): number | undefined {
  let depth = 1;
  let j = from;
  while (j < input.length) {
    const c = input.charAt(j);
    if (c === '\\') {
      j += 2;
      continue;
    }
    if (c === "'") {
      const end = input.indexOf("'", j + 1);
      if (end < 0) return undefined;
      j = end + 1;
      continue;
    }
    if (c === '"') {
      const end = findDoubleQuoteEnd(input, j + 1);
      if (end === undefined) return undefined;
      j = end + 1;
      continue;
    }
    if (c === '`') {
      const end = findBacktickEnd(input, j + 1);
      if (end === undefined) return undefined;
      j = end + 1;
      continue;
    }
    if (c === '#' && (j === from || /[\s;&|()]/.test(input.charAt(j - 1)))) {
      const newline = input.indexOf('\n', j);
      if (newline < 0) return undefined;
      j = newline;
      continue;
    }
    if (c === '(') depth += 1;
    if (c === ')') {
      depth -= 1;
      if (depth === 0) return j;
    }
    j += 1;
  }
  return undefined;
}

/** Index of the `"` closing a double-quoted string whose body starts at `from`. */
function findDoubleQuoteEnd(input: string, from: number): number | undefined {
  let j = from;
  while (j < input.length) {
    const c = input.charAt(j);
    if (c === '\\') {
      j += 2;
      continue;
    }
    if (c === '"') return j;
    if (c === '$' && input.charAt(j + 1) === '(') {
      const end = findSubstitutionEnd(input, j + 2);
      if (end === undefined) return undefined;
      j = end + 1;
      continue;
    }
    if (c === '`') {
      const end = findBacktickEnd(input, j + 1);
      if (end === undefined) return undefined;
      j = end + 1;
      continue;
    }
    j += 1;
  }
  return undefined;
}

/** Index of the backtick closing a backtick substitution whose body starts at `from`. */
function findBacktickEnd(input: string, from: number): number | undefined {
  let j = from;
  while (j < input.length) {
    const c = input.charAt(j);
    if (c === '\\') j += 2;
    else if (c === '`') return j;
    else j += 1;
  }
  return undefined;
}

/** The script inside backticks: `\\`, `` \` `` and `\$` lose their backslash, as bash does. */
function backtickScript(body: string): string {
  return body.replace(/\\([\\`$])/g, '$1');
}

/** The command substitutions in text that undergoes expansion (a here-document body); an unterminated one is taken whole. */
function substitutionsIn(text: string): string[] {
  const scripts: string[] = [];
  let j = 0;
  while (j < text.length) {
    const c = text.charAt(j);
    if (c === '\\') {
      j += 2;
    } else if (c === '$' && text.charAt(j + 1) === '(') {
      const end = findSubstitutionEnd(text, j + 2);
      scripts.push(text.slice(j + 2, end));
      j = end === undefined ? text.length : end + 1;
    } else if (c === '`') {
      const end = findBacktickEnd(text, j + 1);
      scripts.push(backtickScript(text.slice(j + 1, end)));
      j = end === undefined ? text.length : end + 1;
    } else {
      j += 1;
    }
  }
  return scripts;
}

const ANSI_C_ESCAPES = new Map([
  ['n', '\n'],
  ['t', '\t'],
  ['r', '\r'],
  ['a', '\x07'],
  ['b', '\b'],
  ['e', '\x1b'],
  ['E', '\x1b'],
  ['f', '\f'],
  ['v', '\v'],
  ['\\', '\\'],
  ["'", "'"],
  ['"', '"'],
  ['?', '?'],
]);

/**
 * Decodes `$'…'` from the character after the opening quote: the value, the index of the closing quote, and why the
 * decoding is doubtful (escapes decoded differently by locale or truncating at NUL), if it is.
 */
function decodeAnsiC(input: string, from: number): { value: string; end: number; doubt: string | undefined } | undefined {
  let value = '';
  let doubt: string | undefined;
  let j = from;
  while (j < input.length) {
    const c = input.charAt(j);
    if (c === "'") return { value, end: j, doubt };
    if (c !== '\\') {
      value += c;
      j += 1;
      continue;
    }
    const n = input.charAt(j + 1);
    const simple = ANSI_C_ESCAPES.get(n);
    const digits = n === 'x' ? /^[0-9a-fA-F]{1,2}/.exec(input.slice(j + 2, j + 4)) : /^[0-7]{1,3}/.exec(input.slice(j + 1, j + 4));
    if (simple !== undefined) {
      value += simple;
      j += 2;
    } else if (digits !== null && (n === 'x' || /[0-7]/.test(n))) {
      const code = Number.parseInt(digits[0], n === 'x' ? 16 : 8);
      if (code === 0) doubt ??= "`$'\\0'` (bash truncates the word there)";
      value += String.fromCharCode(code);
      j += (n === 'x' ? 2 : 1) + digits[0].length;
    } else {
      doubt ??= `\`$'\\${n}'\` escape`;
      value += `\\${n}`;
      j += 2;
    }
  }
  return undefined;
}

/** Splits a command into words, operators and redirections the way bash would, or says why it cannot. */
function lex(input: string): LexResult {
  const tokens: Token[] = [];
  let word: WordToken | undefined;
  let i = 0;
  /** Here-documents whose delimiter word is the next word. */
  let delimiterFor: RedirectToken | undefined;
  /** Here-documents whose body starts after the next newline. */
  const bodies: Array<{ token: RedirectToken; delimiter: string; literal: boolean }> = [];
  const current = (): WordToken =>
    (word ??= { kind: 'word', value: '', raw: '', start: i, glob: false, startsWithGlob: false, quoted: false, tilde: false, ansiC: false, unsafe: undefined, substitutions: [] });
  const flag = (reason: string): void => {
    const w = current();
    w.unsafe ??= reason;
  };
  const finish = (): void => {
    if (word !== undefined) {
      word.raw = input.slice(word.start, i);
      tokens.push(word);
      if (delimiterFor !== undefined) {
        bodies.push({ token: delimiterFor, delimiter: word.value, literal: word.quoted });
        delimiterFor = undefined;
      }
    }
    word = undefined;
  };
  /** Skips the bodies of pending here-documents, which start at `from`; returns where lexing resumes. */
  const skipBodies = (from: number): number => {
    let position = from;
    for (const body of bodies) {
      const strip = body.token.op === '<<-';
      const bodyStart = position;
      for (;;) {
        const newline = input.indexOf('\n', position);
        const line = input.slice(position, newline < 0 ? input.length : newline);
        const lineEnd = newline < 0 ? input.length : newline + 1;
        if ((strip ? line.replace(/^\t+/, '') : line) === body.delimiter) {
          if (!body.literal) body.token.bodySubstitutions = substitutionsIn(input.slice(bodyStart, position));
          position = lineEnd;
          break;
        }
        position = lineEnd;
        if (newline < 0) {
          // Delimited by the end of the input, as bash accepts (with a warning).
          if (!body.literal) body.token.bodySubstitutions = substitutionsIn(input.slice(bodyStart));
          break;
        }
      }
    }
    bodies.length = 0;
    return position;
  };

  while (i < input.length) {
    const ch = input.charAt(i);
    const next = input.charAt(i + 1);
    switch (ch) {
      case ' ':
      case '\t':
        finish();
        i += 1;
        break;
      case '\n':
      case '\r':
        finish();
        tokens.push({ kind: 'op', op: 'newline' });
        i = bodies.length > 0 ? skipBodies(i + 1) : i + 1;
        break;
      case "'": {
        const end = input.indexOf("'", i + 1);
        if (end < 0) return { ok: false, reason: 'unterminated single quote' };
        const w = current();
        w.quoted = true;
        w.value += input.slice(i + 1, end);
        i = end + 1;
        break;
      }
      case '"': {
        const w = current();
        w.quoted = true;
        let j = i + 1;
        for (;;) {
          if (j >= input.length) return { ok: false, reason: 'unterminated double quote' };
          const c = input.charAt(j);
          if (c === '"') break;
          if (c === '\\') {
            if (j + 1 >= input.length) return { ok: false, reason: 'unterminated double quote' };
            const n = input.charAt(j + 1);
            if (n === '$' || n === '`' || n === '"' || n === '\\') {
              w.value += n;
              j += 2;
            } else if (n === '\n') {
              j += 2;
            } else {
              w.value += '\\';
              j += 1;
            }
            continue;
          }
          if (c === '$' && input.charAt(j + 1) === '(') {
            const end = findSubstitutionEnd(input, j + 2);
            if (end === undefined) return { ok: false, reason: 'unterminated `$(`' };
            flag('`$(...)` substitution inside double quotes');
            w.substitutions.push(input.slice(j + 2, end));
            w.value += input.slice(j, end + 1);
            j = end + 1;
            continue;
          }
          if (c === '`') {
            const end = findBacktickEnd(input, j + 1);
            if (end === undefined) return { ok: false, reason: 'unterminated backtick' };
            flag('backtick command substitution');
            w.substitutions.push(backtickScript(input.slice(j + 1, end)));
            w.value += input.slice(j, end + 1);
            j = end + 1;
            continue;
          }
          if (c === '$') flag('`$` expansion inside double quotes');
          w.value += c;
          j += 1;
        }
        i = j + 1;
        break;
      }
      case '\\': {
        if (i + 1 >= input.length) return { ok: false, reason: 'trailing backslash' };
        if (next !== '\n') {
          const w = current();
          w.quoted = true;
          w.value += next;
        }
        i += 2;
        break;
      }
      case '$': {
        if (next === '(') {
          const end = findSubstitutionEnd(input, i + 2);
          if (end === undefined) return { ok: false, reason: 'unterminated `$(`' };
          flag(input.charAt(i + 2) === '(' ? '`$((...))` arithmetic expansion' : '`$(...)` command substitution');
          const w = current();
          w.substitutions.push(input.slice(i + 2, end));
          w.value += input.slice(i, end + 1);
          i = end + 1;
        } else if (next === "'") {
          const decoded = decodeAnsiC(input, i + 2);
          if (decoded === undefined) return { ok: false, reason: "unterminated `$'`" };
          const w = current();
          w.quoted = true;
          w.ansiC = true;
          if (decoded.doubt !== undefined) flag(decoded.doubt);
          w.value += decoded.value;
          i = decoded.end + 1;
        } else {
          flag(next === '{' ? '`${...}` parameter expansion' : '`$` parameter expansion');
          current().value += ch;
          i += 1;
        }
        break;
      }
      case '`': {
        const end = findBacktickEnd(input, i + 1);
        if (end === undefined) return { ok: false, reason: 'unterminated backtick' };
        flag('backtick command substitution');
        const w = current();
        w.substitutions.push(backtickScript(input.slice(i + 1, end)));
        w.value += input.slice(i, end + 1);
        i = end + 1;
        break;
      }
      case '#':
        if (word === undefined) {
          // A comment: bash ignores the rest of the line (nothing in it runs, and nothing in it can be trusted to mean what it seems).
          tokens.push({ kind: 'op', op: 'comment' });
          const newline = input.indexOf('\n', i);
          i = newline < 0 ? input.length : newline;
          break;
        }
        current().value += ch;
        i += 1;
        break;
      case '{':
      case '}':
        flag('braces `{...}` (brace expansion or a command group)');
        current().value += ch;
        i += 1;
        break;
      case '|':
        finish();
        if (next === '|') tokens.push({ kind: 'op', op: '||' });
        else if (next === '&') tokens.push({ kind: 'op', op: '|&' });
        else tokens.push({ kind: 'op', op: '|' });
        i += next === '|' || next === '&' ? 2 : 1;
        break;
      case '&':
        finish();
        if (next === '&') {
          tokens.push({ kind: 'op', op: '&&' });
          i += 2;
        } else if (next === '>') {
          const append = input.charAt(i + 2) === '>';
          tokens.push({ kind: 'redirect', op: append ? '&>>' : '&>', fd: undefined });
          i += append ? 3 : 2;
        } else {
          tokens.push({ kind: 'op', op: '&' });
          i += 1;
        }
        break;
      case ';':
        finish();
        tokens.push({ kind: 'op', op: ';' });
        i += 1;
        break;
      case '(':
      case ')':
        finish();
        tokens.push({ kind: 'op', op: ch });
        i += 1;
        break;
      case '<':
      case '>': {
        let fd: string | undefined;
        if (word !== undefined && !word.quoted && /^\d+$/.test(word.value)) {
          fd = word.value;
          word = undefined;
        } else {
          finish();
        }
        if (next === '(') {
          const end = findSubstitutionEnd(input, i + 2);
          if (end === undefined) return { ok: false, reason: 'unterminated process substitution' };
          tokens.push({ kind: 'op', op: 'process-substitution', script: input.slice(i + 2, end) });
          i = end + 1;
          break;
        }
        let op: RedirectOperator;
        if (ch === '>') {
          op = next === '>' ? '>>' : next === '|' ? '>|' : next === '&' ? '>&' : '>';
        } else if (input.startsWith('<<<', i)) {
          op = '<<<';
        } else if (input.startsWith('<<-', i)) {
          op = '<<-';
        } else {
          op = next === '<' ? '<<' : next === '>' ? '<>' : next === '&' ? '<&' : '<';
        }
        const token: RedirectToken = { kind: 'redirect', op, fd };
        tokens.push(token);
        if (op === '<<' || op === '<<-') delimiterFor = token;
        i += op.length;
        break;
      }
      default: {
        const w = current();
        if (GLOB_CHARS.has(ch)) {
          if (w.value === '') w.startsWithGlob = true;
          w.glob = true;
        }
        if (ch === '~' && w.value === '' && !w.quoted) w.tilde = true;
        w.value += ch;
        i += 1;
      }
    }
  }
  finish();
  return { ok: true, tokens };
}

const LIST_OPERATORS = new Set<Operator>(['|', '||', '&&']);

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
function redirectReason(redirect: RedirectToken, target: WordToken): string | undefined {
  const shown = `${redirect.fd ?? ''}${redirect.op}${target.value}`;
  switch (redirect.op) {
    case '>':
    case '>>':
    case '>|':
    case '&>':
    case '&>>':
      return target.value === '/dev/null' && !target.glob ? undefined : `redirection to a file (\`${shown}\`)`;
    case '>&':
      if (target.value === '1' || target.value === '2' || (target.value === '/dev/null' && !target.glob)) return undefined;
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
  if (abbreviates(name, 'output') || shortCluster(value)?.includes('o')) return '`sort -o`/`--output` writes a file';
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
  abbreviates(longName(value), 'compile') || shortCluster(value)?.includes('C') === true
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
  ['log', 'runs `gpg.program` (`log.showSignature`, `format.pretty`, `%G` formats), `diff.external` and textconv drivers named in `.git/config`'],
  ['show', 'runs `gpg.program` (`log.showSignature`, `format.pretty`, `%G` formats), `diff.external` and textconv drivers named in `.git/config`'],
  ['shortlog', 'formats commits, which may run `gpg.program` named in `.git/config`'],
  ['grep', 'runs textconv drivers and reads the index named in `.git/config`'],
]);
const GIT_BRANCH_FLAGS = new Set(['--list', '-a', '-r', '-v', '-vv', '--all', '--remotes', '--verbose', '--show-current']);
const GIT_REMOTE_FLAGS = new Set(['-v', '--verbose']);

const checkGit: ArgsCheck = (args) => {
  const [sub, ...rest] = args;
  if (sub === undefined) return '`git` without a subcommand';
  if (sub.value.startsWith('-')) return `git option \`${sub.value}\` before the subcommand (may run programs or change the repository)`;
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
  ['jq', anyArgs],
  ['git', checkGit],
]);

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;

/** Why one simple command is not read-only, or undefined when it is. */
function simpleCommandReason(words: WordToken[]): string | undefined {
  const [first, ...args] = words;
  if (first === undefined) return 'empty command';
  const name = first.value;
  if (ASSIGNMENT.test(name)) return `environment assignment \`${name}\` before the command`;
  if (name.includes('/')) return `command given by path (\`${name}\`); only bare names on the read-only list are accepted`;
  const check = READ_ONLY_COMMANDS.get(name);
  if (check === undefined) return `command \`${name}\` is not on the read-only list`;
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

// ── Permission facts: a command split into its simple commands ─────────────────────────────────────────────────────

/** Variables whose assignment before a command cannot change which program runs or what it loads. */
const HARMLESS_VARIABLES = new Set([
  'NODE_ENV', 'CI', 'DEBUG', 'FORCE_COLOR', 'NO_COLOR', 'TERM', 'TZ', 'LANG', 'LANGUAGE', 'LC_ALL', 'LC_CTYPE',
  'LC_MESSAGES', 'COLUMNS', 'LINES', 'RUST_LOG', 'RUST_BACKTRACE', 'GOOS', 'GOARCH', 'CGO_ENABLED', 'PYTHONUNBUFFERED',
  'PYTHONDONTWRITEBYTECODE', 'PYTHONIOENCODING', 'NODE_NO_WARNINGS', 'LOG_LEVEL', 'VERBOSE',
]);

/** Reserved words that may begin a part of a compound command, before the command itself (`then rm x`). */
const LEADING_KEYWORDS = new Set(['if', 'then', 'else', 'elif', 'do', 'while', 'until', '!', '{', '}', 'fi', 'done', 'esac']);
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

const WRAPPERS = new Map<string, WrapperGrammar>([
  ['timeout', { valued: ['-s', '--signal', '-k', '--kill-after'], flags: ['--preserve-status', '--foreground', '-v', '--verbose'], operands: 1, readOnly: true }],
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
const RUNNERS = new Map<string, readonly string[]>([
  ['sudo', ['-u', '-g', '-h', '-p', '-C', '-D', '-r', '-t', '-T', '-U', '--user', '--group', '--host', '--prompt', '--close-from', '--chdir', '--role', '--type', '--command-timeout', '--other-user']],
  ['doas', ['-u', '-C']],
  ['xargs', ['-a', '-d', '-E', '-I', '-L', '-n', '-P', '-s', '--arg-file', '--delimiter', '--eof', '--replace', '--max-lines', '--max-args', '--max-procs', '--max-chars', '--process-slot-var']],
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
]);

/** Shells: they run a script given with `-c`, a file, or their input. */
const SHELLS = new Set(['bash', 'sh', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'fish', 'csh', 'tcsh', 'rbash', 'busybox']);

/** Commands that read the files named by their operands: how to find those operands. */
type ReaderKind = 'files' | 'pattern-first' | 'filter-first' | 'find';
const READERS = new Map<string, ReaderKind>([
  ...[
    'cat', 'head', 'tail', 'wc', 'nl', 'sort', 'uniq', 'cut', 'column', 'diff', 'cmp', 'file', 'stat', 'du', 'ls', 'tree',
    'realpath', 'readlink', 'less', 'more', 'base64', 'xxd', 'od', 'hexdump', 'strings', 'tac', 'rev', 'fold', 'fmt',
    'paste', 'join', 'comm', 'md5sum', 'sha1sum', 'sha224sum', 'sha256sum', 'sha384sum', 'sha512sum', 'shasum', 'cksum',
    'b2sum', 'iconv', 'expand', 'unexpand', 'zcat', 'bat', 'cp',
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
interface AnalysedPart {
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

/** Where a path operand points: absolute, a glob pattern, or (not absolute) a place that cannot be known. */
function resolveOperand(value: string, options: { tilde: boolean; scope: Scope }): string {
  const { scope } = options;
  let text = value;
  if (options.tilde || text === '~' || text.startsWith('~/')) {
    if (text === '~' || text.startsWith('~/')) text = `${scope.home}${text.slice(1)}`;
    else return text; // `~user/…`: another user's home, which this pure code cannot look up.
  }
  if (text.startsWith('/')) return normalizePath(text);
  if (scope.dir === undefined) return text;
  return normalizePath(`${scope.dir}/${text}`);
}

/** Device files that hold no data to disclose: reading them needs no confinement. */
const DATALESS_DEVICES = new Set(['/dev/null', '/dev/zero', '/dev/random', '/dev/urandom', '/dev/full']);

/** Adds a path operand, marking a glob through directories (symlinks it matches cannot be checked) as not locatable. */
function addOperand(out: Collected, resolved: string): void {
  if (DATALESS_DEVICES.has(resolved)) return;
  addReadPath(out, resolved);
  const firstGlob = resolved.search(/[*?[]/);
  if (resolved.startsWith('/') && firstGlob >= 0 && resolved.indexOf('/', firstGlob) >= 0 && !resolved.endsWith('/**')) {
    addReadPath(out, `glob through directories: ${resolved}`);
  }
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
    } else if (grammar.valued.some((option) => (option.startsWith('--') ? value.startsWith(`${option}=`) : value.startsWith(option) && value.length > option.length))) {
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

const GIT_VALUED_GLOBALS = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--config-env', '--super-prefix', '--attr-source']);

/** `git` with its global options removed (`git -C x push` → `git push`), or undefined when it has none. */
function gitWithoutGlobals(words: readonly WordToken[]): WordToken[] | undefined {
  let k = 1;
  while (k < words.length && (words[k]?.value ?? '').startsWith('-')) k += GIT_VALUED_GLOBALS.has(words[k]?.value ?? '') ? 2 : 1;
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

/** Records the paths a reading command reads (and the trees it reads recursively). */
function addReads(out: Collected, kind: ReaderKind, name: string, args: readonly WordToken[], scope: Scope): void {
  const operands: WordToken[] = [];
  const optionValues: string[] = [];
  const options: string[] = [];
  let optionsEnded = false;
  let findExpression = false;
  for (const word of args) {
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
    } else if (value !== '-') {
      operands.push(word);
    }
  }
  const shortCluster = (letters: RegExp) => options.some((option) => !option.startsWith('--') && letters.test(option.slice(1)));
  const long = (...names: string[]) => options.some((option) => names.some((name) => option === name || option.startsWith(`${name}=`)));
  if (kind === 'pattern-first' && !shortCluster(/[ef]/) && !long('--regexp', '--file', '--files', '--expression')) operands.shift();
  if (kind === 'filter-first' && !shortCluster(/f/) && !long('--from-file')) operands.shift();

  let recursive = false;
  let follows = false;
  if (name === 'grep' || name === 'egrep' || name === 'fgrep') {
    recursive = shortCluster(/[rR]/) || long('--recursive', '--dereference-recursive', '--directories=recurse') || options.includes('-d');
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
    if (word.unsafe !== undefined) continue;
    const resolved = resolveOperand(word.value, { tilde: word.tilde, scope });
    addOperand(out, resolved);
    if (recursive) addReadPath(out, resolved.startsWith('/') ? `${resolved === '/' ? '' : resolved}/**` : resolved);
    if (follows) addReadPath(out, `symlinks followed under ${resolved}`);
  }
  for (const value of optionValues) addOperand(out, resolveOperand(value, { tilde: false, scope }));
}

function blankWord(): WordToken {
  return { kind: 'word', value: '', raw: '', start: 0, glob: false, startsWithGlob: false, quoted: false, tilde: false, ansiC: false, unsafe: undefined, substitutions: [] };
}

/** A `cd`'s destination: a path, or undefined when it cannot be known (`cd -`, an expansion). */
function cdDestination(args: readonly WordToken[], scope: Scope): { path: string | undefined } {
  const operands = args.filter((word) => !/^-[LPe@]+$/.test(word.value));
  if (operands.length > 1) return { path: undefined };
  const [target] = operands;
  if (target === undefined) return { path: scope.home };
  if (target.unsafe !== undefined || target.glob || target.value === '-' || target.value === '') return { path: undefined };
  const resolved = resolveOperand(target.value, { tilde: target.tilde, scope });
  return { path: resolved.startsWith('/') ? resolved : undefined };
}

/** What one simple command means for rules; nested commands it runs are collected on the way. */
function analyseCommand(command: SimpleCommand, scope: Scope, out: Collected): { part: AnalysedPart; cd?: { path: string | undefined }; losesDirectory?: boolean } | undefined {
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
      if (!HARMLESS_VARIABLES.has(name) || words[0].unsafe !== undefined || /^[^=]*[[+]/.test(words[0].raw)) keptAssignments.push(words[0]);
      words = words.slice(1);
    }
    const head = words[0];
    if (head === undefined) break;
    const name = head.value;
    if (head.unsafe !== undefined || head.glob) break;
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
          const script = split === undefined ? undefined : split.value.length > 2 && split.value.startsWith('-S') ? split.value.slice(2) : split.value.includes('=') ? split.value.slice(split.value.indexOf('=') + 1) : words[index + 1]?.value;
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
        if (file >= 0 && words[file + 1] !== undefined) addOperand(out, resolveOperand(words[file + 1]?.value ?? '', { tilde: words[file + 1]?.tilde ?? false, scope }));
      }
      break;
    }
    if (SHELLS.has(name) || name === 'su') {
      runner = true;
      const script = name === 'su' ? suScript(words) : shellScript(words);
      if (script !== undefined) collectScript(script, nested, out);
      else addSuffixSpellings(out, words);
      break;
    }
    if (name === 'eval' || name === 'trap') {
      runner = true;
      const script = name === 'eval' ? words.slice(1).map((word) => word.value).join(' ') : words[1]?.value;
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
  if (name.includes('/') && !name.endsWith('/')) spellings.push(contentOf([{ ...head, value: name.slice(name.lastIndexOf('/') + 1), raw: name.slice(name.lastIndexOf('/') + 1), glob: false, tilde: false }, ...words.slice(1)]));
  if (name === 'git') {
    const plainGit = gitWithoutGlobals(words);
    if (plainGit !== undefined) spellings.push(contentOf(plainGit));
  }

  let readOnly: boolean;
  let cd: { path: string | undefined } | undefined;
  if (name === 'cd') {
    cd = cdDestination(words.slice(1), scope);
    if (cd.path !== undefined) addReadPath(out, cd.path);
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
  return { part: { facts, words: words.map(canonicalWord), assignments: keptAssignments.length > 0 }, ...(cd === undefined ? {} : { cd }), ...(losesDirectory ? { losesDirectory } : {}) };
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
      if (separator !== 'newline' && separator !== '(' && separator !== ')' && !afterGroup) markNotPlain(out, `empty command before \`${separator}\``);
      current = { words: [], redirects: [], before: separator, after: undefined };
      continue;
    }
    commands.push({ ...current, after: separator });
    current = { words: [], redirects: [], before: separator, after: undefined };
  }
  if (current.words.length > 0 || current.redirects.length > 0) commands.push(current);
  else if (current.before === '&&' || current.before === '||' || current.before === '|' || current.before === '|&') markNotPlain(out, `the command ends with \`${current.before}\``);
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
      const follows = command.before !== '||' && command.before !== '|' && command.before !== '|&' && (command.after === undefined || command.after === '&&');
      dir = follows ? analysed.cd.path : undefined;
      inCdChain = follows && dir !== undefined;
    } else if (analysed.losesDirectory === true) {
      dir = undefined;
    }
  }
}

function analyse(options: { command: string; cwd: string; homeDir: string }): Collected {
  const out: Collected = { parts: [], spellings: new Set(), readPaths: new Set(), notPlain: undefined, truncated: false };
  collectScript(options.command, { dir: normalizePath(options.cwd), home: normalizePath(options.homeDir), depth: 0, top: true }, out);
  if (out.parts.length === 0) markNotPlain(out, 'no command to run');
  return out;
}

/**
 * What the permission chain needs to know about a shell command, found without running anything: its simple
 * commands (normalised, each with whether it is read-only), other spellings deny and ask rules must see, whether it
 * is a plain list at all, and the paths its commands read (resolved against `cwd`, `~` against `homeDir`). A command
 * too large to check in full is denied: deny rules must hold for every part of it.
 */
export function bashPermissionFacts(options: { command: string; cwd: string; homeDir: string }): { commands: CommandFacts; readPaths: string[]; deny?: { reason: string } } {
  const out = analyse(options);
  const parts = out.parts.map((part) => part.facts);
  const contents = new Set(parts.map((part) => part.content));
  const otherSpellings = [...out.spellings].filter((spelling) => !contents.has(spelling));
  const commands: CommandFacts = out.notPlain === undefined ? { parsed: true, parts, otherSpellings } : { parsed: false, reason: out.notPlain, parts, otherSpellings };
  const facts = { commands, readPaths: [...out.readPaths] };
  if (!out.truncated) return facts;
  return { ...facts, deny: { reason: `The command is too large to check against permission rules (more than ${MAX_PARTS} commands, ${MAX_SPELLINGS} spellings or ${MAX_READ_PATHS} paths); split it into smaller commands.` } };
}

// ── The rule an `allow_always` answer remembers ───────────────────────────────────────────────────────────────────

/** Tools whose second word is a subcommand: `npm test` is remembered as `Bash(npm test:*)`, not all of `npm`. */
const SUBCOMMAND_TOOLS = new Set(['npm', 'npx', 'pnpm', 'yarn', 'bun', 'deno', 'git', 'gh', 'cargo', 'go', 'docker', 'kubectl', 'make', 'pip', 'pip3', 'poetry', 'uv', 'pipx']);
/** `tool run <script>`: the script name is part of the remembered prefix. */
const RUN_SCRIPT = new Set(['npm run', 'npm run-script', 'pnpm run', 'yarn run', 'bun run', 'uv run', 'poetry run', 'pipx run', 'deno task']);
/** Subcommands that run arbitrary code or packages named by their arguments: remembered exactly. */
const RUNS_ANYTHING = new Set(['npm exec', 'npm x', 'pnpm exec', 'pnpm dlx', 'yarn exec', 'yarn dlx', 'bun x', 'go run', 'docker run', 'docker exec', 'kubectl exec', 'deno run', 'deno eval', 'gh api', 'git config']);
/** Interpreters: a prefix only together with the script file they run (`python gen.py:*`). */
const INTERPRETERS = new Set(['python', 'python2', 'python3', 'node', 'nodejs', 'ruby', 'perl', 'php', 'lua', 'Rscript', 'osascript', 'tsx', 'ts-node', 'pwsh', 'powershell']);
/** Never a prefix: directory changes, shell state, shells, wrappers, runners, and programs that run or delete what their arguments say. */
const NEVER_PREFIX = new Set([
  'cd', 'pushd', 'popd', 'export', 'unset', 'alias', 'set', 'shopt', 'declare', 'typeset', 'local', 'readonly', 'hash', 'enable', 'ulimit', 'umask',
  'eval', 'exec', 'source', '.', 'trap', 'su', 'sudo', 'doas', 'env', 'xargs', 'find', 'awk', 'gawk', 'sed', 'perl',
  ...SHELLS, ...WRAPPERS.keys(), ...RUNNERS.keys(),
  'rm', 'rmdir', 'dd', 'shred', 'truncate', 'chmod', 'chown', 'chgrp', 'kill', 'pkill', 'killall', 'mkfs', 'mount', 'umount',
  'curl', 'wget', 'nc', 'ncat', 'socat', 'ssh', 'scp', 'rsync', 'crontab', 'systemctl', 'launchctl', 'shutdown', 'reboot',
  'mv', 'cp', 'ln', 'install', 'tee',
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
  if (INTERPRETERS.has(first)) return second !== undefined && SCRIPT_FILE.test(second) ? `Bash(${first} ${second}:*)` : exact;
  if (NEVER_PREFIX.has(first) || !/^[\w@%+=:,./-]+$/.test(first)) return exact;
  if (SUBCOMMAND_TOOLS.has(first)) {
    if (second === undefined || !SUBCOMMAND.test(second)) return exact;
    const pair = `${first} ${second}`;
    if (RUNS_ANYTHING.has(pair)) return exact;
    if (RUN_SCRIPT.has(pair)) {
      return third !== undefined && SUBCOMMAND.test(third) && !INTERPRETERS.has(third) && !NEVER_PREFIX.has(third) ? `Bash(${pair} ${third}:*)` : exact;
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
