/**
 * Grep patterns: ripgrep's default regex syntax, matched by re2js in time linear in the length of the line.
 *
 * Why re2js, and not the JavaScript engine in a worker thread killed at the deadline: a backtracking engine turns
 * `^(a+)+$` on a 40-character line into minutes of work, and a thread only bounds that by the deadline (30 s of a
 * core per call, the call failing); RE2 answers it in microseconds, so the call succeeds. RE2 is also the dialect
 * models send: Claude Code's Grep is ripgrep, whose default engine (Rust's `regex`) is an RE2-family engine without
 * look-around or backreferences either. What differs is translated here (`\u{…}` escapes, `\<`/`\>` word
 * boundaries); what RE2 cannot do gets an error naming it. Captureless look-behind is accepted (re2js runs it in
 * linear time), beyond ripgrep's default engine.
 *
 * Linear is not free: RE2's worst case is about (line length × compiled program size) steps, all synchronous. The
 * caller bounds it per line with `programSize` (see `LIMITS.grepLineWork`), and the pattern's length is capped.
 */
import { RE2JS, RE2JSException, RE2JSSyntaxException } from 're2js';

/** A compiled pattern: `test` a line; `programSize` measures the engine's per-character worst case. */
export interface LinePattern {
  test(line: string): boolean;
  readonly programSize: number;
}

export type GrepPatternOutcome = { type: 'compiled'; pattern: LinePattern } | { type: 'invalid'; message: string };

const UNSUPPORTED_HINT =
  "Grep uses ripgrep's regex syntax, matched in linear time: look-ahead, backreferences, atomic groups and possessive quantifiers are not available; rewrite the pattern without them.";

const UNICODE_ESCAPE = /\\(?:u\{([0-9A-Fa-f]{1,6})\}|u([0-9A-Fa-f]{4})|U\{([0-9A-Fa-f]{1,8})\}|U([0-9A-Fa-f]{8}))/y;
const WORD_BOUNDARY_ASSERTION = /\\(?:[<>]|b\{(?:start|end|start-half|end-half)\})/y;
/** Syntax that RE2 refuses and a backtracking engine would accept, outside character classes. */
const BACKTRACKING_ONLY = /\(\?[=!>]|\\(?:[1-9]|k<|g\{?\d)|[*+?}][+]/y;

/** Calls `visit` for each position outside character classes and `\Q…\E` quotes; it returns how far to skip. */
function walkPattern(
  pattern: string,
  visit: (index: number) => number | undefined,
  copy: (from: number, to: number) => void,
): void {
  let index = 0;
  while (index < pattern.length) {
    const char = pattern[index];
    if (char === '\\' && pattern[index + 1] === 'Q') {
      const end = pattern.indexOf('\\E', index + 2);
      const stop = end === -1 ? pattern.length : end + 2;
      copy(index, stop);
      index = stop;
      continue;
    }
    if (char === '[') {
      const stop = classEnd(pattern, index);
      copy(index, stop);
      index = stop;
      continue;
    }
    const skip = visit(index);
    if (skip !== undefined) {
      index += skip;
      continue;
    }
    const step = char === '\\' ? 2 : 1;
    copy(index, Math.min(index + step, pattern.length));
    index += step;
  }
}

/** Index just past the class opened at `open` (`[]a]` and `[^]a]` hold a literal `]`; `[:alpha:]` nests). */
function classEnd(pattern: string, open: number): number {
  let index = open + 1;
  if (pattern[index] === '^') index++;
  if (pattern[index] === ']') index++;
  while (index < pattern.length) {
    const char = pattern[index];
    if (char === '\\') {
      index += 2;
    } else if (char === '[' && pattern[index + 1] === ':') {
      const end = pattern.indexOf(':]', index + 2);
      index = end === -1 ? index + 1 : end + 2;
    } else if (char === ']') {
      return index + 1;
    } else {
      index++;
    }
  }
  return pattern.length;
}

/** Translates Unicode escapes inside a class (`[\u00e9-\u00ff]`); the rest of a class passes as it is. */
function translateClass(text: string): string {
  return text.replace(
    /\\\\|\\(?:u\{([0-9A-Fa-f]{1,6})\}|u([0-9A-Fa-f]{4})|U\{([0-9A-Fa-f]{1,8})\}|U([0-9A-Fa-f]{8}))/g,
    (match, ...hex: Array<string | undefined>) => {
      const digits = hex.slice(0, 4).find((group) => group !== undefined);
      return digits === undefined ? match : `\\x{${digits}}`;
    },
  );
}

/**
 * ripgrep (Rust `regex`) and JavaScript spellings that RE2 writes differently: `\u00e9`, `\u{1F600}`, `\U0001F600` →
 * `\x{…}`; the word-boundary assertions `\<`, `\>`, `\b{start}`, `\b{end}` → `\b` (equivalent next to a word
 * character, which is where they are written).
 */
export function translateRipgrepSyntax(pattern: string): string {
  let output = '';
  walkPattern(
    pattern,
    (index) => {
      for (const syntax of [UNICODE_ESCAPE, WORD_BOUNDARY_ASSERTION]) {
        syntax.lastIndex = index;
        const match = syntax.exec(pattern);
        if (match === null) continue;
        const digits = match.slice(1).find((group) => group !== undefined);
        output += digits === undefined ? '\\b' : `\\x{${digits}}`;
        return match[0].length;
      }
      return undefined;
    },
    (from, to) => {
      const text = pattern.slice(from, to);
      output += text.startsWith('[') ? translateClass(text) : text;
    },
  );
  return output;
}

/** The first construct only a backtracking engine supports (look-ahead, backreference…), outside classes. */
export function findBacktrackingOnlySyntax(pattern: string): string | undefined {
  let found: string | undefined;
  walkPattern(
    pattern,
    (index) => {
      if (found !== undefined) return pattern.length;
      BACKTRACKING_ONLY.lastIndex = index;
      const match = BACKTRACKING_ONLY.exec(pattern);
      if (match !== null) found = match[0];
      return undefined;
    },
    () => undefined,
  );
  return found;
}

/** Compiles a Grep pattern (`-i` as `ignoreCase`), or says in one line why it cannot be used. */
export function compileGrepPattern(options: {
  pattern: string;
  ignoreCase: boolean;
  maxPatternChars: number;
}): GrepPatternOutcome {
  const { pattern, ignoreCase, maxPatternChars } = options;
  if (pattern.length > maxPatternChars) {
    return {
      type: 'invalid',
      message: `The pattern has ${pattern.length} characters; Grep accepts at most ${maxPatternChars} (SWITCHYARD_GREP_MAX_PATTERN_CHARS).`,
    };
  }
  const flags = RE2JS.LOOKBEHINDS | (ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  const translated = translateRipgrepSyntax(pattern);
  try {
    const compiled = RE2JS.compile(translated, flags);
    return { type: 'compiled', pattern: { test: (line) => compiled.test(line), programSize: compiled.programSize() } };
  } catch (error) {
    if (!(error instanceof RE2JSException)) throw error;
    const detail = error instanceof RE2JSSyntaxException ? syntaxDetail(error, translated) : error.message;
    const unsupported = findBacktrackingOnlySyntax(pattern);
    const hint = unsupported === undefined ? '' : ` (\`${unsupported}\` is not supported). ${UNSUPPORTED_HINT}`;
    return { type: 'invalid', message: `Invalid regular expression: /${pattern}/: ${detail}${hint}` };
  }
}

/** RE2's description, and the part of the pattern it points at unless that is the whole pattern. */
function syntaxDetail(error: RE2JSSyntaxException, translated: string): string {
  const where = error.getPattern();
  const description = error.getDescription();
  return where === null || where === '' || where === translated ? description : `${description} \`${where}\``;
}
