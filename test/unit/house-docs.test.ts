import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LAYERS, roomsOnDisk } from '../../scripts/layer-map.js';
import { sourceFilesUnder } from '../../scripts/source-sizes.js';

// docs/ARCHITECTURE.md's Rooms cannot drift from the code: its table lists the layers of scripts/layer-map.ts in
// their order, its paragraphs name every room of src/ and no room that is gone, and every file it names exists.

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The Rooms section: from its heading to the next heading of the same level. */
function roomsSection(doc: string): string {
  const start = doc.indexOf('\n## Rooms\n');
  if (start < 0) throw new Error('docs/ARCHITECTURE.md has no "## Rooms" section');
  const next = doc.indexOf('\n## ', start + 1);
  return doc.slice(start, next < 0 ? undefined : next);
}

/** A room as the doc writes it (`contracts/`, `src/index.ts`) as the layer map names it (`contracts`, `index.ts`). */
function roomName(written: string): string {
  return written.replace(/^src\//, '').replace(/\/$/, '');
}

/** The layers the Rooms table claims, lowest first: each row's rooms, read from its second column. */
function tableLayers(section: string): string[][] {
  return section
    .split('\n')
    .filter((line) => /^\|\s*\d+\s*\|/.test(line))
    .map((line) => [...(line.split('|')[2] ?? '').matchAll(/`([^`]+)`/g)].map((match) => roomName(match[1] ?? '')));
}

/** The rooms the Rooms section has a paragraph for, in the doc's order, each with its paragraph. */
function roomParagraphs(section: string): Array<{ room: string; text: string }> {
  return section
    .split(/\n\s*\n/)
    .map((paragraph) => paragraph.trim())
    .flatMap((paragraph) => {
      const heading = /^\*\*`(src\/[^`]+)`\*\*/.exec(paragraph);
      return heading === null ? [] : [{ room: roomName(heading[1] ?? ''), text: paragraph }];
    });
}

/** Files a room's paragraph names by base name (`scheduler.ts`) that no file of that room carries. */
function unknownFileNames(room: string, text: string): string[] {
  const files = room.endsWith('.ts') ? [`src/${room}`] : sourceFilesUnder(root, `src/${room}`);
  const names = new Set(files.map((file) => path.posix.basename(file)));
  const cited = [...text.matchAll(/`([\w.-]+\.(?:ts|js))`/g)].map((match) => match[1] ?? '');
  return cited.filter((name) => !names.has(name));
}

/**
 * The paths of src/ a text cites that do not exist. `everywhere`: any `src/…` in the text; otherwise only a whole
 * code span that is a path (`src/x/y.ts`), so an example rule such as `Read(src/**)` is not taken for one.
 */
function missingSourcePaths(text: string, options: { everywhere: boolean }): string[] {
  const pattern = options.everywhere ? /\bsrc\/[\w./-]*[\w/]/g : /`(src\/[\w-][\w./-]*)`/g;
  const cited = [...text.matchAll(pattern)].map((match) => match[1] ?? match[0]);
  return [...new Set(cited)].filter((cite) => !existsSync(path.join(root, cite)));
}

describe('the doc checker', () => {
  const section = [
    '## Rooms',
    '',
    '| layer | rooms | what |',
    '| --- | --- | --- |',
    '| 1 | `contracts/` | words |',
    '| 2 | `tools/`, `hooks/` | both |',
    '',
    '**`src/contracts/`** — words (`messages.ts`).',
    '',
    '**`src/hooks/`** — hooks.',
  ].join('\n');

  it('reads the layers the table claims and the rooms the paragraphs name, in order', () => {
    expect(tableLayers(section)).toEqual([['contracts'], ['tools', 'hooks']]);
    expect(roomParagraphs(section).map((paragraph) => paragraph.room)).toEqual(['contracts', 'hooks']);
  });

  it('tells a table out of order, or missing a room, from the map', () => {
    const swapped = section.replace('| 1 | `contracts/` |', '| 1 | `hooks/` |');
    expect(tableLayers(swapped)).not.toEqual(tableLayers(section));
    expect(tableLayers(section).flat()).not.toContain('cli');
  });

  it('names a file a paragraph cites that its room does not have, and a cited path of src/ that is gone', () => {
    expect(unknownFileNames('contracts', '`messages.ts`, `no-such-file.ts`')).toEqual(['no-such-file.ts']);
    const text = '`src/contracts/messages.ts`, `src/hooks/settings.ts`, `Read(src/app.ts)`, src/gone.ts';
    expect(missingSourcePaths(text, { everywhere: false })).toEqual(['src/hooks/settings.ts']);
    expect(missingSourcePaths(text, { everywhere: true })).toEqual([
      'src/hooks/settings.ts',
      'src/app.ts',
      'src/gone.ts',
    ]);
  });
});

describe('docs/ARCHITECTURE.md', () => {
  const doc = readFileSync(path.join(root, 'docs/ARCHITECTURE.md'), 'utf8');
  const section = roomsSection(doc);

  it('claims the layer map: the same rooms in the same layers, in the same order', () => {
    expect(tableLayers(section)).toEqual(LAYERS.map((layer) => [...layer]));
  });

  it('has a paragraph for every room of src/, none for a room that is gone, in the order of the map', () => {
    const paragraphs = roomParagraphs(section).map((paragraph) => paragraph.room);
    expect([...paragraphs].sort()).toEqual(roomsOnDisk(root));
    expect(paragraphs).toEqual(LAYERS.flat());
  });

  it('names only files its rooms have', () => {
    const unknown = roomParagraphs(section).flatMap(({ room, text }) =>
      unknownFileNames(room, text).map((name) => `${room}: ${name}`),
    );
    expect(unknown).toEqual([]);
  });

  it('cites only paths of src/ that exist', () => {
    expect(missingSourcePaths(doc, { everywhere: true })).toEqual([]);
  });
});

describe('the other docs', () => {
  const docs = [
    ...readdirSync(path.join(root, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`),
    // BENCHMARKS.md is a ledger: each entry describes the code as it was when it was measured.
    ...['README.md', 'SECURITY.md', 'RELIABILITY.md'].filter((name) => existsSync(path.join(root, name))),
  ];

  it('cite only paths of src/ that exist (a moved file takes its citations with it)', () => {
    const missing = docs.flatMap((doc) =>
      missingSourcePaths(readFileSync(path.join(root, doc), 'utf8'), { everywhere: false }).map(
        (cite) => `${doc}: ${cite}`,
      ),
    );
    expect(missing).toEqual([]);
  });
});
