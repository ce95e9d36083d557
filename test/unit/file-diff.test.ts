import { describe, expect, it } from 'vitest';
import { DISPLAY_LIMITS } from '../../src/contracts/defaults.js';
import {
  createFileDiff,
  formatFileDiff,
  MAX_EDIT_LENGTH,
  NO_NEWLINE_MARKER,
  type FileDiffDisplay,
} from '../../src/tools/support/file-diff.js';

const text = (lines: string[]) => lines.map((line) => `${line}\n`).join('');
const numbered = (count: number) => Array.from({ length: count }, (_, index) => `line ${index + 1}`);
/** `numbered(count)` with the given 1-based lines replaced. */
const edited = (count: number, changes: Record<number, string>) =>
  numbered(count).map((line, index) => changes[index + 1] ?? line);
const unlimited = { maxHunks: Infinity, maxLines: Infinity };
const totalLines = (display: FileDiffDisplay) => display.hunks.reduce((sum, hunk) => sum + hunk.lines.length, 0);

/** Each hunk's counts match its lines (markers excluded). */
function expectConsistentCounts(display: FileDiffDisplay) {
  for (const hunk of display.hunks) {
    const body = hunk.lines.filter((line) => line !== NO_NEWLINE_MARKER);
    expect(hunk.oldLines).toBe(body.filter((line) => line.startsWith(' ') || line.startsWith('-')).length);
    expect(hunk.newLines).toBe(body.filter((line) => line.startsWith(' ') || line.startsWith('+')).length);
  }
}

/** Applies a complete display to `before`, checking every header and context line on the way. */
function applyDiff(before: string, display: FileDiffDisplay): string {
  const old = before === '' ? [] : before.split(/(?<=\n)/);
  const out: string[] = [];
  let pos = 0;
  for (const hunk of display.hunks) {
    const start = hunk.oldLines === 0 ? hunk.oldStart : hunk.oldStart - 1;
    expect(start).toBeGreaterThanOrEqual(pos);
    out.push(...old.slice(pos, start));
    pos = start;
    expect(hunk.newStart).toBe(hunk.newLines === 0 ? out.length : out.length + 1);
    let last = '';
    for (const line of hunk.lines) {
      if (line === NO_NEWLINE_MARKER) {
        if (last !== '-') out.push((out.pop() ?? '').replace(/\n$/, ''));
        continue;
      }
      last = line.charAt(0);
      if (last === '+') {
        out.push(`${line.slice(1)}\n`);
        continue;
      }
      expect(old[pos]?.replace(/\n$/, '')).toBe(line.slice(1));
      if (last === ' ') out.push(`${line.slice(1)}\n`);
      pos++;
    }
  }
  out.push(...old.slice(pos));
  return out.join('');
}

describe('createFileDiff', () => {
  it('gives no hunks for identical texts', () => {
    const same = text(numbered(20));
    expect(createFileDiff({ filePath: 'a.txt', before: same, after: same })).toEqual({
      type: 'file_diff',
      filePath: 'a.txt',
      hunks: [],
      truncated: false,
    });
    expect(createFileDiff({ filePath: 'e.txt', before: '', after: '' })).toEqual({
      type: 'file_diff',
      filePath: 'e.txt',
      hunks: [],
      truncated: false,
    });
  });

  it('shows one changed line in the middle with three lines of context, as diff -u does', () => {
    const display = createFileDiff({
      filePath: 'a.txt',
      before: text(numbered(20)),
      after: text(edited(20, { 10: 'line ten' })),
    });
    expect(display).toEqual({
      type: 'file_diff',
      filePath: 'a.txt',
      truncated: false,
      hunks: [
        {
          oldStart: 7,
          oldLines: 7,
          newStart: 7,
          newLines: 7,
          lines: [' line 7', ' line 8', ' line 9', '-line 10', '+line ten', ' line 11', ' line 12', ' line 13'],
        },
      ],
    });
  });

  it('honours a smaller context', () => {
    const display = createFileDiff({
      filePath: 'a.txt',
      before: text(numbered(20)),
      after: text(edited(20, { 10: 'line ten' })),
      context: 1,
    });
    expect(display.hunks).toEqual([
      { oldStart: 9, oldLines: 3, newStart: 9, newLines: 3, lines: [' line 9', '-line 10', '+line ten', ' line 11'] },
    ]);
  });

  it('shows an insertion at the start and at the end', () => {
    const before = text(['a', 'b', 'c', 'd']);
    expect(createFileDiff({ filePath: 'f', before, after: text(['new', 'a', 'b', 'c', 'd']) }).hunks).toEqual([
      { oldStart: 1, oldLines: 3, newStart: 1, newLines: 4, lines: ['+new', ' a', ' b', ' c'] },
    ]);
    expect(createFileDiff({ filePath: 'f', before, after: text(['a', 'b', 'c', 'd', 'new']) }).hunks).toEqual([
      { oldStart: 2, oldLines: 3, newStart: 2, newLines: 4, lines: [' b', ' c', ' d', '+new'] },
    ]);
  });

  it('shows a new file and deleted content with start 0 on the empty side', () => {
    const content = text(['a', 'b', 'c', 'd']);
    expect(createFileDiff({ filePath: 'f', before: '', after: content })).toEqual({
      type: 'file_diff',
      filePath: 'f',
      truncated: false,
      hunks: [{ oldStart: 0, oldLines: 0, newStart: 1, newLines: 4, lines: ['+a', '+b', '+c', '+d'] }],
    });
    expect(createFileDiff({ filePath: 'f', before: content, after: '' })).toEqual({
      type: 'file_diff',
      filePath: 'f',
      truncated: false,
      hunks: [{ oldStart: 1, oldLines: 4, newStart: 0, newLines: 0, lines: ['-a', '-b', '-c', '-d'] }],
    });
  });

  it('marks a last line without a newline, as diff -u does', () => {
    expect(createFileDiff({ filePath: 'f', before: 'a\nb', after: 'a\nc' }).hunks).toEqual([
      {
        oldStart: 1,
        oldLines: 2,
        newStart: 1,
        newLines: 2,
        lines: [' a', '-b', NO_NEWLINE_MARKER, '+c', NO_NEWLINE_MARKER],
      },
    ]);
    // Only the final newline differs: still a change, not zero hunks.
    expect(createFileDiff({ filePath: 'f', before: 'a\nb\n', after: 'a\nb' }).hunks).toEqual([
      { oldStart: 1, oldLines: 2, newStart: 1, newLines: 2, lines: [' a', '-b', '+b', NO_NEWLINE_MARKER] },
    ]);
    // Unchanged last line without a newline: one marker after the context line.
    expect(createFileDiff({ filePath: 'f', before: 'x\nz', after: 'y\nz' }).hunks).toEqual([
      { oldStart: 1, oldLines: 2, newStart: 1, newLines: 2, lines: ['-x', '+y', ' z', NO_NEWLINE_MARKER] },
    ]);
    expect(NO_NEWLINE_MARKER).toBe('\\ No newline at end of file');
    // The marker counts towards maxLines and stays with its line.
    expect(createFileDiff({ filePath: 'f', before: 'a\nb', after: 'a\nc', maxLines: 4 })).toEqual({
      type: 'file_diff',
      filePath: 'f',
      truncated: true,
      hunks: [{ oldStart: 1, oldLines: 2, newStart: 1, newLines: 1, lines: [' a', '-b', NO_NEWLINE_MARKER] }],
    });
    expect(createFileDiff({ filePath: 'f', before: 'a\nb', after: 'a\nc', maxLines: 2 }).hunks).toEqual([]);
  });

  it('splits distant changes into two hunks', () => {
    const display = createFileDiff({
      filePath: 'f',
      before: text(numbered(20)),
      after: text(edited(20, { 3: 'line three', 18: 'line eighteen' })),
    });
    expect(display.hunks).toEqual([
      {
        oldStart: 1,
        oldLines: 6,
        newStart: 1,
        newLines: 6,
        lines: [' line 1', ' line 2', '-line 3', '+line three', ' line 4', ' line 5', ' line 6'],
      },
      {
        oldStart: 15,
        oldLines: 6,
        newStart: 15,
        newLines: 6,
        lines: [' line 15', ' line 16', ' line 17', '-line 18', '+line eighteen', ' line 19', ' line 20'],
      },
    ]);
    expect(display.truncated).toBe(false);
  });

  it('merges changes at most 2 × context unchanged lines apart into one hunk, and splits them one line further', () => {
    const close = createFileDiff({
      filePath: 'f',
      before: text(numbered(20)),
      after: text(edited(20, { 5: 'line five', 12: 'line twelve' })),
    });
    expect(close.hunks).toEqual([
      {
        oldStart: 2,
        oldLines: 14,
        newStart: 2,
        newLines: 14,
        lines: [
          ' line 2',
          ' line 3',
          ' line 4',
          '-line 5',
          '+line five',
          ' line 6',
          ' line 7',
          ' line 8',
          ' line 9',
          ' line 10',
          ' line 11',
          '-line 12',
          '+line twelve',
          ' line 13',
          ' line 14',
          ' line 15',
        ],
      },
    ]);
    const apart = createFileDiff({
      filePath: 'f',
      before: text(numbered(20)),
      after: text(edited(20, { 5: 'line five', 13: 'line thirteen' })),
    });
    expect(
      apart.hunks.map(({ oldStart, oldLines, newStart, newLines }) => [oldStart, oldLines, newStart, newLines]),
    ).toEqual([
      [2, 7, 2, 7],
      [10, 7, 10, 7],
    ]);
  });

  it('keeps at most maxHunks hunks (default 8) and marks the display truncated', () => {
    const changes: Record<number, string> = {};
    for (let change = 0; change < 20; change++) changes[10 + change * 20] = `changed ${change}`;
    const display = createFileDiff({ filePath: 'f', before: text(numbered(420)), after: text(edited(420, changes)) });
    expect(DISPLAY_LIMITS.fileDiffHunks).toBe(8);
    expect(display.hunks).toHaveLength(8);
    expect(display.truncated).toBe(true);
    expect(display.hunks.map((hunk) => hunk.oldStart)).toEqual([7, 27, 47, 67, 87, 107, 127, 147]);
    expect(display.hunks[7]?.lines).toContain('+changed 7');
    expectConsistentCounts(display);

    const all = createFileDiff({
      filePath: 'f',
      before: text(numbered(420)),
      after: text(edited(420, changes)),
      maxHunks: 20,
    });
    expect(all.hunks).toHaveLength(20);
    expect(all.truncated).toBe(false);
    expect(
      createFileDiff({ filePath: 'f', before: text(numbered(420)), after: text(edited(420, changes)), maxHunks: 3 })
        .hunks,
    ).toHaveLength(3);
  });

  it('keeps at most maxLines lines in all (default 160), cutting the last hunk and fixing its counts', () => {
    const before = text(numbered(1000));
    const after = text(numbered(1000).map((line) => `${line} rewritten`));
    const display = createFileDiff({ filePath: 'f', before, after });
    expect(DISPLAY_LIMITS.fileDiffLines).toBe(160);
    expect(display.truncated).toBe(true);
    expect(totalLines(display)).toBeLessThanOrEqual(160);
    expect(totalLines(display)).toBeGreaterThan(0);
    expectConsistentCounts(display);
    // Removed lines come first, so the cut keeps the first 160 removals.
    expect(display.hunks).toEqual([
      { oldStart: 1, oldLines: 160, newStart: 0, newLines: 0, lines: numbered(160).map((line) => `-${line}`) },
    ]);
  });

  it('cuts a hunk with context and recomputes its counts; drops a cut that would leave no change', () => {
    const before = text(numbered(20));
    const after = text(edited(20, { 10: 'line ten' }));
    expect(createFileDiff({ filePath: 'f', before, after, maxLines: 5 })).toEqual({
      type: 'file_diff',
      filePath: 'f',
      truncated: true,
      hunks: [
        {
          oldStart: 7,
          oldLines: 4,
          newStart: 7,
          newLines: 4,
          lines: [' line 7', ' line 8', ' line 9', '-line 10', '+line ten'],
        },
      ],
    });
    expect(createFileDiff({ filePath: 'f', before, after, maxLines: 3 })).toEqual({
      type: 'file_diff',
      filePath: 'f',
      truncated: true,
      hunks: [],
    });
    expect(createFileDiff({ filePath: 'f', before, after, maxLines: 8 }).truncated).toBe(false);
    expect(createFileDiff({ filePath: 'f', before, after, maxLines: 7 }).truncated).toBe(true);
  });

  it('counts lines across hunks towards maxLines', () => {
    const before = text(numbered(20));
    const after = text(edited(20, { 3: 'line three', 18: 'line eighteen' }));
    const first = {
      oldStart: 1,
      oldLines: 6,
      newStart: 1,
      newLines: 6,
      lines: [' line 1', ' line 2', '-line 3', '+line three', ' line 4', ' line 5', ' line 6'],
    };
    expect(createFileDiff({ filePath: 'f', before, after, maxLines: 11 })).toEqual({
      type: 'file_diff',
      filePath: 'f',
      truncated: true,
      hunks: [
        first,
        {
          oldStart: 15,
          oldLines: 4,
          newStart: 15,
          newLines: 3,
          lines: [' line 15', ' line 16', ' line 17', '-line 18'],
        },
      ],
    });
    expect(createFileDiff({ filePath: 'f', before, after, maxLines: 10 })).toEqual({
      type: 'file_diff',
      filePath: 'f',
      truncated: true,
      hunks: [first],
    });
  });

  it('diffs a 10,000-line file with three changes', () => {
    const display = createFileDiff({
      filePath: 'big.txt',
      before: text(numbered(10_000)),
      after: text(edited(10_000, { 100: 'changed A', 5_000: 'changed B', 9_999: 'changed C' })),
    });
    expect(display.truncated).toBe(false);
    expect(display.hunks).toEqual([
      {
        oldStart: 97,
        oldLines: 7,
        newStart: 97,
        newLines: 7,
        lines: [' line 97', ' line 98', ' line 99', '-line 100', '+changed A', ' line 101', ' line 102', ' line 103'],
      },
      {
        oldStart: 4997,
        oldLines: 7,
        newStart: 4997,
        newLines: 7,
        lines: [
          ' line 4997',
          ' line 4998',
          ' line 4999',
          '-line 5000',
          '+changed B',
          ' line 5001',
          ' line 5002',
          ' line 5003',
        ],
      },
      {
        oldStart: 9996,
        oldLines: 5,
        newStart: 9996,
        newLines: 5,
        lines: [' line 9996', ' line 9997', ' line 9998', '-line 9999', '+changed C', ' line 10000'],
      },
    ]);
  });

  it('falls back to one replacement of the changed region when jsdiff gives up (maxEditLength), still a correct diff', () => {
    const count = MAX_EDIT_LENGTH + 500;
    // Every 100th line is shared, so a minimal diff would keep them; the fallback replaces them too.
    const before = text(
      Array.from({ length: count }, (_, index) => (index % 100 === 50 ? `shared ${index}` : `old ${index}`)),
    );
    const after = text(
      Array.from({ length: count }, (_, index) => (index % 100 === 50 ? `shared ${index}` : `new ${index}`)),
    );
    const display = createFileDiff({ filePath: 'f', before, after, ...unlimited });
    expect(display.hunks).toHaveLength(1);
    expect(display.hunks[0]).toMatchObject({ oldStart: 1, oldLines: count, newStart: 1, newLines: count });
    expect(display.hunks[0]?.lines.filter((line) => line.startsWith(' '))).toEqual([]);
    expect(applyDiff(before, display)).toBe(after);

    // Below the limit the shared lines are kept as context.
    const small = 300;
    const smallBefore = text(
      Array.from({ length: small }, (_, index) => (index % 100 === 50 ? `shared ${index}` : `old ${index}`)),
    );
    const smallAfter = text(
      Array.from({ length: small }, (_, index) => (index % 100 === 50 ? `shared ${index}` : `new ${index}`)),
    );
    const minimal = createFileDiff({ filePath: 'f', before: smallBefore, after: smallAfter, ...unlimited });
    expect(minimal.hunks.flatMap((hunk) => hunk.lines).filter((line) => line.startsWith(' '))).toEqual([
      ' shared 50',
      ' shared 150',
      ' shared 250',
    ]);
    expect(applyDiff(smallBefore, minimal)).toBe(smallAfter);
  });

  it('diffs a huge file: a one-line edit gives one minimal hunk, a full rewrite the bounded fallback', () => {
    const count = 100_000;
    const edit = createFileDiff({
      filePath: 'huge.txt',
      before: text(numbered(count)),
      after: text(edited(count, { 50_000: 'changed' })),
    });
    expect(edit).toEqual({
      type: 'file_diff',
      filePath: 'huge.txt',
      truncated: false,
      hunks: [
        {
          oldStart: 49_997,
          oldLines: 7,
          newStart: 49_997,
          newLines: 7,
          lines: [
            ' line 49997',
            ' line 49998',
            ' line 49999',
            '-line 50000',
            '+changed',
            ' line 50001',
            ' line 50002',
            ' line 50003',
          ],
        },
      ],
    });
    const rewrite = createFileDiff({
      filePath: 'huge.txt',
      before: text(numbered(count)),
      after: text(numbered(count).map((line) => `${line}!`)),
    });
    expect(rewrite.truncated).toBe(true);
    expect(rewrite.hunks).toEqual([
      { oldStart: 1, oldLines: 160, newStart: 0, newLines: 0, lines: numbered(160).map((line) => `-${line}`) },
    ]);
  }, 60_000);

  it('produces a correct, consistent diff for random texts', () => {
    let seed = 12345;
    const random = (bound: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % bound;
    };
    const randomText = () => {
      const lines = Array.from({ length: random(14) }, () => 'abcd'.charAt(random(4)));
      return lines.join('\n') + (lines.length > 0 && random(3) > 0 ? '\n' : '');
    };
    for (let round = 0; round < 400; round++) {
      const before = randomText();
      const after = randomText();
      const display = createFileDiff({ filePath: 'f', before, after, context: random(4), ...unlimited });
      expectConsistentCounts(display);
      expect(display.hunks.length === 0).toBe(before === after);
      expect(applyDiff(before, display)).toBe(after);
    }
  });
});

describe('formatFileDiff', () => {
  it('renders unified-diff text like diff -u', () => {
    const display = createFileDiff({
      filePath: 'src/a.txt',
      before: text(numbered(20)),
      after: text(edited(20, { 3: 'line three', 18: 'line eighteen' })),
    });
    expect(formatFileDiff(display)).toBe(
      [
        '--- a/src/a.txt',
        '+++ b/src/a.txt',
        '@@ -1,6 +1,6 @@',
        ' line 1',
        ' line 2',
        '-line 3',
        '+line three',
        ' line 4',
        ' line 5',
        ' line 6',
        '@@ -15,6 +15,6 @@',
        ' line 15',
        ' line 16',
        ' line 17',
        '-line 18',
        '+line eighteen',
        ' line 19',
        ' line 20',
        '',
      ].join('\n'),
    );
  });

  it("prints every count (jsdiff's formatPatch), notes truncation, strips a leading slash and renders nothing for no change", () => {
    const display = createFileDiff({ filePath: '/abs/f.txt', before: 'a\n', after: 'b\n' });
    expect(formatFileDiff(display)).toBe('--- a/abs/f.txt\n+++ b/abs/f.txt\n@@ -1,1 +1,1 @@\n-a\n+b\n');
    expect(formatFileDiff(createFileDiff({ filePath: 'f', before: '', after: 'x\n' }))).toBe(
      '--- a/f\n+++ b/f\n@@ -0,0 +1,1 @@\n+x\n',
    );
    expect(formatFileDiff({ ...display, truncated: true })).toBe(
      '--- a/abs/f.txt\n+++ b/abs/f.txt\n@@ -1,1 +1,1 @@\n-a\n+b\n... (diff truncated)\n',
    );
    expect(formatFileDiff(createFileDiff({ filePath: 'f', before: 'same\n', after: 'same\n' }))).toBe('');
  });
});
