import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { formatPaired } from './stats.js';
import type { PairedRatio, Stats } from './stats.js';

/** One full run's headline figures, as bench/ledger.ts records them in bench/results/runs.json; a figure the run did
 * not produce is null. */
export interface LedgerEntry {
  date: string;
  /** `git rev-parse --short HEAD` when the run started; 'unknown' outside a git work tree. */
  commit: string;
  /** True when `git status --porcelain -- src/workflows src/activities` listed anything: the code measured is not the commit's. */
  uncommittedChanges: boolean;
  rounds: number;
  /** Rounds, so pairs, of the Reads-per-turn scenarios; absent before they took more than `rounds`. */
  latencyRounds?: number;
  throughputSeconds: number;
  /** Switchyard (as shipped) p50 / raw Temporal p50, by calls per turn. */
  ratioToRaw: { '1': number | null; '4': number | null; '16': number | null };
  /** Switchyard (as shipped) p50 turn latency in ms, by calls per turn. */
  switchyardP50Ms: { '1': number | null; '4': number | null; '16': number | null };
  /** Sustained calls per second, by number of sessions. */
  callsPerSecond: { '1': number | null; '8': number | null; '64': number | null };
  /** Bench-process CPU (client and workers) per call at 8 sessions, in ms. */
  benchCpuMsPerCallAt8Sessions: number | null;
  waitingSessions: number | null;
  /** Bench-process rss growth per session waiting for an approval, in MiB. */
  rssMiBPerWaitingSession: number | null;
  /**
   * Median of same-round ratios, Switchyard (as shipped) over each hand-written session, by Reads per turn (runs from
   * 2026-12-07 13:00 on; absent before).
   */
  pairedToRaw?: { '1': number | null; '4': number | null; '16': number | null };
  pairedToRawLocal?: { '1': number | null; '4': number | null; '16': number | null };
  /** Calls per second, Switchyard over the hand-written local-activity session, median of alternating windows. */
  throughputToRawLocal?: { '1': number | null; '8': number | null; '64': number | null };
  /** Bench-process CPU per call at 8 sessions, Switchyard over the local-activity session, likewise. */
  cpuPerCallToRawLocalAt8?: number | null;
  /** Switchyard's history bytes per call in a turn of ten Reads. */
  historyBytesPerCallTenReads?: number | null;
}

/** Same-round ratios of one contender over another in one scenario. */
export interface PairRow extends PairedRatio {
  scenario: string;
  calls: number;
  contender: string;
  against: string;
}

/** Switchyard over the hand-written local-activity session under the same load, window by window. */
export interface ThroughputRatioRow {
  sessions: number;
  callsPerSecond: PairedRatio;
  cpuPerCall: PairedRatio;
}

export interface ContenderRow extends Stats {
  scenario: string;
  calls: number;
  contender: string;
}

/**
 * The history scenario whose Read results are 15 bytes each (a one-line file): its bytes per call are what the pipeline
 * adds, the figure the 2,048-byte target applies to. The `ten Reads` row reads the 2,000-byte file of the latency
 * scenarios.
 */
export const TEN_READS_ONE_LINE = 'ten Reads of a one-line file';

export interface HistoryRow {
  contender: string;
  scenario: string;
  calls: number;
  events: number;
  bytes: number;
  eventsPerCall: number;
  bytesPerCall: number;
}

/** One event type's share of a turn's history. */
export interface HistoryBreakdownRow {
  eventType: string;
  events: number;
  bytes: number;
}

export interface ThroughputRow {
  contender: string;
  sessions: number;
  turns: number;
  calls: number;
  errors: number;
  seconds: number;
  callsPerSecond: number;
  p50: number;
  p95: number;
  /** CPU of the benchmark process (client and workers), as a percentage of one core over the window. */
  benchCpuPercent: number;
  /** The same, in ms per call. */
  benchCpuMsPerCall: number;
  /** CPU of the dev server process, likewise (absent for an external server). */
  serverCpuPercent?: number;
}

/**
 * The memory scenario's process (bench/memory.ts: one worker and its client) with N sessions waiting for an approval, against before they started (MiB = 2^20 bytes).
 * rss covers every thread (the SDK's workflow thread, where the sessions' workflows live, and its Rust core);
 * heapUsed is the main thread's V8 heap only (client, activities), not the workflow thread's.
 */
export interface WaitingMemory {
  sessions: number;
  /** True when `global.gc` was there (`--expose-gc`) and ran before each reading; false: readings as they were. */
  gcForced: boolean;
  /** From the first session's start until every session's approval request was seen (polled, so rounded up). */
  secondsUntilWaiting: number;
  rssBeforeMiB: number;
  rssAfterMiB: number;
  heapUsedBeforeMiB: number;
  heapUsedAfterMiB: number;
  rssMiBPerSession: number;
  heapUsedMiBPerSession: number;
  /** After every session was denied and ended: what of the growth stays with the process. */
  rssAfterEndMiB: number;
  heapUsedAfterEndMiB: number;
  /** Sessions whose workflow was closed once they were ended (should be all of them). */
  ended: number;
}

export interface BenchReport {
  date: string;
  machine: { cpus: number; cpuModel: string; memoryGiB: number; node: string; platform: string };
  versions: { temporalSdk: string; server: string };
  rounds: number;
  /** Rounds of the Reads-per-turn scenarios (`BENCH_LATENCY_ROUNDS`); absent in reports written before, which took `rounds`. */
  latencyRounds?: number;
  latency: ContenderRow[];
  switchyardOnly: ContenderRow[];
  history: HistoryRow[];
  /** Switchyard's ten-Reads turn by event type: where its history bytes go. */
  historyBreakdown: HistoryBreakdownRow[];
  /** The model text of that turn's ten results: a result is recorded at least twice (activity result, update outcome). */
  tenReadsModelTextBytes: number;
  throughput: ThroughputRow[];
  throughputRatios: ThroughputRatioRow[];
  /** Write and Bash turns, eager activity dispatch on and off. */
  mutating: ContenderRow[];
  /** Every scenario's same-round ratios. */
  pairs: PairRow[];
  /** Absent when the scenario did not run. */
  memory?: WaitingMemory;
  durationSeconds: number;
}

const CONTENDER_COLOURS: Record<string, string> = {
  'in-process Promise.all': '#9aa5b1',
  'raw Temporal': '#3b82f6',
  'raw Temporal, local activities': '#93c5fd',
  Switchyard: '#f59e0b',
  'Switchyard, regular activities': '#b45309',
};

/** A calls-per-turn scenario's p50 ratios to raw Temporal's. */
interface Ratios {
  scenario: string;
  calls: number;
  /** Switchyard as shipped. */
  ratio: number;
  /** Switchyard with regular activities only. */
  regularRatio?: number;
  /** The hand-written session with local activities. */
  rawLocalRatio?: number;
}

/**
 * Switchyard's p50 over raw Temporal's, per calls-per-turn scenario: as shipped, and with regular activities only;
 * and the hand-written session with local activities over the same.
 */
export function ratios(rows: readonly ContenderRow[]): Ratios[] {
  const byScenario = new Map<string, ContenderRow[]>();
  for (const row of rows) byScenario.set(row.scenario, [...(byScenario.get(row.scenario) ?? []), row]);
  const out: Ratios[] = [];
  const ratio = (value: number, raw: number): number => Math.round((value / raw) * 100) / 100;
  for (const [scenario, entries] of byScenario) {
    const raw = entries.find((entry) => entry.contender === 'raw Temporal');
    const switchyard = entries.find((entry) => entry.contender === 'Switchyard');
    const regular = entries.find((entry) => entry.contender === 'Switchyard, regular activities');
    const rawLocal = entries.find((entry) => entry.contender === 'raw Temporal, local activities');
    if (raw === undefined || switchyard === undefined) continue;
    out.push({
      scenario,
      calls: switchyard.calls,
      ratio: ratio(switchyard.p50, raw.p50),
      ...(regular === undefined ? {} : { regularRatio: ratio(regular.p50, raw.p50) }),
      ...(rawLocal === undefined ? {} : { rawLocalRatio: ratio(rawLocal.p50, raw.p50) }),
    });
  }
  return out;
}

const escapeXml = (text: string): string =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** A grouped bar chart of p50 turn latency (p95 as a whisker) per scenario and contender. */
export function latencySvg(rows: readonly ContenderRow[]): string {
  const scenarios = [...new Set(rows.filter((row) => row.contender === 'raw Temporal').map((row) => row.scenario))];
  const contenders = Object.keys(CONTENDER_COLOURS);
  const width = 800;
  const height = 360;
  const left = 60;
  const bottom = 300;
  const top = 40;
  const max = Math.max(1, ...rows.filter((row) => scenarios.includes(row.scenario)).map((row) => row.p95));
  const scale = (value: number): number => ((bottom - top) * value) / max;
  const groupWidth = (width - left - 20) / Math.max(1, scenarios.length);
  const barWidth = (groupWidth - 30) / contenders.length;
  const legendWidth = (width - 20) / contenders.length;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${left}" y="22" font-size="14" font-weight="bold">Turn latency by contender (p50 bar, p95 whisker), ms</text>`,
    `<line x1="${left}" y1="${bottom}" x2="${width - 10}" y2="${bottom}" stroke="#333"/>`,
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${bottom}" stroke="#333"/>`,
  ];
  for (let tick = 0; tick <= 4; tick++) {
    const value = (max * tick) / 4;
    const y = bottom - scale(value);
    parts.push(
      `<text x="${left - 6}" y="${y + 4}" text-anchor="end">${Math.round(value)}</text>`,
      `<line x1="${left}" y1="${y}" x2="${width - 10}" y2="${y}" stroke="#eee"/>`,
    );
  }
  scenarios.forEach((scenario, scenarioIndex) => {
    const x0 = left + 15 + scenarioIndex * groupWidth;
    contenders.forEach((contender, contenderIndex) => {
      const row = rows.find((entry) => entry.scenario === scenario && entry.contender === contender);
      if (row === undefined) return;
      const x = x0 + contenderIndex * barWidth;
      const colour = CONTENDER_COLOURS[contender] ?? '#888';
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${(bottom - scale(row.p50)).toFixed(1)}" width="${(barWidth - 4).toFixed(1)}" height="${scale(row.p50).toFixed(1)}" fill="${colour}"><title>${escapeXml(`${contender}: p50 ${row.p50} ms, p95 ${row.p95} ms`)}</title></rect>`,
        `<line x1="${(x + (barWidth - 4) / 2).toFixed(1)}" y1="${(bottom - scale(row.p95)).toFixed(1)}" x2="${(x + (barWidth - 4) / 2).toFixed(1)}" y2="${(bottom - scale(row.p50)).toFixed(1)}" stroke="#111"/>`,
        `<text x="${(x + (barWidth - 4) / 2).toFixed(1)}" y="${(bottom - scale(row.p50) - 4).toFixed(1)}" text-anchor="middle" font-size="10">${row.p50}</text>`,
      );
    });
    parts.push(
      `<text x="${(x0 + (groupWidth - 30) / 2).toFixed(1)}" y="${bottom + 18}" text-anchor="middle">${escapeXml(scenario)}</text>`,
    );
  });
  contenders.forEach((contender, index) => {
    const x = 20 + index * legendWidth;
    parts.push(
      `<rect x="${x}" y="${bottom + 34}" width="12" height="12" fill="${CONTENDER_COLOURS[contender] ?? '#888'}"/>`,
      `<text x="${x + 18}" y="${bottom + 45}">${escapeXml(contender)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

/** The last runs the ledger charts and tables (bench/results/runs.json holds them all). */
export const RUNS_SHOWN = 20;

const formatValue = (value: number): string =>
  value >= 100 ? String(Math.round(value)) : value >= 10 ? value.toFixed(1) : value.toFixed(2);

/** The x-axis label of a run: its short commit, starred when src/workflows or src/activities had changes. */
const runLabel = (entry: LedgerEntry): string => `${entry.commit}${entry.uncommittedChanges ? '*' : ''}`;

/** One line chart of a figure over runs (oldest left), its top at `y0`; a missing figure breaks the line. */
function runsPanel(options: {
  title: string;
  colour: string;
  entries: readonly LedgerEntry[];
  value: (entry: LedgerEntry) => number | null;
  y0: number;
  width: number;
}): string[] {
  const { entries, width, y0 } = options;
  const left = 60;
  const right = width - 20;
  const top = y0 + 34;
  const bottom = y0 + 150;
  const values = entries.map(options.value);
  const max = Math.max(0, ...values.filter((value): value is number => value !== null)) * 1.15 || 1;
  const x = (index: number): number => left + ((index + 0.5) * (right - left)) / Math.max(1, entries.length);
  const y = (value: number): number => bottom - ((bottom - top) * value) / max;
  const parts: string[] = [
    `<text x="${left}" y="${y0 + 20}" font-size="14" font-weight="bold">${escapeXml(options.title)}</text>`,
    `<line x1="${left}" y1="${bottom}" x2="${right}" y2="${bottom}" stroke="#333"/>`,
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${bottom}" stroke="#333"/>`,
  ];
  for (let tick = 0; tick <= 4; tick++) {
    const value = (max * tick) / 4;
    parts.push(
      `<text x="${left - 6}" y="${(y(value) + 4).toFixed(1)}" text-anchor="end">${formatValue(value)}</text>`,
      `<line x1="${left}" y1="${y(value).toFixed(1)}" x2="${right}" y2="${y(value).toFixed(1)}" stroke="#eee"/>`,
    );
  }
  if (entries.length === 0)
    parts.push(
      `<text x="${(left + right) / 2}" y="${(top + bottom) / 2}" text-anchor="middle" fill="#666">no full run recorded yet</text>`,
    );
  let path = '';
  values.forEach((value, index) => {
    if (value === null) {
      path += ' ';
      return;
    }
    const command = index > 0 && values[index - 1] !== null ? 'L' : 'M';
    path += `${command}${x(index).toFixed(1)},${y(value).toFixed(1)}`;
  });
  if (path.trim() !== '')
    parts.push(`<path d="${path.trim()}" fill="none" stroke="${options.colour}" stroke-width="2"/>`);
  entries.forEach((entry, index) => {
    const value = values[index];
    const labelX = x(index).toFixed(1);
    parts.push(
      `<text x="${labelX}" y="${bottom + 14}" text-anchor="end" font-size="10" transform="rotate(-35 ${labelX} ${bottom + 14})">${escapeXml(runLabel(entry))}</text>`,
    );
    if (value === null || value === undefined) return;
    parts.push(
      `<circle cx="${labelX}" cy="${y(value).toFixed(1)}" r="3" fill="${options.colour}"><title>${escapeXml(`${runLabel(entry)} ${entry.date}: ${value}`)}</title></circle>`,
      `<text x="${labelX}" y="${(y(value) - 7).toFixed(1)}" text-anchor="middle" font-size="10">${formatValue(value)}</text>`,
    );
  });
  return parts;
}

/** Two line charts over the last runs: same-run ratios to the hand-written local-activity session (none before they were recorded). */
export function runsSvg(entries: readonly LedgerEntry[]): string {
  const shown = entries.slice(-RUNS_SHOWN);
  const width = 800;
  const panelHeight = 200;
  const height = 2 * panelHeight + 20;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    ...runsPanel({
      title: 'Switchyard / hand-written local-activity session at 16 Reads, median of pairs (by run, oldest left)',
      colour: '#f59e0b',
      entries: shown,
      value: (entry) => entry.pairedToRawLocal?.['16'] ?? null,
      y0: 0,
      width,
    }),
    ...runsPanel({
      title: 'CPU per call at 8 sessions, Switchyard / hand-written local-activity session (by run, oldest left)',
      colour: '#b45309',
      entries: shown,
      value: (entry) => entry.cpuPerCallToRawLocalAt8 ?? null,
      y0: panelHeight,
      width,
    }),
    `<text x="${width - 20}" y="${height - 6}" text-anchor="end" font-size="10" fill="#666">* uncommitted changes under src/workflows or src/activities when the run started</text>`,
    '</svg>',
  ];
  return `${parts.join('\n')}\n`;
}

function table(header: readonly string[], rows: ReadonlyArray<readonly (string | number)[]>): string {
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');
}

const figures = (values: ReadonlyArray<number | null>): string =>
  values.map((value) => (value === null ? '–' : String(value))).join(' / ');

/** Switchyard's bytes per call at ten Reads of the one-line file (the target's figure); '–' without the row. */
function tenReadsOneLine(report: BenchReport): string {
  const row = report.history.find((entry) => entry.contender === 'Switchyard' && entry.scenario === TEN_READS_ONE_LINE);
  return row === undefined ? '–' : String(row.bytesPerCall);
}

/** Switchyard's ten-Reads history bytes per call beyond its results' model text recorded twice; '–' without the row. */
function tenReadsOverhead(report: BenchReport): string {
  const row = report.history.find((entry) => entry.contender === 'Switchyard' && entry.scenario === 'ten Reads');
  return row === undefined ? '–' : String(Math.round((row.bytes - 2 * report.tenReadsModelTextBytes) / row.calls));
}

/** The waiting-sessions memory scenario (bench/run.ts `waitingMemory`). */
function memorySection(memory: WaitingMemory | undefined): string[] {
  if (memory === undefined) return [];
  return [
    '## Worker memory per waiting session',
    '',
    `${memory.sessions} sessions on a worker of their own (as shipped), in a process of its own with its client and nothing else (bench/memory.ts; the heaps hold nothing from the earlier scenarios, whose room would otherwise hide what the sessions cost), each run one turn whose \`Write\` of a new file in the bench cwd asks for approval (\`default\` mode). Once every session's request shows in its \`pendingApprovals\` query, that process's memory (the client and the worker) is read again and set against the reading taken before they started, after one warm-up session; then every request is denied and every session ended. MiB are 2^20 bytes. The sessions' workflows live in the SDK's workflow thread, whose V8 heap is not part of \`heapUsed\` (the main thread's heap: the client with its pending updates, and the activities); rss covers every thread and the SDK's Rust core, so **rss per session is the headline figure**. ${
      memory.gcForced
        ? 'A full GC (`global.gc`: the run had `--expose-gc`) ran in the main thread before each reading; the workflow thread cannot be collected from here, so its garbage counts in rss.'
        : 'No GC was forced (the run had no `--expose-gc`; `NODE_OPTIONS=--expose-gc npm run bench` gives one): the readings are taken as they were, garbage not yet collected included.'
    } Seconds until all were waiting are polled (batches of queries, 100 ms apart), so rounded up.`,
    '',
    table(
      [
        'sessions',
        'rss before, MiB',
        'rss after, MiB',
        'MiB per session (rss)',
        'heapUsed per session, MiB',
        'seconds until all were waiting',
      ],
      [
        [
          memory.sessions,
          memory.rssBeforeMiB,
          memory.rssAfterMiB,
          memory.rssMiBPerSession,
          memory.heapUsedMiBPerSession,
          memory.secondsUntilWaiting,
        ],
      ],
    ),
    '',
    `After all were denied and ended (${memory.ended} of ${memory.sessions} sessions closed): rss ${memory.rssAfterEndMiB} MiB, heapUsed ${memory.heapUsedAfterEndMiB} MiB (before: ${memory.heapUsedBeforeMiB}, while waiting: ${memory.heapUsedAfterMiB}).`,
    '',
    "Inside the workflow thread (measured 2026-12-06, by a GC and `v8.getHeapStatistics()` run in that thread every second during this scenario, then by heap snapshots of it at 2 and 102 waiting sessions): its live heap grew by about 0.70 MiB per waiting session while every session's workflow evaluated its own copy of each module it imports, and by about 0.62 MiB once the zod-free src/contracts modules were shared. Now every workflow module is evaluated once per worker and shared by all sessions (src/workflows/shared-modules.ts; docs/ARCHITECTURE.md, \"Shared workflow modules\", says what that asks of a module): zod's schemas are built once, behind functions the SDK's freeze cannot reach into, and a session's memory is its own state and the SDK's for its workflow. Measured on its own (a worker and 200 sessions each waiting for a Write's approval, the process's rss after a GC): about 1.16 MiB per session before, 0.21 to 0.24 MiB after.",
    '',
  ];
}

/** The ledger's last runs (bench/results/runs.json), charted in bench/results/runs.svg. */
export function runsSection(entries: readonly LedgerEntry[]): string[] {
  const shown = entries.slice(-RUNS_SHOWN);
  return [
    '## Runs over time',
    '',
    `Every full \`npm run bench\` (\`BENCH_ROUNDS\` of 10 or more) appends its headline figures to bench/results/runs.json; here are the last ${RUNS_SHOWN}, oldest first, labelled by short commit (starred when src/workflows or src/activities had uncommitted changes). A run is due after every change to src/workflows or src/activities, so that its cost shows beside the runs before it. Runs before the same-round ratios were recorded show '–' for them, and their regular-session figure is the ratio of the two p50s. *CPU per call*: the bench process's CPU (client and workers) per call over the 8-session windows.`,
    '',
    '![bench CPU per call and p50 latency by run](bench/results/runs.svg)',
    '',
    shown.length === 0
      ? '*No full run recorded yet.*'
      : table(
          [
            'date (UTC)',
            'commit',
            'Switchyard / hand-written local at 1 / 4 / 16 Reads (median of pairs)',
            'Switchyard / hand-written regular at 1 / 4 / 16 Reads (median of pairs; before: of p50s)',
            'calls/s, Switchyard / hand-written local at 1 / 8 / 64 sessions',
            'CPU per call at 8 sessions, Switchyard / hand-written local',
            'history bytes per call, ten Reads',
            'rss MiB per waiting session',
          ],
          shown.map((entry) => {
            const local = entry.pairedToRawLocal;
            const regular = entry.pairedToRaw ?? entry.ratioToRaw;
            const load = entry.throughputToRawLocal;
            return [
              entry.date.slice(0, 16).replace('T', ' '),
              runLabel(entry),
              figures(local === undefined ? [null] : [local['1'], local['4'], local['16']]),
              figures([regular['1'], regular['4'], regular['16']]),
              figures(load === undefined ? [null] : [load['1'], load['8'], load['64']]),
              figures([entry.cpuPerCallToRawLocalAt8 ?? null]),
              figures([entry.historyBytesPerCallTenReads ?? null]),
              figures([entry.rssMiBPerWaitingSession]),
            ];
          }),
        ),
    '',
  ];
}

/** The last `npm run bench:profile` summary (bench/results/profile.md), if one was written. */
async function profileSection(): Promise<string[]> {
  let profile: string;
  try {
    profile = await readFile(new URL('./results/profile.md', import.meta.url), 'utf8');
  } catch {
    return [];
  }
  return [
    '## Where the CPU goes',
    '',
    "CPU profiles of both contenders in one run (`npm run bench:profile`: bench/profile.ts under `node --cpu-prof`, folded by bench/profile-summary.ts): 8 sessions of 16-Read turns, Switchyard's worker (as shipped) and the hand-written local-activity session's worker in one process, the client in a child process, the two taking turns in windows; self time by place, per thread — the main thread per contender's windows, and each worker's own workflow thread. The CPU per call is the workers' alone. The workflow thread runs every session's workflow code; the main thread runs activities and the SDK's bridge to its Rust core. The profiler samples wall time on a thread, so a thread blocked inside a native call (`runInContext` starts and joins the watchdog thread of the isolate timeout, now once per activation) or waiting for a core on a busy machine shows as busy; the CPU per call comes from `process.cpuUsage`.",
    '',
    '### Against the hand-written local-activity session, 2026-12-07',
    '',
    "Profiled as above (tables below; 8 sessions of 16-Read turns, two alternating windows of 10 s each; the machine's load average was about 18 from other work, so every absolute figure here is slow and only the pairs mean anything). Per call, the two workers cost the same: 1.83 and 1.86 ms of worker CPU for Switchyard against 1.95 and 1.92 ms for the hand-written session (0.94 and 0.97 pair by pair; 1.06 and 0.92 in a profile of the code before this round's changes, so those changes do not show outside the spread), at 1.15 and 1.10 × its calls per second. The threads differ. **Workflow thread**: the hand-written session's is the busier one (17.8 against 12.1 s over the same windows and warm-up), because a worker made with `Worker.create` keeps the SDK's promise hook, which records a stack trace for every promise (`init`, `formatCallsiteName`, `getActivator`, `get stack`, the source-map lookups: about a quarter of that thread), and Switchyard's workflow threads run without it (src/worker/workflow-threads.ts). **Main thread** (wall time per call in the profile): Switchyard spends about 0.34 ms more, almost all of it `stat` (0.15 ms; the hook-settings look, one `stat` per settings file, done by Plan, by each later group's Prepare and by the calls of that group, and Read's validation, which the hand-written `readFile` does not do) and the larger messages to the workflow thread (`postMessage`, 0.09 against 0.04 ms: Plan's result carries the prepared plans beside the outcomes); the hand-written session spends more in garbage collection, rxjs and the SDK's JavaScript JSON coder, which Switchyard's payload converter replaces. Switchyard's own per-call code is small: src/activities/execute-call.ts 43 µs and prepare-call.ts 8 µs of self time per call, out of about 3.5 ms of main-thread time.",
    '',
    "So the time Switchyard loses at 16 Reads is not CPU, it is a round trip. A turn runs in groups of at most 10 concurrent calls (Claude Code's limit). Plan prepares the first group and, when every call of it may run locally without asking, runs it inside its own local activity (src/activities/run-first-group.ts); the second group then costs a Prepare local activity, an activation to decide its calls, six local activities of their own and their activation: one more hand-off between the Rust core, the main thread and the workflow thread than the hand-written session, whose update starts its six local activities as soon as the first ten end. Measured directly with bench/group-split.ts (two sets of 40 alternating rounds of 16 Reads): Switchyard with its default groups of 10 took 0.95 (0.55–1.31) and 0.89 (0.77–1.18) of the hand-written local-activity session, the same Switchyard with `maxConcurrency: 16` (one group, all of it inside Plan) 0.60 (0.43–0.76) and 0.63 (0.48–0.93). The change that closes the gap is in workflow code and Plan (made, behind `patched('plan-runs-following-groups')`): Plan runs every following group whose calls all qualify, one group after the other inside the same local activity, as it runs the first, and hands the workflow each group's outcomes (a `ranGroups` list beside `ranFirstGroup`, which the workflow takes after deciding each call's permission again, as it does for the first group; behind `patched()`, since the commands change). Calls still run at most 10 at a time, and each group is still prepared just before it runs.",
    '',
    "Changed in this round (src/activities/execute-call.ts, src/activities/prepare-call.ts): `executeCall` (182 lines) is split into the tool lookup, the handler's machinery (deadline, cancellation, relocation, heartbeats, progress signals) and the tool's context, and `prepareCall` (162 lines) into the whole-tool deny, one `validateAndResolve` used before and after a PreToolUse hook's rewrite, the rewrite and the ready plan; every function there is under 80 lines. A local attempt no longer starts a heartbeat timer (it never sent a heartbeat). The bench now reports only same-round ratios against both hand-written sessions, the mutating calls with eager dispatch on and off, and the history's bytes beyond the results' model text.",
    '',
    "Where a one-Read turn's time goes (measured 2026-12-07 after the benchmarks at 19c2a41; one session each, 400 to 500 alternating turns per set, median of each stage, the hand-written local-activity session beside Switchyard in the same process, timestamps at the SDK's workflow-thread proxy and at each activity's start and end, no profiler). From the client's send to the workflow thread: 3.5 to 4.1 ms for both. The update's activation: 1.2 to 1.3 ms for Switchyard against 1.9 to 2.0 ms (its workflow threads run without the SDK's promise hook). The local activity's dispatch: 0.8 to 0.9 against 0.9 to 1.0 ms. The local activity itself: Plan 1.2 to 1.3 ms against the hand-written `readFile` 0.3 ms. Its result to the next activation: 0.5 ms for both; that activation 1.1 against 0.9 ms; its completion to the client's answer 3.1 to 3.6 ms for both. So at one Read the whole pipeline comes down to Plan: inside it, the Prepare of the Read 0.5 ms (its validation, one trip for the real path and the stat, 0.28), the permission decision 0.05, and the execution 0.6 ms (the handler's deadline and cancellation 0.07, open and fstat 0.17, the opened file's path check 0.05, the read 0.06, the numbered lines 0.11, the output 0.05). A trip through libuv's thread pool costs 40 to 60 µs of CPU on this machine (an absent file 10 more, for its error), a synchronous `stat` 1.5 to 2 µs: Plan made eleven trips for one Read (a `stat` of each of the four hook settings files, the real paths of the cwd and of the file, the file's `stat`, then open, fstat, read and close) where the hand-written read makes four. Changed (3d0febd): the settings files and the session's cwd are looked at synchronously (their paths come from the worker's configuration and the session's start, never from a call's input; docs/SEMANTICS.md, Hooks), and Read's `stat` goes along with its confinement check, so a Read makes six trips in four rounds, as many rounds as `readFile`; an input with no null skips the walk of its schema, and Prepare compares a resolved input with the call's as values instead of hashing the call's input again. Plan called directly 3,000 times in a row (a mock activity context; this commit and the one before, 1b17217, taking turns, three sets): 500 to 630 µs against 760 to 860 µs, the hand-written read through the same context 170 to 230 µs. End to end, in sets of 400 alternating one-Read turns run the same way, one after the other: 1.04 and 1.04 of the hand-written local-activity session against 1.07 and 1.09 before. Tried and not taken: (1) no isolate timeout on the workflow thread: 0.18 ms less per activation, measured inside the thread, and 1.00 against 1.01 in one set; the guard stays, since workflow code stuck in a loop (a permission rule's pattern, a settings matcher) would otherwise freeze every session on that thread, and a watchdog that outlives activations can only stop the thread by terminating it, which the SDK treats as fatal for the whole worker. (2) The first group's Prepare started as soon as the update reaches the worker, with the session's previous Plan input, and used by Plan when its input is the same: Plan 1.2 to 0.8 ms, but the update's activation 1.25 to 1.4 ms, since the main thread was busy with it when the completion came back; about 2 % in all, not worth a second path to the permission facts. (3) Without the two rounds of condition checks after a local activity's result (src/workflows/local-activity-barrier.ts): five calls into the workflow sandbox per turn instead of seven, and no change outside the spread; they stay. For scale: the same hand-written workflow on Switchyard's hook-less workflow threads took 0.85 to 0.87 of the SDK-default session in those sets, so the SDK's promise hook is worth about 15 % of a one-Read turn, and Switchyard's pipeline costs about 1.2 times a bare hook-less session.",
    '',
    "Where the one-Read turn's time went next (measured 2026-12-07 after the benchmarks at 24e80ba, then after each change below; one session each, 300 to 400 alternating turns per set, the hand-written local-activity session beside Switchyard in the same process, median of each stage, timestamps at the SDK's workflow-thread proxy, at each activity's start and end and at the bridge call that hands a completion to the core). Stage by stage, Switchyard against the hand-written session: from the client's send to the workflow thread 4.6 against 4.7 ms; the update's activation 1.46 against 2.58 ms; its completion to Plan's start 1.1 against 1.3 ms; the local activity 1.53 ms (Plan) against 0.42 ms (`readFile`); its result to the next activation 0.66 against 0.61 ms; that activation 1.42 against 1.27 ms; its completion to the client's answer 4.45 against 4.60 ms. The activations pay back most of what Plan costs. Inside the workflow thread, timed around the synchronous part of each activation: Switchyard's workflow code 575 to 660 µs per activation against 215 to 340 µs for the hand-written workflow on the same hook-less threads, and the isolate timeout's watchdog 240 to 330 µs more per activation (the timed call against the activation inside it; 31 to 36 µs without a timeout): Node starts a watchdog thread for every timed call and joins it at the end, and on two busy virtual cores that start and join take a quarter of a millisecond. What the pipeline's workflow side spends, by taking pieces out of a copy of src/workflows run by a second worker in the same process (alternating one-Read turns, paired medians of 400; an unchanged copy: +6 and +22 µs): the Web UI details 25 to 33 µs per activation, the two rounds of condition checks after a local activity 36 µs (they keep live and replayed command order the same, so they stay), the tool-call sinks and the session's events nothing the pairs can tell from zero. Inside Plan (timestamps in Plan, the Read and Prepare): Prepare 0.55 to 0.63 ms (the call's own preparation 0.32 to 0.40, with its one trip for the real path and the stat; the look at the hook settings 0.06; the cwd's check 0.05; the compact plan 0.07 to 0.09), the run up to the Read's first line 0.16 (the handler's deadline, relocation timer and cancellation 0.09), open and fstat 0.19 to 0.23, the opened file's path check 0.06, the read 0.08 to 0.10, the numbered lines 0.12, finishing the call 0.12; called 3,000 times in a row Plan takes 0.5 to 0.6 ms, so in a turn most of its time is its code running cold between turns. Changed: (1) the workflow threads' isolate timeout is kept from the main thread (ca6fe96, src/worker/activation-watch.ts; docs/CONCEPTS.md, \"A workflow stuck in a loop\"): each thread marks in memory it shares with the main thread when an activation's synchronous part begins and ends and which run it belongs to, the main thread looks at the marks a few times per timeout, and an activation past it fails its task with the same \"Script execution timed out after 5000ms\" while its thread, which nothing short of terminating stops, is replaced and the sessions it held are replayed from their history (test/integration/stuck-workflow.test.ts); the update's activation took 1.18 to 1.32 ms after it against 1.46 before, and the next one 1.15 to 1.32 against 1.42, in sets run the same way (the machine's speed moved between them). (2) The executeTurn validator recognises a request of the usual shape without its schema, with the same acceptance and messages (854f4c3, test/unit/execute-turn-request.test.ts); `utf8Length` counts an ASCII text by its length after one scan; an activation's sink calls share one copy of the workflow info they saw. (3) The Web UI details render the session's identity once per run (27ebc28): 25 µs less per activation in the paired copies. (4) A Plan parses each call's input once (60caa1e): the Prepare it runs next takes Plan's parse. End to end, in sets of 300 to 400 alternating one-Read turns: 1.04 of the hand-written local-activity session before these changes, 1.02 and 1.02 after (2), 1.00 and 1.00 after (3) and (1), 0.98 after (4); the three `npm run bench` runs at 60caa1e gave 1.02, 1.05 and 1.02 at one Read (the runs' table below), 1.47, 1.49 and 1.25 × the hand-written session's calls per second and 0.69, 0.66 and 0.80 × its CPU per call at 8 sessions. What is left at one Read is Plan: 1.2 to 1.5 ms in a turn against 0.35 to 0.4 ms for `readFile`, spread over Prepare, the handler's machinery and the output in pieces of 0.05 to 0.1 ms each; its four trips through libuv's thread pool are as many as `readFile` makes, and the ones left cannot be merged without reading a file before its path, its kind and the permission rules are checked.",
    '',
    "Why Plan costs about twice its loop time in a turn, and the last runs (measured 2026-12-07 after the benchmarks at 9355d28). Plan called directly in a loop (a mock activity context) took 0.65 to 0.69 ms a call; the same loop sleeping 15 ms before each call, as a turn leaves the main thread idle between its stages, 1.36 to 1.43 ms, and churning 32 MB of memory and 3,000 small functions instead of sleeping 1.15 to 1.31 ms; the hand-written `readFile` went from 0.24 to 0.49 ms the same way. So on this machine code that runs after an idle gap runs about twice as slowly as in a loop, whatever it is, and a turn's extra work costs about twice what a loop says; in a turn, the main thread was busy for 1.42 of Plan's 1.50 ms (its event-loop utilisation over the local activity), and Plan ran no faster when the Switchyard session took every turn alone (1.55 to 1.83 ms) than between the other contenders' turns. Inside the workflow thread, taking pieces out of a copy of src/workflows as before (paired in-thread medians of 400 turns; an unchanged copy +2 and +10 µs): the session's events 14 + 37 µs a turn, the Web UI details 16 + 10, the tool-call telemetry sinks 14, the Plan's Web UI summary nothing the pairs can tell. Changed: (1) a Plan that runs the group it has just prepared runs Prepare's own plans instead of taking the compact plans it sends apart again, and compact plans and outcomes are built field by field instead of by deleting fields, which leaves V8 a slow dictionary of an object (2dc1cbe; the same JSON, test/unit/compact-plan.test.ts; test/unit/plan-runs-prepared-plans.test.ts); (2) Read and Grep ask for the stats of the file they opened synchronously, of its descriptor, which needs no path walk and no read, so a Read waits for three trips through libuv's thread pool instead of four (06a072f; the hand-written `readFile` makes four); (3) Plan's timeout is a number of milliseconds instead of text parsed on every turn, and the events of one activation share the text of their time (8ff7a07). Plan through its activity, this code against 9355d28's in the same process, taking turns, six sets each: 0.91 of the time in a loop, 0.92 with 12 ms asleep before each call. Three `npm run bench` runs at 8ff7a07, with 30 rounds as before, gave 0.97 (0.84–1.12), 0.96 (0.82–1.09) and 1.07 (0.91–1.15) at one Read: each pair's ratio spreads over about ±0.15 here, so the median of 30 moved by ±0.05 between runs of one commit, as much as any change left to make. The Reads-per-turn scenarios now take four times the rounds (`BENCH_LATENCY_ROUNDS`, 120 by default; about a minute more per run), which halves that spread; the ledger records the rounds. The three runs after it (d5fb46b, the code of 8ff7a07), Switchyard / the hand-written local-activity session, median of 120 pairs: 0.97 (0.84–1.08), 0.99 (0.89–1.16) and 0.96 (0.82–1.09) at one Read; 0.83 (0.69–0.97), 0.85 (0.70–0.94) and 0.84 (0.72–0.99) at four; 0.65 (0.56–0.76), 0.65 (0.55–0.81) and 0.64 (0.54–0.78) at sixteen; 1.20, 1.32 and 1.27 × its calls per second and 0.83, 0.78 and 0.78 × its CPU per call at 8 sessions; 899 bytes of history per call at ten one-line Reads. At one Read that is par, a few hundredths under: the pipeline's own work (Plan, the workflow's bookkeeping) costs about what the SDK's promise hook costs the hand-written session, and what is left of it is spread over pieces of 10 to 40 µs.",
    '',
    "History at ten Reads: 5,833 bytes per call (bench/history-anatomy.ts prints what each event carries). Each Read's result is 2,174 bytes of model text, 2,225 as JSON, and it is recorded twice, in Plan's marker and in the update's outcome, so 4,450 bytes per call is the floor for this file and the 2,048-byte target cannot be met by trimming: the pipeline's own bytes are the rest, about 1,400 to 1,500 per call. Of those, Plan's marker carries the prepared plan of each call (about 750 bytes each: `flags` 126, the keys 293, `inputDigest` 66, `input` 55 — the update's request already holds it —, `summary` 47, `rememberRule` 47, `ruleContent` 41 — the path again —, defaults such as `interruptBehavior: \"cancel\"`, `ruleKind: \"text\"` and the `false` flags) and a second `plans` list (64 each); the update's outcome carries `timeline` (three ISO times, 117 bytes a call), `timings` (44) and its keys (83). Proposed (src/contracts/compact-plan.ts, src/workflows): a plan that ran inside Plan goes into its marker as its call id and the outcome only (the workflow re-derives the permission input from the turn's calls, as `expandPlan` already does for `input`); otherwise leave out every field at its default and the `input` the request holds; and let the outcome's `timeline` carry one start time and two offsets in ms. Expected: about 800 bytes less per call, 5,000 at ten Reads with this file. Below the floor only a result recorded once gets (a payload codec that compresses would, but it would end the promise that any SDK with the default converter reads a session).",
    '',
    "Eager activity dispatch: `switchyard dev` already starts its server with `system.enableActivityEagerExecution=true` (src/server/dev-server.ts), and the bench's main server is that server. In two runs on 2026-12-07 (20 alternating rounds each, a second server without it), Switchyard's Write took 1.05 (0.81–1.45) and 0.79 (0.64–1.12) of the same turn with eager dispatch off and its allowed Bash 1.04 (0.84–1.17) and 0.98 (0.67–1.28); the hand-written regular-activity session's took 0.90 (0.76–1.40) and 0.84 (0.66–1.30), and 0.92 (0.67–1.10) and 0.78 (0.66–0.93): a tenth to a fifth off the hand-written session's single activity, and for Switchyard, whose mutating turn also runs Plan as a local activity first, nothing the spread can tell from no change. It costs nothing and helps any activity a workflow schedules on a queue its own worker polls, so `switchyard dev` should keep it on; a cluster enables it with the same dynamic-config key.",
    '',
    '### What changed, and what is left',
    '',
    "First, the stack traces. The Temporal SDK records a stack trace for every promise workflow code creates (for its `__stack_trace` query) and maps each of its ten frames through the bundle's source map. That was the largest cost on the workflow thread (`init`, `formatCallsiteName`, `get stack`, `getActivator`, `Error.prepareStackTrace`, the source-map lookups and the stack-frame regular expressions: about half of its busy time). Switchyard's bundle preloads src/workflows/stack-trace-limit.ts, which sets `Error.stackTraceLimit` to 0 inside the sandbox before the SDK freezes its globals (src/worker/workflow-bundle-options.ts; `SWITCHYARD_WORKFLOW_STACK_TRACES=1` brings full traces back), and compiles the workflow TypeScript for ES2022 with webpack's module concatenation, so object spread is native and imports are not getter calls.",
    '',
    'Worker CPU per Read call, before (2b5c42d) and after (072fed7), measured side by side on 2026-12-05 with `PROFILE_CALLS=N PROFILE_SECONDS=15 node --import tsx bench/profile.ts` (8 sessions, no profiler attached, the client in its own process):',
    '',
    '| Reads per turn | before: CPU ms per call | before: calls/s | after: CPU ms per call | after: calls/s |',
    '| --- | --- | --- | --- | --- |',
    '| 1 | 20.23 | 51.8 | 14.07 | 72.6 |',
    '| 4 | 9.55 | 120.2 | 6.27 | 182.7 |',
    '| 16 | 7.00 | 178.6 | 3.99 | 314.1 |',
    '',
    'Fitted to a cost per turn plus a cost per call, that cut the cost per call from about 6.2 ms to 3.2 ms and left the cost per turn at about 12 ms.',
    '',
    "Second, the promise hook. With traces capped, the SDK still ran a V8 promise hook in its workflow thread that captured and stored a stack for every promise, settled or not, and ran its `getActivator` lookups to do so: per-promise work, so mostly per activation. The worker now starts its workflow threads without the hook (src/worker/workflow-threads.ts sets them up as the SDK does, minus the hook; `workflowStackTraces: true` keeps the SDK's own threads), and the Read tool no longer opens a file that is small enough for either size limit during validation, nor asks an open file its size twice. Measured the same way on 2026-12-06, before (2ca9645) and after (92981d6), two rounds each, alternating (round 1 / round 2; the machine was busier during round 1):",
    '',
    '| Reads per turn | before: CPU ms per call | before: calls/s | after: CPU ms per call | after: calls/s |',
    '| --- | --- | --- | --- | --- |',
    '| 1 | 19.50 / 14.48 | 53.5 / 71.2 | 11.80 / 9.94 | 81.1 / 97.1 |',
    '| 4 | 7.26 / 6.19 | 157.9 / 182.4 | 4.98 / 4.75 | 217.7 / 228.6 |',
    '| 16 | 4.03 / 3.92 | 318.5 / 318.7 | 3.52 / 4.29 | 357.0 / 298.2 |',
    '',
    "Fitted to round 2, the cost per turn fell from about 11 ms to about 7 ms; the cost per call stays about 3 ms. What is left, counted with `strace -f -c` over a run at 4 Reads per turn (the difference between a 6 s and a 16 s run, per call): 3.5 thread creations per call (`clone3`, with an `epoll_create1`, an `eventfd2` and a `pipe2` each), which are the isolate-timeout watchdog Node starts for every `runInContext` with a timeout, about 14 per 4-Read turn and about 100 µs of CPU each here; 10 `readlink` per call, the `realpath`s of the cwd and the file that validation and the permission facts each resolve (kept: a PreToolUse hook runs between them and may change what a path leads to); 62 `futex` per call, the hand-offs between the main thread, the workflow thread, libuv's pool and the SDK's Rust core. The watchdog stays: it is what turns a workflow stuck in a loop into a failed workflow task instead of a frozen worker (the third step below keeps it, once per activation). Fewer activations per turn (Plan, Prepare and the calls of an allowed read-only group in one local activity) was the next lever; the third step below takes it. Two workflow threads (`tuning.workflowThreadPoolSize: 2`) gave the same throughput on 2 cores (195 against 196 calls/s at 4 Reads), so the default stays one.",
    '',
    "Third, fewer activations and fewer file operations per turn. (1) One watchdog per activation: the worker's workflow threads give the SDK's calls into the sandbox no timeout and run the whole synchronous part of each activation inside one timed call instead (src/worker/workflow-threads.ts), so a workflow stuck in a loop still fails its task after the isolate timeout (test/integration/stuck-workflow.test.ts) while Node starts one watchdog thread per activation instead of about four. (2) Plan runs an allowed read-only first group: a whole turn's Plan already prepared its first group; when every call of it runs locally and the permission chain allows each one without asking, Plan now runs the calls too (src/activities/run-first-group.ts), and the workflow decides each call's permission again before it takes the outcome (docs/SEMANTICS.md, Local read-only calls). A one-Read turn is one local activity, one activation less and one marker less: 6 history events. (3) Read reads a small file once: one read serves the image check and the scan's first chunk, and a short read ends the scan. Measured the same way on 2026-12-06, before (a3c172a) and after (1a314b5), two rounds each, alternating (round 1 / round 2; the machine was busier during round 2):",
    '',
    '| Reads per turn | before: CPU ms per call | before: calls/s | after: CPU ms per call | after: calls/s |',
    '| --- | --- | --- | --- | --- |',
    '| 1 | 13.87 / 17.13 | 72.1 / 58.7 | 8.94 / 11.79 | 107.9 / 81.9 |',
    '| 4 | 5.26 / 6.20 | 206.2 / 181.9 | 3.24 / 3.09 | 298.1 / 321.0 |',
    '| 16 | 3.27 / 3.58 | 370.8 / 353.4 | 2.51 / 2.57 | 471.2 / 474.0 |',
    '',
    "Each step on its own, at 4 Reads: the watchdog change 7.12 / 6.63 → 5.59 / 6.15 ms per call (a3c172a → d388aec); the Read change 4.08 / 3.78 → 3.72 / 3.24 ms (023bc11 → 1a314b5); the rest is Plan's run of the first group. Fitted to the 4- and 16-Read rows of round 1, a turn now costs about 4 ms and a call about 2.3 ms of worker CPU. What is left per call on the main thread is mostly file operations (each async call into libuv's pool costs about 70 µs of main-thread time here: the two `realpath`s of validation and the two of the permission facts, a `stat`, `open`, `fstat`, `read`, `close`), payload conversion and the SDK's bridge; on the workflow thread, the activation itself and the session's events. The one-Read turn's history is still about 7 KB: the Read's 2 KB result is recorded twice by design (Plan's marker and the update's outcome) and the prepared plan rides along.",
    '',
    "Fourth, payloads and a per-thread account. Per thread, at 4 Reads per turn (8 sessions, e0db701, from /proc/<pid>/task over the measured window; 3.3 ms per call in all): the main thread 1.24 ms, the workflow thread 0.77 ms, V8's platform threads (garbage collection, compilation) 0.46 ms, the SDK's Rust core 0.49 ms (its tokio threads and its workflow-processing thread), libuv's file-system pool 0.17 ms, and about 0.2 ms in threads that had already exited, the per-activation watchdogs. The profile's large `(runInContext)` self time on the workflow thread is mostly the join of that watchdog thread, time the thread waits rather than CPU. Changed: (1) Switchyard's payload converter (src/contracts/payload-converter.js): the SDK's default JSON converter turns text into UTF-8 with a coder written in JavaScript, the largest single item on the main thread (`encode`, about 0.18 ms per call, on activity results); the converter writes the same bytes with the runtime's `TextEncoder`, in the worker, its workflow bundle and Switchyard's clients. In the profile, `@temporalio/common` fell from 0.27 to 0.09 ms of main-thread time per call. (2) The session's event log drops old events in batches instead of moving its whole array on every append. (3) Read reads its descriptor's /proc link synchronously. End to end the change did not show: alternating runs of bench/profile.ts at bfffd5a and c9fdcb8 gave 9.75 / 10.64 / 9.44 against 9.60 / 11.16 / 10.62 ms per call at 1 Read and 3.41 / 3.57 / 3.42 against 3.24 / 3.61 / 4.18 ms at 4, within this machine's spread that day (the same code varied from 3.95 to 5.0 ms between two runs). (4) The console's session page is pushed (server-sent events, a change noticed with DescribeWorkflowExecution every 50 ms) instead of polled every 1.5 s: event → page 83–87 ms p50, 93–102 ms p95 in three runs. Memory per waiting session, measured with heap snapshots of the workflow thread at 2 and 102 waiting sessions: 631 KiB live per session, because the reusable sandbox evaluates every module that is not shared once per workflow: hidden classes and their descriptor arrays about 260 KiB, closure contexts 66 KiB, accessor closures 70 KiB (the bundle's export getters, zod's lazy properties), zod's 116 schema classes and their closures about 30 KiB. Exported zod schemas cannot be shared as they are: frozen, they fail on first use (`Cannot assign to read only property 'parse'`), even after every lazy property is read once; the fifth change shares them another way.",
    '',
    "Fifth, every workflow module shared (8cd8730). The worker preloads the whole workflow graph into its reusable sandbox, so each module is evaluated once per worker instead of once per session; zod's schemas join it behind functions (`sessionSchemas()`, ...), which the SDK's freeze cannot reach into, and the one helper with per-workflow state (src/workflows/local-activity-barrier.ts) keeps it on the workflow's own globals (docs/ARCHITECTURE.md, \"Shared workflow modules\"). Memory per waiting session, in a process of its own (bench/memory.ts, the scenario above since 75613b9): about 1.16 MiB before, 0.21 to 0.24 MiB after; the earlier figures of 0.85 to 0.99 MiB were measured in the bench process after the other scenarios, whose leftover room absorbed part of the growth, and with the change that reading fell to zero or below, which is why the scenario moved. Sessions were all waiting sooner: 6.6 to 8.9 s for 200 against 10.3 to 12.3 s. CPU did not move outside the noise: alternating bench/profile.ts runs at a1d220a and 8cd8730 gave 8.2 to 14.2 against 8.7 to 14.6 ms per call at 1 Read (eight rounds; medians 10.6 and 11.5) and 2.95 / 3.30 / 4.08 against 3.17 / 3.22 / 3.48 ms at 4.",
    '',
    "Sixth, the whole machine, the connections and the threads (d455774, 86be129). On 2 cores three processes share the CPU; per call at 8 sessions of 4-Read turns, measured with the client in a process of its own (bench/profile.ts without a profiler, 2026-12-06): the worker 2.4 to 3.0 ms, the client 0.5 to 0.6 ms, the dev server 2.1 to 2.5 ms, about 5.5 ms in all, which caps that layout near 360 calls/s. A CPU profile of the dev server (`perf`, 3,658 samples over 10 s): completing the workflow task 25 % (its SQLite writes 19 %), starting the next one 12 % (8 % reading back the events the previous task wrote, which the worker receives with its next task), the update call 8 %, the poll 4 %, gRPC compression 4 %, the Go runtime's memory work much of the rest. It is the count of tasks, not their bytes: with the bench file cut from 25 lines to 2 (3.8 KB less history per call) the server's CPU per call moved from 2.27 to 2.45 ms to 2.09 to 2.29 ms. A one-Read turn with one session on an idle machine, from the client's send (event times and timestamps in the worker): the server has the workflow task started at 4 to 5 ms, the workflow thread begins the update's activation at 7 to 9 ms, Plan starts 2 to 3 ms later and takes 1.6 to 2.8 ms (validation, permission, the Read), the second activation begins under 1 ms after it, and the client has the result 6 to 7 ms after that; the workflow code itself runs 0.1 to 1.5 ms per activation, so the rest is hand-offs between the server, the SDK's core, the main thread and the workflow thread. Changed: (1) Switchyard's native connections no longer gzip to a loopback server (src/config/grpc-compression.ts; README, \"Transport compression\"): the dev server's compression samples went from 152 to 0. (2) Completions carry their activation's sink calls (src/worker/workflow-threads.ts), so the worker no longer asks the workflow thread for them in a second round trip per activation: the thread requests of a one-Read turn fall from four to two (test/integration/telemetry.test.ts counts them). (3) `SwitchyardClient.connect({ native: true })`: 0.33 to 0.41 against 0.55 to 0.66 ms of client CPU per call (README, \"Client connection\"); the benchmarks' clients stay on the default. (4) bench/profile.ts profiles only under `--cpu-prof`: its inspector profile of the main thread had been on in every run of it, adding about a tenth to the worker's CPU figure; it now reports the client's CPU as well. (5) Worker tuning measured (README, \"Worker tuning\"): no poller or slot setting beat the SDK's defaults. End to end, neither showed outside this machine's spread: alternating runs of 86be129 and 08a62c5, the commit before (2), swung both ways between rounds (1 session of 1-Read turns: 54 to 66 against 44 to 52 turns/s in one set of rounds, 43 to 47 against 39 to 46 in the next; 8 sessions: 316 to 344 against 362 to 394 calls/s, then 288 to 331 against 282 to 327), and runs with and without gzip, before (1) was committed, gave 333, 396 and 236 against 326, 273 and 273 calls/s at 8 sessions.",
    '',
    "Seventh, the floor of the design, and fewer trips per Read (74afdb9, eabeba7, d8a4627). A hand-written session whose update runs its reads as local activities, the design Switchyard uses for short reads, is now a reference contender (`rawLocalSession` in bench/raw/workflows.ts, last in each round; the ratios stay against *raw Temporal*). Measured on its own before it joined the bench (150 alternating rounds of one Read, 2026-12-06): raw Temporal 27.9 ms, the local-activity session 18.4 ms, Switchyard 18.4 ms; two more sets on a busier machine, 32.3 / 20.5 / 21.3 and 34.2 / 22.3 / 23.0 ms. At one Read Switchyard costs what that design costs with none of the pipeline, 0.64 to 0.66 of raw Temporal here: the rest of the way to 0.65 is the SDK's and the server's hand-offs, not Switchyard's code. At 4 Reads Switchyard is faster than that session (21 to 27 against 26 to 30 ms p50 in the six runs with it), at 16 within a tenth of it either way (44 to 58 against 47 to 60 ms). The new contender also showed how much the raw side moves: with it in the rounds, raw Temporal's 4-Read turn took 45.7 to 57.3 ms p50 against 52 to 61 ms in the runs before it (in a separate harness, 42 to 75 ms between runs of the same code: its four regular activities are sometimes matched at once and sometimes not), so Switchyard / raw at 4 Reads read 0.37 to 0.55 in the six runs with it, against 0.33 to 0.42 before; Switchyard's own 4-Read turn took 21 to 27 ms in those runs and 18 to 23 ms before. Timed inside a one-Read turn (one session, timestamps on both threads, no profiler), per activation: the message to the workflow thread 0.30 to 0.44 ms p50, the activation there 1.07 to 1.30 ms (0.88 to 1.14 with the isolate timeout off, so its watchdog thread is 0.1 to 0.4 ms of it), the answer back 0.23 to 0.34 ms; Plan 1.7 ms p50 (0.1 lookup, 0.7 prepare, 0.9 the Read). An approval, timed the same way and from the history, from the signal's send: the server records it at 2.4 ms and starts the workflow task at 5.2 ms, the activation reaches the worker's JavaScript at 8.1 ms, its completion leaves at 11.8 ms, the server records the completion at 13.3 ms, the worker has the eager activity task at 15.9 ms, and the tool starts 0.25 ms after its activity does (signal → activity 19.1 to 21.0 ms p50 over five sets of 60). Tried and not taken: (1) the workflows on the worker's main thread (the SDK's in-process sandbox with Switchyard's one timeout per activation, no thread hand-offs): one `npm run bench` gave 0.62 / 0.32 / 0.32 of raw against 0.75 / 0.32 / 0.31 with the workflow thread, but 293 and 399 calls/s at 8 and 64 sessions against 328 and 458, because the main thread, which also runs the client and the activities, becomes the bottleneck; half of the sessions there and half in the thread gave 0.66 and 258 / 302 calls/s. It would also install the SDK's process-wide handlers (an `unhandledRejection` listener that throws for rejections outside workflows, and its own `Error.prepareStackTrace`) in every process that embeds a worker. (2) A larger young generation (`--max-semi-space-size=64`): 306 to 361 against 329 to 412 calls/s at 8 sessions in three alternating rounds. (3) Synchronous file calls on a call's own paths: a `realpath` costs 4 µs synchronously here against 39 µs through libuv's pool, but a path on a hung mount would then freeze the worker's main thread, not one pool thread. Changed: the file tools wait for fewer trips through the pool (src/tools/paths.ts, src/activities/prepare-calls.ts, src/tools/builtin/read.ts): the cwd and a path are resolved at once, the session's cwd (set by whoever started the session, never a call's input) is looked at synchronously, and Read does not wait for its file's close. Read's validation, permission facts and execution, called directly 3,000 times in a row: 345 to 470 µs and 413 to 588 µs of CPU per call, against 485 to 567 µs and 526 to 667 µs before (three sets, two of them alternating); Plan with its Read, the same way: 460 to 760 µs. End to end it does not show outside the spread: three runs at d8a4627 gave 0.68 / 0.53 / 0.43, 0.68 / 0.55 / 0.44 and 0.72 / 0.37 / 0.35 of raw, 333 to 388 calls/s at 8 sessions, signal → start 19.2 / 24.4 / 19.7 ms p50 and event → console page 75 to 87 ms p50.",
    '',
    "Eighth, the hook settings, which the benchmarks had not been reading (ab05b9f, de44fe0, 2c21cad, 03fbed7, db73a92). A worker looks for Claude Code's hook settings on every use: in Prepare, and in each call's activity for its post hooks. It used to read them anew each time (a `realpath` of the user file and of each workspace file, one after another, then a `readFile` and a parse of each file there is): 0.23 to 0.28 ms of wall time and 0.29 to 0.36 ms of CPU per look with no settings file, 0.47 to 0.56 ms and 0.55 to 0.65 ms with a user file (2,000 looks in a row, three sets), and a 4-Read turn looked five times. The benchmarks' workers had `userSettingsDir: false` and paid none of it. Now (src/hooks/settings.ts, `HookSettingsCache`; src/hooks/session-hooks.ts; docs/SEMANTICS.md, Hooks): a look is one `stat` per file, all at once, and a file is read again only when its identity, size or change times differ from the read the worker remembers (a file changed in the last two seconds is read every time until it settles, since a coarse clock cannot tell two same-sized writes apart); uses that ask while a look is under way share it; a Plan's Prepare and the calls it then runs share one look (`firstLookOnly`), so a call's PreToolUse and post hooks come from the same settings; a call's activity starts its tool without waiting for the look, which only its post hooks need; and Prepare validates its calls meanwhile, each call waiting for the look only before its PreToolUse hooks (a call with PreToolUse hooks resolves every path again after them, so the permission facts are never older than its own hooks: test/unit/prepare-calls-hooks.test.ts retargets a link outside cwd from a hook). A look costs 118 to 140 µs of wall time and 185 to 214 µs of CPU (3,000 in a row, two sets). Worker CPU per call, bench/profile.ts at 8 sessions of 4-Read turns, 15 s each, no profiler, alternating with 84b993a: with a user settings file (`PROFILE_SETTINGS=file`) 2.83 to 2.98 ms and 325 to 344 calls/s, against 3.63 to 4.24 ms and 245 to 289 calls/s before (four rounds); with no file 3.03 against 3.19 ms; with no settings looked for at all (`off`) 2.75 to 2.86 ms. From these runs on, the benchmarks' workers look for settings as a default worker does, in a user settings directory of their own with no file in it (bench/tools.ts). While Prepare waited for the look, it lengthened a one-Read turn: measured on its own (150 alternating rounds of one Read, two sets), 24.87 against 23.98 ms and 18.36 against 17.84 ms with settings off, the hand-written session with local activities 23.93 and 17.74 ms. With validation going on meanwhile (db73a92), three more sets: 19.01 / 20.99 / 20.06 ms looking against 18.66 / 20.94 / 19.85 ms off, and 18.01 / 19.97 / 19.67 ms for the local-activity session; worker CPU as before that step (2.84 and 3.06 against 3.07 and 3.09 ms per call at 03fbed7, two alternating rounds). Three runs at 2c21cad (not in the ledger) gave 0.75 / 0.35 / 0.34, 0.73 / 0.55 / 0.46 and 0.73 / 0.40 / 0.39 of raw Temporal; three at 03fbed7, 0.75 / 0.44 / 0.44, 0.81 / 0.33 / 0.35 and 0.72 / 0.53 / 0.54, 324 to 385 calls/s at 8 sessions, signal → start 19.6 / 24.5 / 19.0 ms p50; three at 26f0310 (the code of db73a92), 0.77 / 0.41 / 0.35, 0.70 / 0.47 / 0.38 and 0.68 / 0.57 / 0.52, 293 to 352 calls/s at 8 sessions with 2.9 to 3.6 ms of bench CPU per call, signal → start 24.1 / 19.2 / 20.3 ms p50, event → console page 78 to 91 ms p50 and 103 to 117 ms p95, 0.16 to 0.19 MiB per waiting session (an earlier set at that commit, whose files were not kept, gave 0.71 / 0.50 / 0.37, 0.72 / 0.54 / 0.49 and 0.72 / 0.55 / 0.39, 231 to 335 calls/s). In the bench's rounds the local-activity reference took 0.61 to 0.69 of raw Temporal at one Read and Switchyard 0.68 to 0.81; the reference runs last in each round, and measured alone (above) the two are 0.2 to 1.0 ms apart.",
    '',
    "Ninth, where a one-Read turn's time goes now, and how much the machine moves (ebbb539, 1facfca, 00b5dd4). A one-Read turn timed at the SDK's bridge calls (one session, 300 turns, no profiler, p50 from the client's send): the worker has the workflow task at 4.5 to 6.5 ms; the activation reaches the workflow thread 0.4 to 0.6 ms later and is back 1.7 to 2.2 ms after that; the Rust core hands Plan over 0.4 to 0.5 ms after the completion, and the SDK calls it 0.5 to 0.7 ms later; Plan takes 1.9 to 2.2 ms (Prepare 1.1, of which 0.35 is the synchronous start of the settings look, then the Read 0.8); the second activation is back 2.1 to 2.4 ms after Plan's result; the client has its answer 4.5 to 5.5 ms after the last completion leaves. Of an activation's time in the workflow thread, Switchyard's own modules are about a third (0.24 ms per activation, attributed through the bundle's module map in a CPU profile: the turn scheduler, the payload converter and the Web UI details the largest); the SDK's workflow runtime, its calls into the sandbox and Node's async hooks are most of the rest. The isolate-timeout watchdog takes 0.38 to 0.5 ms of the thread per activation on average (timed inside the thread with and without it), but four alternating sets of 400 one-Read turns gave 17.0 to 19.8 ms p50 with it and 17.6 to 21.3 ms without, so it stays (a watchdog that outlives activations would have to stop the thread from outside and answer its activation for it). An approval, timed the same way from the signal's send: the signal call returns at 4.8 to 5.9 ms, the worker has the workflow task at 7.8 to 10.4 ms, the activation takes 2.3 to 2.6 ms there and back, the eager activity task arrives 5.2 to 6.2 ms after its completion leaves, and the tool starts 1.1 to 1.9 ms after that. Changed: (1) a call's activity looks at the hook settings once its tool has started (1facfca; the look's synchronous start had come first): activity task → tool start 1.09 to 1.26 ms against 1.39 to 1.62 ms before, in two alternating sets of 150 approvals. Starting Prepare's look after its validation did not shorten Plan (each call waits for the look before its PreToolUse hooks anyway) and was not kept. (2) A continue-as-new carries under the 512 KiB at which Temporal's SDK logs `TMPRL1103` (ebbb539, src/workflows/session-state.ts): the completed turns get the room the rest of the carried state leaves, 448 KiB in all, and the newest turn whatever its size up to 1 MiB. Eight sessions of 4-Read turns had carried 668 KB (50 turns, 502 KB, beside 1,000 events, 166 KB) and logged the warning at every continue-as-new; they now carry 457 KB (29 turns) and log nothing. (3) bench/profile.ts warms the worker up for 10 s before its window (00b5dd4): 3.12 and 2.29 against 3.39 and 2.83 ms of worker CPU per call without, in two alternating pairs. The machine: within one hour, the same code under bench/profile.ts gave 2.12 to 3.75 ms of worker CPU per call and 262 to 433 calls/s at 8 sessions, and the one-Read turn above 17.0 to 22.7 ms p50. Three runs at 1facfca: 0.75 / 0.25 / 0.35, 0.78 / 0.32 / 0.33 and 0.69 / 0.48 / 0.37 of raw Temporal; 437, 394 and 320 calls/s at 8 sessions with 2.33, 2.56 and 3.23 ms of bench CPU per call (client included); signal → start 17.9, 19.0 and 23.7 ms p50.",
    "Tenth, how far the machine moves in an hour, and a file's first read (53f48e7, f77c6da; nothing changed in src/workflows or src/activities). On 2026-12-07 from about 03:20 UTC this machine ran the same code at about half the speed of a few hours before, and recovered within the half hour. Three runs at 4e51582 (03:26 to 03:31) gave 0.69 / 0.59 / 0.52, 0.72 / 0.56 / 0.58 and 0.72 / 0.59 / 0.58 of raw Temporal and 227, 214 and 209 calls/s at 8 sessions with 4.78 to 5.42 ms of bench CPU per call; the dev server took 62 to 66 % of a core there, about 3 ms per call against 1.7 ms in the run of 00:52. bench/profile.ts (the worker's CPU alone; 8 sessions of 4-Read turns, 15 s each) over the same hour: 341 to 373 calls/s and 2.61 to 2.88 ms per call at 03:20; at 03:37, 200.6 and 196.8 calls/s (4.97 and 5.05 ms) at 998f0db alternating with 199.4 and 202.5 (5.05 and 4.88 ms) at 4e51582, so the slowdown was the machine's and not the code's (998f0db's three runs had given 380 to 407 calls/s the night before); 217 calls/s at 03:43, 316 at 03:52, then 298 to 429 at 4e51582 alternating with 345 to 404 at f77c6da. A CPU-only loop (sha256 of 4 KiB) ran 128,500 to 157,600 times a second over that hour, a `stat` took 2.8 to 4.1 µs and a round trip to a worker thread 43 to 61 µs. Within one hour, then, 4e51582's throughput at 8 sessions spanned 199 to 429 calls/s, a wider span than anything left between the figures and the targets. Changed: Read and Grep size a file's first read by the open file's size (one byte more than the file, at most the 64 KiB chunk; src/tools/support/text-lines.ts), where each had taken a fresh 64 KiB buffer, allocated outside V8's heap, for every file. Grep over 5,000 small files took 1.0 to 1.2 s and 1.1 to 1.3 s of CPU against 1.3 to 1.7 s and 1.6 to 2.2 s before (garbage collection 0.7 s against 8.1 s over 14 walks); Read called directly 6,000 times in a row, 253 to 285 against 280 to 302 µs of CPU per call (three alternating sets), a difference the end-to-end runs cannot show. Measured and left: (1) the isolate-timeout watchdog at 8 sessions (bench/profile.ts, three alternating pairs): 341, 373 and 354 calls/s with it, 430, 404 and 288 without; (2) the SDK's swap of globals between sessions (`__TEMPORAL_CALL_INTO_SCOPE`, a tenth of the workflow thread in a profile at 4e51582): 205 to 243 µs per switch between workflows in a bare sandbox with 65 to 104 globals, most of it `Object.getOwnPropertyDescriptors` through Node's context interceptors (76 to 143 µs); a swap that compares the saved descriptors instead of reading every global again took 214 to 219 µs against 227 to 243, too little to change how sessions' globals are kept apart. Three runs at f77c6da (03:55 to 03:59): 0.73 / 0.25 / 0.30, 0.68 / 0.57 / 0.41 and 0.75 / 0.30 / 0.40 of raw Temporal, the hand-written session with local activities at 0.71, 0.67 and 0.68 at one Read in the same rounds; 389, 424 and 345 calls/s at 8 sessions with 2.73, 2.55 and 3.12 ms of bench CPU per call; signal → start 30.1, 18.9 and 21.3 ms p50; event → console page 74 to 80 ms p50 and 88 to 96 ms p95; 0.17 to 0.19 MiB per waiting session.",
    '',
    profile,
    '',
  ];
}

/**
 * Writes one JSON file per scenario, the SVG charts, and BENCHMARKS.md; returns the markdown. With `runs` (the ledger,
 * bench/ledger.ts), also bench/results/runs.svg and the "Runs over time" section.
 */
export async function writeReport(options: {
  report: BenchReport;
  resultsDir: string;
  markdownPath: string;
  runs?: readonly LedgerEntry[];
}): Promise<string> {
  const { report, resultsDir } = options;
  await mkdir(resultsDir, { recursive: true });
  const common = { date: report.date, machine: report.machine, versions: report.versions, rounds: report.rounds };
  await writeFile(
    path.join(resultsDir, 'latency.json'),
    `${JSON.stringify({ ...common, rows: report.latency, ratios: ratios(report.latency), pairs: report.pairs }, null, 2)}\n`,
  );
  await writeFile(
    path.join(resultsDir, 'switchyard-only.json'),
    `${JSON.stringify({ ...common, rows: report.switchyardOnly }, null, 2)}\n`,
  );
  await writeFile(
    path.join(resultsDir, 'history.json'),
    `${JSON.stringify({ ...common, rows: report.history, tenReadsBreakdown: report.historyBreakdown, tenReadsModelTextBytes: report.tenReadsModelTextBytes }, null, 2)}\n`,
  );
  await writeFile(
    path.join(resultsDir, 'throughput.json'),
    `${JSON.stringify({ ...common, rows: report.throughput, ratios: report.throughputRatios }, null, 2)}\n`,
  );
  await writeFile(
    path.join(resultsDir, 'mutating.json'),
    `${JSON.stringify({ ...common, rows: report.mutating, pairs: report.pairs.filter((row) => report.mutating.some((entry) => entry.scenario === row.scenario)) }, null, 2)}\n`,
  );
  if (report.memory !== undefined)
    await writeFile(
      path.join(resultsDir, 'memory.json'),
      `${JSON.stringify({ ...common, ...report.memory }, null, 2)}\n`,
    );
  await writeFile(path.join(resultsDir, 'latency.svg'), latencySvg(report.latency));
  if (options.runs !== undefined) await writeFile(path.join(resultsDir, 'runs.svg'), runsSvg(options.runs));
  const { machine } = report;
  const markdown = [
    '# Benchmarks',
    '',
    `Written by \`npm run bench\` (bench/run.ts) on ${report.date.slice(0, 10)} (${report.date}). Machine: ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, ${machine.platform}, Node ${machine.node}. Temporal TypeScript SDK ${report.versions.temporalSdk}; ${report.versions.server}. Client, workers and server share the machine. Each scenario runs one warm-up, then ${report.rounds} rounds (the 1, 4 and 16 Reads per turn ${report.latencyRounds ?? report.rounds}, the ten 200 ms calls ${Math.min(report.rounds, 20)}); within a round the contenders take turns (alternating), against the same server. Nothing here is asserted by a test, and nothing here is an absolute target.`,
    '',
    '## Switchyard against the hand-written sessions: same-round ratios',
    '',
    "Only ratios count here: on a shared machine the same commit's absolute times move by a factor of two within an hour, while two contenders measured in the same round move together. Each cell is the **median of the rounds' ratios** (contender's time in round i / the hand-written session's time in round i), with the interquartile range of those ratios in brackets; below 1.00 Switchyard is faster. *hand-written, regular*: a minimal session written with plain Temporal (bench/raw/workflows.ts `rawSession`) whose update runs the calls as activities, `Promise.all` per group of 10; *hand-written, local*: the same session with local activities (`rawLocalSession`), none of the pipeline. *Switchyard*: `executeTurn` through the whole pipeline (validation, hooks, permission rules, deadline, result budget, events), default worker options (short read-only calls as local activities); *Switchyard, regular activities*: `localReadOnlyCalls: false`, as when tool workers are separate.",
    '',
    table(
      [
        'scenario',
        'pairs',
        'Switchyard / hand-written, local',
        'Switchyard / hand-written, regular',
        'Switchyard (regular activities) / hand-written, local',
        'Switchyard (regular activities) / hand-written, regular',
      ],
      [
        ...new Set(
          report.pairs
            .filter((row) => row.contender === 'Switchyard' || row.contender === 'Switchyard, regular activities')
            .map((row) => row.scenario),
        ),
      ]
        .filter((scenario) =>
          report.pairs.some((row) => row.scenario === scenario && row.against === 'raw Temporal, local activities'),
        )
        .map((scenario) => {
          const cell = (contender: string, against: string) =>
            report.pairs.find(
              (row) => row.scenario === scenario && row.contender === contender && row.against === against,
            );
          return [
            scenario,
            cell('Switchyard', 'raw Temporal, local activities')?.pairs ?? '–',
            formatPaired(cell('Switchyard', 'raw Temporal, local activities')),
            formatPaired(cell('Switchyard', 'raw Temporal')),
            formatPaired(cell('Switchyard, regular activities', 'raw Temporal, local activities')),
            formatPaired(cell('Switchyard, regular activities', 'raw Temporal')),
          ];
        }),
    ),
    '',
    `Under load (N sessions of 4-Read turns back to back, ${report.throughputRatios.length === 0 ? 'not run' : 'Switchyard and the hand-written local-activity session taking turns in windows of the same length, in the same process, against the same server'}): calls per second and CPU per call of this process (client and workers), Switchyard / hand-written local, median of the windows' ratios (interquartile range). Above 1.00 Switchyard serves more calls per second; below 1.00 it spends less CPU per call.`,
    '',
    table(
      [
        'sessions',
        'windows',
        'calls per second, Switchyard / hand-written local',
        'CPU per call, Switchyard / hand-written local',
      ],
      report.throughputRatios.map((row) => [
        row.sessions,
        row.callsPerSecond.pairs,
        formatPaired(row.callsPerSecond),
        formatPaired(row.cpuPerCall),
      ]),
    ),
    '',
    '## Mutating calls, and eager activity dispatch',
    '',
    "A `Write` of a new file (`acceptEdits`) and a `Bash` `touch` that a session rule allows (sandbox off: its cost is the last section's), which run as regular activities, against the hand-written regular-activity session doing the same, on the bench's server (eager activity dispatch on, `system.enableActivityEagerExecution=true`, as `switchyard dev` starts its server) and on a second server without it (as `temporal server start-dev` runs by default); the four contenders take turns within each round. With eager dispatch, the server hands a new activity task back in its answer to the workflow task that scheduled it, when the same worker polls that queue, instead of through a poll.",
    '',
    table(
      [
        'scenario',
        'pairs',
        'Switchyard / hand-written, eager on',
        'Switchyard / hand-written, eager off',
        'Switchyard: eager on / off',
        'hand-written: eager on / off',
      ],
      [...new Set(report.mutating.map((row) => row.scenario))].map((scenario) => {
        const cell = (contender: string, against: string) =>
          report.pairs.find(
            (row) => row.scenario === scenario && row.contender === contender && row.against === against,
          );
        return [
          scenario,
          cell('Switchyard, eager on', 'raw Temporal, eager on')?.pairs ?? '–',
          formatPaired(cell('Switchyard, eager on', 'raw Temporal, eager on')),
          formatPaired(cell('Switchyard, eager off', 'raw Temporal, eager off')),
          formatPaired(cell('Switchyard, eager on', 'Switchyard, eager off')),
          formatPaired(cell('raw Temporal, eager on', 'raw Temporal, eager off')),
        ];
      }),
    ),
    '',
    '## History per turn',
    '',
    `Events and bytes (protobuf, as the server stores them) that one turn adds to the session history, measured after a warm-up turn, in \`default\` mode (the Bash case in \`bypassPermissions\`, as its command would ask). The target, at most 2,048 bytes per call at ten Reads (Switchyard as shipped), applies to the *${TEN_READS_ONE_LINE}* row: each of its results is 15 bytes of model text, so its bytes are what the pipeline adds — ${tenReadsOneLine(report)} per call here. The *ten Reads* rows read the 2,000-byte file of the latency scenarios, for context: each of Switchyard's results is recorded twice (Plan's marker and the update's outcome), so twice the model text, ${2 * Math.round(report.tenReadsModelTextBytes / 10)} bytes per call, is that row's floor.`,
    '',
    table(
      ['contender', 'turn', 'calls', 'events', 'bytes', 'events per call', 'bytes per call'],
      report.history.map((row) => [
        row.contender,
        row.scenario,
        row.calls,
        row.events,
        row.bytes,
        row.eventsPerCall,
        row.bytesPerCall,
      ]),
    ),
    '',
    `Where Switchyard's ten-Reads turn puts its bytes. Its ten results hold ${report.tenReadsModelTextBytes} bytes of model text, ${Math.round(report.tenReadsModelTextBytes / 10)} per call, and each is recorded twice, as the call's activity result (the local-activity marker) and in the update's outcome that the caller receives: with this 2,000-byte file that alone is over 2,048 bytes per call, so the bytes beyond it are the figure the pipeline controls — ${tenReadsOverhead(report)} per call here.`,
    '',
    table(
      ['event type', 'events', 'bytes'],
      report.historyBreakdown.map((row) => [row.eventType, row.events, row.bytes]),
    ),
    '',
    '## Absolute times (context only)',
    '',
    `Written by \`npm run bench\` (bench/run.ts) on ${report.date}, in ${report.durationSeconds} s, on the machine above. Each scenario runs one warm-up, then its rounds; within a round the contenders take turns. Times in milliseconds. These move with the machine's load; the ratios above are what to compare.`,
    '',
    '![turn latency by contender](bench/results/latency.svg)',
    '',
    table(
      ['scenario', 'contender', 'p50', 'p95', 'mean', 'min', 'n'],
      [...report.latency, ...report.mutating].map((row) => [
        row.scenario,
        row.contender,
        row.p50,
        row.p95,
        row.mean,
        row.min,
        row.n,
      ]),
    ),
    '',
    'Switchyard-only scenarios (no hand-written counterpart):',
    '',
    table(
      ['scenario', 'p50', 'p95', 'mean', 'min', 'n'],
      report.switchyardOnly.map((row) => [row.scenario, row.p50, row.p95, row.mean, row.min, row.n]),
    ),
    '',
    "While a PreToolUse hook runs, queries and interrupts answer at once (src/workflows/prepare-off-path.ts). Prepare used to run its calls' PreToolUse hooks inside a local activity, which holds the workflow task open, and the server answers no query and delivers no signal while a task is open: with a hook that waits for a file the test creates only after the query answers (test/integration/queries-during-hooks.test.ts), the `activeTurn` query had not answered when the test gave up after 120 s, and an interrupt ended the turn 8.1 s after its signal (the SDK's workflow task heartbeat, at 80 % of the 10 s task timeout). Now the local Prepare runs no hook when one matches a call and says so at once, and a regular activity prepares those calls (a whole turn's first group: a regular Plan that prepares and runs it). A turn whose calls match no PreToolUse hook runs as before, with one local activity; one that matches pays a short local activity and one regular activity task for its Prepare.",
    '',
    `Sustained load, all windows of each contender together. CPU columns: share of one core over the windows (the machine has ${machine.cpus}); *bench* is the process that holds the client and the workers.`,
    '',
    table(
      [
        'contender',
        'sessions',
        'turns',
        'calls',
        'errors',
        'seconds',
        'calls/s',
        'turn p50',
        'turn p95',
        'bench CPU %',
        'bench CPU ms per call',
        'server CPU %',
      ],
      report.throughput.map((row) => [
        row.contender,
        row.sessions,
        row.turns,
        row.calls,
        row.errors,
        row.seconds,
        row.callsPerSecond,
        row.p50,
        row.p95,
        row.benchCpuPercent,
        row.benchCpuMsPerCall,
        row.serverCpuPercent ?? '–',
      ]),
    ),
    '',
    ...memorySection(report.memory),
    ...(options.runs === undefined ? [] : runsSection(options.runs)),
    ...(await profileSection()),
    // Written by `npm run bench:sandbox` (bench/sandbox-overhead.ts), which needs bubblewrap: kept when present.
    await readFile(path.join(resultsDir, 'sandbox-overhead.md'), 'utf8').catch(() => ''),
  ].join('\n');
  await writeFile(options.markdownPath, markdown);
  return markdown;
}
