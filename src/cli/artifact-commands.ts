import { FileArtifactStore } from '../artifacts/file-artifact-store.js';
import { dataDirFromEnv } from '../config/environment.js';
import { ARTIFACT_RETENTION } from '../contracts/defaults.js';
import { formatBytes } from '../contracts/persisted-output.js';
import { findTemporalBinary } from '../server/temporal-binary.js';
import { BackgroundTaskStore } from '../tools/background/background-task-store.js';
import { CliError, ExitCode, UsageError, formatDuration, parseCommand, parseDuration, writeJson } from './common.js';
import { COMMAND_HELP } from './help.js';

/** `switchyard artifact URI`: a stored full output, as stored. */
export async function artifactCommand(args: string[]): Promise<number> {
  const parsed = parseCommand('artifact', args, {}, COMMAND_HELP.artifact ?? '', { positionals: true });
  if (parsed === undefined) return ExitCode.ok;
  const [uri, ...extra] = parsed.positionals;
  if (uri === undefined || extra.length > 0)
    throw new UsageError(
      'artifact needs exactly one URI: switchyard artifact switchyard-artifact://<session>/<id>',
      'artifact',
    );
  const store = new FileArtifactStore(dataDirFromEnv());
  // A malformed URI is a mistake in the command line (exit 2), not a missing output (exit 5).
  try {
    store.locate(uri);
  } catch (error) {
    throw new UsageError((error as Error).message, 'artifact');
  }
  let bytes: Uint8Array;
  try {
    bytes = await store.readBytes(uri);
  } catch (error) {
    // The store wraps ENOENT ("Artifact not found"), keeping it as the cause.
    const code =
      (error as NodeJS.ErrnoException).code ?? ((error as Error).cause as NodeJS.ErrnoException | undefined)?.code;
    if (code === 'ENOENT')
      throw new CliError(
        `no stored output ${uri} under ${store.root} (pruned, or written by a worker with another SWITCHYARD_DATA_DIR)`,
        ExitCode.notFound,
      );
    throw error;
  }
  if (parsed.values.json === true)
    writeJson({ uri, bytes: bytes.byteLength, text: Buffer.from(bytes).toString('utf8') });
  // Bytes as stored: an image artifact can be redirected to a file.
  else process.stdout.write(bytes);
  return ExitCode.ok;
}

/** `switchyard artifacts prune`: artifact retention, run by hand or from cron. */
export async function artifactsCommand(args: string[]): Promise<number> {
  const [subcommand, ...rest] = args;
  if (subcommand === '--help' || subcommand === '-h') {
    process.stdout.write(COMMAND_HELP.artifacts ?? '');
    return ExitCode.ok;
  }
  if (subcommand !== 'prune')
    throw new UsageError(
      `artifacts needs a subcommand: prune${subcommand === undefined ? '' : ` (got "${subcommand}")`}`,
      'artifacts',
    );
  const parsed = parseCommand(
    'artifacts',
    rest,
    { 'older-than': { type: 'string' }, 'dry-run': { type: 'boolean' } },
    COMMAND_HELP.artifacts ?? '',
  );
  if (parsed === undefined) return ExitCode.ok;
  const { values } = parsed;
  const olderThanMs =
    values['older-than'] === undefined
      ? ARTIFACT_RETENTION.maxAgeMs
      : parseDuration(values['older-than'], '--older-than');
  const dryRun = values['dry-run'] === true;
  const store = new FileArtifactStore(dataDirFromEnv());
  const report = await store.prune({ olderThanMs, dryRun });
  // Background tasks' output too: only tasks that have ended, never a running one.
  const background = new BackgroundTaskStore(dataDirFromEnv());
  const tasks = await background.prune({ olderThanMs, dryRun });
  if (values.json === true) {
    writeJson({
      dryRun,
      olderThanMs,
      root: store.root,
      removed: report.removed,
      kept: report.kept,
      background: { root: background.root, removed: tasks.removed, kept: tasks.kept },
    });
    return ExitCode.ok;
  }
  const verb = dryRun ? 'would remove' : 'removed';
  for (const entry of report.removed) {
    process.stdout.write(
      `${verb} ${entry.session} (${formatBytes(entry.bytes)}, last written ${entry.lastModified.toISOString()})\n`,
    );
  }
  for (const entry of tasks.removed) {
    process.stdout.write(
      `${verb} background task ${entry.taskId} of ${entry.session} (${formatBytes(entry.bytes)}, ended, last written ${entry.lastModified.toISOString()})\n`,
    );
  }
  const bytes = [...report.removed, ...tasks.removed].reduce((sum, entry) => sum + entry.bytes, 0);
  const sessions = `${report.removed.length} session${report.removed.length === 1 ? '' : 's'}`;
  const taskCount = `${tasks.removed.length} ended background task${tasks.removed.length === 1 ? '' : 's'}`;
  process.stdout.write(
    `${verb} ${sessions}, kept ${report.kept}; ${verb} ${taskCount}, kept ${tasks.kept} (${formatBytes(bytes)}; older than ${formatDuration(olderThanMs)}, in ${store.root} and ${background.root})\n`,
  );
  return ExitCode.ok;
}

export async function temporalPathCommand(args: string[]): Promise<number> {
  const parsed = parseCommand('temporal-path', args, {}, COMMAND_HELP['temporal-path'] ?? '');
  if (parsed === undefined) return ExitCode.ok;
  const binary = await findTemporalBinary({ onProgress: (message) => process.stderr.write(`${message}\n`) });
  if (binary === undefined)
    throw new CliError(
      'no temporal binary found and no Go toolchain to build one; install the Temporal CLI or Go',
      ExitCode.failed,
    );
  if (parsed.values.json === true) writeJson(binary);
  else process.stdout.write(`${binary.path}\n`);
  return ExitCode.ok;
}
