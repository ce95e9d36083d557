import { createWriteStream } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { opendir, realpath, rm } from 'node:fs/promises';
import type { Dir } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { z } from 'zod';
import { DISK_QUOTA_EXCEEDED, diskQuotaText, sessionDiskQuota } from '../../artifacts/session-disk.js';
import {
  bashSpoolBytes as bashSpoolBytesFromEnv,
  bashTimeouts as bashTimeoutsFromEnv,
  sessionDiskBytes as sessionDiskBytesFromEnv,
} from '../tool-settings.js';
import { BASH_LIMITS, BASH_TIMEOUTS, RESULT_BUDGETS } from '../../contracts/defaults.js';
import { bashGlobMatches } from '../../contracts/permission-rules.js';
import type { PermissionFacts } from '../../contracts/call-plan.js';
import { startBackgroundCommand } from '../background/background-task-tools.js';
import { bashPermissionFacts, bashRememberRule, isReadOnlyCommand } from '../shell/index.js';
import { ToolUseError, defineTool } from '../define-tool.js';
import { prepareSandboxLaunch, sandboxAllowsWithoutAsking } from '../sandbox/sandboxed-launch.js';
import type { SandboxLaunch } from '../sandbox/sandboxed-launch.js';
import { childEnvironment } from '../support/environment-policy.js';
import { signalProcessGroup } from '../support/signal-process-group.js';
import type { ToolExecutionContext, ToolOutput, ToolOutputObject } from '../define-tool.js';

/** Bytes of each stream's tail kept in memory for the display; the whole output goes to a spool file. */
const DISPLAY_TAIL_BYTES = 150_000;
/** Bytes of the combined output's tail kept in memory for the model (the Bash budget keeps the tail). */
const MODEL_TAIL_BYTES = 64 * 1024;
/** After SIGTERM, the process group gets SIGKILL this long later. */
const KILL_GRACE_MS = 2_000;

/** `SWITCHYARD_BASH_MAX_SPOOL_BYTES`, else `BASH_LIMITS.spoolBytes`; read per call, so a worker's env change applies. */
const spoolLimitBytes = (): number => bashSpoolBytesFromEnv();

/**
 * The output a background task may write: the spool limit, or less when the session's disk quota has less left
 * (see session-disk.ts); a session whose quota is used up starts no task.
 */
async function backgroundOutputAllowance(context: ToolExecutionContext): Promise<number> {
  const limit = spoolLimitBytes();
  const quota =
    context.dataDir === undefined
      ? undefined
      : sessionDiskQuota({ dataDir: context.dataDir, limitBytes: sessionDiskBytesFromEnv() });
  if (quota === undefined) return limit;
  const usedBytes = await quota.usedBytes(context.sessionId);
  const remaining = quota.limitBytes - usedBytes;
  if (remaining <= 0)
    throw new ToolUseError(
      `${diskQuotaText({ limitBytes: quota.limitBytes, usedBytes })} The background task did not start.`,
      DISK_QUOTA_EXCEEDED,
    );
  return Math.min(limit, remaining);
}

/**
 * The command itself, never the model's `description`: that is the model's claim about the command, and the Web UI
 * shows the summary where a human judges what runs (`prepareCall` collapses whitespace and clips the line).
 */
function summarizeCommand(input: { command: string }): string {
  return input.command;
}

/** Keeps the last `limit` bytes of a stream. */
class TailBuffer {
  #chunks: Buffer[] = [];
  #bytes = 0;
  total = 0;
  constructor(private readonly limit: number) {}
  push(chunk: Buffer): void {
    this.total += chunk.length;
    this.#chunks.push(chunk);
    this.#bytes += chunk.length;
    while (this.#bytes - (this.#chunks[0]?.length ?? 0) >= this.limit) {
      this.#bytes -= this.#chunks.shift()?.length ?? 0;
    }
  }
  text(): string {
    const all = Buffer.concat(this.#chunks);
    return all.subarray(Math.max(0, all.length - this.limit)).toString('utf8');
  }
  get truncated(): boolean {
    return this.total > this.limit;
  }
}

/** The real path of the deepest existing ancestor, with the rest appended (a path that does not exist yet). */
async function realpathOfDeepest(absolute: string): Promise<string> {
  const rest: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      return path.join(await realpath(current), ...rest);
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return absolute;
      rest.unshift(path.basename(current));
      current = parent;
    }
  }
}

/** Largest number of directory entries a glob in a read path is matched against; a larger directory fails closed. */
const GLOB_ENTRIES_CHECKED = 1_000;

/** The names in a directory, or undefined when it holds more than `GLOB_ENTRIES_CHECKED` (or cannot be listed). */
async function listForGlob(directory: string): Promise<string[] | undefined> {
  const names: string[] = [];
  let handle: Dir;
  try {
    handle = await opendir(directory);
  } catch {
    return [];
  }
  try {
    for await (const entry of handle) {
      if (names.length >= GLOB_ENTRIES_CHECKED) return undefined;
      names.push(entry.name);
    }
  } catch {
    return undefined;
  }
  return names;
}

/**
 * The classifier's read paths as the file system has them: each path's symlinks resolved (a link inside cwd to a
 * file outside is a read outside), and a glob in the last segment matched in its directory, so a matching symlink
 * that leads outside is seen. Real paths inside cwd are written under the session's cwd, as rules see it.
 */
async function locateReadPaths(readPaths: readonly string[], cwd: string): Promise<string[]> {
  const root = await realpath(cwd).catch(() => cwd);
  const asSeenByRules = (real: string): string =>
    real === root ? cwd : real.startsWith(`${root}/`) ? path.join(cwd, real.slice(root.length)) : real;
  const located = new Set(readPaths);
  for (const readPath of readPaths) {
    if (!readPath.startsWith('/')) continue;
    const firstGlob = readPath.search(/[*?[]/);
    if (firstGlob < 0) {
      located.add(asSeenByRules(await realpathOfDeepest(readPath)));
      continue;
    }
    const directory = readPath.slice(0, readPath.lastIndexOf('/', firstGlob)) || '/';
    located.add(asSeenByRules(await realpathOfDeepest(directory)));
    if (readPath.includes('/', firstGlob)) continue;
    const entries = await listForGlob(directory);
    if (entries === undefined) {
      // Not every match can be checked: the read cannot be located, so it is never allowed silently.
      located.add(`a glob over a directory of more than ${GLOB_ENTRIES_CHECKED} entries: ${readPath}`);
      continue;
    }
    for (const entry of entries) {
      // Joined as text: `path.join` would fold a `..` after a symlinked directory, which the kernel does not.
      const candidate = `${directory === '/' ? '' : directory}/${entry}`;
      if (bashGlobMatches(readPath, candidate)) located.add(asSeenByRules(await realpathOfDeepest(candidate)));
    }
  }
  return [...located];
}

/** The result fields that say whether the command ran in the sandbox, and why not where the session wanted one. */
function sandboxFields(launch: SandboxLaunch): Pick<ToolOutputObject, 'sandboxed' | 'unsandboxedReason'> {
  if (launch.sandboxed) return { sandboxed: true };
  return launch.reason === undefined ? { sandboxed: false } : { sandboxed: false, unsandboxedReason: launch.reason };
}

/** What the permission chain needs about a command: its simple commands and, symlinks resolved, what it reads. */
async function bashFacts(command: string, cwd: string): Promise<PermissionFacts> {
  const facts = bashPermissionFacts({ command, cwd, homeDir: os.homedir() });
  return { ...facts, readPaths: await locateReadPaths(facts.readPaths, cwd) };
}

const bashInputSchema = z.strictObject({
  command: z
    .string()
    .min(1)
    .refine(
      (command) => Buffer.byteLength(command) <= BASH_LIMITS.commandBytes,
      `command must be at most ${BASH_LIMITS.commandBytes} bytes (the system's limit for one argument); write long content to a file in parts`,
    )
    .describe('The command to run, in bash'),
  timeout: z.number().int().positive().optional().describe('Timeout in milliseconds (default 120000, at most 600000)'),
  description: z.string().optional().describe('What the command does, in a few words'),
  run_in_background: z
    .boolean()
    .optional()
    .describe(
      'Set to true to run this command in the background. Use TaskOutput to read the output later, TaskStop to stop it.',
    ),
});

type BashInput = z.infer<typeof bashInputSchema>;

/** Starts the command detached from this worker, its output to a file under the data dir: see background-task-tools.ts. */
async function runInBackground(input: BashInput, context: ToolExecutionContext): Promise<ToolOutput> {
  const launch = await prepareSandboxLaunch({ context });
  const maxOutputBytes = await backgroundOutputAllowance(context);
  const background = await startBackgroundCommand({
    command: input.command,
    ...(input.description === undefined ? {} : { description: input.description }),
    context,
    env: {
      ...childEnvironment(),
      SWITCHYARD_SESSION_ID: context.sessionId,
      SWITCHYARD_IDEMPOTENCY_KEY: context.idempotencyKey,
      ...(launch.sandboxed ? launch.env : {}),
    },
    maxOutputBytes,
    ...(launch.sandboxed ? { argv: launch.argv(['/bin/bash', '-c', input.command]) } : {}),
  });
  return { ...background, ...sandboxFields(launch) };
}

/** Starts bash on the command in its own process group, so cancel and timeout kill the whole tree (pipelines, children of the shell). */
function startShell(command: string, context: ToolExecutionContext, launch: SandboxLaunch) {
  const [file = '/bin/bash', ...args] = launch.sandboxed
    ? launch.argv(['/bin/bash', '-c', command])
    : ['/bin/bash', '-c', command];
  return execa(file, args, {
    cwd: context.cwd,
    detached: true,
    buffer: false,
    stdin: 'ignore',
    reject: false,
    // Only what the environment policy lets through: worker secrets stay out of `env` and /proc/self/environ.
    extendEnv: false,
    env: {
      ...childEnvironment(),
      SWITCHYARD_SESSION_ID: context.sessionId,
      SWITCHYARD_IDEMPOTENCY_KEY: context.idempotencyKey,
      ...(launch.sandboxed ? launch.env : {}),
    },
  });
}

type ShellProcess = ReturnType<typeof startShell>;

/** A running command's output so far and what stopped it, filled in by its deadline and its stream handlers. */
interface CommandWatch {
  readonly combined: TailBuffer;
  readonly stdout: TailBuffer;
  readonly stderr: TailBuffer;
  timedOut: boolean;
  outputCapped: boolean;
  spoolError: Error | undefined;
  readonly timer: NodeJS.Timeout;
  readonly terminate: () => void;
}

/** Watches a running command: its deadline, the turn's cancellation, and its output into the spool and the tails. */
function watchCommand(options: {
  child: ShellProcess;
  context: ToolExecutionContext;
  spool: WriteStream;
  spoolLimit: number;
  timeoutMs: number;
}): CommandWatch {
  const { child, context, spool, spoolLimit, timeoutMs } = options;
  let killTimer: NodeJS.Timeout | undefined;
  const terminate = (): void => {
    signalProcessGroup(child.pid, 'SIGTERM');
    killTimer ??= setTimeout(() => signalProcessGroup(child.pid, 'SIGKILL'), KILL_GRACE_MS);
  };
  const watch: CommandWatch = {
    combined: new TailBuffer(MODEL_TAIL_BYTES),
    stdout: new TailBuffer(DISPLAY_TAIL_BYTES),
    stderr: new TailBuffer(DISPLAY_TAIL_BYTES),
    timedOut: false,
    outputCapped: false,
    spoolError: undefined,
    terminate,
    timer: setTimeout(() => {
      watch.timedOut = true;
      terminate();
    }, timeoutMs),
  };
  const { combined } = watch;
  context.signal.addEventListener('abort', terminate, { once: true });
  // The spool file is written no faster than the disk takes it: the pipes pause until it drains.
  let paused = false;
  const resume = (): void => {
    paused = false;
    child.stdout?.resume();
    child.stderr?.resume();
  };
  spool.on('error', (error) => {
    watch.spoolError = error;
    resume();
    terminate();
  });
  const onData = (buffer: TailBuffer) => (chunk: Buffer) => {
    if (watch.outputCapped || watch.spoolError !== undefined) return;
    const room = spoolLimit - combined.total;
    const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
    if (part.length > 0) {
      buffer.push(part);
      combined.push(part);
      if (!spool.write(part) && !paused) {
        paused = true;
        child.stdout?.pause();
        child.stderr?.pause();
        spool.once('drain', resume);
      }
      context.reportProgress({ outputTail: combined.text().slice(-2_000) });
    }
    if (chunk.length > room) {
      // At the cap: stop the command; what it still prints is dropped, and the pipes drain so it can end.
      watch.outputCapped = true;
      resume();
      terminate();
    }
  };
  child.stdout?.on('data', onData(watch.stdout));
  child.stderr?.on('data', onData(watch.stderr));
  return watch;
}

/** The result of a command that ended: its output tail with a status line when it failed, was stopped or hit a limit. */
function finishedOutput(options: {
  watch: CommandWatch;
  launch: SandboxLaunch;
  exitCode: number | null;
  signal: string | undefined;
  limitNote: string | undefined;
  spoolLimit: number;
  timeoutMs: number;
}): ToolOutputObject {
  const { watch, launch, exitCode, limitNote, spoolLimit, timeoutMs } = options;
  const { combined, stdout, stderr, outputCapped, timedOut } = watch;
  const status = outputCapped
    ? `Output exceeded the limit of ${spoolLimit} bytes for one Bash call (SWITCHYARD_BASH_MAX_SPOOL_BYTES); the command was stopped.`
    : timedOut
      ? `Command timed out after ${timeoutMs}ms and was killed.`
      : exitCode === 0 && limitNote === undefined
        ? undefined
        : exitCode === null
          ? `Command was killed by ${options.signal ?? 'a signal'}.`
          : exitCode !== 0
            ? `Exit code ${exitCode}`
            : limitNote;
  const text = combined.text();
  const statusLines =
    status === undefined
      ? undefined
      : limitNote === undefined || status === limitNote
        ? status
        : `${status}\n${limitNote}`;
  const output: ToolOutputObject = {
    ...sandboxFields(launch),
    content:
      statusLines === undefined ? text : `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}${statusLines}`,
    isError: status !== undefined,
    display: {
      type: 'bash_output',
      stdout: stdout.text(),
      stderr: stderr.text(),
      exitCode,
      truncated: stdout.truncated || stderr.truncated,
    },
    // Claude Code's Bash output for PostToolUse hooks (`tool_response.stdout`…), from the same tails as the display.
    hookResponse: { stdout: stdout.text(), stderr: stderr.text(), interrupted: timedOut, isImage: false, exitCode },
  };
  if (status !== undefined)
    output.errorCode = outputCapped
      ? 'output_limit'
      : timedOut
        ? 'command_timeout'
        : status === limitNote
          ? 'sandbox_limit'
          : 'exit_code';
  return output;
}

/** Runs the command to its end (or its deadline, the cap on its output, the turn's cancellation) and returns its output. */
async function runInForeground(input: BashInput, context: ToolExecutionContext): Promise<ToolOutputObject> {
  const launch = await prepareSandboxLaunch({ context });
  const deadlines = bashTimeoutsFromEnv();
  const timeoutMs = Math.min(input.timeout ?? deadlines.defaultMs, deadlines.maxMs);
  const spoolLimit = spoolLimitBytes();
  const spoolPath = path.join(os.tmpdir(), `switchyard-bash-${randomUUID()}.out`);
  const spool = createWriteStream(spoolPath);
  const child = startShell(input.command, context, launch);
  const watch = watchCommand({ child, context, spool, spoolLimit, timeoutMs });

  try {
    // Wait for the shell to exit, then kill what it left behind (background jobs would hold the pipes open):
    // nothing the command started outlives it.
    // A shell that never started (its cwd is gone, /bin/bash is missing) emits `error` and no `exit`: fail at once.
    const spawnError = await new Promise<Error | undefined>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve(undefined);
      else {
        child.once('exit', () => resolve(undefined));
        child.once('error', (error) => resolve(child.pid === undefined ? error : undefined));
      }
    });
    if (spawnError !== undefined)
      throw new Error(`Bash could not start /bin/bash in ${context.cwd}: ${spawnError.message}`, {
        cause: spawnError,
      });
    clearTimeout(watch.timer);
    signalProcessGroup(child.pid, 'SIGKILL');
    const result = await child;
    const limitNote = launch.sandboxed ? (await launch.finish()).note : undefined;
    if (watch.spoolError !== undefined)
      throw new Error(`Could not write the output spool file ${spoolPath}: ${watch.spoolError.message}`, {
        cause: watch.spoolError,
      });
    await new Promise<void>((resolve, reject) =>
      spool.end((error?: Error | null) => (error ? reject(error) : resolve())),
    );
    if (context.signal.aborted)
      throw context.signal.reason instanceof Error ? context.signal.reason : new Error('cancelled');
    const exitCode = result.exitCode ?? null;
    const output = finishedOutput({ watch, launch, exitCode, signal: result.signal, limitNote, spoolLimit, timeoutMs });
    if (watch.combined.truncated) output.spool = { path: spoolPath, bytes: watch.combined.total };
    else await rm(spoolPath, { force: true });
    return output;
  } catch (error) {
    if (launch.sandboxed) await launch.finish();
    spool.destroy();
    await rm(spoolPath, { force: true });
    throw error;
  } finally {
    clearTimeout(watch.timer);
    context.signal.removeEventListener('abort', watch.terminate);
  }
}

export const bashTool = defineTool({
  name: 'Bash',
  aliases: ['shell', 'run_shell_command'],
  description:
    'Runs a bash command in the session directory and returns its output and exit code. With run_in_background: true it ' +
    'returns at once with a task ID instead; the command keeps running (timeout does not apply), and TaskOutput reads its ' +
    'output and exit code later.',
  inputSchema: bashInputSchema,
  concurrentSafe: (input) => isReadOnlyCommand(input.command),
  readOnly: (input) => isReadOnlyCommand(input.command),
  timeout: {
    ...bashTimeoutsFromEnv(),
    allowCallOverride: true,
    cleanupGraceMs: BASH_TIMEOUTS.cleanupGraceMs,
  },
  resultBudget: RESULT_BUDGETS.Bash,
  cancelSiblingsOnError: true,
  ruleKind: 'command',
  ruleContent: (input) => input.command,
  rememberRule: (input) => bashRememberRule(input.command),
  permissionFacts: (input, context) => bashFacts(input.command, context.cwd),
  // `sandbox.autoAllowBash` (off by default): a command that would only ask by default runs unasked, because the kernel
  // confines it; ask and deny rules, protected paths and plan mode still apply (see SECURITY.md).
  prepareApproval: async (_input, context) => ({ narrowToAllow: await sandboxAllowsWithoutAsking(context.sandbox) }),
  summarize: summarizeCommand,
  async execute(input, context) {
    return input.run_in_background === true ? runInBackground(input, context) : runInForeground(input, context);
  },
});
