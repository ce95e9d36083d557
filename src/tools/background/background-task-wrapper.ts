import { spawn } from 'node:child_process';
import { open } from 'node:fs/promises';
import path from 'node:path';
import type { BackgroundTaskRecord } from '../../contracts/background-tasks.js';
import { TRUSTED_DIRECTORIES, trustedBinary } from '../sandbox/trusted-binaries.js';
import { EXIT_CODE_FILE, OUTPUT_FILE, OUTPUT_LIMIT_FILE } from './background-task-records.js';

/**
 * The wrapper (bash, for PIPESTATUS) that makes a task's exit code durable and caps its output. `$1` is the command
 * (for `ps`), `$2` the exit-code file, `$3` the output limit in bytes, `$4` the file that records a stop at the limit,
 * `$5`-`$8` the absolute paths of `stdbuf`, `head`, `wc` and `mv` (`stdbuf` empty when there is none), and the rest
 * the argv that runs the command (`/bin/bash -c <command>`, or the same inside the OS sandbox).
 *
 * The command's stdout and stderr go through a pipe to `head -c <limit>`, unbuffered (coreutils' `stdbuf -o0`, so
 * output reaches the file as it is written), which appends to `output.log`. When head has copied the limit, one more
 * byte means the command went past it: the wrapper records the limit and SIGKILLs the task's whole process group (a
 * command that ignores SIGPIPE would otherwise run on). When the pipe closes instead (the command and everything that
 * holds its output have ended), the wrapper writes bash's exit status to a file (atomically, by rename), so the code
 * survives the worker that started it. A signal that kills the wrapper (TaskStop's SIGTERM/SIGKILL to the group)
 * leaves no code. Without `stdbuf` the output is written directly and is not capped (docs/CONCEPTS.md, Background tasks).
 *
 * The wrapper runs outside the sandbox, so it names every program by the path found in a system folder at first use
 * (see trusted-binaries.ts), never through the task's `PATH`: a `head` planted in `node_modules/.bin` would run
 * unconfined.
 */
const WRAPPER = [
  'code_file=$2; limit=$3; limit_file=$4; stdbuf=$5; head=$6; wc=$7; mv=$8; shift 8',
  'if [ -n "$stdbuf" ]; then',
  '  "$@" 2>&1 | { "$stdbuf" -o0 "$head" -c "$limit"; if [ "$("$head" -c 1 | "$wc" -c)" -gt 0 ]; then printf \'%s\\n\' "$limit" > "$limit_file"; kill -KILL 0; fi; }',
  '  code=${PIPESTATUS[0]}',
  'else',
  '  "$@"; code=$?',
  'fi',
  'printf \'%s\\n\' "$code" > "$code_file.tmp" && "$mv" -f "$code_file.tmp" "$code_file"',
].join('\n');

/** The programs the wrapper runs, each an absolute path in a system folder; `capping` undefined where output is not capped. */
export interface BackgroundWrapperBinaries {
  bash: string;
  mv: string;
  capping?: { stdbuf: string; head: string; wc: string };
}

/**
 * The wrapper's programs (see `WRAPPER`), found once per process in the system folders. Capping needs `stdbuf`,
 * `head` and `wc` together; without all three the output is not capped. Throws when bash or `mv` is missing.
 */
export function backgroundWrapperBinaries(): BackgroundWrapperBinaries {
  const bash = trustedBinary('bash');
  const mv = trustedBinary('mv');
  if (bash === undefined || mv === undefined)
    throw new Error(
      `background tasks need bash and mv in ${TRUSTED_DIRECTORIES.join(', ')}; ${bash === undefined ? 'bash' : 'mv'} is not there`,
    );
  const stdbuf = trustedBinary('stdbuf');
  const head = trustedBinary('head');
  const wc = trustedBinary('wc');
  return stdbuf === undefined || head === undefined || wc === undefined
    ? { bash, mv }
    : { bash, mv, capping: { stdbuf, head, wc } };
}

/**
 * Runs a task's command under the wrapper, detached: its own session and process group (so neither the worker's death
 * nor its signals reach it), stdin closed, stdout and stderr appended to the task folder's `output.log`. Resolves with
 * the wrapper's pid once it runs.
 */
export async function spawnBackgroundWrapper(
  options: Pick<BackgroundTaskRecord, 'command' | 'cwd'> & {
    /** The task's folder (`BackgroundTaskStore.taskDirectory`), which exists. */
    directory: string;
    env: NodeJS.ProcessEnv;
    maxOutputBytes: number;
    argv?: readonly string[];
  },
): Promise<number> {
  const { directory } = options;
  const output = await open(path.join(directory, OUTPUT_FILE), 'a');
  try {
    const argv = options.argv ?? ['/bin/bash', '-c', options.command];
    const binaries = backgroundWrapperBinaries();
    const args = [
      options.command,
      path.join(directory, EXIT_CODE_FILE),
      String(options.maxOutputBytes),
      path.join(directory, OUTPUT_LIMIT_FILE),
      binaries.capping?.stdbuf ?? '',
      binaries.capping?.head ?? '',
      binaries.capping?.wc ?? '',
      binaries.mv,
      ...argv,
    ];
    const child = spawn(binaries.bash, ['-c', WRAPPER, 'switchyard-background-task', ...args], {
      cwd: options.cwd,
      detached: true,
      stdio: ['ignore', output.fd, output.fd],
      env: options.env,
    });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () =>
        child.pid === undefined ? reject(new Error('the background process has no pid')) : resolve(child.pid),
      );
    });
    // The worker does not wait for it; it is reaped by this process while it lives, by init after.
    child.unref();
    return pid;
  } finally {
    await output.close();
  }
}
