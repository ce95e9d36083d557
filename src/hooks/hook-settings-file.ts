/**
 * Hook settings files (their shape: src/contracts/hook-settings.ts): where a worker reads them from — the user's file,
 * and the workspace's files only when the workspace is trusted (`SWITCHYARD_TRUSTED_WORKSPACES`, resolved with the
 * worker's settings and passed in as `trustedWorkspaces`).
 *
 * Trust in a workspace's files is decided when the session starts, not on every call: the model can write the
 * workspace, so a settings file it creates or changes during a session would otherwise run its hooks on the worker,
 * unsandboxed, on the next call. A session's first look on a worker (`SessionStartSettings`) keeps the workspace
 * files' digests and hooks; later looks in that session use those hooks, and a file created, changed or removed since
 * is ignored for the rest of the session, with a warning. The user-level file (outside the workspace) is read fresh
 * on every look, as before. The remaining window: the first look is per worker process, so a session whose calls
 * move to another worker, or to a restarted one, or which falls out of the bounded memory, starts over from the files
 * as they are then (the sandbox keeps sandboxed commands from creating them; see SECURITY.md).
 */
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { readFile, realpath } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { HOOK_EVENT_NAMES, hookSettingsSchema } from '../contracts/hook-settings.js';
import type { HookEventName, HookMatcherGroup, HookSettings } from '../contracts/hook-settings.js';

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
  const text = await readSettingsText(file, onWarning);
  return text === undefined ? undefined : parseSettingsText(file, text, onWarning);
}

/** A settings file's text; undefined when it is missing (quietly) or cannot be read (with a warning). */
async function readSettingsText(
  file: string,
  onWarning: ((message: string) => void) | undefined,
): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    onWarning?.(
      `Ignoring hook settings ${file}: cannot read it (${error instanceof Error ? error.message : String(error)})`,
    );
    return undefined;
  }
}

function parseSettingsText(
  file: string,
  text: string,
  onWarning: ((message: string) => void) | undefined,
): HookSettings | undefined {
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

/** A settings file as `stat` saw it: absent, present (with its identity and version), or not statable. */
type FileLook =
  | { kind: 'absent' }
  | { kind: 'present'; isFile: boolean; identity: string; version: string; changedMs: number }
  | { kind: 'unknown' };

/**
 * Looked at synchronously: a settings file's path comes from the worker's configuration (the user directory) or the
 * session's cwd, never from a call's input, as the cwd itself is looked at (src/activities/prepare-calls.ts). Every
 * call's Prepare looks at four of them, and a trip through libuv's thread pool costs each look about 50 µs of CPU
 * here (an absent file also builds an error), against about 2 µs for a synchronous `stat` that answers an absent
 * file with `undefined`.
 */
function look(file: string): FileLook {
  try {
    const stats = statSync(file, { bigint: true, throwIfNoEntry: false });
    if (stats === undefined) return { kind: 'absent' };
    return {
      kind: 'present',
      isFile: stats.isFile(),
      identity: `${stats.dev}:${stats.ino}`,
      version: `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`,
      changedMs: Number((stats.mtimeNs > stats.ctimeNs ? stats.mtimeNs : stats.ctimeNs) / 1_000_000n),
    };
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOTDIR' ? { kind: 'absent' } : { kind: 'unknown' };
  }
}

export interface LoadedHookSettings {
  /** The merged settings of every file that was read. Shared with later loads: read it, do not change it. */
  settings: HookSettings;
  /** Workspace settings files that exist but were not read, because the workspace is not trusted. */
  untrusted: string[];
}

/** How many loads a `HookSettingsCache` keeps (one per workspace, user directory and trust). */
const SETTINGS_CACHE_ENTRIES = 256;
/**
 * A file changed this recently is read again on every load: a file system that stamps times coarsely (a second, or
 * two on some) cannot tell two same-sized writes within one stamp apart, so such a file's stamp does not yet prove
 * that its content is the one read.
 */
const SETTLED_AFTER_MS = 2_000;

/**
 * Loads that `loadHookSettings` may answer again without reading the files: each entry remembers the identity, size
 * and change times of every file it looked at, and is used only while a fresh `stat` of each finds them unchanged.
 * An edited, created, removed or replaced settings file is read again by the next load. Bounded (oldest first out).
 */
export class HookSettingsCache {
  readonly #entries = new Map<string, { versions: string; loaded: LoadedHookSettings }>();
  readonly #settledAfterMs: number;
  readonly #now: () => number;

  constructor(options: { settledAfterMs?: number; now?: () => number } = {}) {
    this.#settledAfterMs = options.settledAfterMs ?? SETTLED_AFTER_MS;
    this.#now = options.now ?? Date.now;
  }

  /** The remembered load for `key` if it was made from exactly these versions. */
  get(key: string, versions: string): LoadedHookSettings | undefined {
    const entry = this.#entries.get(key);
    if (entry?.versions !== versions) return undefined;
    // Used again: it goes to the back of the line for eviction.
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.loaded;
  }

  /** Remembers a load, unless a file it looked at is unknown or changed too recently to prove its content. */
  set(key: string, looks: readonly FileLook[], versions: string, loaded: LoadedHookSettings): void {
    const settledBefore = this.#now() - this.#settledAfterMs;
    const settled = looks.every(
      (seen) => seen.kind === 'absent' || (seen.kind === 'present' && seen.changedMs < settledBefore),
    );
    this.#entries.delete(key);
    if (!settled) return;
    this.#entries.set(key, { versions, loaded });
    if (this.#entries.size > SETTINGS_CACHE_ENTRIES) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }
}

/** A workspace settings file at a session's first look: its `stat` version and the digest of its content. */
interface FileAtStart {
  version: string;
  /** sha256 of the content; undefined when the file did not exist (or could not be read). */
  digest: string | undefined;
}

/** What a session's first look trusted: the workspace files as they were, and the hooks they held. */
interface SessionStart {
  files: Map<string, FileAtStart>;
  settings: HookSettings;
  /** Warnings already given, one per file and content. */
  warned: Set<string>;
}

/** How many sessions' first looks a `SessionStartSettings` keeps (the least recently used goes first). */
const SESSION_STARTS = 4_096;

/**
 * The workspace settings each session trusted at its first look on this worker (see the module comment). Bounded:
 * a session pushed out looks again, as on a restarted worker.
 */
export class SessionStartSettings {
  readonly #entries = new Map<string, SessionStart>();
  readonly #maxSessions: number;

  constructor(options: { maxSessions?: number } = {}) {
    this.#maxSessions = options.maxSessions ?? SESSION_STARTS;
  }

  get(key: string): SessionStart | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry;
  }

  set(key: string, start: SessionStart): void {
    this.#entries.delete(key);
    this.#entries.set(key, start);
    if (this.#entries.size > this.#maxSessions) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }
}

/** The worker process's memory of session starts, shared by every worker it runs. */
export const sessionStartSettings = new SessionStartSettings();

const digestOf = (text: string): string => createHash('sha256').update(text).digest('hex');

/**
 * The hooks of a trusted workspace's settings files as the session's first look found them. A file created, changed
 * or removed since is reported once per content through `onWarning` and changes nothing for this session.
 */
async function workspaceAtSessionStart(options: {
  key: string;
  starts: SessionStartSettings;
  files: readonly string[];
  looks: ReadonlyMap<string, FileLook | undefined>;
  onWarning: ((message: string) => void) | undefined;
}): Promise<HookSettings> {
  const { files, looks, onWarning } = options;
  const versionOf = (file: string): string => {
    const seen = looks.get(file);
    return seen?.kind === 'present' ? seen.version : (seen?.kind ?? 'unknown');
  };
  const start = options.starts.get(options.key);
  if (start === undefined) {
    const texts = await Promise.all(
      files.map((file) =>
        looks.get(file)?.kind === 'absent' ? Promise.resolve(undefined) : readSettingsText(file, onWarning),
      ),
    );
    const settings: Array<HookSettings | undefined> = [];
    const seen = new Map<string, FileAtStart>();
    for (const [index, file] of files.entries()) {
      const text = texts[index];
      seen.set(file, { version: versionOf(file), digest: text === undefined ? undefined : digestOf(text) });
      if (text !== undefined) settings.push(parseSettingsText(file, text, onWarning));
    }
    // Two first looks at once (calls that start together): the one stored first stays the session's.
    const earlier = options.starts.get(options.key);
    if (earlier !== undefined) return earlier.settings;
    const first = { files: seen, settings: mergeHookSettings(...settings), warned: new Set<string>() };
    options.starts.set(options.key, first);
    return first.settings;
  }
  for (const file of files) {
    const atStart = start.files.get(file) ?? { version: 'absent', digest: undefined };
    const version = versionOf(file);
    if (version === atStart.version) continue;
    const text = looks.get(file)?.kind === 'absent' ? undefined : await readSettingsText(file, undefined);
    const digest = text === undefined ? undefined : digestOf(text);
    if (digest === atStart.digest) {
      // Touched, not changed: remember the new stamp so the next look need not read it.
      start.files.set(file, { version, digest });
      continue;
    }
    const seen = `${file}\0${digest ?? 'absent'}`;
    if (start.warned.has(seen)) continue;
    start.warned.add(seen);
    const what = atStart.digest === undefined ? 'created' : digest === undefined ? 'removed' : 'changed';
    onWarning?.(
      `Ignoring hook settings ${file}: it was ${what} during this session, and workspace settings are trusted as they were when the session started; a new session reads it`,
    );
  }
  return start.settings;
}

/**
 * Reads and merges `<userDir>/settings.json` (user level; default `~/.switchyard`; always trusted) and, when the
 * workspace is trusted, its settings files (`workspaceSettingsFiles`), in that order. The workspace is trusted
 * when `trustWorkspaceSettings` is true (the session option) or its real path is in or under one of
 * `trustedWorkspaces` (default: the worker's `SWITCHYARD_TRUSTED_WORKSPACES`). Untrusted workspace files are not
 * read at all, only named in `untrusted`. A workspace file that is the user file (the session in the home directory,
 * or a link to it) is the user's own, read once, as user settings. A missing file is fine; an unreadable or invalid
 * one is reported through `onWarning` and skipped. Never throws.
 *
 * With a `cache`, every file is looked at (`stat`, all at once) and read only when it changed since the load the
 * cache remembers: an edit applies to the next load either way, and warnings come once per version of a file.
 *
 * With a `session`, a trusted workspace's files count as they were at the session's first look (see the module
 * comment): an edit of the user file applies to the next load, one of a workspace file never in this session.
 */
export async function loadHookSettings(options: {
  cwd: string;
  userDir?: string;
  trustWorkspaceSettings?: boolean;
  trustedWorkspaces?: readonly string[];
  onWarning?: (message: string) => void;
  cache?: HookSettingsCache;
  /** The session asking, and the memory of session starts (default: this process's). */
  session?: { id: string; starts?: SessionStartSettings };
}): Promise<LoadedHookSettings> {
  const userFile = path.resolve(options.userDir ?? path.join(os.homedir(), '.switchyard'), 'settings.json');
  const candidates = workspaceSettingsFiles(options.cwd).filter((file) => file !== userFile);
  const trustedWorkspaces = options.trustedWorkspaces ?? [];
  const userLook = look(userFile);
  const candidateLooks = candidates.map(look);
  const trusted =
    options.trustWorkspaceSettings === true ||
    (trustedWorkspaces.length > 0 && (await isTrustedWorkspace({ cwd: options.cwd, trustedWorkspaces })));
  const workspaceFiles: string[] = [];
  for (const [index, file] of candidates.entries()) {
    const seen = candidateLooks[index];
    if (userLook.kind === 'present' && seen?.kind === 'present' && seen.identity === userLook.identity) continue;
    workspaceFiles.push(file);
  }
  const lookOf = new Map<string, FileLook | undefined>([
    [userFile, userLook],
    ...candidates.map((file, index): [string, FileLook | undefined] => [file, candidateLooks[index]]),
  ]);
  if (trusted && options.session !== undefined) {
    const { session, ...rest } = options;
    const [user, workspace] = await Promise.all([
      loadHookSettings({ ...rest, trustWorkspaceSettings: false, trustedWorkspaces: [] }),
      workspaceAtSessionStart({
        key: JSON.stringify([session.id, options.cwd, userFile]),
        starts: session.starts ?? sessionStartSettings,
        files: workspaceFiles,
        looks: lookOf,
        onWarning: options.onWarning,
      }),
    ]);
    return { settings: mergeHookSettings(user.settings, workspace), untrusted: [] };
  }
  const key = JSON.stringify([userFile, options.cwd, trusted]);
  const looks = [userLook, ...candidateLooks];
  const versions = JSON.stringify(looks.map((seen) => (seen.kind === 'present' ? seen.version : seen.kind)));
  const remembered = options.cache?.get(key, versions);
  if (remembered !== undefined) return remembered;
  // Absent files are not read; a file `stat` could not look at is, so its problem reaches `onWarning`.
  const files = (trusted ? [userFile, ...workspaceFiles] : [userFile]).filter(
    (file) => lookOf.get(file)?.kind !== 'absent',
  );
  const loaded = await Promise.all(files.map((file) => readSettingsFile(file, options.onWarning)));
  const untrusted = trusted
    ? []
    : workspaceFiles.filter((file) => {
        const seen = lookOf.get(file);
        return seen?.kind === 'present' && seen.isFile;
      });
  const result = { settings: mergeHookSettings(...loaded), untrusted };
  options.cache?.set(key, looks, versions, result);
  return result;
}
