import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { scratchDir } from '../support/scratch.js';
import { checkDocuments, extractBlocks, kindOf } from '../support/snippets.js';

// The rules the snippet test (test/integration/docs-snippets.test.ts) reads the documentation by, and proof that a
// snippet broken on purpose fails it.

const fence = '```';

describe('extracting the blocks of a document', () => {
  const doc = [
    '# Title',
    '',
    `${fence}ts fragment`,
    'const a = 1;',
    fence,
    '## One',
    `${fence}ts fragment`,
    'const b = 2;',
    fence,
    '### One, deeper',
    `${fence}ts file=agent.ts`,
    "console.log('hi');",
    fence,
    '## Two',
    '*Not run in CI: it needs a cluster.*',
    '',
    `${fence}sh no-run`,
    'temporal operator namespace list',
    fence,
    '1. A step:',
    '',
    `   ${fence}sh background`,
    '   npx tsx worker.ts',
    `   ${fence}`,
    fence,
    'plain output',
    fence,
  ].join('\n');
  const blocks = extractBlocks('doc.md', doc);

  it('reads the language, the markers, file=, the code (list indentation removed) and the line', () => {
    expect(blocks.map((block) => [block.line, block.lang, block.words, block.file, block.code])).toEqual([
      [3, 'ts', ['fragment'], undefined, 'const a = 1;\n'],
      [7, 'ts', ['fragment'], undefined, 'const b = 2;\n'],
      [11, 'ts', [], 'agent.ts', "console.log('hi');\n"],
      [17, 'sh', ['no-run'], undefined, 'temporal operator namespace list\n'],
      [22, 'sh', ['background'], undefined, 'npx tsx worker.ts\n'],
      [25, '', [], undefined, 'plain output\n'],
    ]);
  });

  it('places each block in its sections: a subsection is inside its section, the next heading of its level ends it', () => {
    expect(blocks.map((block) => block.sections)).toEqual([[0], [0, 1], [0, 1, 2], [0, 3], [0, 3], [0, 3]]);
    expect(blocks.map((block) => block.heading)).toEqual(['Title', 'One', 'One, deeper', 'Two', 'Two', 'Two']);
  });

  it('takes the italic line right above a block, blank lines aside, as its no-run reason', () => {
    expect(blocks[3]?.reason).toBe('Not run in CI: it needs a cluster.');
    expect(blocks.filter((block) => block.reason !== undefined)).toHaveLength(1);
  });

  it('says what it does with each block, and refuses what it cannot check', () => {
    expect(blocks.map((block) => kindOf(block))).toEqual([
      'typescript',
      'typescript',
      'typescript',
      'no-run',
      'background',
      'output',
    ]);
    const one = (text: string) => kindOf(extractBlocks('x.md', text)[0]!);
    expect(one(`${fence}sh no-run\nrm -rf /\n${fence}\n`)).toEqual({
      problem: 'x.md:1: a no-run block needs its reason right above it, in italics: "*Not run in CI: …*"',
    });
    expect(one(`Not run in CI: no italics.\n${fence}sh no-run\nx\n${fence}\n`)).toHaveProperty('problem');
    expect(one(`*Not run in CI: a reason that\nwraps.*\n\n${fence}sh no-run\nx\n${fence}\n`)).toBe('no-run');
    expect(one(`*Not run in CI: far above.*\n\nThen other words.\n${fence}sh no-run\nx\n${fence}\n`)).toHaveProperty(
      'problem',
    );
    expect(one(`${fence}go\npackage main\n${fence}\n`)).toEqual({
      problem: 'x.md:1: nothing runs a ```go block: mark it no-run with its reason, or text if it is output',
    });
    expect(one(`${fence}sh backgroud\nx\n${fence}\n`)).toEqual({
      problem: 'x.md:1: unknown word(s) backgroud after ```sh',
    });
    expect(one(`${fence}json fragment\n{}\n${fence}\n`)).toHaveProperty('problem');
    expect(one(`${fence}json mcp-config\n{}\n${fence}\n`)).toBe('json');
    expect(
      kindOf(extractBlocks('x.md', `## Go\n${fence}go\npackage main\n${fence}\n`)[0]!, [
        { doc: 'x.md', heading: 'Go', lang: 'go', test: 'a.test.ts' },
      ]),
    ).toBe('elsewhere');
  });
});

describe('checking documents', { timeout: 120_000 }, () => {
  const options = async () => ({
    typeCheckProject: await scratchDir('switchyard-snippets-unit-'),
    walkthrough: path.join(await scratchDir('switchyard-snippets-walk-'), 'project'),
    env: process.env,
    typeRoots: [path.resolve('node_modules/@types')],
  });

  it('passes a document whose blocks work: fragments joined per section, files written, shell run in order', async () => {
    const checked = await options();
    const report = await checkDocuments(
      [
        {
          doc: 'good.md',
          text: [
            '## Files',
            `${fence}ts fragment`,
            'const greeting: string = "hi";',
            fence,
            `${fence}ts fragment`,
            'export const shout = greeting.toUpperCase();',
            fence,
            `${fence}ts file=hello.ts`,
            "export const hello: number = 'hello'.length;",
            fence,
            `${fence}sh background`,
            'echo up; sleep 600',
            fence,
            `${fence}sh`,
            'test -f hello.ts && echo ran > ran.txt',
            fence,
            `${fence}json`,
            '{ "ok": true }',
            fence,
            `${fence}text`,
            'ran',
            fence,
          ].join('\n'),
        },
      ],
      checked,
    );
    expect(report.failures).toEqual([]);
    expect(report).toMatchObject({ typeChecked: 3, run: 1, background: 1, json: 1, output: 1, noRun: [] });
    expect(existsSync(path.join(checked.walkthrough, 'ran.txt'))).toBe(true);
  });

  it('fails a snippet broken on purpose: a type error at its line, a failing shell block, bad json, a fragment alone wrong', async () => {
    const report = await checkDocuments(
      [
        {
          doc: 'broken.md',
          text: [
            '# Broken',
            `${fence}ts`,
            "const count: number = 'three';",
            fence,
            `${fence}sh`,
            'echo about to fail',
            'false',
            'echo $((40 + 2))',
            fence,
            `${fence}json`,
            '{ "trailing": true, }',
            fence,
            '## Fragments',
            `${fence}ts fragment`,
            'const first = 1;',
            fence,
            `${fence}ts fragment`,
            'const first = 2;',
            fence,
          ].join('\n'),
        },
      ],
      await options(),
    );
    expect(report.failures).toEqual([
      expect.stringMatching(/^broken\.md:10: the json block does not parse/),
      expect.stringMatching(/^broken\.md:3: error TS2322: Type 'string' is not assignable to type 'number'/),
      expect.stringMatching(/^broken\.md:15: error TS2451: Cannot redeclare block-scoped variable 'first'/),
      expect.stringMatching(/^broken\.md:18: error TS2451: Cannot redeclare block-scoped variable 'first'/),
      expect.stringMatching(/^broken\.md:5: the sh block exited 1:[\s\S]*about to fail/),
    ]);
    // It stopped at the failing command: the line after it never ran.
    expect(report.failures.join('\n')).not.toContain('42');
  });
});
