import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Harness } from './harness.js';
import { scratchDir } from './scratch.js';
import { waitFor } from './wait-for.js';

/** The real `switchyard` command, as `npx switchyard` runs it. */
const BIN = path.resolve('bin/switchyard.js');

/** Runs `switchyard <args>` to completion; rejects (with `code`, `stdout`, `stderr`) on a non-zero exit. */
export async function runCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  options: { cwd?: string } = {},
): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, [BIN, ...args], {
    env,
    maxBuffer: 16 * 1024 * 1024,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  });
}

/** A long-running `switchyard` process (dev, worker, a turn that waits): its output so far and its exit. */
export interface CliProcess {
  child: ChildProcess;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** The JSON log lines (pino) written so far. */
  logs(): Array<Record<string, unknown>>;
  /** Resolves with the first JSON log line that `accept` takes. */
  waitForLog(
    accept: (line: Record<string, unknown>) => boolean,
    what: string,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  /** Resolves when the process exits, with its code (null when a signal ended it) and its stdout. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string }>;
}

/**
 * Starts `switchyard <args>`; with `viaShell`, as npm runs a script: under `sh -c`, which stays the parent and passes
 * no signal on (`child` is then the shell).
 */
/**
 * `viaShell` starts it under `sh -c` (as npm does); `ownGroup` in a process group of its own (its pid is the group's id),
 * so a test can signal the whole group as a terminal's Ctrl-C does.
 */
export function startCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  options: { viaShell?: boolean; ownGroup?: boolean; cwd?: string } = {},
): CliProcess {
  const quote = (word: string): string => `'${word.replaceAll("'", "'\\''")}'`;
  const spawnOptions = {
    env,
    stdio: ['ignore', 'pipe', 'pipe'] as Array<'ignore' | 'pipe'>,
    detached: options.ownGroup === true,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  };
  const child =
    options.viaShell === true
      ? spawn('sh', ['-c', `${[process.execPath, BIN, ...args].map(quote).join(' ')}; exit $?`], spawnOptions)
      : spawn(process.execPath, [BIN, ...args], spawnOptions);
  let stdout = '';
  let all = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    all += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    all += chunk.toString();
  });
  const exited = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
    stdout,
  }));
  const logs = (): Array<Record<string, unknown>> =>
    all.split('\n').flatMap((line) => {
      if (!line.startsWith('{')) return [];
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  return {
    child,
    output: () => all,
    logs,
    exited,
    async waitForLog(accept, what, timeoutMs = 120_000) {
      const found = await waitFor(
        async () => {
          if (child.exitCode !== null || child.signalCode !== null)
            throw new Error(`switchyard ${args.join(' ')} exited while waiting for ${what}:\n${all}`);
          return logs().find(accept);
        },
        (line) => line !== undefined,
        { what, timeoutMs },
      );
      return found as Record<string, unknown>;
    },
  };
}

/** Stops a CLI process if it still runs (SIGKILL), for cleanup after a failed test. */
export async function killCli(cli: CliProcess): Promise<void> {
  if (cli.child.exitCode === null && cli.child.signalCode === null) cli.child.kill('SIGKILL');
  await cli.exited;
}

/**
 * The environment of a `switchyard` process beside a test harness: its server, namespace, task queue and data dir,
 * an empty user settings dir and a private HOME (so no hooks or keys of this machine's user apply), JSON logs.
 */
export async function cliEnvironment(harness: Harness, extra: NodeJS.ProcessEnv = {}): Promise<NodeJS.ProcessEnv> {
  return {
    ...process.env,
    TEMPORAL_ADDRESS: harness.address,
    TEMPORAL_NAMESPACE: harness.namespace,
    SWITCHYARD_TASK_QUEUE: harness.taskQueue,
    SWITCHYARD_DATA_DIR: harness.dataDir,
    SWITCHYARD_USER_SETTINGS_DIR: await scratchDir('switchyard-user-'),
    HOME: await scratchDir('switchyard-home-'),
    SWITCHYARD_LOG_FORMAT: 'json',
    SWITCHYARD_LOG_LEVEL: 'info',
    ...extra,
  };
}
