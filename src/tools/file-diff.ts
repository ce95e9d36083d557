/**
 * Line-based unified diffs for the `file_diff` display (pure, dependency-free).
 *
 * Decisions:
 * - Texts are split on `\n` only; a `\r` stays part of its line. A final `\n` ends the last line rather than
 *   starting an empty one, so `''` has no lines and `'a\n'` has one.
 * - A last line without its `\n` differs from the same line with one, exactly as in `diff -u`: `'a\n'` → `'a'`
 *   is a change (`-a`, `+a`), and the line is followed in `lines` by {@link NO_NEWLINE_MARKER}
 *   (`\ No newline at end of file`). Marker lines are not counted in `oldLines`/`newLines` (as in `diff -u`),
 *   but they do count towards `maxLines`, and they are never separated from the line they follow.
 * - The common prefix and suffix are trimmed, then the middle is diffed with Myers' O((N+M)D) algorithm. If the
 *   middle needs more than {@link MAX_EDIT_DISTANCE} edits, or more than {@link MAX_WORK} steps, it is shown as
 *   one change instead (every old middle line removed, then every new one added): still a correct diff, only
 *   not a minimal one, and it keeps time and memory bounded for huge rewrites.
 * - Within a run of changes, removed lines come before added ones, like `diff -u`.
 * - Hunks are built like `diff -u`: `context` unchanged lines around each change, and changes separated by at
 *   most `2 * context` unchanged lines share one hunk. `oldStart`/`newStart` are 1-based; a side with no lines in
 *   the hunk names the line before it (so 0 for an empty file), as `diff -u` does.
 * - Limits: at most `maxHunks` hunks; lines are added while the total stays within `maxLines`, the hunk that
 *   would pass it is cut (its counts recomputed to match its lines; dropped if the cut leaves no change in it),
 *   and `truncated` is set whenever a hunk or a line was left out.
 */
import { DISPLAY_LIMITS } from '../contracts/defaults.js';
import type { DiffHunk, ToolDisplay } from '../contracts/tool-result.js';

export type FileDiffDisplay = Extract<ToolDisplay, { type: 'file_diff' }>;

export interface CreateFileDiffOptions {
  filePath: string;
  before: string;
  after: string;
  /** Unchanged lines shown around each change; default 3. */
  context?: number;
  /** Default `DISPLAY_LIMITS.fileDiffHunks`. */
  maxHunks?: number;
  /** Total of all hunks' `lines`, marker lines included; default `DISPLAY_LIMITS.fileDiffLines`. */
  maxLines?: number;
}

/** Follows, in a hunk's `lines`, a last line that has no `\n` (as in `diff -u`). */
export const NO_NEWLINE_MARKER = '\\ No newline at end of file';

/** Largest edit distance of the trimmed middle that is diffed line by line (bounds memory to ~D² integers). */
export const MAX_EDIT_DISTANCE = 2_000;

/** Largest number of Myers steps (diagonals tried plus lines compared) before falling back to one change. */
export const MAX_WORK = 20_000_000;

const DEFAULT_CONTEXT = 3;

/** A unified diff of two texts as a `file_diff` display: at most `maxHunks` hunks and `maxLines` lines in all, `truncated` when anything was left out. */
export function createFileDiff(options: CreateFileDiffOptions): FileDiffDisplay {
  const context = limit(options.context, DEFAULT_CONTEXT);
  const maxHunks = limit(options.maxHunks, DISPLAY_LIMITS.fileDiffHunks);
  const maxLines = limit(options.maxLines, DISPLAY_LIMITS.fileDiffLines);

  const before = splitLines(options.before);
  const after = splitLines(options.after);
  const [oldIds, newIds] = internLines(before, after);
  const entries = toEntries(diffIds(oldIds, newIds));

  const hunks: DiffHunk[] = [];
  let used = 0;
  let truncated = false;
  for (const [start, end] of groupChanges(entries, context)) {
    if (hunks.length >= maxHunks) {
      truncated = true;
      break;
    }
    const units = hunkUnits(entries, start, end, before, after);
    const cost = units.reduce((sum, unit) => sum + unitCost(unit), 0);
    if (used + cost <= maxLines) {
      hunks.push(toHunk(entries[start], units));
      used += cost;
      continue;
    }
    truncated = true;
    const kept: Unit[] = [];
    for (const unit of units) {
      if (used + unitCost(unit) > maxLines) break;
      kept.push(unit);
      used += unitCost(unit);
    }
    if (kept.some((unit) => unit.prefix !== ' ')) hunks.push(toHunk(entries[start], kept));
    break;
  }
  return { type: 'file_diff', filePath: options.filePath, hunks, truncated };
}

/**
 * Renders a file_diff display as unified-diff text (`--- a/…`, `+++ b/…`, `@@ -1,3 +1,4 @@`, lines prefixed ' ', '-', '+'), for logs and plain UIs.
 *
 * Every line ends with `\n`, as `diff -u` prints; a count of 1 is left out of a range (`@@ -5 +5 @@`), as `diff -u`
 * does; leading `/` of the path are dropped after `a/`/`b/`. No hunks and not truncated gives `''`; a truncated
 * display ends with the line `... (diff truncated)`.
 */
export function formatFileDiff(display: FileDiffDisplay): string {
  if (display.hunks.length === 0 && !display.truncated) return '';
  const path = display.filePath.replace(/^\/+/, '');
  const out = [`--- a/${path}`, `+++ b/${path}`];
  for (const hunk of display.hunks) {
    out.push(`@@ -${range(hunk.oldStart, hunk.oldLines)} +${range(hunk.newStart, hunk.newLines)} @@`, ...hunk.lines);
  }
  if (display.truncated) out.push('... (diff truncated)');
  return `${out.join('\n')}\n`;
}

function range(start: number, count: number): string {
  return count === 1 ? `${start}` : `${start},${count}`;
}

function limit(value: number | undefined, fallback: number): number {
  if (value === undefined || Number.isNaN(value)) return fallback;
  return Math.max(0, Math.floor(value));
}

interface SplitText {
  lines: string[];
  missingFinalNewline: boolean;
}

function splitLines(text: string): SplitText {
  if (text === '') return { lines: [], missingFinalNewline: false };
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') {
    lines.pop();
    return { lines, missingFinalNewline: false };
  }
  return { lines, missingFinalNewline: true };
}

/** Numbers the lines of both texts so equal lines get equal ids; a last line without `\n` gets its own ids. */
function internLines(before: SplitText, after: SplitText): [Int32Array, Int32Array] {
  const ids = new Map<string, number>();
  const noNewlineIds = new Map<string, number>();
  const toIds = (text: SplitText): Int32Array => {
    const out = new Int32Array(text.lines.length);
    text.lines.forEach((line, index) => {
      const map = text.missingFinalNewline && index === text.lines.length - 1 ? noNewlineIds : ids;
      let id = map.get(line);
      if (id === undefined) {
        id = ids.size + noNewlineIds.size;
        map.set(line, id);
      }
      out[index] = id;
    });
    return out;
  };
  return [toIds(before), toIds(after)];
}

type Edit = 'equal' | 'delete' | 'insert';

function repeat(edit: Edit, count: number): Edit[] {
  return new Array<Edit>(count).fill(edit);
}

/** Edit script turning `a` into `b`: common prefix and suffix, and Myers (or the fallback) in between. */
function diffIds(a: Int32Array, b: Int32Array): Edit[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const middleA = a.subarray(start, endA);
  const middleB = b.subarray(start, endB);
  const middle = myers(middleA, middleB) ?? [...repeat('delete', middleA.length), ...repeat('insert', middleB.length)];
  return [...repeat('equal', start), ...middle, ...repeat('equal', a.length - endA)];
}

function at(array: Int32Array, index: number): number {
  return array[index] ?? 0;
}

/** Myers' greedy shortest edit script, or undefined past {@link MAX_EDIT_DISTANCE} or {@link MAX_WORK}. */
function myers(a: Int32Array, b: Int32Array): Edit[] | undefined {
  const n = a.length;
  const m = b.length;
  if (n === 0 || m === 0) return [...repeat('delete', n), ...repeat('insert', m)];
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  // trace[d][k + d] = furthest x on diagonal k after d edits.
  const trace: Int32Array[] = [];
  let work = 0;
  for (let d = 0; d <= Math.min(max, MAX_EDIT_DISTANCE); d++) {
    for (let k = -d; k <= d; k += 2) {
      const down = k === -d || (k !== d && at(v, offset + k - 1) < at(v, offset + k + 1));
      let x = down ? at(v, offset + k + 1) : at(v, offset + k - 1) + 1;
      let y = x - k;
      const startX = x;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      work += x - startX + 1;
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(trace, n, m, d);
    }
    trace.push(v.slice(offset - d, offset + d + 1));
    if (work > MAX_WORK) return undefined;
  }
  return undefined;
}

function backtrack(trace: Int32Array[], n: number, m: number, distance: number): Edit[] {
  const reversed: Edit[] = [];
  let x = n;
  let y = m;
  for (let d = distance; d > 0; d--) {
    const previous = trace[d - 1] ?? new Int32Array(0);
    const k = x - y;
    const down = k === -d || (k !== d && at(previous, k - 1 + d - 1) < at(previous, k + 1 + d - 1));
    const previousK = down ? k + 1 : k - 1;
    const previousX = at(previous, previousK + d - 1);
    const previousY = previousX - previousK;
    while (x > previousX && y > previousY) {
      reversed.push('equal');
      x--;
      y--;
    }
    reversed.push(down ? 'insert' : 'delete');
    x = previousX;
    y = previousY;
  }
  while (x > 0 && y > 0) {
    reversed.push('equal');
    x--;
    y--;
  }
  return reversed.reverse();
}

/** One edit with the 0-based positions in the old and new text before it. */
interface Entry {
  edit: Edit;
  oldPos: number;
  newPos: number;
}

function toEntries(edits: Edit[]): Entry[] {
  let oldPos = 0;
  let newPos = 0;
  return edits.map((edit) => {
    const entry = { edit, oldPos, newPos };
    if (edit !== 'insert') oldPos++;
    if (edit !== 'delete') newPos++;
    return entry;
  });
}

/** [start, end) ranges of entries, one per hunk: changes with their context, merged when close. */
function groupChanges(entries: Entry[], context: number): Array<[number, number]> {
  const groups: Array<[number, number]> = [];
  let first = -1;
  let last = -1;
  const close = () => {
    if (first >= 0) groups.push([Math.max(0, first - context), Math.min(entries.length, last + 1 + context)]);
  };
  entries.forEach((entry, index) => {
    if (entry.edit === 'equal') return;
    if (first >= 0 && index - last - 1 <= 2 * context) {
      last = index;
      return;
    }
    close();
    first = index;
    last = index;
  });
  close();
  return groups;
}

/** One hunk line, with the marker that must follow it when it is a last line without `\n`. */
interface Unit {
  prefix: ' ' | '-' | '+';
  text: string;
  marker: boolean;
}

function unitCost(unit: Unit): number {
  return unit.marker ? 2 : 1;
}

function hunkUnits(entries: Entry[], start: number, end: number, before: SplitText, after: SplitText): Unit[] {
  const isLastWithoutNewline = (text: SplitText, index: number) => text.missingFinalNewline && index === text.lines.length - 1;
  const units: Unit[] = [];
  let deleted: Unit[] = [];
  let inserted: Unit[] = [];
  const flush = () => {
    units.push(...deleted, ...inserted);
    deleted = [];
    inserted = [];
  };
  for (let index = start; index < end; index++) {
    const entry = entries[index];
    if (entry === undefined) break;
    if (entry.edit === 'equal') {
      flush();
      units.push({ prefix: ' ', text: before.lines[entry.oldPos] ?? '', marker: isLastWithoutNewline(before, entry.oldPos) });
    } else if (entry.edit === 'delete') {
      deleted.push({ prefix: '-', text: before.lines[entry.oldPos] ?? '', marker: isLastWithoutNewline(before, entry.oldPos) });
    } else {
      inserted.push({ prefix: '+', text: after.lines[entry.newPos] ?? '', marker: isLastWithoutNewline(after, entry.newPos) });
    }
  }
  flush();
  return units;
}

function toHunk(first: Entry | undefined, units: Unit[]): DiffHunk {
  const oldLines = units.filter((unit) => unit.prefix !== '+').length;
  const newLines = units.filter((unit) => unit.prefix !== '-').length;
  const oldPos = first?.oldPos ?? 0;
  const newPos = first?.newPos ?? 0;
  return {
    oldStart: oldLines === 0 ? oldPos : oldPos + 1,
    oldLines,
    newStart: newLines === 0 ? newPos : newPos + 1,
    newLines,
    lines: units.flatMap((unit) => (unit.marker ? [unit.prefix + unit.text, NO_NEWLINE_MARKER] : [unit.prefix + unit.text])),
  };
}
