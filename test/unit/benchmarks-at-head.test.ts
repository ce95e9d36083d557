import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// BENCHMARKS.md is at HEAD: every change to the workflows or the activities (what a turn costs) is followed by a full
// `npm run bench` whose run is committed to the ledger (bench/results/runs.json, which BENCHMARKS.md and its chart
// are drawn from). The ledger's newest run must have been taken at or after the last commit that changed
// src/workflows or src/activities, on a tree without uncommitted changes there.

const git = (...args: string[]): string => execFileSync('git', args, { encoding: 'utf8' }).trim();
const inGitCheckout =
  existsSync('.git') &&
  (() => {
    try {
      return git('rev-parse', '--is-inside-work-tree') === 'true';
    } catch {
      return false;
    }
  })();

interface LedgerEntry {
  date: string;
  commit: string;
  uncommittedChanges: boolean;
}

describe('the benchmark ledger', () => {
  // Outside a git checkout (an unpacked tarball) there is no history to compare with.
  it.skipIf(!inGitCheckout)('has a run at or after the last change to src/workflows or src/activities', () => {
    const ledger = JSON.parse(readFileSync('bench/results/runs.json', 'utf8')) as LedgerEntry[];
    const newest = ledger.at(-1);
    expect(newest, 'bench/results/runs.json has no run').toBeDefined();
    expect(newest!.uncommittedChanges, `the newest run (${newest!.date}) ran on uncommitted changes`).toBe(false);
    const lastChange = git('log', '-1', '--format=%H', '--', 'src/workflows', 'src/activities');
    let atOrAfter = true;
    try {
      execFileSync('git', ['merge-base', '--is-ancestor', lastChange, newest!.commit], { stdio: 'ignore' });
    } catch {
      atOrAfter = false;
    }
    expect(
      atOrAfter,
      `the newest benchmark run (${newest!.commit}, ${newest!.date}) predates ${lastChange.slice(0, 7)}, the last change to src/workflows or src/activities: run \`npm run bench\` and commit its results`,
    ).toBe(true);
  });
});
