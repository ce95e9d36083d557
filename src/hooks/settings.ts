/**
 * Hook settings: Claude Code's `settings.json` shape for command hooks (the schema, which the client also uses to
 * check a session's `hooks` option before starting it), and where a worker reads them from: the user's file, and the
 * workspace's files only when the workspace is trusted.
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { trustedWorkspacesFromEnv } from '../config/environment.js';

export type HookEventName = 'PreToolUse' | 'PermissionRequest' | 'PostToolUse' | 'PostToolUseFailure';

export const HOOK_EVENT_NAMES: readonly HookEventName[] = [
  'PreToolUse',
  'PermissionRequest',
  'PostToolUse',
  'PostToolUseFailure',
];

export interface CommandHookConfig {
  type: 'command';
  command: string;
  /** Seconds, like Claude Code; default 60. */
  timeout?: number;
}

export interface HookMatcherGroup {
  /** Regular expression on the tool name (`Bash|Write`, `mcp__.*`); empty, `*` or missing: every tool. */
  matcher?: string;
  hooks: CommandHookConfig[];
}

/** Claude Code's settings shape: `{ hooks: { PreToolUse: [ { matcher: 'Bash', hooks: [ { type: 'command', command: '...' } ] } ] } }`. */
export interface HookSettings {
  hooks?: Partial<Record<HookEventName, HookMatcherGroup[]>>;
}

const commandHookSchema = z.object({
  type: z.literal('command'),
  command: z.string().min(1),
  timeout: z.number().positive().optional(),
});

/** Hooks of other types (Claude Code's `prompt`, `agent`) are dropped here and reported by `loadHookSettings`. */
const hookEntrySchema = z
  .looseObject({ type: z.string() })
  .transform((entry, context): CommandHookConfig | undefined => {
    if (entry.type !== 'command') return undefined;
    const parsed = commandHookSchema.safeParse(entry);
    if (parsed.success)
      return parsed.data.timeout === undefined ? { type: 'command', command: parsed.data.command } : parsed.data;
    for (const issue of parsed.error.issues)
      context.addIssue({ code: 'custom', message: issue.message, path: issue.path });
    return z.NEVER;
  });

const matcherGroupSchema = z
  .object({ matcher: z.string().optional(), hooks: z.array(hookEntrySchema) })
  .transform((group): HookMatcherGroup => {
    const hooks = group.hooks.filter((hook): hook is CommandHookConfig => hook !== undefined);
    return group.matcher === undefined ? { hooks } : { matcher: group.matcher, hooks };
  });

const eventGroupsSchema = z
  .array(matcherGroupSchema)
  .optional()
  .transform((groups) => groups?.filter((group) => group.hooks.length > 0));

/** zod's objects drop unknown keys: other events (`Stop`, `SessionStart`…) and other settings are ignored. */
export const hookSettingsSchema: z.ZodType<HookSettings> = z
  .object({
    hooks: z
      .object({
        PreToolUse: eventGroupsSchema,
        PermissionRequest: eventGroupsSchema,
        PostToolUse: eventGroupsSchema,
        PostToolUseFailure: eventGroupsSchema,
      })
      .optional(),
  })
  .transform((settings): HookSettings => {
    if (settings.hooks === undefined) return {};
    const hooks: Partial<Record<HookEventName, HookMatcherGroup[]>> = {};
    for (const event of HOOK_EVENT_NAMES) {
      const groups = settings.hooks[event];
      if (groups !== undefined && groups.length > 0) hooks[event] = groups;
    }
    return { hooks };
  });

/** Merges several settings (user, project, session): each event's groups concatenate in that order. */
export function mergeHookSettings(...settings: Array<HookSettings | undefined>): HookSettings {
  const hooks: Partial<Record<HookEventName, HookMatcherGroup[]>> = {};
  for (const one of settings) {
    for (const event of HOOK_EVENT_NAMES) {
      const groups = one?.hooks?.[event];
      if (groups !== undefined && groups.length > 0) hooks[event] = [...(hooks[event] ?? []), ...groups];
    }
  }
  return { hooks };
}

/** Counts hooks whose type is not `command` in raw settings, to report what is ignored. */
function unsupportedHookTypes(raw: unknown): string[] {
  const types: string[] = [];
  const hooks = (raw as { hooks?: unknown } | null)?.hooks;
  if (hooks === null || typeof hooks !== 'object') return types;
  for (const event of HOOK_EVENT_NAMES) {
    const groups = (hooks as Record<string, unknown>)[event];
    if (!Array.isArray(groups)) continue;
    for (const group of groups as unknown[]) {
      const entries = (group as { hooks?: unknown } | null)?.hooks;
      if (!Array.isArray(entries)) continue;
      for (const entry of entries as unknown[]) {
        const type = (entry as { type?: unknown } | null)?.type;
        if (typeof type === 'string' && type !== 'command') types.push(`${event}:${type}`);
      }
    }
  }
  return types;
}

async function readSettingsFile(
  file: string,
  onWarning: ((message: string) => void) | undefined,
): Promise<HookSettings | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    onWarning?.(
      `Ignoring hook settings ${file}: cannot read it (${error instanceof Error ? error.message : String(error)})`,
    );
    return undefined;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    onWarning?.(
      `Ignoring hook settings ${file}: invalid JSON (${error instanceof Error ? error.message : String(error)})`,
    );
    return undefined;
  }
  const parsed = hookSettingsSchema.safeParse(raw);
  if (!parsed.success) {
    onWarning?.(`Ignoring hook settings ${file}: ${z.prettifyError(parsed.error)}`);
    return undefined;
  }
  const unsupported = unsupportedHookTypes(raw);
  if (unsupported.length > 0) {
    onWarning?.(`Hook settings ${file}: only "command" hooks are supported; ignoring ${unsupported.join(', ')}`);
  }
  return parsed.data;
}

/**
 * Settings files inside a workspace, in merge order: Claude Code's project and local files, then Switchyard's.
 * The model can write them and a cloned repository can ship them, so their hooks load only when trusted.
 */
export function workspaceSettingsFiles(cwd: string): string[] {
  return [
    path.resolve(cwd, '.claude', 'settings.json'),
    path.resolve(cwd, '.claude', 'settings.local.json'),
    path.resolve(cwd, '.switchyard', 'settings.json'),
  ];
}

export { trustedWorkspacesFromEnv } from '../config/environment.js';

async function realPathOf(file: string): Promise<string | undefined> {
  return realpath(file).catch(() => undefined);
}

/** Whether the workspace's real path is one of the trusted real paths or inside one; paths that do not exist trust nothing. */
export async function isTrustedWorkspace(options: {
  cwd: string;
  trustedWorkspaces: readonly string[];
}): Promise<boolean> {
  const workspace = await realPathOf(options.cwd);
  if (workspace === undefined) return false;
  for (const entry of options.trustedWorkspaces) {
    const trusted = await realPathOf(path.resolve(entry));
    if (trusted === undefined) continue;
    const relative = path.relative(trusted, workspace);
    if (relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative)))
      return true;
  }
  return false;
}

async function isFile(file: string): Promise<boolean> {
  return stat(file).then(
    (stats) => stats.isFile(),
    () => false,
  );
}

export interface LoadedHookSettings {
  /** The merged settings of every file that was read. */
  settings: HookSettings;
  /** Workspace settings files that exist but were not read, because the workspace is not trusted. */
  untrusted: string[];
}

/**
 * Reads and merges `<userDir>/settings.json` (user level; default `~/.switchyard`; always trusted) and, when the
 * workspace is trusted, its settings files (`workspaceSettingsFiles`), in that order. The workspace is trusted
 * when `trustWorkspaceSettings` is true (the session option) or its real path is in or under one of
 * `trustedWorkspaces` (default: the worker's `SWITCHYARD_TRUSTED_WORKSPACES`). Untrusted workspace files are not
 * read at all, only named in `untrusted`. A missing file is fine; an unreadable or invalid one is reported through
 * `onWarning` and skipped. Never throws.
 */
export async function loadHookSettings(options: {
  cwd: string;
  userDir?: string;
  trustWorkspaceSettings?: boolean;
  trustedWorkspaces?: readonly string[];
  onWarning?: (message: string) => void;
}): Promise<LoadedHookSettings> {
  const userFile = path.resolve(options.userDir ?? path.join(os.homedir(), '.switchyard'), 'settings.json');
  const userReal = await realPathOf(userFile);
  // With the session in the home directory (or a workspace file linked to the user file), both are one file: the
  // user's own, read once, as user settings.
  const workspaceFiles: string[] = [];
  for (const file of workspaceSettingsFiles(options.cwd)) {
    if (file === userFile) continue;
    if (userReal !== undefined && (await realPathOf(file)) === userReal) continue;
    workspaceFiles.push(file);
  }
  const trusted =
    options.trustWorkspaceSettings === true ||
    (await isTrustedWorkspace({
      cwd: options.cwd,
      trustedWorkspaces: options.trustedWorkspaces ?? trustedWorkspacesFromEnv(),
    }));
  const files = trusted ? [userFile, ...workspaceFiles] : [userFile];
  const loaded = await Promise.all(files.map((file) => readSettingsFile(file, options.onWarning)));
  const untrusted = trusted
    ? []
    : (await Promise.all(workspaceFiles.map(async (file) => ((await isFile(file)) ? [file] : [])))).flat();
  return { settings: mergeHookSettings(...loaded), untrusted };
}
