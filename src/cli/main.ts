import {
  CliError,
  ExitCode,
  UsageError,
  describeError,
  isNotFound,
  isUnreachable,
  serverAddress,
  temporalConnection,
  unreachableMessage,
} from './common.js';
import { isPermissionDenied, permissionDeniedMessage } from './connection-diagnosis.js';
import { COMMAND_HELP, OVERVIEW } from './help.js';

export { ExitCode } from './common.js';

/**
 * The commands, each loaded on first use: `switchyard pending` does not load the worker, the bundler or the console.
 * Each returns its exit code (see `ExitCode`).
 */
const COMMANDS: Record<string, (args: string[]) => Promise<number>> = {
  dev: async (args) => (await import('./worker-commands.js')).workerCommand('dev', args),
  worker: async (args) => (await import('./worker-commands.js')).workerCommand('worker', args),
  sessions: async (args) => (await import('./session-commands.js')).sessionsCommand(args),
  run: async (args) => (await import('./run-command.js')).runCommand(args),
  turn: async (args) => (await import('./session-commands.js')).turnCommand(args),
  pending: async (args) => (await import('./session-commands.js')).pendingCommand(args),
  approve: async (args) => (await import('./session-commands.js')).decideCommand('approve', args),
  deny: async (args) => (await import('./session-commands.js')).decideCommand('deny', args),
  keys: async (args) => (await import('./approver-commands.js')).keysCommand(args),
  audit: async (args) => (await import('./approver-commands.js')).auditCommand(args),
  interrupt: async (args) => (await import('./session-commands.js')).interruptCommand(args),
  events: async (args) => (await import('./session-commands.js')).eventsCommand(args),
  policy: async (args) => (await import('./policy-commands.js')).policyCommand(args),
  doubt: async (args) => (await import('./doubt-commands.js')).doubtCommand(args),
  tasks: async (args) => (await import('./session-commands.js')).tasksCommand(args),
  artifact: async (args) => (await import('./artifact-commands.js')).artifactCommand(args),
  artifacts: async (args) => (await import('./artifact-commands.js')).artifactsCommand(args),
  mcp: async (args) => (await import('./mcp-command.js')).mcpCommand(args),
  'temporal-path': async (args) => (await import('./artifact-commands.js')).temporalPathCommand(args),
  console: async (args) => {
    const { ConsoleUsageError, runConsoleCommand } = await import('./console-command.js');
    try {
      // --json is accepted everywhere; the console is a web server and prints the same either way.
      return await runConsoleCommand(args.filter((arg) => arg !== '--json'));
    } catch (error) {
      const parseError = (error as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS') === true;
      throw error instanceof ConsoleUsageError || parseError
        ? new UsageError((error as Error).message, 'console')
        : error;
    }
  },
};

async function help(topic: string | undefined): Promise<number> {
  if (topic === undefined || topic === '--help' || topic === '-h') {
    process.stdout.write(OVERVIEW);
    return ExitCode.ok;
  }
  const text = COMMAND_HELP[topic];
  if (text !== undefined) {
    process.stdout.write(text);
    return ExitCode.ok;
  }
  const run = COMMANDS[topic];
  if (run === undefined) throw new UsageError(`no command "${topic}"`);
  return run(['--help']);
}

/** Entry point of the `switchyard` command; returns the exit code (`ExitCode`, docs/CLI.md). */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  stopQuietlyWhenOutputCloses();
  try {
    switch (command) {
      case undefined:
        process.stdout.write(OVERVIEW);
        return ExitCode.usage;
      case 'help':
      case '--help':
      case '-h':
        return await help(command === 'help' ? rest[0] : undefined);
      default: {
        const run = COMMANDS[command];
        if (run === undefined) throw new UsageError(`unknown command "${command}"`);
        return await run(rest);
      }
    }
  } catch (error) {
    return report(error, command);
  }
}

/**
 * `switchyard pending | head -3`: once the reader is gone, writing to stdout fails with EPIPE. That is not an error of
 * the command: stop at once with exit 0, as other Unix commands do, instead of crashing with a stack trace.
 */
let watchingOutput = false;
function stopQuietlyWhenOutputCloses(): void {
  if (watchingOutput) return;
  watchingOutput = true;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(ExitCode.ok);
    throw error;
  });
}

/** One readable line per failure on stderr, and the exit code that says what kind it was. */
function report(error: unknown, command: string | undefined): number {
  if (error instanceof UsageError) {
    const topic = error.command ?? command;
    const pointer =
      topic !== undefined && COMMANDS[topic] !== undefined ? `switchyard ${topic} --help` : 'switchyard help';
    process.stderr.write(`switchyard: ${error.message}\nRun \`${pointer}\` for usage.\n`);
    return ExitCode.usage;
  }
  if (error instanceof CliError) {
    process.stderr.write(`switchyard: ${error.message}\n`);
    return error.exitCode;
  }
  if (isPermissionDenied(error)) {
    process.stderr.write(`switchyard: ${permissionDeniedMessage(temporalConnection(), error)}\n`);
    return ExitCode.failed;
  }
  if (isUnreachable(error)) {
    const { address, source } = serverAddress();
    process.stderr.write(`switchyard: ${unreachableMessage(address, source)}\n`);
    return ExitCode.unreachable;
  }
  if (isNotFound(error)) {
    process.stderr.write(`switchyard: ${describeError(error)} (see \`switchyard sessions\`)\n`);
    return ExitCode.notFound;
  }
  process.stderr.write(`switchyard: ${describeError(error)}\n`);
  return ExitCode.failed;
}
