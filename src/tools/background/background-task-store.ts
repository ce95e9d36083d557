import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { directoryBytes } from '../../artifacts/directory-bytes.js';
import { BACKGROUND_TASK_DEFAULTS } from '../../contracts/background-tasks.js';
import { BASH_LIMITS } from '../../contracts/defaults.js';
import type { BackgroundTaskRecord, BackgroundTaskStatus } from '../../contracts/background-tasks.js';
import { TRUSTED_DIRECTORIES, trustedBinary } from '../sandbox/trusted-binaries.js';
import { signalProcessGroup } from '../support/signal-process-group.js';

/** Task ids the store makes (`bg_` and 8 hex digits) and accepts: anything else is unknown, never a path. */
const TASK_ID = /^bg_[0-9a-f]{8}$/;

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
 * leaves no code. Without `stdbuf` the output is written directly and is not capped (README, Background tasks).
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

const RECORD_FILE = 'task.json';
const OUTPUT_FILE = 'output.log';
const EXIT_CODE_FILE = 'exit-code';
const OUTPUT_LIMIT_FILE = 'output-limit-reached';

/** What the store finds about a task's process right now. */
export interface BackgroundTaskState {
  status: BackgroundTaskStatus;
  /** With `exited` (and with `killed` when the command still wrote one): the exit code; null when none is known. */
  exitCode?: number | null;
  /** With `killed`: the task was stopped because its output passed this many bytes (`maxOutputBytes`). */
  outputLimitBytes?: number;
}

/** A range of a task's output handed to the caller: in memory when it fits `maxInlineBytes`, else in a spool file. */
export interface BackgroundTaskOutput {
  from: number;
  to: number;
  /** The whole range when it fits, else its last `maxInlineBytes` bytes (cut at a character boundary). */
  text: string;
  /** The whole range in a file of its own (the caller owns and deletes it), when it did not fit. */
  spool?: { path: string; bytes: number };
}

/** `/proc/<pid>/stat` fields 3 (state) and 22 (start time), or undefined where there is no procfs. */
async function procStat(pid: number): Promise<{ state: string; startTicks: string } | undefined> {
  try {
    const text = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may contain spaces: count fields after the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '', startTicks: fields[19] ?? '' };
  } catch {
    return undefined;
  }
}

/** Bytes at the end of `buffer` that start a UTF-8 character the buffer does not finish (0 to 3). */
function incompleteUtf8Tail(buffer: Buffer): number {
  for (let back = 1; back <= Math.min(3, buffer.length); back++) {
    const byte = buffer[buffer.length - back] ?? 0;
    if ((byte & 0xc0) === 0x80) continue;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? back : 0;
  }
  return 0;
}

/** What `prune` removed (or would remove, on a dry run) and how many tasks it left. */
export interface BackgroundPruneReport {
  removed: Array<{ session: string; taskId: string; path: string; bytes: number; lastModified: Date }>;
  /** Tasks left in place: running, or written within the age. */
  kept: number;
}

/** A task's record as written, or undefined when it is missing or unreadable (a task being created). */
async function readRecord(file: string): Promise<BackgroundTaskRecord | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as BackgroundTaskRecord;
  } catch {
    return undefined;
  }
}

/**
 * Background tasks on disk: `<dataDir>/background/<session>/<taskId>/` holds `task.json` (the record), `output.log`
 * (stdout and stderr, written by the process itself, so nothing of the worker is needed to keep it going) and
 * `exit-code` (written by the wrapper shell when the command ends). Everything a later worker needs to find a task,
 * read it and stop it is here: a restarted worker, or another worker process on the same host and data directory.
 * Tasks are per session: a session can name only its own.
 */
export class BackgroundTaskStore {
  readonly root: string;
  /** Serialises record updates per task within this process (two concurrent TaskOutput calls on one task). */
  readonly #locks = new Map<string, Promise<unknown>>();
  /** The tasks this process started through this store, so whoever started the process can stop them at its end. */
  readonly startedHere: BackgroundTaskRecord[] = [];

  constructor(dataDir: string) {
    this.root = path.join(dataDir, 'background');
  }

  static isTaskId(taskId: string): boolean {
    return TASK_ID.test(taskId);
  }

  sessionDirectory(sessionId: string): string {
    // The same encoding as the artifact store's session segment: any session id is one safe path segment.
    const segment = encodeURIComponent(sessionId)
      .replace(/[!'()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`)
      .replace(/^\./, '%2E');
    return path.join(this.root, segment);
  }

  taskDirectory(sessionId: string, taskId: string): string {
    if (!BackgroundTaskStore.isTaskId(taskId)) throw new Error(`Not a background task id: "${taskId}"`);
    return path.join(this.sessionDirectory(sessionId), taskId);
  }

  outputPath(record: Pick<BackgroundTaskRecord, 'sessionId' | 'taskId'>): string {
    return path.join(this.taskDirectory(record.sessionId, record.taskId), OUTPUT_FILE);
  }

  /**
   * Starts `command` in bash, detached: its own session and process group (so neither the worker's death nor its
   * signals reach it), stdin closed, stdout and stderr appended to `output.log`, at most `maxOutputBytes` of them
   * (default `BASH_LIMITS.spoolBytes`): past that the task is killed. Resolves once the process runs and its record is
   * on disk.
   */
  async start(
    options: Pick<BackgroundTaskRecord, 'sessionId' | 'turnId' | 'callId' | 'command' | 'description' | 'cwd'> & {
      env: NodeJS.ProcessEnv;
      maxOutputBytes?: number;
      /** The argv that runs the command; default `/bin/bash -c <command>` (the sandbox wraps it, see `src/tools/sandbox/`). */
      argv?: readonly string[];
    },
  ): Promise<BackgroundTaskRecord> {
    const maxOutputBytes = options.maxOutputBytes ?? BASH_LIMITS.spoolBytes;
    if (!Number.isSafeInteger(maxOutputBytes) || maxOutputBytes <= 0)
      throw new Error(`maxOutputBytes must be a positive integer, got ${maxOutputBytes}`);
    const taskId = `bg_${randomBytes(4).toString('hex')}`;
    const directory = this.taskDirectory(options.sessionId, taskId);
    await mkdir(directory, { recursive: true });
    const output = await open(path.join(directory, OUTPUT_FILE), 'a');
    let pid: number;
    try {
      const argv = options.argv ?? ['/bin/bash', '-c', options.command];
      const binaries = backgroundWrapperBinaries();
      const args = [
        options.command,
        path.join(directory, EXIT_CODE_FILE),
        String(maxOutputBytes),
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
      pid = await new Promise<number>((resolve, reject) => {
        child.once('error', reject);
        child.once('spawn', () =>
          child.pid === undefined ? reject(new Error('the background process has no pid')) : resolve(child.pid),
        );
      });
      // The worker does not wait for it; it is reaped by this process while it lives, by init after.
      child.unref();
    } finally {
      await output.close();
    }
    const record: BackgroundTaskRecord = {
      taskId,
      sessionId: options.sessionId,
      turnId: options.turnId,
      callId: options.callId,
      command: options.command,
      cwd: options.cwd,
      pid,
      startedAt: new Date().toISOString(),
      readOffset: 0,
    };
    if (options.description !== undefined && options.description !== '') record.description = options.description;
    const procfs = await procStat(pid);
    if (procfs !== undefined) record.processStartTicks = procfs.startTicks;
    await this.#write(record);
    this.startedHere.push(record);
    return record;
  }

  /** The task's record, or undefined when this session has no such task. */
  async get(sessionId: string, taskId: string): Promise<BackgroundTaskRecord | undefined> {
    if (!BackgroundTaskStore.isTaskId(taskId)) return undefined;
    try {
      const record = JSON.parse(
        await readFile(path.join(this.taskDirectory(sessionId, taskId), RECORD_FILE), 'utf8'),
      ) as BackgroundTaskRecord;
      return record.sessionId === sessionId && record.taskId === taskId ? record : undefined;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  /** Every task of a session, oldest first. */
  async list(sessionId: string): Promise<BackgroundTaskRecord[]> {
    let entries: string[];
    try {
      entries = await readdir(this.sessionDirectory(sessionId));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const records = await Promise.all(
      entries.filter((entry) => BackgroundTaskStore.isTaskId(entry)).map((entry) => this.get(sessionId, entry)),
    );
    return records
      .filter((record): record is BackgroundTaskRecord => record !== undefined)
      .sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  }

  /**
   * Removes the tasks that have ended (exited or killed: never a running one) and were last written longer than
   * `olderThanMs` ago, task by task, and a session's folder once it is empty. `dryRun` reports and removes nothing.
   */
  async prune(options: { olderThanMs: number; dryRun?: boolean; now?: Date }): Promise<BackgroundPruneReport> {
    const cutoff = (options.now ?? new Date()).getTime() - options.olderThanMs;
    const report: BackgroundPruneReport = { removed: [], kept: 0 };
    let sessions: string[];
    try {
      sessions = (await readdir(this.root, { withFileTypes: true }))
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return report;
      throw error;
    }
    for (const segment of sessions.sort()) {
      const sessionDirectory = path.join(this.root, segment);
      const taskIds = (await readdir(sessionDirectory).catch(() => [] as string[]))
        .filter((entry) => BackgroundTaskStore.isTaskId(entry))
        .sort();
      for (const taskId of taskIds) {
        const directory = path.join(sessionDirectory, taskId);
        const record = await readRecord(path.join(directory, RECORD_FILE));
        const written = Math.max(
          ...(await Promise.all(
            [directory, path.join(directory, OUTPUT_FILE)].map((file) =>
              stat(file).then(
                (stats) => stats.mtimeMs,
                () => 0,
              ),
            ),
          )),
        );
        const ended = record !== undefined && (await this.state(record)).status !== 'running';
        if (!ended || written > cutoff) {
          report.kept += 1;
          continue;
        }
        const bytes = await directoryBytes(directory);
        if (options.dryRun !== true) await rm(directory, { recursive: true, force: true });
        report.removed.push({
          session: record.sessionId,
          taskId,
          path: directory,
          bytes,
          lastModified: new Date(written),
        });
      }
      // Only an empty folder goes: rmdir fails, harmlessly, when a task is left or has just been started.
      if (options.dryRun !== true) await rmdir(sessionDirectory).catch(() => undefined);
    }
    return report;
  }

  /**
   * Whether the task's process group leader (the wrapper shell) still runs: signal 0 finds it, it is not a zombie, and
   * its start time is the recorded one (so a reused pid is not the task).
   */
  async isAlive(record: Pick<BackgroundTaskRecord, 'pid' | 'processStartTicks'>): Promise<boolean> {
    try {
      process.kill(record.pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
    }
    const procfs = await procStat(record.pid);
    if (procfs === undefined) return true;
    if (procfs.state === 'Z' || procfs.state === 'X') return false;
    return record.processStartTicks === undefined || procfs.startTicks === record.processStartTicks;
  }

  /** The exit code the wrapper wrote, or undefined when it wrote none (yet). */
  async exitCode(record: Pick<BackgroundTaskRecord, 'sessionId' | 'taskId'>): Promise<number | undefined> {
    return this.#readInteger(record, EXIT_CODE_FILE);
  }

  /** The output limit the wrapper recorded when it stopped the task for passing it, else undefined. */
  async outputLimitReached(record: Pick<BackgroundTaskRecord, 'sessionId' | 'taskId'>): Promise<number | undefined> {
    return this.#readInteger(record, OUTPUT_LIMIT_FILE);
  }

  async #readInteger(
    record: Pick<BackgroundTaskRecord, 'sessionId' | 'taskId'>,
    file: string,
  ): Promise<number | undefined> {
    try {
      const text = (
        await readFile(path.join(this.taskDirectory(record.sessionId, record.taskId), file), 'utf8')
      ).trim();
      const value = Number(text);
      return text !== '' && Number.isInteger(value) ? value : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * The task's state from the disk and the process table: an exit code file means it exited (or, after a stop request,
   * was killed); a live process means it runs; otherwise it died without writing a code (killed by a signal, or the
   * host restarted).
   */
  async state(record: BackgroundTaskRecord): Promise<BackgroundTaskState> {
    // Liveness first: the exit code is written just before the wrapper exits, so a live wrapper with a code is ending.
    const alive = await this.isAlive(record);
    const code = await this.exitCode(record);
    if (alive && code === undefined) return { status: 'running' };
    if (record.stopRequestedAt !== undefined) return { status: 'killed', exitCode: code ?? null };
    if (code !== undefined) return { status: 'exited', exitCode: code };
    const outputLimitBytes = await this.outputLimitReached(record);
    return outputLimitBytes === undefined
      ? { status: 'killed', exitCode: null }
      : { status: 'killed', exitCode: null, outputLimitBytes };
  }

  /** Waits until the task is no longer running, `timeoutMs` passes, or `signal` aborts (which rejects). */
  async waitForEnd(
    record: BackgroundTaskRecord,
    options: { timeoutMs: number; signal?: AbortSignal; pollIntervalMs?: number },
  ): Promise<BackgroundTaskState> {
    const deadline = Date.now() + options.timeoutMs;
    for (;;) {
      const current = await this.state(record);
      if (current.status !== 'running' || Date.now() >= deadline) return current;
      const wait = Math.min(
        options.pollIntervalMs ?? BACKGROUND_TASK_DEFAULTS.pollIntervalMs,
        Math.max(0, deadline - Date.now()),
      );
      await sleep(wait, undefined, options.signal === undefined ? {} : { signal: options.signal });
    }
  }

  /**
   * The output written since the last read, and the read offset moved past it. A retry by the same `callId` reads the
   * same range again (the first attempt's answer may have been lost with its worker). While the task runs, a range
   * never ends inside a UTF-8 character.
   */
  async readNew(
    record: BackgroundTaskRecord,
    options: { callId: string; maxInlineBytes: number; running: boolean },
  ): Promise<BackgroundTaskOutput> {
    return this.#withLock(record, async () => {
      const current = (await this.get(record.sessionId, record.taskId)) ?? record;
      const from = current.lastRead?.callId === options.callId ? current.lastRead.from : current.readOffset;
      const outputPath = this.outputPath(current);
      const size = await stat(outputPath).then(
        (stats) => stats.size,
        () => 0,
      );
      let to = Math.max(from, size);
      let text = '';
      let spool: BackgroundTaskOutput['spool'];
      const inlineFrom = Math.max(from, to - options.maxInlineBytes);
      if (to > from) {
        const handle = await open(outputPath, 'r');
        try {
          const buffer = Buffer.alloc(to - inlineFrom);
          const { bytesRead } = await handle.read(buffer, 0, buffer.length, inlineFrom);
          let bytes = buffer.subarray(0, bytesRead);
          to = inlineFrom + bytesRead;
          if (options.running) {
            const cut = incompleteUtf8Tail(bytes);
            bytes = bytes.subarray(0, bytes.length - cut);
            to -= cut;
          }
          // A tail that starts inside a character drops the partial character.
          let start = 0;
          if (inlineFrom > from) while (start < bytes.length && ((bytes[start] ?? 0) & 0xc0) === 0x80) start++;
          text = bytes.subarray(start).toString('utf8');
        } finally {
          await handle.close();
        }
        if (inlineFrom > from) {
          const spoolPath = path.join(
            this.taskDirectory(current.sessionId, current.taskId),
            `read-${randomBytes(4).toString('hex')}.log`,
          );
          await pipeline(createReadStream(outputPath, { start: from, end: to - 1 }), createWriteStream(spoolPath));
          spool = { path: spoolPath, bytes: to - from };
        }
      }
      await this.#write({ ...current, readOffset: to, lastRead: { callId: options.callId, from, to } });
      return spool === undefined ? { from, to, text } : { from, to, text, spool };
    });
  }

  /**
   * Stops a running task: records the request, sends SIGTERM to its process group, SIGKILL after `graceMs` if the
   * wrapper still lives, and SIGKILL to the group again once it is gone (children that ignored SIGTERM). A task that
   * is not running is left as it is.
   */
  async stop(record: BackgroundTaskRecord, options: { graceMs?: number } = {}): Promise<BackgroundTaskState> {
    const before = await this.state(record);
    if (before.status !== 'running') return before;
    const requested = await this.#withLock(record, async () => {
      const current = (await this.get(record.sessionId, record.taskId)) ?? record;
      const updated = { ...current, stopRequestedAt: current.stopRequestedAt ?? new Date().toISOString() };
      await this.#write(updated);
      return updated;
    });
    signalProcessGroup(requested.pid, 'SIGTERM');
    const deadline = Date.now() + (options.graceMs ?? BACKGROUND_TASK_DEFAULTS.stopGraceMs);
    while ((await this.isAlive(requested)) && Date.now() < deadline) await sleep(50);
    signalProcessGroup(requested.pid, 'SIGKILL');
    const killDeadline = Date.now() + 2_000;
    while ((await this.isAlive(requested)) && Date.now() < killDeadline) await sleep(50);
    return this.state(requested);
  }

  /** Stops every running task of a session (its end); returns the final state of each task that was running. */
  async stopSession(
    sessionId: string,
    options: { graceMs?: number } = {},
  ): Promise<Array<{ record: BackgroundTaskRecord; state: BackgroundTaskState }>> {
    const records = await this.list(sessionId);
    const stopped = await Promise.all(
      records.map(async (record) => {
        if ((await this.state(record)).status !== 'running') return undefined;
        return { record, state: await this.stop(record, options) };
      }),
    );
    return stopped.filter(
      (entry): entry is { record: BackgroundTaskRecord; state: BackgroundTaskState } => entry !== undefined,
    );
  }

  async #write(record: BackgroundTaskRecord): Promise<void> {
    const file = path.join(this.taskDirectory(record.sessionId, record.taskId), RECORD_FILE);
    const temporary = `${file}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(temporary, `${JSON.stringify(record, null, 2)}\n`);
    await rename(temporary, file);
  }

  async #withLock<T>(record: Pick<BackgroundTaskRecord, 'sessionId' | 'taskId'>, work: () => Promise<T>): Promise<T> {
    const key = `${record.sessionId}/${record.taskId}`;
    const previous = this.#locks.get(key) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    this.#locks.set(key, settled);
    try {
      return await next;
    } finally {
      if (this.#locks.get(key) === settled) this.#locks.delete(key);
    }
  }
}
