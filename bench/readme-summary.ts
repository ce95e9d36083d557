// The benchmark paragraph of README.md: the newest `npm run bench` run's same-round ratios, with their spread and date,
// written by bench/run.ts between the two markers below and checked against bench/results/ by
// test/unit/readme-bench-summary.test.ts, so the front page never quotes figures no run produced.
import type { PairRow, ThroughputRatioRow } from './report.js';
import { formatPaired } from './stats.js';

export const README_SUMMARY_START = '<!-- bench-summary:start (written by npm run bench) -->';
export const README_SUMMARY_END = '<!-- bench-summary:end -->';

const LOCAL = 'raw Temporal, local activities';
const REGULAR = 'raw Temporal';

/** The paragraph for one run: latency ratios at 1 / 4 / 16 Reads against both hand-written sessions, then load. */
export function readmeBenchSummary(run: {
  date: string;
  pairs: readonly PairRow[];
  throughputRatios: readonly ThroughputRatioRow[];
}): string {
  const cell = (calls: number, against: string): string =>
    formatPaired(
      run.pairs.find((row) => row.calls === calls && row.contender === 'Switchyard' && row.against === against),
    );
  const pairs = run.pairs.find((row) => row.calls === 1 && row.contender === 'Switchyard')?.pairs ?? 0;
  const atEight = run.throughputRatios.find((row) => row.sessions === 8);
  const load =
    atEight === undefined
      ? ''
      : ` Under load (8 sessions of 4-Read turns), Switchyard served ${formatPaired(atEight.callsPerSecond)} × that ` +
        `session's calls per second at ${formatPaired(atEight.cpuPerCall)} × its CPU per call.`;
  return wrap(
    `Measured by \`npm run bench\` on ${run.date.slice(0, 10)}: a turn's time over a hand-written Temporal session's ` +
      `in the same round, the median of ${pairs} alternating pairs with the interquartile range in brackets (below ` +
      `1.00 Switchyard is faster). Against a session that runs each Read as a local activity and nothing else — no ` +
      `validation, rules, hooks, approval, budget or events: ${cell(1, LOCAL)} at one Read per turn, ${cell(4, LOCAL)} ` +
      `at four, ${cell(16, LOCAL)} at sixteen; against the same session with regular activities: ${cell(1, REGULAR)}, ` +
      `${cell(4, REGULAR)} and ${cell(16, REGULAR)}.${load} On a shared machine absolute times move by a factor of ` +
      `two within an hour; the ratios, every run's table and what each contender does are in ` +
      `[BENCHMARKS.md](BENCHMARKS.md).`,
  );
}

/** Words joined into lines of at most 120 characters, as the rest of README.md is written. */
function wrap(text: string, width = 120): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines.join('\n');
}

/** `readme` with the text between the markers replaced by `summary` (the markers must be there, once each). */
export function withReadmeSummary(readme: string, summary: string): string {
  const start = readme.indexOf(README_SUMMARY_START);
  const end = readme.indexOf(README_SUMMARY_END);
  if (start === -1 || end === -1 || end < start || readme.indexOf(README_SUMMARY_START, start + 1) !== -1)
    throw new Error(`README.md needs one "${README_SUMMARY_START}" followed by one "${README_SUMMARY_END}"`);
  return `${readme.slice(0, start + README_SUMMARY_START.length)}\n${summary}\n${readme.slice(end)}`;
}

/** The text between the markers, as written there (undefined when the markers are missing). */
export function readmeSummaryOf(readme: string): string | undefined {
  const start = readme.indexOf(README_SUMMARY_START);
  const end = readme.indexOf(README_SUMMARY_END);
  if (start === -1 || end === -1 || end < start) return undefined;
  return readme.slice(start + README_SUMMARY_START.length, end).trim();
}
