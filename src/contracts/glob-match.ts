/**
 * One glob dialect for the Glob tool, Grep's `glob` and path permission rules: picomatch's (`picomatch/posix`, pure,
 * safe in the workflow sandbox): `**` any number of directories, `*` and `?` within one segment, `[abc]`, `[!abc]`,
 * `[a-z]`, `[[:alpha:]]`, `{a,b}` (nested, may hold `/`), `\x` a literal `x`; a pattern also matches the path spelt
 * exactly like it. Options: `dot` (a wildcard matches a leading `.`: a deny rule `Read(src/**)` covers `src/.env`),
 * `posix` (the `[!abc]` and `[[:alpha:]]` classes), `nonegate` (a leading `!` is literal) and `noextglob` (bash's
 * `@(a|b)`, `!(a)` are not globs here: a negation cannot be matched in linear time). As in picomatch, parentheses
 * group (`a(1).txt` also matches `a1.txt`; write `a\(1\).txt` for the name alone).
 *
 * picomatch parses; re2js matches. picomatch's own RegExp backtracks: `*a*a*a*a*a*a*b*` against a 60-character name
 * takes seconds, and these patterns come from the model and run inside the workflow, where a hang wedges the session.
 * So picomatch's RegExp source is compiled by re2js, in time linear in the path. picomatch guards wildcards with
 * look-aheads that RE2 lacks; the guards that only keep `.`/`..` segments and empty segments out are dropped (the
 * paths matched here are normalised, so they hold neither). What RE2 still cannot compile (`[[:foo:]]`, an unbalanced
 * `(`) is a {@link GlobSyntaxError}.
 */
import picomatch from 'picomatch/posix.js';
import { RE2JS, RE2JSException } from 're2js';

export class GlobSyntaxError extends Error {
  override readonly name = 'GlobSyntaxError';
}

/** Whole `/`-separated paths that match a glob. */
export interface PathMatcher {
  test(path: string): boolean;
}

const PICOMATCH_OPTIONS = { dot: true, posix: true, nonegate: true, noextglob: true } as const;
/** `debug`: picomatch throws on a pattern it cannot turn into a RegExp (`[z-a]`, an unclosed `{`) instead of matching nothing. */
const COMPILE_OPTIONS = { ...PICOMATCH_OPTIONS, debug: true } as const;

const CHARS = picomatch.constants.globChars(false);
/** picomatch's guards against `.`/`..` and empty segments: no-ops on normalised paths, and look-aheads RE2 cannot run. */
const SEGMENT_GUARDS: readonly string[] = [CHARS.NO_DOTS, CHARS.NO_DOTS_SLASH, CHARS.NO_DOT_SLASH, CHARS.ONE_CHAR];

const CACHE_LIMIT = 256;
const cache = new Map<string, PathMatcher>();

/** Compiles a glob (see the module comment for the dialect); throws {@link GlobSyntaxError} when it cannot be used. */
export function compileGlob(pattern: string): PathMatcher {
  const cached = cache.get(pattern);
  if (cached !== undefined) return cached;
  let source: string;
  try {
    source = picomatch.makeRe(pattern, COMPILE_OPTIONS).source;
  } catch (error) {
    const detail =
      error instanceof Error
        ? error.message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '')
        : String(error);
    throw new GlobSyntaxError(`Invalid glob pattern ${pattern}: ${detail}`);
  }
  for (const guard of SEGMENT_GUARDS) source = source.split(guard).join('');
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(source, RE2JS.DOTALL);
  } catch (error) {
    if (!(error instanceof RE2JSException)) throw error;
    throw new GlobSyntaxError(
      `Invalid glob pattern ${pattern}: ${error.message.replace(/^error parsing regexp: /, '')}`,
    );
  }
  // picomatch's `isMatch` also accepts the pattern itself, spelt literally (`a(1).txt`, `[id].ts`).
  const matcher: PathMatcher = { test: (path) => path === pattern || compiled.test(path) };
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value ?? '');
  cache.set(pattern, matcher);
  return matcher;
}

/** Whether a glob holds wildcard syntax (picomatch's scan), as opposed to naming one path literally. */
export function isGlobPattern(pattern: string): boolean {
  return picomatch.scan(pattern, PICOMATCH_OPTIONS).isGlob;
}

/**
 * Splits a glob into its leading literal directory (`''` when none; `/` for `/*`) and the rest, which always keeps
 * the last segment: `src/tools/*.ts` → `src/tools` + `*.ts`, `src/index.ts` → `src` + `index.ts`.
 */
export function splitGlobBase(pattern: string): { base: string; rest: string } {
  // An escape in the literal part (`a\*b/*.ts`): walk from the top and let the matcher read the escape.
  if (pattern.includes('\\')) return { base: '', rest: pattern };
  const scanned = picomatch.scan(pattern, PICOMATCH_OPTIONS);
  let base = scanned.isGlob ? scanned.base : pattern;
  let rest = scanned.isGlob ? scanned.glob : '';
  if (rest === '') {
    const slash = base.lastIndexOf('/');
    rest = base.slice(slash + 1);
    base = base.slice(0, Math.max(slash, 0));
  }
  if (base === '' && pattern.startsWith('/')) base = '/';
  return { base, rest };
}
