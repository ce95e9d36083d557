// README.md quotes the newest benchmark run: the paragraph between its bench-summary markers is what
// bench/readme-summary.ts writes for the run in bench/results/ (latency.json and throughput.json, written together by
// `npm run bench`), so the front page never shows figures no run produced, nor an older run's.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  README_SUMMARY_END,
  README_SUMMARY_START,
  readmeBenchSummary,
  readmeSummaryOf,
  withReadmeSummary,
} from '../../bench/readme-summary.js';
import type { PairRow, ThroughputRatioRow } from '../../bench/report.js';

const words = (text: string): string => text.replace(/\s+/g, ' ').trim();

function newestRun() {
  const latency = JSON.parse(readFileSync('bench/results/latency.json', 'utf8')) as { date: string; pairs: PairRow[] };
  const throughput = JSON.parse(readFileSync('bench/results/throughput.json', 'utf8')) as {
    ratios: ThroughputRatioRow[];
  };
  return { date: latency.date, pairs: latency.pairs, throughputRatios: throughput.ratios };
}

describe("README.md's benchmark paragraph", () => {
  it('is the newest run in bench/results, with its date, medians and spreads', () => {
    const readme = readFileSync('README.md', 'utf8');
    const quoted = readmeSummaryOf(readme);
    expect(quoted, `README.md has no "${README_SUMMARY_START}" … "${README_SUMMARY_END}" block`).toBeDefined();
    const run = newestRun();
    expect(words(quoted!)).toBe(words(readmeBenchSummary(run)));
    expect(quoted).toContain(run.date.slice(0, 10));
  });

  it('names each ratio with its spread, and fails on a README whose figures were edited by hand', () => {
    const run = newestRun();
    const one = run.pairs.find(
      (row) => row.calls === 1 && row.contender === 'Switchyard' && row.against === 'raw Temporal, local activities',
    );
    expect(one).toBeDefined();
    const summary = readmeBenchSummary(run);
    expect(summary).toContain(`${one!.median.toFixed(2)} (${one!.q1.toFixed(2)}–${one!.q3.toFixed(2)}) at one Read`);
    const readme = withReadmeSummary(readFileSync('README.md', 'utf8'), summary);
    const edited = readme.replace(`${one!.median.toFixed(2)} (`, `${(one!.median - 0.1).toFixed(2)} (`);
    expect(words(readmeSummaryOf(edited)!)).not.toBe(words(summary));
    expect(summary.split('\n').every((line) => line.length <= 120)).toBe(true);
  });

  it('replaces only the text between the markers, and refuses a README without them', () => {
    const readme = `# T\n\n${README_SUMMARY_START}\nold\n${README_SUMMARY_END}\n\n## Next\n`;
    expect(withReadmeSummary(readme, 'new')).toBe(
      `# T\n\n${README_SUMMARY_START}\nnew\n${README_SUMMARY_END}\n\n## Next\n`,
    );
    expect(() => withReadmeSummary('# T\n', 'new')).toThrow(/needs one/);
  });
});
