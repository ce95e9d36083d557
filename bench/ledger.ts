// The ledger of `npm run bench` runs (bench/results/runs.json): one entry per full run, appended by bench/run.ts,
// so a change's effect shows beside the runs before it. bench/report.ts draws the last ones (runs.svg, BENCHMARKS.md).
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { ratios } from './report.js';
import type { BenchReport, LedgerEntry } from './report.js';

/** Runs with fewer rounds than this are trials: they are not appended. */
export const MIN_LEDGER_ROUNDS = 10;

const run = promisify(execFile);

/** The commit checked out in `repoDir`, and whether src/workflows or src/activities differ from it. */
export async function gitState(repoDir: string): Promise<{ commit: string; uncommittedChanges: boolean }> {
  try {
    const head = await run('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoDir });
    const status = await run('git', ['status', '--porcelain', '--', 'src/workflows', 'src/activities'], {
      cwd: repoDir,
    });
    return { commit: head.stdout.trim(), uncommittedChanges: status.stdout.trim() !== '' };
  } catch {
    return { commit: 'unknown', uncommittedChanges: false };
  }
}

const round = (value: number, digits: number): number => Math.round(value * 10 ** digits) / 10 ** digits;

/** The ledger entry of a finished run. */
export function ledgerEntry(
  report: BenchReport,
  git: { commit: string; uncommittedChanges: boolean },
  throughputSeconds: number,
): LedgerEntry {
  const ratioAt = (calls: number): number | null =>
    ratios(report.latency).find((row) => row.calls === calls)?.ratio ?? null;
  const p50At = (calls: number): number | null =>
    report.latency.find(
      (row) => row.calls === calls && row.contender === 'Switchyard' && /per turn$/.test(row.scenario),
    )?.p50 ?? null;
  const throughputAt = (sessions: number) =>
    report.throughput.find((row) => row.sessions === sessions && row.contender === 'Switchyard');
  const pairedAt = (against: string, calls: number): number | null =>
    report.pairs.find(
      (row) =>
        row.contender === 'Switchyard' &&
        row.against === against &&
        row.calls === calls &&
        /per turn$/.test(row.scenario),
    )?.median ?? null;
  const loadRatioAt = (sessions: number) => report.throughputRatios.find((row) => row.sessions === sessions);
  const at8 = throughputAt(8);
  return {
    date: report.date,
    commit: git.commit,
    uncommittedChanges: git.uncommittedChanges,
    rounds: report.rounds,
    ...(report.latencyRounds === undefined ? {} : { latencyRounds: report.latencyRounds }),
    throughputSeconds,
    ratioToRaw: { '1': ratioAt(1), '4': ratioAt(4), '16': ratioAt(16) },
    switchyardP50Ms: { '1': p50At(1), '4': p50At(4), '16': p50At(16) },
    callsPerSecond: {
      '1': throughputAt(1)?.callsPerSecond ?? null,
      '8': at8?.callsPerSecond ?? null,
      '64': throughputAt(64)?.callsPerSecond ?? null,
    },
    // benchCpuPercent is CPU seconds / wall seconds × 100 (bench/run.ts `throughput`), so CPU ms = % × seconds × 10.
    benchCpuMsPerCallAt8Sessions: at8 === undefined || at8.calls === 0 ? null : round(at8.benchCpuMsPerCall, 2),
    waitingSessions: report.memory?.sessions ?? null,
    rssMiBPerWaitingSession: report.memory?.rssMiBPerSession ?? null,
    pairedToRaw: {
      '1': pairedAt('raw Temporal', 1),
      '4': pairedAt('raw Temporal', 4),
      '16': pairedAt('raw Temporal', 16),
    },
    pairedToRawLocal: {
      '1': pairedAt('raw Temporal, local activities', 1),
      '4': pairedAt('raw Temporal, local activities', 4),
      '16': pairedAt('raw Temporal, local activities', 16),
    },
    throughputToRawLocal: {
      '1': loadRatioAt(1)?.callsPerSecond.median ?? null,
      '8': loadRatioAt(8)?.callsPerSecond.median ?? null,
      '64': loadRatioAt(64)?.callsPerSecond.median ?? null,
    },
    cpuPerCallToRawLocalAt8: loadRatioAt(8)?.cpuPerCall.median ?? null,
    historyBytesPerCallTenReads:
      report.history.find((row) => row.contender === 'Switchyard' && row.scenario === 'ten Reads')?.bytesPerCall ??
      null,
  };
}

/** The ledger's entries, oldest first; none when the file does not exist yet. Throws on a file that is not a list. */
export async function readLedger(file: string): Promise<LedgerEntry[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const parsed: unknown = JSON.parse(text);
  if (!Array.isArray(parsed)) throw new Error(`${file} is not a JSON list of runs: not appending to it`);
  return parsed as LedgerEntry[];
}

/**
 * Appends the run to the ledger unless it is a trial (fewer than MIN_LEDGER_ROUNDS rounds), which it says on stderr.
 * Returns the ledger as it now is.
 */
export async function recordRun(options: {
  file: string;
  report: BenchReport;
  /** Taken when the run started (`gitState`): the code the run loaded. */
  git: { commit: string; uncommittedChanges: boolean };
  throughputSeconds: number;
}): Promise<LedgerEntry[]> {
  const entries = await readLedger(options.file);
  if (options.report.rounds < MIN_LEDGER_ROUNDS) {
    process.stderr.write(
      `[bench] not appended to ${options.file}: BENCH_ROUNDS=${options.report.rounds} is a trial run (the ledger takes runs of ${MIN_LEDGER_ROUNDS} rounds or more)\n`,
    );
    return entries;
  }
  entries.push(ledgerEntry(options.report, options.git, options.throughputSeconds));
  await writeFile(options.file, `${JSON.stringify(entries, null, 2)}\n`);
  return entries;
}
