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
    },
  () => undefined,
);
const figures =
  run === undefined
    ? ''
    : `: ${run.sessions} sessions of ${run.callsPerTurn}-Read turns for ${run.seconds} s, ${run.calls.toLocaleString('en')} calls (${run.callsPerSecond} calls/s), **worker CPU ${run.workerCpuMsPerCall} ms per call** (${run.workerCpuPercent} % of one core${run.profiled === false ? '' : ", the profiler's own cost included"}; the client runs in its own process${run.clientCpuMsPerCall === undefined ? '' : ` and took ${run.clientCpuMsPerCall} ms per call over its ${run.clientConnection} connection`})`;
out(
  `Profiled at commit ${commit} on ${new Date().toISOString()} (\`npm run bench:profile\`)${figures}${process.env.PROFILE_RUN === undefined ? '' : `; ${process.env.PROFILE_RUN}`}.\n`,
);
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
  const thread =
    file === 'main-thread-window.cpuprofile'
      ? 'main thread, measured window'
      : self.has('(runInContext)')
        ? 'workflow thread'
        : 'another thread';
  // The whole-run main-thread profile (start-up and bundling) and the module loader's thread: not the steady state.
  if (thread === 'another thread') continue;
  out(
    `\n### ${thread} (${file}): ${(total / 1e6).toFixed(2)} s busy\n\n| place | self ms | share |\n| --- | --- | --- |\n`,
  );
  for (const [place, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    out(`| ${cell(place)} | ${(us / 1e3).toFixed(0)} | ${((100 * us) / total).toFixed(1)} % |\n`);
  }
  out(`\nTop functions:\n\n| function | self ms |\n| --- | --- |\n`);
  for (const [fn, us] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top))
    out(`| ${cell(fn)} | ${(us / 1e3).toFixed(0)} |\n`);
}
const markdown = lines.join('');
process.stdout.write(markdown);
await writeFile(new URL('./results/profile.md', import.meta.url), markdown);
