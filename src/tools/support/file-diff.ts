/**
 * Line-based unified diffs for the `file_diff` display: jsdiff (`diff`) computes the hunks, this module bounds them.
 *
 * Decisions:
 * - jsdiff's line dialect: a `\r` stays part of its line, a last line without `\n` differs from the same line with
 *   one and is followed in `lines` by {@link NO_NEWLINE_MARKER}, removed lines come before added ones, changes at
 *   most `2 * context` unchanged lines apart share a hunk — all as `diff -u`. Marker lines are not counted in
 *   `oldLines`/`newLines`.
 * - `oldStart`/`newStart` are 1-based; a side with no lines in the hunk names the line before it (0 for an empty
 *   file), as `diff -u` prints it (jsdiff's structured hunks name the line after; converted both ways here).
 * - Before jsdiff runs, the lines both texts share at the start and at the end are left out (all but `context` of
 *   them), so a small edit of a large file costs one linear scan. If jsdiff gives up — more than
 *   {@link MAX_EDIT_LENGTH} edits, or {@link DIFF_TIMEOUT_MS} — the changed region is shown as one hunk (every old
 *   line removed, then every new one added): still a correct diff, only not a minimal one.
 * - Bounding: at most `maxHunks` hunks; lines are added while the total stays within `maxLines` (markers count and
 *   are never separated from their line), the hunk that would pass it is cut (its counts recomputed; dropped if the
 *   cut leaves no change in it), and `truncated` is set whenever a hunk or a line was left out.
 */
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch } from 'diff';
import { DISPLAY_LIMITS } from '../../contracts/defaults.js';
import type { DiffHunk, ToolDisplay } from '../../contracts/tool-result.js';

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

/** jsdiff's `maxEditLength`: past this many inserted plus removed lines the changed region becomes one hunk. */
export const MAX_EDIT_LENGTH = 1_000;

/** jsdiff's `timeout`: a safety net for inputs whose diff is slow even within {@link MAX_EDIT_LENGTH}. */
export const DIFF_TIMEOUT_MS = 2_000;

const DEFAULT_CONTEXT = 3;

/** A unified diff of two texts as a `file_diff` display: at most `maxHunks` hunks and `maxLines` lines in all, `truncated` when anything was left out. */
export function createFileDiff(options: CreateFileDiffOptions): FileDiffDisplay {
  const context = limit(options.context, DEFAULT_CONTEXT);
  const maxHunks = limit(options.maxHunks, DISPLAY_LIMITS.fileDiffHunks);
  const maxLines = limit(options.maxLines, DISPLAY_LIMITS.fileDiffLines);

  const hunks: DiffHunk[] = [];
  let used = 0;
  for (const hunk of diffHunks({ before: options.before, after: options.after, context })) {
    if (hunks.length >= maxHunks) return { type: 'file_diff', filePath: options.filePath, hunks, truncated: true };
    if (used + hunk.lines.length <= maxLines) {
      hunks.push(hunk);
      used += hunk.lines.length;
      continue;
    }
    const cut = cutHunk(hunk, maxLines - used);
    if (cut !== undefined) hunks.push(cut);
    return { type: 'file_diff', filePath: options.filePath, hunks, truncated: true };
  }
  return { type: 'file_diff', filePath: options.filePath, hunks, truncated: false };
}

/**
 * Renders a file_diff display as unified-diff text with jsdiff's `formatPatch` (`--- a/…`, `+++ b/…`,
 * `@@ -1,3 +1,4 @@`, lines prefixed ' ', '-', '+'), for logs and plain UIs.
 *
 * Leading `/` of the path are dropped after `a/`/`b/`. No hunks and not truncated gives `''`; a truncated display
 * ends with the line `... (diff truncated)`.
 */
export function formatFileDiff(display: FileDiffDisplay): string {
  if (display.hunks.length === 0 && !display.truncated) return '';
  const path = display.filePath.replace(/^\/+/, '');
  const hunks = display.hunks.map((hunk) => ({
    ...hunk,
    oldStart: hunk.oldLines === 0 ? hunk.oldStart + 1 : hunk.oldStart,
    newStart: hunk.newLines === 0 ? hunk.newStart + 1 : hunk.newStart,
  }));
  const text = formatPatch(
    { oldFileName: `a/${path}`, newFileName: `b/${path}`, oldHeader: undefined, newHeader: undefined, hunks },
    FILE_HEADERS_ONLY,
  );
  return display.truncated ? `${text}... (diff truncated)\n` : text;
}

function limit(value: number | undefined, fallback: number): number {
  if (value === undefined || Number.isNaN(value)) return fallback;
  return Math.max(0, Math.floor(value));
}

/** Every hunk of the diff, unbounded, with `diff -u` starts. */
function diffHunks({ before, after, context }: { before: string; after: string; context: number }): DiffHunk[] {
  if (before === after) return [];
  const oldLines = splitLines(before);
  const newLines = splitLines(after);
  let prefix = 0;
  while (prefix < oldLines.length && prefix < newLines.length && oldLines[prefix] === newLines[prefix]) prefix++;
  let suffix = 0;
  while (
    suffix < oldLines.length - prefix &&
    suffix < newLines.length - prefix &&
    oldLines[oldLines.length - 1 - suffix] === newLines[newLines.length - 1 - suffix]
  ) {
    suffix++;
  }
  const skipped = Math.max(0, prefix - context);
  const skippedAtEnd = Math.max(0, suffix - context);
  const patch = structuredPatch(
    '',
    '',
    oldLines.slice(skipped, oldLines.length - skippedAtEnd).join(''),
    newLines.slice(skipped, newLines.length - skippedAtEnd).join(''),
    undefined,
    undefined,
    { context, maxEditLength: MAX_EDIT_LENGTH, timeout: DIFF_TIMEOUT_MS },
  );
  if (patch === undefined) {
    return [
      replacementHunk({
        removed: oldLines.slice(prefix, oldLines.length - suffix),
        added: newLines.slice(prefix, newLines.length - suffix),
        linesBefore: prefix,
      }),
    ];
  }
  return patch.hunks.map((hunk) => ({
    oldStart: skipped + (hunk.oldLines === 0 ? hunk.oldStart - 1 : hunk.oldStart),
    oldLines: hunk.oldLines,
    newStart: skipped + (hunk.newLines === 0 ? hunk.newStart - 1 : hunk.newStart),
    newLines: hunk.newLines,
    lines: hunk.lines,
  }));
}

/** Lines with their `\n` kept, so a last line without one differs from the same line with one. */
function splitLines(text: string): string[] {
  return text === '' ? [] : text.split(/(?<=\n)/);
}

/** The fallback when jsdiff gives up: the changed region as one hunk without context. */
function replacementHunk({
  removed,
  added,
  linesBefore,
}: {
  removed: string[];
  added: string[];
  linesBefore: number;
}): DiffHunk {
  const hunkLines = (prefix: '-' | '+', line: string) =>
    line.endsWith('\n') ? [prefix + line.slice(0, -1)] : [prefix + line, NO_NEWLINE_MARKER];
  return {
    oldStart: removed.length === 0 ? linesBefore : linesBefore + 1,
    oldLines: removed.length,
    newStart: added.length === 0 ? linesBefore : linesBefore + 1,
    newLines: added.length,
    lines: [...removed.flatMap((line) => hunkLines('-', line)), ...added.flatMap((line) => hunkLines('+', line))],
  };
}

/** The first lines of `hunk` within `budget` (a marker stays with its line), counts recomputed; undefined when no change is left. */
function cutHunk(hunk: DiffHunk, budget: number): DiffHunk | undefined {
  let end = 0;
  for (;;) {
    const next = hunk.lines[end + 1] === NO_NEWLINE_MARKER ? end + 2 : end + 1;
    if (end >= hunk.lines.length || next > budget) break;
    end = next;
  }
  const lines = hunk.lines.slice(0, end);
  if (!lines.some((line) => line.startsWith('-') || line.startsWith('+'))) return undefined;
  const oldLines = lines.filter((line) => line.startsWith(' ') || line.startsWith('-')).length;
  const newLines = lines.filter((line) => line.startsWith(' ') || line.startsWith('+')).length;
  // The 0-based position of the hunk's first line on each side, whatever its count was.
  const oldPosition = hunk.oldLines === 0 ? hunk.oldStart : hunk.oldStart - 1;
  const newPosition = hunk.newLines === 0 ? hunk.newStart : hunk.newStart - 1;
  return {
    oldStart: oldLines === 0 ? oldPosition : oldPosition + 1,
    oldLines,
    newStart: newLines === 0 ? newPosition : newPosition + 1,
    newLines,
    lines,
  };
}
