import { commandHooks } from './command-hooks.js';
import { hookSettingsSchema } from '../contracts/hook-settings.js';
import type { HookSettings } from '../contracts/hook-settings.js';
import { HookSettingsCache, loadHookSettings, mergeHookSettings } from './hook-settings-file.js';
import type { LoadedHookSettings, SessionStartSettings } from './hook-settings-file.js';
import type { SwitchyardHooks } from './types.js';

export interface SessionHooksOptions {
  /** Hooks given as functions; they run before command hooks from settings. */
  hooks?: SwitchyardHooks;
  /**
   * Where the user-level `settings.json` with command hooks is (default `~/.switchyard`); `false` reads no settings
   * files at all (project `<cwd>/.switchyard/settings.json` included).
   */
  userSettingsDir?: string | false;
  /** Workspaces whose settings files are trusted (the worker's `SWITCHYARD_TRUSTED_WORKSPACES`). Default: none. */
  trustedWorkspaces?: readonly string[];
  warn: (message: string, details?: Record<string, unknown>) => void;
  /** The workspace settings each session trusted at its first look (default: the process's, shared by its workers). */
  sessionStarts?: SessionStartSettings;
}

/** The hooks of one session, and the workspace settings files skipped as untrusted. */
export interface SessionHooks {
  hooks: SwitchyardHooks;
  untrustedSettingsFiles: string[];
}

export type SessionHooksOf = (options: {
  /** The session asking: its workspace settings count as its first look found them (see `loadHookSettings`). */
  sessionId: string;
  cwd: string;
  sessionHooks: Record<string, unknown> | undefined;
  trustWorkspaceSettings: boolean | undefined;
}) => Promise<SessionHooks>;

function concatHooks(...sets: Array<SwitchyardHooks | undefined>): SwitchyardHooks {
  return {
    preToolUse: sets.flatMap((set) => set?.preToolUse ?? []),
    permissionRequest: sets.flatMap((set) => set?.permissionRequest ?? []),
    postToolUse: sets.flatMap((set) => set?.postToolUse ?? []),
    postToolUseFailure: sets.flatMap((set) => set?.postToolUseFailure ?? []),
  };
}

/**
 * The hooks of a session: the worker's function hooks, then command hooks from the user-level settings, the
 * workspace's settings files when trusted, and the session's own options. Looked at on each use (one `stat` per
 * settings file), and read again when a file changed, so edited user settings apply to the next call; trusted
 * workspace settings count as the session's first look found them (a file created or changed later is ignored for
 * the rest of the session, with a warning). Uses that ask
 * while a look at the same files is under way (the calls of a group, which start together) share that look. The
 * worker log hears of each skipped workspace file once, and of a broken settings file once per version of it; the
 * session reports skipped files as an event.
 */
export function sessionHooks(options: SessionHooksOptions): SessionHooksOf {
  const { warn } = options;
  const reportedUntrusted = new Set<string>();
  const cache = new HookSettingsCache();
  const looking = new Map<string, Promise<LoadedHookSettings>>();
  /** The command hooks of a load (the session adding none), built once per load the cache hands out. */
  const built = new WeakMap<LoadedHookSettings, SwitchyardHooks>();
  const load = (sessionId: string, cwd: string, trusted: boolean): Promise<LoadedHookSettings> => {
    const key = JSON.stringify([sessionId, cwd, trusted]);
    const under = looking.get(key);
    if (under !== undefined) return under;
    const loading = loadHookSettings({
      cwd,
      ...(typeof options.userSettingsDir === 'string' ? { userDir: options.userSettingsDir } : {}),
      trustWorkspaceSettings: trusted,
      ...(options.trustedWorkspaces === undefined ? {} : { trustedWorkspaces: options.trustedWorkspaces }),
      onWarning: (message) => warn(message, { sessionId }),
      cache,
      session: { id: sessionId, ...(options.sessionStarts === undefined ? {} : { starts: options.sessionStarts }) },
    }).finally(() => looking.delete(key));
    looking.set(key, loading);
    return loading;
  };
  return async ({ sessionId, cwd, sessionHooks: ofSession, trustWorkspaceSettings }) => {
    if (options.userSettingsDir === false && ofSession === undefined)
      return { hooks: options.hooks ?? {}, untrustedSettingsFiles: [] };
    const files =
      options.userSettingsDir === false ? undefined : await load(sessionId, cwd, trustWorkspaceSettings === true);
    const untrustedSettingsFiles = files?.untrusted ?? [];
    const unreported = untrustedSettingsFiles.filter((file) => !reportedUntrusted.has(file));
    if (unreported.length > 0) {
      for (const file of unreported) reportedUntrusted.add(file);
      warn(
        'workspace settings files not loaded: the workspace is not trusted (session option trustWorkspaceSettings or worker env SWITCHYARD_TRUSTED_WORKSPACES)',
        { cwd, files: unreported },
      );
    }
    if (files !== undefined && ofSession === undefined) {
      let hooks = built.get(files);
      if (hooks === undefined) {
        hooks = concatHooks(options.hooks, commandHooks(files.settings, { onWarning: warn }));
        built.set(files, hooks);
      }
      return { hooks, untrustedSettingsFiles };
    }
    let session: HookSettings | undefined;
    if (ofSession !== undefined) {
      const parsed = hookSettingsSchema.safeParse({ hooks: ofSession });
      if (parsed.success) session = parsed.data;
      else warn("the session's hooks option is invalid; ignored", { error: parsed.error.message });
    }
    return {
      hooks: concatHooks(options.hooks, commandHooks(mergeHookSettings(files?.settings, session), { onWarning: warn })),
      untrustedSettingsFiles,
    };
  };
}

/**
 * `hooksOf` that looks at the settings once: later asks with the same cwd, session hooks and trust get the first
 * answer. For the stages of one activity that follow each other at once (a Plan's Prepare and the calls it then
 * runs), so a call runs its post hooks from the same settings as its PreToolUse hooks, and the files are not looked
 * at twice within a millisecond. Not for anything that waits between asks: an edit must reach the next call.
 */
export function firstLookOnly(hooksOf: SessionHooksOf): SessionHooksOf {
  const looks: Array<{ ask: Parameters<SessionHooksOf>[0]; answer: ReturnType<SessionHooksOf> }> = [];
  return (ask) => {
    const seen = looks.find(
      ({ ask: earlier }) =>
        earlier.sessionId === ask.sessionId &&
        earlier.cwd === ask.cwd &&
        earlier.sessionHooks === ask.sessionHooks &&
        earlier.trustWorkspaceSettings === ask.trustWorkspaceSettings,
    );
    if (seen !== undefined) return seen.answer;
    const answer = hooksOf(ask);
    looks.push({ ask, answer });
    return answer;
  };
}
