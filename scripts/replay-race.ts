/**
 * Reproduces, on purpose, the race that made a session's history unreplayable (`TMPRL1100`): a local activity that
 * outlives its workflow task while an update arrives (src/workflows/local-activity-barrier.ts says why it broke
 * replay). Runs test/faults/replay-race.test.ts, which arranges the local-replay scenario again and again and replays
 * every history it made; a history that does not replay is kept in test/faults/results/.
 *
 *   tsx scripts/replay-race.ts            # both modes below, one after the other
 *   tsx scripts/replay-race.ts load       # 300 runs in 4 lanes beside 2 busy processes (300 ms hooks)
 *   tsx scripts/replay-race.ts heartbeat  # 24 runs whose hook (9 s) outlasts the workflow task's heartbeat (8 s)
 *
 * RACE_RUNS, RACE_LANES, RACE_BURNERS and RACE_HOOK_MS override a mode's figures. Bounded: each mode stops after
 * 40 minutes. Figures: RELIABILITY.md ("Replay").
 */
import { spawnSync } from 'node:child_process';

const modes: Record<string, Record<string, string>> = {
  load: { RACE_RUNS: '300', RACE_LANES: '4', RACE_BURNERS: '2', RACE_HOOK_MS: '300' },
  heartbeat: { RACE_RUNS: '24', RACE_LANES: '3', RACE_BURNERS: '0', RACE_HOOK_MS: '9000' },
};
const asked = process.argv.slice(2);
const chosen = asked.length === 0 ? Object.keys(modes) : asked;
let failed = false;
for (const mode of chosen) {
  const figures = modes[mode];
  if (figures === undefined) {
    process.stderr.write(`unknown mode "${mode}": use ${Object.keys(modes).join(' or ')}\n`);
    process.exit(2);
  }
  const env = { ...process.env };
  for (const [name, value] of Object.entries(figures)) env[name] ??= value;
  process.stderr.write(
    `[replay-race] mode ${mode}: ${Object.keys(figures)
      .map((name) => `${name}=${env[name]}`)
      .join(' ')}\n`,
  );
  const result = spawnSync(
    'npx',
    ['vitest', 'run', '--config', 'vitest.long.config.ts', 'test/faults/replay-race.test.ts'],
    { env, stdio: 'inherit', timeout: 40 * 60_000 },
  );
  if (result.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
