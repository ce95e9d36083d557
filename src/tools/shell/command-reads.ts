/**
 * The read-path analysis behind `command-facts.ts`: the shared shapes (`Collected`, `Scope`, `AnalysedPart`), the
 * caps, path resolution, wrapper and runner unwrapping, and the paths that reading commands read (`addReads`).
 */

import type { CommandPartFacts } from '../../contracts/call-plan.js';
import type { RedirectToken, WordToken } from './lexer.js';
import type { ReaderKind, WrapperGrammar } from './command-tables.js';

/** Caps that keep the facts (which enter workflow history) small. */
export const MAX_NESTING = 5;
export const MAX_PARTS = 1_000;
export const MAX_SPELLINGS = 2_000;
export const MAX_READ_PATHS = 1_000;
export const MAX_SUFFIX_SPELLINGS = 8;

export type Separator = '|' | '||' | '&&' | '|&' | ';' | '&' | 'newline' | '(' | ')';

export interface SimpleCommand {
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

export interface Collected {
  parts: AnalysedPart[];
  spellings: Set<string>;
  readPaths: Set<string>;
  notPlain: string | undefined;
  /** A form whose commands or reads cannot be seen at all (`$a`, `rm${IFS}-f`, `echo … | sh`): deny rules cannot be checked. */
  unanalysed: string | undefined;
  /** A cap was reached, so some parts, spellings or paths are missing: deny rules could not all be checked. */
  truncated: boolean;
}

export interface Scope {
  /** The directory relative paths resolve against; undefined once it cannot be known (`cd -`, `pushd`). */
  dir: string | undefined;
  home: string;
  depth: number;
  /** Top-level parts are judged by every rule; nested ones (substitutions, runners' commands) by deny and ask only. */
  top: boolean;
}

export function markNotPlain(out: Collected, reason: string): void {
  out.notPlain ??= reason;
}

/** The command holds a form no rule can be checked against; it is not plain either. */
export function markUnanalysed(out: Collected, reason: string): void {
  out.unanalysed ??= reason;
  markNotPlain(out, reason);
}

export function addSpelling(out: Collected, spelling: string): void {
  if (spelling === '') return;
  if (out.spellings.size < MAX_SPELLINGS) out.spellings.add(spelling);
  else out.truncated = true;
}

export function addReadPath(out: Collected, readPath: string): void {
  if (out.readPaths.size < MAX_READ_PATHS) out.readPaths.add(readPath);
  else out.truncated = true;
}

/** A word as rules see it: as written when unquoted characters give it meaning (globs, `~`, expansions), else re-quoted only if needed. */
export function canonicalWord(word: WordToken): string {
  if (word.unsafe !== undefined || word.glob || word.tilde) return word.raw;
  if (word.value === '') return "''";
  return /^[\w@%+=:,./-]+$/.test(word.value) ? word.value : `'${word.value.replaceAll("'", "'\\''")}'`;
}

export function contentOf(words: readonly WordToken[]): string {
  return words.map(canonicalWord).join(' ');
}

/** Normalises an absolute POSIX path (`.`, `..`, repeated slashes). */
export function normalizePath(absolute: string): string {
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
export function resolveOperand(value: string, options: { tilde: boolean; scope: Scope }): string {
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
export function cleanPath(absolute: string): string {
  const segments = absolute.split('/').filter((segment) => segment !== '' && segment !== '.');
  return `/${segments.join('/')}`;
}

/** Device files that hold no data to disclose and end at once: reading them needs no confinement (`/dev/zero` never ends). */
export const DATALESS_DEVICES = new Set(['/dev/null']);

/**
 * Adds a path operand as text resolves it and, when it goes up (`..`), as written, so the file system resolves it
 * component by component (`bash.ts`); a glob through directories (symlinks it matches cannot be checked) is marked
 * as not locatable.
 */
export function addOperand(out: Collected, written: string): void {
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
export function addUnlocatableRead(out: Collected, word: WordToken): void {
  addReadPath(out, `an expansion: ${word.raw}`);
}

/** The option words of a wrapper, or undefined when one is not in its grammar (then it is judged as a runner). */
export function unwrap(grammar: WrapperGrammar, words: readonly WordToken[]): WordToken[] | undefined {
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
export function runnerCommandStart(valued: readonly string[], words: readonly WordToken[]): number {
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
export function shellScript(words: readonly WordToken[]): string | undefined {
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

export const GIT_VALUED_GLOBALS = new Set([
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
export function gitWithoutGlobals(words: readonly WordToken[]): WordToken[] | undefined {
  let k = 1;
  while (k < words.length && (words[k]?.value ?? '').startsWith('-'))
    k += GIT_VALUED_GLOBALS.has(words[k]?.value ?? '') ? 2 : 1;
  const [git] = words;
  return k === 1 || git === undefined ? undefined : [git, ...words.slice(k)];
}

/** Each tail of a runner's words that starts at a non-option word: deny rules see what it may run. */
export function addSuffixSpellings(out: Collected, words: readonly WordToken[]): void {
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
export const FILE_VALUED_SHORT = new Map<string, string>([
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
export const JQ_VALUED = new Map<string, { words: number; file?: number; tree?: number }>([
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
export function addOptionValue(out: Collected, value: string, scope: Scope, tree: boolean): void {
  const written = resolveOperand(value, { tilde: value.startsWith('~'), scope });
  addOperand(out, written);
  if (tree) addTree(out, written);
}

/** A tree read recursively: `dir/**`, spelled as text resolves it and as written when it goes up. */
export function addTree(out: Collected, written: string): void {
  if (!written.startsWith('/')) {
    addReadPath(out, written);
    return;
  }
  for (const spelling of new Set([normalizePath(written), written]))
    addReadPath(out, `${spelling === '/' ? '' : spelling}/**`);
}

/** Records the paths a reading command reads (and the trees it reads recursively). */
export function addReads(
  out: Collected,
  kind: ReaderKind,
  name: string,
  args: readonly WordToken[],
  scope: Scope,
): void {
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

export function blankWord(): WordToken {
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
