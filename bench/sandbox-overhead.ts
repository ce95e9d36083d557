// What the OS sandbox adds to one Bash call: the real Bash tool, called directly (no Temporal), alternating a call
// outside the sandbox (`sandbox.mode: 'off'`) and one inside (`required`), on the same command in the same cwd.
// Writes bench/results/sandbox-overhead.json and bench/results/sandbox-overhead.md (quoted in BENCHMARKS.md).
// Run: npm run bench:sandbox [-- --rounds 60]. Needs bubblewrap.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bubblewrapAvailability } from '../src/tools/sandbox/bubblewrap-availability.js';
import { prepareSandboxLaunch } from '../src/tools/sandbox/sandboxed-launch.js';
import type { SandboxOptions } from '../src/contracts/session.js';
import { bashTool } from '../src/tools/builtin/bash.js';
import type { ToolExecutionContext } from '../src/tools/define-tool.js';
import { useToolSettings } from '../src/tools/tool-settings.js';
import { toolSettingsFromEnvironment } from '../src/config/settings.js';
import { stats } from './stats.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const roundsArgument = process.argv.indexOf('--rounds');
const rounds = roundsArgument > 0 ? Number(process.argv[roundsArgument + 1]) : 60;

// The tools run here outside any worker: hand them this process's settings, as a worker's factory does.
useToolSettings(toolSettingsFromEnvironment(process.env));
const availability = await bubblewrapAvailability();
if (!availability.available) throw new Error(`the sandbox benchmark needs bubblewrap: ${availability.reason}`);

const cwd = await mkdtemp(path.join(os.tmpdir(), 'switchyard-bench-sandbox-'));
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'switchyard-bench-data-'));
await mkdir(path.join(cwd, '.git', 'hooks'), { recursive: true });
await writeFile(path.join(cwd, '.git', 'config'), '[core]\n');
await writeFile(path.join(cwd, 'README.md'), 'hello\n');

const context = (sandbox: SandboxOptions): ToolExecutionContext => ({
  sessionId: 'bench',
  cwd,
  callId: 'c',
  turnId: 't',
  signal: new AbortController().signal,
  reportProgress() {},
  sessionState: {},
  attempt: 1,
  idempotencyKey: 'bench:c:1',
  deadline: { remainingMs: () => undefined, activeMs: 0, queuedMs: 0 },
  admit: (_gate, work) => work(),
  artifacts: undefined,
  denyRules: ['Read(.env)'],
  dataDir,
  sandbox,
});

const contenders: Array<{ name: string; sandbox: SandboxOptions }> = [
  { name: 'unsandboxed (mode off)', sandbox: { mode: 'off' } },
  { name: 'sandboxed (mode required)', sandbox: { mode: 'required' } },
  {
    name: 'sandboxed, allowedDomains [localhost]',
    sandbox: { mode: 'required', network: { allowedDomains: ['localhost'] } },
  },
];
const command = 'cat README.md';
const samples = new Map<string, number[]>(contenders.map((contender) => [contender.name, []]));
for (let round = -1; round < rounds; round++) {
  for (const contender of contenders) {
    const started = performance.now();
    const output = await bashTool.execute({ command }, context(contender.sandbox));
    const elapsed = performance.now() - started;
    if (typeof output === 'string' || output.isError === true)
      throw new Error(`${contender.name}: ${typeof output === 'string' ? output : output.content}`);
    // Round -1 warms up (the bubblewrap probe, the proxy).
    if (round >= 0) samples.get(contender.name)?.push(elapsed);
  }
}

// The process start alone, without the tool: bash, and bash inside bubblewrap with the same options as a call.
const launch = await prepareSandboxLaunch({
  context: { sessionId: 'bench', cwd, denyRules: ['Read(.env)'], dataDir, sandbox: { mode: 'required' } },
});
if (!launch.sandboxed) throw new Error('no sandbox');
const raw: Array<{ name: string; argv: string[] }> = [
  { name: 'process only: /bin/bash -c true', argv: ['/bin/bash', '-c', 'true'] },
  { name: 'process only: the same in bubblewrap', argv: launch.argv(['/bin/bash', '-c', 'true']) },
];
for (const entry of raw) samples.set(entry.name, []);
for (let round = -1; round < rounds; round++) {
  for (const entry of raw) {
    const [file = '/bin/bash', ...args] = entry.argv;
    const started = performance.now();
    await new Promise<void>((resolve, reject) =>
      execFile(file, args, { cwd }, (error) => (error === null ? resolve() : reject(error))),
    );
    if (round >= 0) samples.get(entry.name)?.push(performance.now() - started);
  }
}
await launch.finish();

const rows = [...contenders.map((contender) => contender.name), ...raw.map((entry) => entry.name)].map((name) => ({
  contender: name,
  ...stats(samples.get(name) ?? []),
}));
const baseline = rows[0]?.p50 ?? 0;
const date = new Date().toISOString();
const machine = `${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? 'cpu'}, load average ${os.loadavg()[0]?.toFixed(1)} at the end, ${os.platform()} ${os.release()}, Node ${process.version}`;
const rawBaseline = rows.find((row) => row.contender === raw[0]?.name)?.p50 ?? 0;
const added = (row: (typeof rows)[number]): number =>
  Math.round((row.p50 - (row.contender.startsWith('process only') ? rawBaseline : baseline)) * 10) / 10;
const result = { date, machine, command, rounds, rows: rows.map((row) => ({ ...row, addedP50: added(row) })) };
const markdown = [
  '## OS sandbox: cost per Bash call',
  '',
  `Written by \`npm run bench:sandbox\` (bench/sandbox-overhead.ts) on ${date}. ${machine}. The real Bash tool runs \`${command}\` in a cwd with a \`.git\` folder, one \`Read(...)\` deny rule; ${rounds} rounds after a warm-up, the contenders alternating. Times in milliseconds, from the call to its result (process start, mounts, limits, the proxy bridge, cleanup); the *process only* rows start \`bash -c true\` directly, without the tool, and their *added p50* is against each other. Nothing here is asserted by a test. The target is under 15 ms added at p50; on a shared machine every time here grows with its load (the load average above), so compare the rows with each other.`,
  '',
  '| contender | p50 | p95 | mean | min | n | added p50 |',
  '| --- | --- | --- | --- | --- | --- | --- |',
  ...result.rows.map(
    (row) => `| ${row.contender} | ${row.p50} | ${row.p95} | ${row.mean} | ${row.min} | ${row.n} | ${row.addedP50} |`,
  ),
  '',
].join('\n');
await mkdir(path.join(here, 'results'), { recursive: true });
await writeFile(path.join(here, 'results', 'sandbox-overhead.json'), `${JSON.stringify(result, null, 2)}\n`);
await writeFile(path.join(here, 'results', 'sandbox-overhead.md'), markdown);
await rm(cwd, { recursive: true, force: true });
await rm(dataDir, { recursive: true, force: true });
process.stdout.write(markdown);
