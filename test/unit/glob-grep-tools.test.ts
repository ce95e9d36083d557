import { mkdir, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CallPlan } from '../../src/contracts/call-plan.js';
import { compileGlob, splitGlobBase } from '../../src/contracts/glob-match.js';
import { GLOB_TRUNCATED_NOTE, globDepth, globTool, MAX_GLOB_RESULTS } from '../../src/tools/builtin/glob.js';
import { grepTool, MAX_LINE_CHARS } from '../../src/tools/builtin/grep.js';
import {
  compileGrepPattern,
  findBacktrackingOnlySyntax,
  translateRipgrepSyntax,
} from '../../src/tools/builtin/grep-pattern.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { costRatio, costRatioAsync } from '../support/growth.js';
import { scratchDir } from '../support/scratch.js';
import { toolContext } from '../support/tool-context.js';
import { planner, ready, rejection } from '../support/tool-plans.js';

const registry = new ToolRegistry([globTool, grepTool]);
const prepare = planner(registry.list());
// Scratch directories live in the test run's temporary directory, removed when the run ends.
const tempDir = (): Promise<string> => scratchDir();

/** Runs a ready plan as executeCall would, with the session's allow rules (those the plan was prepared with). */
async function run(cwd: string, plan: CallPlan, signal?: AbortSignal, allowRules: string[] = []): Promise<string> {
  const ok = ready(plan);
  const tool = registry.lookup(ok.toolName);
  if (tool === undefined) throw new Error(`no tool ${ok.toolName}`);
  const output = await tool.execute(
    ok.input,
    toolContext({ cwd, allowRules, ...(signal === undefined ? {} : { signal }) }),
  );
  // Glob and Grep answer text with a `search` display (v1.3); these tests read the text.
  return typeof output === 'string' ? output : output.content;
}

/** Writes files (relative path → content) under `root`, each with mtime `base + index` seconds, so later ones are newer. */
async function tree(root: string, files: Record<string, string | Buffer>, base = 1_700_000_000): Promise<void> {
  let index = 0;
  for (const [relative, content] of Object.entries(files)) {
    const file = path.join(root, relative);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
    await utimes(file, base + index, base + index);
    index++;
  }
}

const lines = (output: string) => output.split('\n');

describe('glob matcher', () => {
  it.each<[string, string[], string[]]>([
    ['**/*.ts', ['a.ts', 'src/a.ts', 'src/deep/b.ts', '.hidden/c.ts'], ['a.js', 'a.ts/x', 'src/a.tsx']],
    ['src/*.{js,ts}', ['src/a.js', 'src/b.ts'], ['src/a.jsx', 'src/deep/a.ts', 'a.ts']],
    ['{src,test}/**/*.{ts,md}', ['src/a.ts', 'test/x/y/z.md'], ['lib/a.ts', 'src/a.js']],
    ['{a/{b,c},d}/*.txt', ['a/b/1.txt', 'a/c/2.txt', 'd/3.txt'], ['a/d/1.txt', 'a/1.txt']],
    ['file?.txt', ['file1.txt', 'fileA.txt'], ['file10.txt', 'file/.txt']],
    ['[ab]*.txt', ['a1.txt', 'b.txt'], ['c.txt']],
    ['[!ab]*.txt', ['c.txt'], ['a.txt', 'b.txt']],
    ['[0-9].log', ['5.log'], ['a.log', '55.log']],
    ['src/**', ['src/a', 'src/a/b/c'], ['srca', 'lib/src/a']],
    ['a**b', ['ab', 'axxb'], ['a/b']],
    ['lit\\*.txt', ['lit*.txt'], ['litx.txt']],
    ['{single}.txt', ['{single}.txt'], ['single.txt']],
    ['a}', ['a}'], ['a']],
    // picomatch's dialect: parentheses group; the pattern still names the file spelt like it.
    ['a.(b)+', ['a.(b)+', 'a.b', 'a.bb'], ['a.c']],
    ['a.\\(b\\)', ['a.(b)'], ['a.b']],
    ['[[:digit:]]x', ['1x'], ['ax']],
  ])('%s', (pattern, matching, other) => {
    const regexp = compileGlob(pattern);
    for (const candidate of matching) expect(regexp.test(candidate), candidate).toBe(true);
    for (const candidate of other) expect(regexp.test(candidate), candidate).toBe(false);
  });

  it('compiles braces without expanding them, and splits off the literal leading directory', () => {
    expect(compileGlob('{a,b}'.repeat(40)).test('ab'.repeat(20))).toBe(true);
    // Growth, not a wall-clock bound (test/support/growth.ts): four times the braces cost about four times as much to
    // compile, where expanding them doubles the cost per brace (2^60 times as many alternatives at 80 as at 20). The
    // bound only has to tell those apart, so it is loose: a small compile on a busy CI machine measured 13 times.
    // Each pattern is new, so none comes from the cache.
    let unique = 0;
    const braces = (count: number) => () => compileGlob(`${'{a,b}'.repeat(count)}/${(unique += 1)}`);
    expect(costRatio(braces(20), braces(80))).toBeLessThan(50);
    expect(splitGlobBase('a\\*b/*.ts')).toEqual({ base: '', rest: 'a\\*b/*.ts' });
    expect(splitGlobBase('src/tools/*.ts')).toEqual({ base: 'src/tools', rest: '*.ts' });
    expect(splitGlobBase('src/index.ts')).toEqual({ base: 'src', rest: 'index.ts' });
    expect(splitGlobBase('/abs/{a,b/c}/*.ts')).toEqual({ base: '/abs', rest: '{a,b/c}/*.ts' });
    expect(splitGlobBase('/*')).toEqual({ base: '/', rest: '*' });
    expect(splitGlobBase('**/*.ts')).toEqual({ base: '', rest: '**/*.ts' });
    expect(globDepth('*.ts')).toBe(1);
    expect(globDepth('{a,b/c}/*.ts')).toBe(3);
    expect(globDepth('a/**/b')).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('Glob', () => {
  let cwd: string;
  let outside: string;
  beforeAll(async () => {
    cwd = await tempDir();
    outside = await tempDir();
    await tree(cwd, {
      'old.ts': 'x',
      'src/a.ts': 'x',
      'src/b.js': 'x',
      'src/c.jsx': 'x',
      'src/deep/d.ts': 'x',
      'test/e.ts': 'x',
      'node_modules/pkg/index.ts': 'x',
      '.git/hooks/f.ts': 'x',
      'newest.ts': 'x',
    });
    await tree(outside, { 'secret.ts': 'x', 'sub/inner.ts': 'x' });
    await symlink(outside, path.join(cwd, 'linked-dir'));
    await symlink(path.join(outside, 'secret.ts'), path.join(cwd, 'leak.ts'));
    await symlink(path.join(cwd, 'src', 'a.ts'), path.join(cwd, 'alias.ts'));
  });
  const glob = (input: Record<string, unknown>, allowRules: string[] = []) => prepare(cwd, 'Glob', input, allowRules);

  it('plans a concurrent, read-only, idempotent call whose rule content is the search directory', async () => {
    expect(ready(await glob({ pattern: '**/*.ts' }))).toMatchObject({
      toolName: 'Glob',
      input: { pattern: '**/*.ts', path: cwd },
      flags: { concurrentSafe: true, readOnly: true, destructive: false, sideEffectScope: 'none', idempotent: true },
      ruleKind: 'path',
      ruleContent: cwd,
      timeoutMs: 30_000,
    });
    expect(ready(await glob({ pattern: 'src/deep/*.ts' }))).toMatchObject({
      input: { pattern: '*.ts', path: path.join(cwd, 'src', 'deep') },
      ruleContent: path.join(cwd, 'src', 'deep'),
    });
    expect(ready(await prepare(cwd, 'glob', { pattern: '*' })).toolName).toBe('Glob');
  });

  it('lists absolute paths newest first, skipping node_modules, .git and symlinks', async () => {
    const output = await run(cwd, await glob({ pattern: '**/*.ts' }));
    // Symlinks are neither followed nor listed (ripgrep's default): not alias.ts, though it leads inside.
    expect(lines(output)).toEqual(
      ['newest.ts', 'test/e.ts', 'src/deep/d.ts', 'src/a.ts', 'old.ts'].map((file) => path.join(cwd, file)),
    );
  });

  it('matches brace alternatives, ? and classes', async () => {
    expect(lines(await run(cwd, await glob({ pattern: 'src/*.{js,ts}' })))).toEqual([
      path.join(cwd, 'src', 'b.js'),
      path.join(cwd, 'src', 'a.ts'),
    ]);
    expect(lines(await run(cwd, await glob({ pattern: '{src,test}/**/[de].ts' })))).toEqual([
      path.join(cwd, 'test', 'e.ts'),
      path.join(cwd, 'src', 'deep', 'd.ts'),
    ]);
    expect(await run(cwd, await glob({ pattern: 'src/?.jsx' }))).toBe(path.join(cwd, 'src', 'c.jsx'));
    expect(await run(cwd, await glob({ pattern: '*.ts', path: 'src' }))).toBe(path.join(cwd, 'src', 'a.ts'));
  });

  it('accepts an absolute pattern inside cwd, and a pattern naming node_modules explicitly', async () => {
    expect(await run(cwd, await glob({ pattern: `${cwd}/src/deep/*.ts` }))).toBe(path.join(cwd, 'src', 'deep', 'd.ts'));
    expect(await run(cwd, await glob({ pattern: 'node_modules/pkg/*.ts' }))).toBe(
      path.join(cwd, 'node_modules', 'pkg', 'index.ts'),
    );
  });

  it('answers "No files found" when nothing matches, also under a missing leading directory', async () => {
    expect(await run(cwd, await glob({ pattern: '**/*.rs' }))).toBe('No files found');
    expect(await run(cwd, await glob({ pattern: 'nowhere/*.ts' }))).toBe('No files found');
  });

  it('refuses a missing directory, a file as path, and escapes through .., absolute paths, patterns and symlinks', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ pattern: '*', path: 'missing' }, /Directory does not exist/],
      [{ pattern: '*', path: 'old.ts' }, /Path is not a directory/],
      [{ pattern: '*', path: '..' }, /outside the session's working directory/],
      [{ pattern: '*', path: outside }, /outside the session's working directory/],
      [{ pattern: '../*' }, /outside the session's working directory/],
      [{ pattern: `${outside}/*.ts` }, /outside the session's working directory/],
      [{ pattern: '*', path: 'linked-dir' }, /through a symlink/],
      [{ pattern: 'linked-dir/*.ts' }, /through a symlink/],
    ];
    for (const [input, message] of cases) expect(rejection(await glob(input)), JSON.stringify(input)).toMatch(message);
  });

  it('searches outside cwd only when a Glob allow rule names the directory', async () => {
    expect((await glob({ pattern: '**/*.ts', path: outside }, ['Glob'])).kind).toBe('rejected');
    expect((await glob({ pattern: '**/*.ts', path: outside }, [`Read(${outside}/**)`])).kind).toBe('rejected');
    const plan = await glob({ pattern: '**/*.ts', path: outside }, [`Glob(${outside}/**)`]);
    expect(lines(await run(cwd, plan, undefined, [`Glob(${outside}/**)`]))).toEqual([
      path.join(outside, 'sub', 'inner.ts'),
      path.join(outside, 'secret.ts'),
    ]);
    expect((await glob({ pattern: '*.ts', path: path.join(outside, 'sub') }, [`Glob(${outside})`])).kind).toBe(
      'rejected',
    );
  });

  it('stops at an aborted signal', async () => {
    const controller = new AbortController();
    controller.abort(new Error('interrupted'));
    await expect(run(cwd, await glob({ pattern: '**/*' }), controller.signal)).rejects.toThrow('interrupted');
  });

  it(`caps the list at ${MAX_GLOB_RESULTS} paths with a note`, async () => {
    const many = await tempDir();
    await Promise.all(
      Array.from({ length: MAX_GLOB_RESULTS + 5 }, (_, index) =>
        writeFile(path.join(many, `f${String(index).padStart(4, '0')}.txt`), ''),
      ),
    );
    const output = lines(await run(many, await prepare(many, 'Glob', { pattern: '*.txt' })));
    expect(output).toHaveLength(MAX_GLOB_RESULTS + 1);
    expect(output.at(-1)).toBe(GLOB_TRUNCATED_NOTE);
    expect(output.at(-1)).toBe('(Results are truncated. Consider using a more specific path or pattern.)');
    expect(lines(await run(many, await prepare(many, 'Glob', { pattern: 'f000?.txt' })))).toHaveLength(10);
  });
});

describe('Grep', () => {
  let cwd: string;
  let outside: string;
  beforeAll(async () => {
    cwd = await tempDir();
    outside = await tempDir();
    await tree(cwd, {
      'src/app.ts': 'const Foo = 1;\nfoo();\nbar();\n',
      'src/util.js': 'export function foo() {}\n',
      'docs/readme.md': 'Foo is documented\n',
      'crlf.txt': 'first\r\nfoo bar\r\n',
      'bin.dat': Buffer.from('foo\0binary'),
      'node_modules/pkg/index.js': 'foo\n',
      '.git/config': 'foo\n',
      'src/latest.ts': 'foofoo\nfoo\n',
    });
    await tree(outside, { 'secret.txt': 'foo secret\n' });
    await symlink(path.join(outside, 'secret.txt'), path.join(cwd, 'leak.txt'));
    await symlink(outside, path.join(cwd, 'linked-dir'));
  });
  const grep = (input: Record<string, unknown>, allowRules: string[] = []) => prepare(cwd, 'Grep', input, allowRules);
  const at = (...parts: string[]) => path.join(cwd, ...parts);

  it('plans a concurrent, read-only, idempotent call whose rule content is the search path', async () => {
    expect(
      ready(await grep({ pattern: 'foo', path: 'src', '-i': true, '-n': true, output_mode: 'content', glob: '*.ts' })),
    ).toMatchObject({
      toolName: 'Grep',
      input: { pattern: 'foo', path: at('src') },
      flags: { concurrentSafe: true, readOnly: true, destructive: false, sideEffectScope: 'none', idempotent: true },
      ruleKind: 'path',
      ruleContent: at('src'),
      timeoutMs: 30_000,
    });
    for (const alias of ['grep', 'search_file_content'])
      expect(ready(await prepare(cwd, alias, { pattern: 'x' })).toolName).toBe('Grep');
    expect(rejection(await grep({ pattern: 'x', output_mode: 'lines' }))).toMatch(/InputValidationError/);
  });

  it('lists matching files newest first by default, skipping binary files, node_modules, .git and symlinks that lead out', async () => {
    expect(lines(await run(cwd, await grep({ pattern: 'foo' })))).toEqual([
      at('src', 'latest.ts'),
      at('crlf.txt'),
      at('src', 'util.js'),
      at('src', 'app.ts'),
    ]);
  });

  it('prints matching lines in content mode, with line numbers under -n, and ignores case under -i', async () => {
    expect(lines(await run(cwd, await grep({ pattern: 'foo', path: 'src', output_mode: 'content' })))).toEqual([
      `${at('src', 'app.ts')}:foo();`,
      `${at('src', 'latest.ts')}:foofoo`,
      `${at('src', 'latest.ts')}:foo`,
      `${at('src', 'util.js')}:export function foo() {}`,
    ]);
    expect(
      lines(
        await run(cwd, await grep({ pattern: 'foo', path: 'src', output_mode: 'content', '-n': true, '-i': true })),
      ),
    ).toEqual([
      `${at('src', 'app.ts')}:1:const Foo = 1;`,
      `${at('src', 'app.ts')}:2:foo();`,
      `${at('src', 'latest.ts')}:1:foofoo`,
      `${at('src', 'latest.ts')}:2:foo`,
      `${at('src', 'util.js')}:1:export function foo() {}`,
    ]);
    expect(await run(cwd, await grep({ pattern: 'bar$', path: 'crlf.txt', output_mode: 'content', '-n': true }))).toBe(
      `${at('crlf.txt')}:2:foo bar`,
    );
  });

  it('counts matching lines per file in count mode', async () => {
    expect(lines(await run(cwd, await grep({ pattern: 'foo', output_mode: 'count', '-i': true })))).toEqual([
      `${at('crlf.txt')}:1`,
      `${at('docs', 'readme.md')}:1`,
      `${at('src', 'app.ts')}:2`,
      `${at('src', 'latest.ts')}:2`,
      `${at('src', 'util.js')}:1`,
    ]);
  });

  it('filters files with glob: names, paths, braces and exclusions', async () => {
    const files = async (glob: string) => lines(await run(cwd, await grep({ pattern: 'foo', '-i': true, glob })));
    expect(await files('*.ts')).toEqual([at('src', 'latest.ts'), at('src', 'app.ts')]);
    expect(await files('*.{md,js}')).toEqual([at('docs', 'readme.md'), at('src', 'util.js')]);
    expect(await files('docs/**/*.md')).toEqual([at('docs', 'readme.md')]);
    expect(await files('src/** !*.ts')).toEqual([at('src', 'util.js')]);
    expect(await files('!**/*.ts !*.md')).toEqual([at('crlf.txt'), at('src', 'util.js')]);
  });

  it('answers "No matches found"', async () => {
    expect(await run(cwd, await grep({ pattern: 'no such text' }))).toBe('No matches found');
    expect(await run(cwd, await grep({ pattern: 'binary' }))).toBe('No matches found');
  });

  it('rejects an invalid regular expression, a bad glob and a missing path', async () => {
    // RE2's wording (ripgrep's dialect), not V8's.
    expect(rejection(await grep({ pattern: 'foo(' }))).toBe(
      '<tool_use_error>Invalid regular expression: /foo(/: missing closing )</tool_use_error>',
    );
    expect(rejection(await grep({ pattern: 'x', glob: '[z-a]' }))).toMatch(
      /^<tool_use_error>Invalid glob pattern \[z-a\]/,
    );
    expect(rejection(await grep({ pattern: 'x', path: 'missing' }))).toMatch(/Path does not exist/);
    execFileSync('mkfifo', [at('pipe')]);
    expect(rejection(await grep({ pattern: 'x', path: 'pipe' }))).toMatch(/pipe is neither a file nor a directory/);
    expect(await run(cwd, await grep({ pattern: 'x', path: '.' }))).not.toContain('pipe');
  });

  it('refuses escapes through .., absolute paths and symlinks, unless a Grep allow rule names the path', async () => {
    const cases: Array<[string, RegExp]> = [
      ['..', /outside the session's working directory/],
      [outside, /outside the session's working directory/],
      ['leak.txt', /through a symlink/],
      ['linked-dir', /through a symlink/],
    ];
    for (const [searchPath, message] of cases)
      expect(rejection(await grep({ pattern: 'foo', path: searchPath })), searchPath).toMatch(message);
    expect((await grep({ pattern: 'foo', path: outside }, [`Glob(${outside}/**)`])).kind).toBe('rejected');
    expect((await grep({ pattern: 'foo', path: outside }, ['Grep'])).kind).toBe('rejected');
    const allowed = [`Grep(${outside}/**)`];
    expect(
      await run(
        cwd,
        await grep({ pattern: 'foo', path: outside, output_mode: 'content' }, allowed),
        undefined,
        allowed,
      ),
    ).toBe(`${path.join(outside, 'secret.txt')}:foo secret`);
  });

  it('streams large files: line numbers and multi-byte characters survive chunk boundaries', async () => {
    const big = await tempDir();
    const filler = 'x'.repeat(99);
    const head = Array.from({ length: 1_500 }, () => filler).join('\n'); // 149,999 characters
    const straddle = `${'y'.repeat(65_536 * 3 - head.length - 2)}é-marker`;
    await writeFile(path.join(big, 'log.txt'), `${head}\n${straddle}\nneedle at the end\n`);
    const output = await run(
      big,
      await prepare(big, 'Grep', { pattern: 'needle|é-marker', output_mode: 'content', '-n': true }),
    );
    const [first, second] = lines(output);
    expect(first).toMatch(new RegExp(`^${path.join(big, 'log.txt')}:1501:y{${MAX_LINE_CHARS}}… \\[line truncated\\]$`));
    expect(second).toBe(`${path.join(big, 'log.txt')}:1502:needle at the end`);
    const count = await run(big, await prepare(big, 'Grep', { pattern: 'é-marker$', output_mode: 'count' }));
    expect(count).toBe(`${path.join(big, 'log.txt')}:1`);
  });

  it('stops at an aborted signal', async () => {
    const controller = new AbortController();
    controller.abort(new Error('interrupted'));
    await expect(run(cwd, await grep({ pattern: 'foo' }), controller.signal)).rejects.toThrow('interrupted');
  });
});

describe('Grep cannot hang the worker', () => {
  let cwd: string;
  beforeAll(async () => {
    cwd = await tempDir();
    // `^(a+)+$` backtracks exponentially in a backtracking engine on a run of a's followed by another character.
    await tree(cwd, { 'short.txt': `${'a'.repeat(30)}!\n`, 'attack.txt': `${'a'.repeat(40)}!\n${'a'.repeat(40)}\n` });
  });

  it('answers a catastrophic pattern promptly, with the matching line', async () => {
    for (const file of ['short.txt', 'attack.txt']) {
      const output = await run(
        cwd,
        await prepare(cwd, 'Grep', { pattern: '^(a+)+$', path: file, output_mode: 'content', '-n': true }),
      );
      expect(output, file).toBe(
        file === 'short.txt' ? 'No matches found' : `${path.join(cwd, file)}:2:${'a'.repeat(40)}`,
      );
    }
    // Growth, not a wall-clock bound (test/support/growth.ts): a line four times as long costs at most about four
    // times as much, where a backtracking engine doubles its work with every further `a`.
    await tree(cwd, { 'run-1000.txt': `${'a'.repeat(1_000)}!\n`, 'run-4000.txt': `${'a'.repeat(4_000)}!\n` });
    const search = (file: string) => async () =>
      run(cwd, await prepare(cwd, 'Grep', { pattern: '^(a+)+$', path: file, output_mode: 'content' }));
    expect(await costRatioAsync(search('run-1000.txt'), search('run-4000.txt'))).toBeLessThan(12);
  });

  it('searches a 24 MB single line in linear time', async () => {
    const big = await tempDir();
    await writeFile(path.join(big, 'one-line.txt'), `${'ab'.repeat(12_000_000)}needle\nafter\n`);
    // CPU time, not wall time, so a busy machine does not fail it: about 0.5 s here; the old re-split ran past 5 s.
    const cpuBefore = process.cpuUsage();
    const output = await run(big, await prepare(big, 'Grep', { pattern: 'needle$', output_mode: 'count' }));
    const cpu = process.cpuUsage(cpuBefore);
    expect((cpu.user + cpu.system) / 1_000).toBeLessThan(2_500);
    expect(output).toBe(`${path.join(big, 'one-line.txt')}:1`);
  });
});

describe('Glob and Grep respect .gitignore unless include_ignored', () => {
  let repo: string;
  beforeAll(async () => {
    repo = await tempDir();
    await mkdir(path.join(repo, '.git'));
    await tree(repo, {
      '.gitignore': 'dist/\n*.log\n',
      'src/app.ts': 'needle\n',
      'src/.gitignore': 'generated.ts\n!keep.log\n',
      'src/generated.ts': 'needle\n',
      'src/keep.log': 'needle\n',
      'debug.log': 'needle\n',
      'dist/bundle.js': 'needle\n',
      'node_modules/pkg/index.js': 'needle\n',
    });
  });
  const at = (...parts: string[]) => path.join(repo, ...parts);
  const glob = async (input: Record<string, unknown>) =>
    lines(await run(repo, await prepare(repo, 'Glob', input))).sort();
  const grep = async (input: Record<string, unknown>) =>
    lines(await run(repo, await prepare(repo, 'Grep', { pattern: 'needle', ...input }))).sort();

  it('skips ignored files and node_modules, and lets a deeper .gitignore re-include a file', async () => {
    const visible = [at('src', 'app.ts'), at('src', 'keep.log')];
    expect(await glob({ pattern: '**/*.{ts,js,log}' })).toEqual(visible);
    expect(await grep({})).toEqual(visible);
  });

  it('includes them under include_ignored: true', async () => {
    const all = [
      'debug.log',
      'dist/bundle.js',
      'node_modules/pkg/index.js',
      'src/app.ts',
      'src/generated.ts',
      'src/keep.log',
    ].map((file) => at(file));
    expect(await glob({ pattern: '**/*.{ts,js,log}', include_ignored: true })).toEqual(all);
    expect(await grep({ include_ignored: true })).toEqual(all);
  });

  it("applies the repository's .gitignore to a subdirectory search, but searches an ignored directory named as the path", async () => {
    expect(await grep({ path: 'src' })).toEqual([at('src', 'app.ts'), at('src', 'keep.log')]);
    expect(await grep({ path: 'dist' })).toEqual([at('dist', 'bundle.js')]);
    expect(await glob({ pattern: 'dist/*.js' })).toEqual([at('dist', 'bundle.js')]);
  });
});

describe('Glob cannot hang the worker', () => {
  it('matches a pattern with many stars against a long file name promptly', async () => {
    const cwd = await tempDir();
    await tree(cwd, { [`${'a'.repeat(100)}.txt`]: 'x', 'aaaaaab.txt': 'x' });
    const output = await run(cwd, await prepare(cwd, 'Glob', { pattern: '*a*a*a*a*a*a*b*' }));
    expect(output).toBe(path.join(cwd, 'aaaaaab.txt'));
    // Growth, not a wall-clock bound (test/support/growth.ts): a name four times as long costs at most about four
    // times as much, where a backtracking matcher's cost grows as the sixth power of the length (six stars).
    const short = await tempDir();
    const long = await tempDir();
    await tree(short, { [`${'a'.repeat(60)}.txt`]: 'x' });
    await tree(long, { [`${'a'.repeat(240)}.txt`]: 'x' });
    const glob = (dir: string) => async () => run(dir, await prepare(dir, 'Glob', { pattern: '*a*a*a*a*a*a*b*' }));
    expect(await costRatioAsync(glob(short), glob(long))).toBeLessThan(12);
  });
});

describe('Grep and Glob skip what a Read deny rule names', () => {
  let cwd: string;
  beforeAll(async () => {
    cwd = await tempDir();
    await tree(cwd, {
      '.env': 'API_KEY=sk-live-secret\n',
      'src/app.ts': 'const key = process.env.API_KEY;\n',
      'secrets/prod.key': 'API_KEY=prod-secret\n',
      'config/.env': 'API_KEY=nested-secret\n',
    });
    await symlink(path.join(cwd, '.env'), path.join(cwd, 'env-alias.txt'));
  });
  const runWithDeny = async (name: string, input: Record<string, unknown>, denyRules: string[]): Promise<string> => {
    const tool = registry.lookup(name);
    if (tool === undefined) throw new Error(`no tool ${name}`);
    const plan = ready(await prepare(cwd, name, input));
    const output = await tool.execute(plan.input, toolContext({ cwd, denyRules }));
    return typeof output === 'string' ? output : output.content;
  };
  const denyRules = ['Read(.env)', 'Read(secrets/**)', 'Read(**/.env)'];

  it('Grep over the tree prints no line of a denied file, nor of a symlink to one', async () => {
    const output = await runWithDeny('Grep', { pattern: 'API_KEY', output_mode: 'content' }, denyRules);
    expect(output).toBe(`${path.join(cwd, 'src', 'app.ts')}:const key = process.env.API_KEY;`);
    expect(output).not.toContain('secret');
    for (const mode of ['files_with_matches', 'count']) {
      expect(await runWithDeny('Grep', { pattern: 'secret', output_mode: mode }, denyRules), mode).toBe(
        'No matches found',
      );
    }
  });

  it('Grep on a denied file itself reveals nothing', async () => {
    await expect(
      runWithDeny('Grep', { pattern: 'API_KEY', path: '.env', output_mode: 'content' }, ['Read(.env)']),
    ).rejects.toThrow(/denied by the rule Read\(\.env\)/);
  });

  it('Glob lists no denied file', async () => {
    const output = await runWithDeny('Glob', { pattern: '**/*' }, denyRules);
    expect(lines(output).sort()).toEqual([path.join(cwd, 'src', 'app.ts')]);
    expect(lines(await runWithDeny('Glob', { pattern: '**/*' }, ['Read(.env)'])).sort()).toEqual(
      ['config/.env', 'secrets/prod.key', 'src/app.ts'].map((file) => path.join(cwd, file)),
    );
  });

  it('a Read(dir) deny rule hides the files inside it from Glob and Grep; Read(secrets) does not hide secrets2', async () => {
    const root = await tempDir();
    await tree(root, {
      'secrets/prod.key': 'API_KEY=prod-secret\n',
      'secrets2/open.txt': 'API_KEY=open\n',
      'src/app.ts': 'API_KEY\n',
    });
    const runIn = async (name: string, input: Record<string, unknown>): Promise<string> => {
      const tool = registry.lookup(name);
      if (tool === undefined) throw new Error(`no tool ${name}`);
      const output = await tool.execute(
        ready(await prepare(root, name, input)).input,
        toolContext({ cwd: root, denyRules: ['Read(secrets)'] }),
      );
      return typeof output === 'string' ? output : output.content;
    };
    expect(lines(await runIn('Glob', { pattern: '**/*' })).sort()).toEqual(
      ['secrets2/open.txt', 'src/app.ts'].map((file) => path.join(root, file)),
    );
    expect(lines(await runIn('Grep', { pattern: 'API_KEY' })).sort()).toEqual(
      ['secrets2/open.txt', 'src/app.ts'].map((file) => path.join(root, file)),
    );
  });

  it('a deny rule holds when Grep is given the real path of a symlinked cwd', async () => {
    const link = `${cwd}-link`;
    await symlink(cwd, link);
    const tool = registry.lookup('Grep');
    if (tool === undefined) throw new Error('no Grep');
    const plan = ready(await prepare(link, 'Grep', { pattern: 'API_KEY', path: cwd, output_mode: 'content' }));
    const output = await tool.execute(
      plan.input,
      toolContext({ cwd: link, denyRules: ['Read(.env)', 'Read(secrets/**)', 'Read(**/.env)'] }),
    );
    expect(output).not.toContain('secret');
    await expect(
      (async () => {
        const single = ready(
          await prepare(link, 'Grep', { pattern: 'API_KEY', path: path.join(cwd, '.env'), output_mode: 'content' }),
        );
        return tool.execute(single.input, toolContext({ cwd: link, denyRules: ['Read(.env)'] }));
      })(),
    ).rejects.toThrow(/denied by the rule Read\(\.env\)/);
  });

  it("other tools' deny rules and allow-only sessions change nothing", async () => {
    const output = await runWithDeny('Grep', { pattern: 'API_KEY', output_mode: 'count' }, [
      'Edit(.env)',
      'Bash(cat:*)',
    ]);
    // Four files; the symlink env-alias.txt is not searched (symlinks are not followed).
    expect(lines(output)).toHaveLength(4);
  });
});

describe('Grep pattern dialect (ripgrep syntax on a linear-time engine)', () => {
  const compile = (pattern: string, ignoreCase = false) =>
    compileGrepPattern({ pattern, ignoreCase, maxPatternChars: 10_000 });
  const matches = (pattern: string, line: string, ignoreCase = false): boolean => {
    const outcome = compile(pattern, ignoreCase);
    if (outcome.type !== 'compiled') throw new Error(outcome.message);
    return outcome.pattern.test(line);
  };

  it.each<[string, string, boolean]>([
    ['(?i)todo', 'a TODO here', true],
    ['\\bfoo\\b', 'a foo b', true],
    ['\\bfoo\\b', 'afoob', false],
    ['\\<foo\\>', 'a foo b', true],
    ['\\<foo\\>', 'afoob', false],
    ['\\b{start}foo\\b{end}', '(foo)', true],
    ['caf\\u00e9', 'café', true],
    ['\\u{1F600}', 'smile 😀', true],
    ['[\\u00e0-\\u00ff]', 'é', true],
    ['[\\<]', 'a<b', true],
    ['(?P<word>\\w+)=(?<value>\\d+)', 'x=1', true],
    ['[[:digit:]]+\\.\\d+', 'v1.25', true],
    ['\\p{Greek}', 'α', true],
    ['(?<=\\$)\\d+', 'cost $5', true],
    ['(?<!\\$)\\b\\d+', '$5', false],
    ['\\Q(a+)\\E', 'x(a+)y', true],
    ['path\\/to', 'path/to', true],
  ])('%s against %s → %s', (pattern, line, expected) => {
    expect(matches(pattern, line)).toBe(expected);
  });

  it('translates only outside classes and quotes', () => {
    expect(translateRipgrepSyntax('\\<a\\u0041[\\<\\u0042]\\Q\\<\\E')).toBe('\\ba\\x{0041}[\\<\\x{0042}]\\Q\\<\\E');
  });

  it('ignores case under -i', () => {
    expect(matches('foo', 'FOO', true)).toBe(true);
    expect(matches('foo', 'FOO')).toBe(false);
  });

  it('refuses look-ahead, backreferences, atomic groups and possessive quantifiers with a message naming them', () => {
    const cases: Array<[string, string]> = [
      ['foo(?=bar)', '(?='],
      ['foo(?!bar)', '(?!'],
      ['(\\w)\\1', '\\1'],
      ['(?<q>.)\\k<q>', '\\k<'],
      ['(?>ab)', '(?>'],
      ['a++', '++'],
    ];
    for (const [pattern, construct] of cases) {
      const outcome = compile(pattern);
      expect(outcome.type, pattern).toBe('invalid');
      const message = outcome.type === 'invalid' ? outcome.message : '';
      expect(message, pattern).toContain(`Invalid regular expression: /${pattern}/:`);
      expect(message, pattern).toContain(`(\`${construct}\` is not supported)`);
      expect(message, pattern).toContain("Grep uses ripgrep's regex syntax, matched in linear time");
    }
    expect(findBacktrackingOnlySyntax('[(?=]\\Q(?=\\E')).toBeUndefined();
  });

  it('refuses a pattern longer than the limit', () => {
    expect(compileGrepPattern({ pattern: 'a'.repeat(11), ignoreCase: false, maxPatternChars: 10 })).toEqual({
      type: 'invalid',
      message: 'The pattern has 11 characters; Grep accepts at most 10 (SWITCHYARD_GREP_MAX_PATTERN_CHARS).',
    });
  });

  it('answers a model with the reason in the call result', async () => {
    const cwd = await tempDir();
    expect(rejection(await prepare(cwd, 'Grep', { pattern: 'a(?=b)' }))).toMatch(
      /^<tool_use_error>Invalid regular expression: \/a\(\?=b\)\/: .*not supported/,
    );
  });
});

describe('Grep line limits', () => {
  let cwd: string;
  beforeAll(async () => {
    cwd = await tempDir();
    await tree(cwd, { 'mixed.txt': `short needle\n${'x'.repeat(5_000)}needle\n${'y'.repeat(700)}needle\nlast needle` });
  });
  const withEnv = async <T>(variables: Record<string, string>, body: () => Promise<T>): Promise<T> => {
    const saved = Object.fromEntries(Object.keys(variables).map((name) => [name, process.env[name]]));
    Object.assign(process.env, variables);
    try {
      return await body();
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  };

  it('cuts long matching lines in the output with a marker', async () => {
    const output = lines(
      await run(cwd, await prepare(cwd, 'Grep', { pattern: 'needle', output_mode: 'content', '-n': true })),
    );
    expect(output).toHaveLength(4);
    expect(output[1]).toBe(`${path.join(cwd, 'mixed.txt')}:2:${'x'.repeat(MAX_LINE_CHARS)}… [line truncated]`);
    expect(output[3]).toBe(`${path.join(cwd, 'mixed.txt')}:4:last needle`);
  });

  it('skips lines over SWITCHYARD_GREP_MAX_LINE_CHARS and says how many', async () => {
    const output = await withEnv({ SWITCHYARD_GREP_MAX_LINE_CHARS: '1000' }, async () =>
      run(cwd, await prepare(cwd, 'Grep', { pattern: 'needle', output_mode: 'count' })),
    );
    expect(lines(output)).toEqual([
      `${path.join(cwd, 'mixed.txt')}:3`,
      '(Not searched: 1 line longer than 1000 characters, the longest line this pattern may search (SWITCHYARD_GREP_MAX_LINE_CHARS, SWITCHYARD_GREP_LINE_WORK). Read such a file with offset and limit.)',
    ]);
  });

  it('searches shorter lines for a costlier pattern (SWITCHYARD_GREP_LINE_WORK / program size)', async () => {
    const search = (pattern: string) =>
      withEnv({ SWITCHYARD_GREP_LINE_WORK: '60000' }, async () =>
        run(cwd, await prepare(cwd, 'Grep', { pattern, output_mode: 'count' })),
      );
    expect(lines(await search('needle'))[0]).toBe(`${path.join(cwd, 'mixed.txt')}:4`);
    // A program of about 400 instructions: 60,000 / 400 leaves room for the two short lines only.
    const costly = lines(await search('[a-z ]{0,200}needle'));
    expect(costly[0]).toBe(`${path.join(cwd, 'mixed.txt')}:2`);
    expect(costly[1]).toMatch(/^\(Not searched: 2 lines longer than \d+ characters/);
  });

  it('fails the call with the variable name when a limit is misconfigured', async () => {
    await expect(
      withEnv({ SWITCHYARD_GREP_MAX_LINE_CHARS: 'lots' }, async () =>
        run(cwd, await prepare(cwd, 'Grep', { pattern: 'needle' })),
      ),
    ).rejects.toThrow('SWITCHYARD_GREP_MAX_LINE_CHARS must be a positive integer, got "lots"');
  });
});

// Prepare checks where a search leads; the search itself runs later. A process the session started (a background
// Bash task, say) can retarget a link in between. What Grep opens, and where Glob walks, is checked when it happens.
describe('Grep and Glob after their paths were checked', () => {
  async function workspaceWithSecret(): Promise<{ cwd: string; outside: string }> {
    const cwd = await tempDir();
    const outside = await tempDir();
    await writeFile(path.join(cwd, 'notes.txt'), 'harmless notes\n');
    await mkdir(path.join(cwd, 'docs'));
    await writeFile(path.join(cwd, 'docs', 'guide.md'), 'harmless guide\n');
    await writeFile(path.join(outside, 'secret.txt'), 'TOKEN=sk-outside-secret\n');
    return { cwd, outside };
  }

  /** Swaps `docs` for a link to `outside`, runs the plan, and answers its output or its error's message. */
  async function runAfterDocsSwapped(cwd: string, outside: string, plan: CallPlan): Promise<string> {
    await rm(path.join(cwd, 'docs'), { recursive: true });
    await symlink(outside, path.join(cwd, 'docs'));
    return await run(cwd, plan).then(
      (output) => output,
      (error: Error) => error.message,
    );
  }

  it('a file link retargeted outside cwd after Prepare: Grep refuses it and shows nothing of it', async () => {
    const { cwd, outside } = await workspaceWithSecret();
    await symlink(path.join(cwd, 'notes.txt'), path.join(cwd, 'link.txt'));
    const plan = await prepare(cwd, 'Grep', { pattern: 'TOKEN|harmless', path: 'link.txt', output_mode: 'content' });
    ready(plan);
    await rm(path.join(cwd, 'link.txt'));
    await symlink(path.join(outside, 'secret.txt'), path.join(cwd, 'link.txt'));
    const outcome = await run(cwd, plan).then(
      (output) => output,
      (error: Error) => error.message,
    );
    expect(outcome).not.toContain('sk-outside-secret');
    expect(outcome).toMatch(/leads outside the session's working directory/);
  });

  it('a directory swapped for a link outside cwd while Grep walks the tree: nothing of it is searched', async () => {
    const { cwd, outside } = await workspaceWithSecret();
    const plan = await prepare(cwd, 'Grep', { pattern: 'TOKEN', path: 'docs', output_mode: 'content' });
    ready(plan);
    expect(await runAfterDocsSwapped(cwd, outside, plan)).not.toContain('sk-outside-secret');
  });

  it('a directory the walk listed, swapped for a link outside cwd before Grep opens its files: they are skipped', async () => {
    const { cwd, outside } = await workspaceWithSecret();
    // A large first file (32 MB of text) keeps the search busy after the walk has listed zz/secret.txt.
    await writeFile(path.join(cwd, 'docs', 'a-big.log'), `${'x'.repeat(99)}\n`.repeat(320_000));
    await mkdir(path.join(cwd, 'docs', 'zz'));
    await writeFile(path.join(cwd, 'docs', 'zz', 'secret.txt'), 'harmless until swapped\n');
    const plan = await prepare(cwd, 'Grep', { pattern: 'TOKEN|harmless', path: 'docs', output_mode: 'content' });
    let settled = false;
    const running = run(cwd, plan).finally(() => {
      settled = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 30));
    await rm(path.join(cwd, 'docs', 'zz'), { recursive: true });
    await symlink(outside, path.join(cwd, 'docs', 'zz'));
    // Otherwise this test shows nothing: the swap must come while the big file is searched.
    expect(settled).toBe(false);
    const output = await running;
    expect(output).toContain('harmless guide');
    expect(output).not.toContain('sk-outside-secret');
  });

  it('an allow rule naming a folder inside cwd does not let Grep follow it outside once it is swapped for a link', async () => {
    const { cwd, outside } = await workspaceWithSecret();
    const allowed = [`Grep(${path.join(cwd, 'docs')}/**)`];
    const plan = await prepare(cwd, 'Grep', { pattern: 'TOKEN', path: 'docs', output_mode: 'content' }, allowed);
    ready(plan);
    await rm(path.join(cwd, 'docs'), { recursive: true });
    await symlink(outside, path.join(cwd, 'docs'));
    const outcome = await run(cwd, plan, undefined, allowed).then(
      (output) => output,
      (error: Error) => error.message,
    );
    expect(outcome).not.toContain('sk-outside-secret');
    expect(outcome).toMatch(/outside the session's working directory/);
  });

  it('a directory swapped for a link outside cwd after Prepare: Glob lists nothing there', async () => {
    const { cwd, outside } = await workspaceWithSecret();
    const plan = await prepare(cwd, 'Glob', { pattern: '**/*', path: 'docs' });
    ready(plan);
    expect(await runAfterDocsSwapped(cwd, outside, plan)).not.toContain('secret.txt');
  });
});
