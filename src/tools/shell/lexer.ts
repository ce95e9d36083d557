/**
 * The shell lexer: a command split into words, operators and redirections the way bash would, without running
 * anything. Quotes and backslash escapes are removed from a word's value; what bash would expand (`$`, backticks,
 * braces) marks the word `unsafe`, and command substitutions and unquoted here-document bodies keep their scripts so
 * that later stages see the commands inside them.
 */

export type Operator =
  '|' | '||' | '&&' | '|&' | ';' | '&' | '(' | ')' | 'newline' | 'comment' | 'process-substitution';
export type RedirectOperator = '>' | '>>' | '>|' | '>&' | '&>' | '&>>' | '<' | '<<' | '<<-' | '<<<' | '<>' | '<&';

export interface WordToken {
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
export interface OperatorToken {
  kind: 'op';
  op: Operator;
  /** The script of a process substitution `<(…)`/`>(…)`. */
  script?: string;
}
export interface RedirectToken {
  kind: 'redirect';
  op: RedirectOperator;
  fd: string | undefined;
  /** For a here-document whose body undergoes expansion: the command substitutions found in the body. */
  bodySubstitutions?: string[];
  /** For a here-document: its body as written (what a shell reading it would run). */
  body?: string;
}
export type Token = WordToken | OperatorToken | RedirectToken;
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
function decodeAnsiC(
  input: string,
  from: number,
): { value: string; end: number; doubt: string | undefined } | undefined {
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
    const digits =
      n === 'x' ? /^[0-9a-fA-F]{1,2}/.exec(input.slice(j + 2, j + 4)) : /^[0-7]{1,3}/.exec(input.slice(j + 1, j + 4));
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

/** A here-document whose body starts after the next newline. */
interface PendingBody {
  token: RedirectToken;
  delimiter: string;
  literal: boolean;
}

/** The lexer's state while it walks one input: the tokens so far, the word being built and the position. */
class LexState {
  readonly tokens: Token[] = [];
  word: WordToken | undefined;
  i = 0;
  /** Here-documents whose delimiter word is the next word. */
  delimiterFor: RedirectToken | undefined;
  /** Here-documents whose body starts after the next newline. */
  readonly bodies: PendingBody[] = [];

  constructor(readonly input: string) {}

  current(): WordToken {
    return (this.word ??= {
      kind: 'word',
      value: '',
      raw: '',
      start: this.i,
      glob: false,
      startsWithGlob: false,
      quoted: false,
      tilde: false,
      ansiC: false,
      unsafe: undefined,
      substitutions: [],
    });
  }

  flag(reason: string): void {
    const w = this.current();
    w.unsafe ??= reason;
  }

  finish(): void {
    const word = this.word;
    if (word !== undefined) {
      word.raw = this.input.slice(word.start, this.i);
      this.tokens.push(word);
      if (this.delimiterFor !== undefined) {
        this.bodies.push({ token: this.delimiterFor, delimiter: word.value, literal: word.quoted });
        this.delimiterFor = undefined;
      }
    }
    this.word = undefined;
  }

  /** Skips the bodies of pending here-documents, which start at `from`; returns where lexing resumes. */
  skipBodies(from: number): number {
    const input = this.input;
    let position = from;
    for (const body of this.bodies) {
      const strip = body.token.op === '<<-';
      const bodyStart = position;
      for (;;) {
        const newline = input.indexOf('\n', position);
        const line = input.slice(position, newline < 0 ? input.length : newline);
        const lineEnd = newline < 0 ? input.length : newline + 1;
        if ((strip ? line.replace(/^\t+/, '') : line) === body.delimiter) {
          body.token.body = input.slice(bodyStart, position);
          if (!body.literal) body.token.bodySubstitutions = substitutionsIn(input.slice(bodyStart, position));
          position = lineEnd;
          break;
        }
        position = lineEnd;
        if (newline < 0) {
          // Delimited by the end of the input, as bash accepts (with a warning).
          body.token.body = input.slice(bodyStart);
          if (!body.literal) body.token.bodySubstitutions = substitutionsIn(input.slice(bodyStart));
          break;
        }
      }
    }
    this.bodies.length = 0;
    return position;
  }
}

/** Lexes a double-quoted part of a word, from its opening quote; returns why it cannot, if it cannot. */
function lexDoubleQuoted(state: LexState): string | undefined {
  const input = state.input;
  const w = state.current();
  w.quoted = true;
  let j = state.i + 1;
  for (;;) {
    if (j >= input.length) return 'unterminated double quote';
    const c = input.charAt(j);
    if (c === '"') break;
    if (c === '\\') {
      if (j + 1 >= input.length) return 'unterminated double quote';
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
      if (end === undefined) return 'unterminated `$(`';
      state.flag('`$(...)` substitution inside double quotes');
      w.substitutions.push(input.slice(j + 2, end));
      w.value += input.slice(j, end + 1);
      j = end + 1;
      continue;
    }
    if (c === '`') {
      const end = findBacktickEnd(input, j + 1);
      if (end === undefined) return 'unterminated backtick';
      state.flag('backtick command substitution');
      w.substitutions.push(backtickScript(input.slice(j + 1, end)));
      w.value += input.slice(j, end + 1);
      j = end + 1;
      continue;
    }
    if (c === '$') state.flag('`$` expansion inside double quotes');
    w.value += c;
    j += 1;
  }
  state.i = j + 1;
  return undefined;
}

/** Lexes what starts with `$`: a command substitution, `$'…'` quoting or a parameter expansion. */
function lexDollar(state: LexState): string | undefined {
  const { input, i } = state;
  const next = input.charAt(i + 1);
  if (next === '(') {
    const end = findSubstitutionEnd(input, i + 2);
    if (end === undefined) return 'unterminated `$(`';
    state.flag(input.charAt(i + 2) === '(' ? '`$((...))` arithmetic expansion' : '`$(...)` command substitution');
    const w = state.current();
    w.substitutions.push(input.slice(i + 2, end));
    w.value += input.slice(i, end + 1);
    state.i = end + 1;
  } else if (next === "'") {
    const decoded = decodeAnsiC(input, i + 2);
    if (decoded === undefined) return "unterminated `$'`";
    const w = state.current();
    w.quoted = true;
    w.ansiC = true;
    if (decoded.doubt !== undefined) state.flag(decoded.doubt);
    w.value += decoded.value;
    state.i = decoded.end + 1;
  } else {
    state.flag(next === '{' ? '`${...}` parameter expansion' : '`$` parameter expansion');
    state.current().value += '$';
    state.i += 1;
  }
  return undefined;
}

/** Lexes a redirection or a process substitution, from its `<` or `>`; a digits-only word before it is its fd. */
function lexRedirect(state: LexState): string | undefined {
  const { input, i } = state;
  const ch = input.charAt(i);
  const next = input.charAt(i + 1);
  let fd: string | undefined;
  const word = state.word;
  if (word !== undefined && !word.quoted && /^\d+$/.test(word.value)) {
    fd = word.value;
    state.word = undefined;
  } else {
    state.finish();
  }
  if (next === '(') {
    const end = findSubstitutionEnd(input, i + 2);
    if (end === undefined) return 'unterminated process substitution';
    state.tokens.push({ kind: 'op', op: 'process-substitution', script: input.slice(i + 2, end) });
    state.i = end + 1;
    return undefined;
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
  state.tokens.push(token);
  if (op === '<<' || op === '<<-') state.delimiterFor = token;
  state.i += op.length;
  return undefined;
}

/** Lexes an operator that starts with `|` or `&` (`&>` and `&>>` are redirections). */
function lexPipeOrAmpersand(state: LexState): void {
  const { input, i } = state;
  const ch = input.charAt(i);
  const next = input.charAt(i + 1);
  state.finish();
  if (ch === '|') {
    if (next === '|') state.tokens.push({ kind: 'op', op: '||' });
    else if (next === '&') state.tokens.push({ kind: 'op', op: '|&' });
    else state.tokens.push({ kind: 'op', op: '|' });
    state.i += next === '|' || next === '&' ? 2 : 1;
  } else if (next === '&') {
    state.tokens.push({ kind: 'op', op: '&&' });
    state.i += 2;
  } else if (next === '>') {
    const append = input.charAt(i + 2) === '>';
    state.tokens.push({ kind: 'redirect', op: append ? '&>>' : '&>', fd: undefined });
    state.i += append ? 3 : 2;
  } else {
    state.tokens.push({ kind: 'op', op: '&' });
    state.i += 1;
  }
}

/** Lexes a plain character of a word, noting globs and a leading tilde. */
function lexPlainCharacter(state: LexState, ch: string): void {
  const w = state.current();
  if (GLOB_CHARS.has(ch)) {
    if (w.value === '') w.startsWithGlob = true;
    w.glob = true;
  }
  if (ch === '~' && w.value === '' && !w.quoted) w.tilde = true;
  w.value += ch;
  state.i += 1;
}

/** Lexes what starts at the state's position; returns why the input cannot be lexed, if it cannot. */
function lexNext(state: LexState): string | undefined {
  const input = state.input;
  const i = state.i;
  const ch = input.charAt(i);
  const next = input.charAt(i + 1);
  switch (ch) {
    case ' ':
    case '\t':
      state.finish();
      state.i += 1;
      return undefined;
    case '\n':
    case '\r':
      state.finish();
      state.tokens.push({ kind: 'op', op: 'newline' });
      state.i = state.bodies.length > 0 ? state.skipBodies(i + 1) : i + 1;
      return undefined;
    case "'": {
      const end = input.indexOf("'", i + 1);
      if (end < 0) return 'unterminated single quote';
      const w = state.current();
      w.quoted = true;
      w.value += input.slice(i + 1, end);
      state.i = end + 1;
      return undefined;
    }
    case '"':
      return lexDoubleQuoted(state);
    case '\\': {
      if (i + 1 >= input.length) return 'trailing backslash';
      if (next !== '\n') {
        const w = state.current();
        w.quoted = true;
        w.value += next;
      }
      state.i += 2;
      return undefined;
    }
    case '$':
      return lexDollar(state);
    case '`': {
      const end = findBacktickEnd(input, i + 1);
      if (end === undefined) return 'unterminated backtick';
      state.flag('backtick command substitution');
      const w = state.current();
      w.substitutions.push(backtickScript(input.slice(i + 1, end)));
      w.value += input.slice(i, end + 1);
      state.i = end + 1;
      return undefined;
    }
    case '#':
      if (state.word === undefined) {
        // A comment: bash ignores the rest of the line (nothing in it runs, and nothing in it can be trusted to mean what it seems).
        state.tokens.push({ kind: 'op', op: 'comment' });
        const newline = input.indexOf('\n', i);
        state.i = newline < 0 ? input.length : newline;
        return undefined;
      }
      state.current().value += ch;
      state.i += 1;
      return undefined;
    case '{':
    case '}':
      state.flag('braces `{...}` (brace expansion or a command group)');
      state.current().value += ch;
      state.i += 1;
      return undefined;
    case '|':
    case '&':
      lexPipeOrAmpersand(state);
      return undefined;
    case ';':
      state.finish();
      state.tokens.push({ kind: 'op', op: ';' });
      state.i += 1;
      return undefined;
    case '(':
    case ')':
      state.finish();
      state.tokens.push({ kind: 'op', op: ch });
      state.i += 1;
      return undefined;
    case '<':
    case '>':
      return lexRedirect(state);
    default:
      lexPlainCharacter(state, ch);
      return undefined;
  }
}

/** Splits a command into words, operators and redirections the way bash would, or says why it cannot. */
export function lex(input: string): LexResult {
  const state = new LexState(input);
  while (state.i < input.length) {
    const failure = lexNext(state);
    if (failure !== undefined) return { ok: false, reason: failure };
  }
  state.finish();
  return { ok: true, tokens: state.tokens };
}
