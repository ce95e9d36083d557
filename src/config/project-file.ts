// `switchyard.json` in a project's folder: the settings a project shares with everyone who runs `switchyard` in it —
// today the task queue its agent's sessions run on, so `switchyard pending`, `approve` and `audit` run in the project
// see its sessions without an environment variable. `{ "taskQueue": "my-agent" }`.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { formatZodError } from '../contracts/tool-call.js';
import { DEFAULT_TASK_QUEUE } from '../contracts/defaults.js';
import { SettingsError } from './settings-error.js';

export const PROJECT_FILE_NAME = 'switchyard.json';

/** What `switchyard.json` may hold; an unknown key is an error, so a misspelt one never passes unnoticed. */
export const projectFileSchema = z
  .object({
    /** The task queue the project's sessions run on. */
    taskQueue: z.string().regex(/^[^\s\p{Cc}]+$/u, 'must be a task queue name without spaces or control characters'),
  })
  .partial()
  .strict();

export type ProjectFile = z.infer<typeof projectFileSchema>;

/**
 * `switchyard.json` in `folder`, or undefined when there is none. A file that cannot be read or parsed, or holds a
 * bad value, throws a `SettingsError` naming the file and the reason.
 */
export function readProjectFile(folder: string): { file: string; settings: ProjectFile } | undefined {
  const file = path.join(path.resolve(folder), PROJECT_FILE_NAME);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new SettingsError(`${file} cannot be read: ${(error as Error).message}`, { cause: error });
  }
  let json: unknown;
  try {
    json = JSON.parse(text) as unknown;
  } catch (error) {
    throw new SettingsError(`${file} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  const parsed = projectFileSchema.safeParse(json);
  if (!parsed.success) throw new SettingsError(`${file}: ${formatZodError(parsed.error)}`);
  return { file, settings: parsed.data };
}

/** Where a task queue came from, as a person should read it. */
export type TaskQueueSource = '--task-queue' | string;

/**
 * The task queue a `switchyard` command works on: `--task-queue`, else `taskQueue` of `switchyard.json` in the
 * project folder (the current directory), else `SWITCHYARD_TASK_QUEUE` (`fromEnvironment`), else `switchyard`.
 */
export function resolveTaskQueue(options: {
  flag: string | undefined;
  folder: string;
  fromEnvironment: string | undefined;
}): { taskQueue: string; source: TaskQueueSource } {
  if (options.flag !== undefined) return { taskQueue: options.flag, source: '--task-queue' };
  const project = readProjectFile(options.folder);
  if (project?.settings.taskQueue !== undefined) return { taskQueue: project.settings.taskQueue, source: project.file };
  if (options.fromEnvironment !== undefined)
    return { taskQueue: options.fromEnvironment, source: 'SWITCHYARD_TASK_QUEUE' };
  return { taskQueue: DEFAULT_TASK_QUEUE, source: 'the default' };
}
