// Folds .cpuprofile files (from `node --cpu-prof`) into a table of self time by place: Switchyard's own files by
// file, dependencies by package, V8 and Node internals by name, one table per thread. Usage:
// tsx bench/profile-summary.ts DIR [TOP] — prints markdown, and writes it to bench/results/profile.md, which
// `npm run bench` puts into BENCHMARKS.md ("Where the CPU goes").
import { execFileSync } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A name fit for a markdown table cell. */
const cell = (text: string): string => (text.length > 90 ? `${text.slice(0, 89)}…` : text).replaceAll('|', '\\|');

/** Where a frame's time goes: `src/<file>`, `pkg:<name>`, `node:<module>` or `(<v8 name>)`. */
function placeOf(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (url === '') return functionName === '' ? '(anonymous)' : `(${functionName.replace(/^\((.*)\)$/, '$1')})`;
  if (url.startsWith('node:')) return url;
  const modules = url.lastIndexOf('node_modules/');
  if (modules !== -1) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return `pkg:${rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  const src = url.indexOf('/src/');
  if (src !== -1) return url.slice(src + 1).replace(/\?.*$/, '');
  if (url.includes('workflow-bundle') || url.startsWith('file:///') === false) return `bundle:${path.basename(url)}`;
  return path.basename(url);
}

const dir = process.argv[2];
if (dir === undefined) throw new Error('usage: tsx bench/profile-summary.ts DIR [TOP]');
const top = Number(process.argv[3] ?? 15);
const lines: string[] = [];
const out = (text: string): void => {
  lines.push(text);
};
let commit = 'unknown';
try {
  commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
} catch {
  // not a clone
}
/** The run's figures, as bench/profile.ts wrote them (absent for profiles taken otherwise). */
const run = await readFile(path.join(dir, 'run.json'), 'utf8').then(
  (text) =>
    JSON.parse(text) as {
      sessions: number;
      callsPerTurn: number;
      seconds: number;
      calls: number;
      callsPerSecond: number;
      workerCpuMsPerCall: number;
      workerCpuPercent: number;
      /** Absent in runs before the client reported its own CPU. */
      clientCpuMsPerCall?: number;
      clientConnection?: string;
      /** Whether the run was under `--cpu-prof` (absent in older runs, which always were). */
      profiled?: boolean;
      /** PROFILE_COMPARE: Switchyard and the hand-written local-activity session, window by window. */
      compare?: true;
      windows?: Array<{ contender: string; pair: number; calls: number; seconds: number; workerCpuMs: number }>;
      ratios?: Array<{ pair: number; callsPerSecond: number; workerCpuPerCall: number } | null>;
    },
  () => undefined,
);
const contenderName = (name: string): string =>
  name === 'raw' ? 'hand-written local-activity session' : name === 'switchyard' ? 'Switchyard' : name;
const compareFigures = (): string => {
  const windows = (run?.windows ?? []).map(
    (entry) =>
      `${contenderName(entry.contender)} window ${entry.pair + 1}: ${entry.calls.toLocaleString('en')} calls in ${entry.seconds.toFixed(1)} s, ${(entry.workerCpuMs / entry.calls).toFixed(3)} ms of worker CPU per call`,
  );
  const ratios = (run?.ratios ?? [])
    .filter((entry) => entry !== null)
    .map(
      (entry) =>
        `${entry.callsPerSecond} × the calls per second and ${entry.workerCpuPerCall} × the worker CPU per call`,
    );
  return `: ${run?.sessions} sessions of ${run?.callsPerTurn}-Read turns, Switchyard and the hand-written local-activity session (bench/raw/workflows.ts \`rawLocalSession\`) alternating in windows, each with its own worker in one process (the client in another, so the CPU is the workers'; the profiler's own cost included). ${windows.join('; ')}. Switchyard / the hand-written session, pair by pair: ${ratios.join('; ')}`;
};
const figures =
  run?.compare === true
    ? compareFigures()
    : run === undefined
      ? ''
      : `: ${run.sessions} sessions of ${run.callsPerTurn}-Read turns for ${run.seconds} s, ${run.calls.toLocaleString('en')} calls (${run.callsPerSecond} calls/s), **worker CPU ${run.workerCpuMsPerCall} ms per call** (${run.workerCpuPercent} % of one core${run.profiled === false ? '' : ", the profiler's own cost included"}; the client runs in its own process${run.clientCpuMsPerCall === undefined ? '' : ` and took ${run.clientCpuMsPerCall} ms per call over its ${run.clientConnection} connection`})`;
out(
  `Profiled at commit ${commit} on ${new Date().toISOString()} (\`npm run bench:profile\`)${figures}${process.env.PROFILE_RUN === undefined ? '' : `; ${process.env.PROFILE_RUN}`}.\n`,
);
/** Self time by place and by function, per thread (main-thread windows of one contender merged). */
interface Folded {
  files: string[];
  total: number;
  self: Map<string, number>;
  fns: Map<string, number>;
}
const groups = new Map<string, Folded>();
/** The hand-written session's workflow function (bench/raw/workflows.ts): a workflow thread that ran it is that session's. */
const RAW_WORKFLOW_FUNCTION = 'rawLocalSession';
for (const file of (await readdir(dir)).filter((name) => name.endsWith('.cpuprofile')).sort()) {
  const profile = JSON.parse(await readFile(path.join(dir, file), 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<string, number>();
  const fns = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, index) => {
    const node = byId.get(id);
    const dt = profile.timeDeltas[index] ?? 0;
    if (node === undefined) return;
    const place = placeOf(node.callFrame);
    if (place === '(idle)') return;
    total += dt;
    self.set(place, (self.get(place) ?? 0) + dt);
    const fn = `${node.callFrame.functionName || '(anonymous)'} ${place}`;
    fns.set(fn, (fns.get(fn) ?? 0) + dt);
  });
  const window = /^main-thread-(\w+)-\d+\.cpuprofile$/.exec(file);
  const workflowOwner =
    run?.compare === true && profile.nodes.some((node) => node.callFrame.functionName === RAW_WORKFLOW_FUNCTION)
      ? 'hand-written local-activity session'
      : run?.compare === true
        ? 'Switchyard'
        : undefined;
  const thread =
    file === 'main-thread-window.cpuprofile'
      ? 'main thread, measured window'
      : window !== null
        ? `main thread, ${contenderName(window[1] ?? '')}'s windows`
        : self.has('(runInContext)')
          ? `workflow thread${workflowOwner === undefined ? '' : `, ${workflowOwner}`}`
          : 'another thread';
  // The whole-run main-thread profile (start-up and bundling) and the module loader's thread: not the steady state.
  if (thread === 'another thread') continue;
  const group: Folded = groups.get(thread) ?? { files: [], total: 0, self: new Map(), fns: new Map() };
  group.files.push(file);
  group.total += total;
  for (const [place, us] of self) group.self.set(place, (group.self.get(place) ?? 0) + us);
  for (const [fn, us] of fns) group.fns.set(fn, (group.fns.get(fn) ?? 0) + us);
  groups.set(thread, group);
}
for (const [thread, group] of [...groups].sort((a, b) => a[0].localeCompare(b[0]))) {
  const { total } = group;
  out(
    `\n### ${thread} (${group.files.join(', ')}): ${(total / 1e6).toFixed(2)} s busy\n\n| place | self ms | share |\n| --- | --- | --- |\n`,
  );
  for (const [place, us] of [...group.self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    out(`| ${cell(place)} | ${(us / 1e3).toFixed(0)} | ${((100 * us) / total).toFixed(1)} % |\n`);
  }
  out(`\nTop functions:\n\n| function | self ms |\n| --- | --- |\n`);
  for (const [fn, us] of [...group.fns].sort((a, b) => b[1] - a[1]).slice(0, top))
    out(`| ${cell(fn)} | ${(us / 1e3).toFixed(0)} |\n`);
}
const markdown = lines.join('');
process.stdout.write(markdown);
await writeFile(new URL('./results/profile.md', import.meta.url), markdown);
