import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Stats } from './stats.js';

export interface ContenderRow extends Stats {
  scenario: string;
  calls: number;
  contender: string;
}

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
  /** CPU of the dev server process, likewise (absent for an external server). */
  serverCpuPercent?: number;
}

export interface BenchReport {
  date: string;
  machine: { cpus: number; cpuModel: string; memoryGiB: number; node: string; platform: string };
  versions: { temporalSdk: string; server: string };
  rounds: number;
  latency: ContenderRow[];
  switchyardOnly: ContenderRow[];
  history: HistoryRow[];
  /** Switchyard's ten-Reads turn by event type: where its history bytes go. */
  historyBreakdown: HistoryBreakdownRow[];
  /** The model text of that turn's ten results: a result is recorded at least twice (activity result, update outcome). */
  tenReadsModelTextBytes: number;
  throughput: ThroughputRow[];
  durationSeconds: number;
}

const CONTENDER_COLOURS: Record<string, string> = {
  'in-process Promise.all': '#9aa5b1',
  'raw Temporal': '#3b82f6',
  Switchyard: '#f59e0b',
  'Switchyard, regular activities': '#b45309',
};

/** Switchyard's p50 over raw Temporal's, per calls-per-turn scenario: as shipped, and with regular activities only. */
export function ratios(
  rows: readonly ContenderRow[],
): Array<{ scenario: string; calls: number; ratio: number; regularRatio?: number }> {
  const byScenario = new Map<string, ContenderRow[]>();
  for (const row of rows) byScenario.set(row.scenario, [...(byScenario.get(row.scenario) ?? []), row]);
  const out: Array<{ scenario: string; calls: number; ratio: number; regularRatio?: number }> = [];
  const ratio = (value: number, raw: number): number => Math.round((value / raw) * 100) / 100;
  for (const [scenario, entries] of byScenario) {
    const raw = entries.find((entry) => entry.contender === 'raw Temporal');
    const switchyard = entries.find((entry) => entry.contender === 'Switchyard');
    const regular = entries.find((entry) => entry.contender === 'Switchyard, regular activities');
    if (raw === undefined || switchyard === undefined) continue;
    out.push({
      scenario,
      calls: switchyard.calls,
      ratio: ratio(switchyard.p50, raw.p50),
      ...(regular === undefined ? {} : { regularRatio: ratio(regular.p50, raw.p50) }),
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

function table(header: readonly string[], rows: ReadonlyArray<readonly (string | number)[]>): string {
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');
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
    "A CPU profile of one worker (as shipped) under 8 sessions of 4-Read turns (`npm run bench:profile`: bench/profile.ts under `node --cpu-prof`, folded by bench/profile-summary.ts): self time by place, per thread. The workflow thread runs every session's workflow code; the main thread runs activities, the client and the SDK's bridge to its Rust core.",
    '',
    "Reading it: the workflow thread is the busy one (one thread by default with a reused V8 context: `SwitchyardWorkerOptions.tuning.workflowThreadPoolSize`). Its largest single cost is not Switchyard's code but the Temporal SDK's stack-trace capture for every promise a workflow creates (for the `__stack_trace` query): `init`, `formatCallsiteName`, `get stack`, `getActivator`, `Error.prepareStackTrace`, `cutoffStackTrace`, the source-map lookups and the stack-frame regular expressions. Every `await` in workflow code pays it, so fewer promises per call is the lever there. `(runInContext)` is time inside the workflow sandbox's context switch and microtask runs; `bundle:workflow-bundle-…` is Switchyard's own workflow code.",
    '',
    profile,
    '',
  ];
}

/** Writes one JSON file per scenario, the SVG chart, and BENCHMARKS.md; returns the markdown. */
export async function writeReport(options: {
  report: BenchReport;
  resultsDir: string;
  markdownPath: string;
}): Promise<string> {
  const { report, resultsDir } = options;
  await mkdir(resultsDir, { recursive: true });
  const common = { date: report.date, machine: report.machine, versions: report.versions, rounds: report.rounds };
  await writeFile(
    path.join(resultsDir, 'latency.json'),
    `${JSON.stringify({ ...common, rows: report.latency, ratios: ratios(report.latency) }, null, 2)}\n`,
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
    `${JSON.stringify({ ...common, rows: report.throughput }, null, 2)}\n`,
  );
  await writeFile(path.join(resultsDir, 'latency.svg'), latencySvg(report.latency));
  const { machine } = report;
  const markdown = [
    '# Benchmarks',
    '',
    `Written by \`npm run bench\` (bench/run.ts) on ${report.date}, in ${report.durationSeconds} s. Machine: ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, ${machine.platform}, Node ${machine.node}. Temporal TypeScript SDK ${report.versions.temporalSdk}; ${report.versions.server}. Client, workers and server share the machine. Each scenario runs one warm-up, then ${report.rounds} rounds; within a round the contenders take turns (alternating), against the same server. Times in milliseconds. Nothing here is asserted by a test.`,
    '',
    '## Turn latency: Switchyard beside what a user would hand-write',
    '',
    'Each call reads the same 2,000-byte file. *in-process Promise.all*: the read function called directly, no Temporal. *raw Temporal*: a minimal hand-written session (bench/raw/) whose update runs the reads as plain activities, `Promise.all` per group of 10. *Switchyard*: `executeTurn` with `Read` calls through the whole pipeline (validation, hooks, permission rules, deadline, result budget, events), with the default worker options, which run short read-only calls as local activities. *Switchyard, regular activities*: the same with `localReadOnlyCalls: false`, as when tool workers are separate (`toolTaskQueue`).',
    '',
    '![turn latency by contender](bench/results/latency.svg)',
    '',
    table(
      ['scenario', 'contender', 'p50', 'p95', 'mean', 'min', 'n'],
      report.latency.map((row) => [row.scenario, row.contender, row.p50, row.p95, row.mean, row.min, row.n]),
    ),
    '',
    'Switchyard / raw Temporal (p50):',
    '',
    table(
      ['scenario', 'Switchyard (as shipped)', 'Switchyard, regular activities'],
      ratios(report.latency).map((row) => [row.scenario, row.ratio, row.regularRatio ?? '–']),
    ),
    '',
    '## Switchyard-only scenarios',
    '',
    table(
      ['scenario', 'p50', 'p95', 'mean', 'min', 'n'],
      report.switchyardOnly.map((row) => [row.scenario, row.p50, row.p95, row.mean, row.min, row.n]),
    ),
    '',
    '## History per turn',
    '',
    'Events and bytes (protobuf, as the server stores them) that one turn adds to the session history, measured after a warm-up turn, in `default` mode (the Bash case in `bypassPermissions`, as its command would ask).',
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
    `Where Switchyard's ten-Reads turn puts its bytes (its ten results hold ${report.tenReadsModelTextBytes} bytes of model text; each is recorded twice by design, once as the call's activity result and once in the update's outcome that the caller receives, so ${2 * report.tenReadsModelTextBytes} bytes, ${Math.round((2 * report.tenReadsModelTextBytes) / 10)} per call, is the floor for this file):`,
    '',
    table(
      ['event type', 'events', 'bytes'],
      report.historyBreakdown.map((row) => [row.eventType, row.events, row.bytes]),
    ),
    '',
    '## Sustained throughput',
    '',
    `N sessions each run turns of four Reads back to back for a fixed time, all against one worker (as shipped) and the dev server. CPU columns: share of one core over the window (the machine has ${machine.cpus}); *bench* is the process that holds the client and the workers.`,
    '',
    table(
      [
        'sessions',
        'turns',
        'calls',
        'errors',
        'seconds',
        'calls/s',
        'turn p50',
        'turn p95',
        'bench CPU %',
        'server CPU %',
      ],
      report.throughput.map((row) => [
        row.sessions,
        row.turns,
        row.calls,
        row.errors,
        row.seconds,
        row.callsPerSecond,
        row.p50,
        row.p95,
        row.benchCpuPercent,
        row.serverCpuPercent ?? '–',
      ]),
    ),
    '',
    ...(await profileSection()),
    // Written by `npm run bench:sandbox` (bench/sandbox-overhead.ts), which needs bubblewrap: kept when present.
    await readFile(path.join(resultsDir, 'sandbox-overhead.md'), 'utf8').catch(() => ''),
  ].join('\n');
  await writeFile(options.markdownPath, markdown);
  return markdown;
}
