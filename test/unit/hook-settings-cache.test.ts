// The hook settings a worker remembers between calls: an edit, a new file, a removed one or a replaced one of the user
// file must reach the very next call, however quickly it follows; only unchanged files are answered from memory. A
// trusted workspace's files are different within a session: they count as the session's first look found them, and
// a file created or changed later never runs its hooks in that session (the model can write the workspace).
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { firstLookOnly, sessionHooks } from '../../src/hooks/session-hooks.js';
import type { SessionHooksOf } from '../../src/hooks/session-hooks.js';
import { HookSettingsCache, SessionStartSettings, loadHookSettings } from '../../src/hooks/hook-settings-file.js';
import type { LoadedHookSettings } from '../../src/hooks/hook-settings-file.js';
import { scratchDir } from '../support/scratch.js';

const settingsWith = (command: string): string =>
  JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command }] }] } });
const commands = (loaded: LoadedHookSettings): string[] =>
  (loaded.settings.hooks?.PreToolUse ?? []).flatMap((group) => group.hooks.map((hook) => hook.command));

async function workspace(): Promise<{ cwd: string; userDir: string; userFile: string }> {
  const root = await scratchDir('switchyard-settings-cache-');
  const cwd = path.join(root, 'work');
  const userDir = path.join(root, 'user');
  await mkdir(cwd);
  await mkdir(userDir);
  return { cwd, userDir, userFile: path.join(userDir, 'settings.json') };
}

describe('HookSettingsCache', () => {
  // Files count as settled at once here, so every answer the cache may give, it gives.
  const settledCache = (): HookSettingsCache => new HookSettingsCache({ settledAfterMs: 0 });
  const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 5));

  it('answers unchanged files from memory, and warns once per version of a broken file', async () => {
    const { cwd, userDir, userFile } = await workspace();
    await writeFile(userFile, settingsWith('check-a'));
    const cache = settledCache();
    await settle();
    const first = await loadHookSettings({ cwd, userDir, trustedWorkspaces: [], cache });
    const second = await loadHookSettings({ cwd, userDir, trustedWorkspaces: [], cache });
    expect(commands(first)).toEqual(['check-a']);
    expect(second).toBe(first);

    await writeFile(userFile, '{ not json');
    await settle();
    const onWarning = vi.fn();
    await loadHookSettings({ cwd, userDir, trustedWorkspaces: [], cache, onWarning });
    await loadHookSettings({ cwd, userDir, trustedWorkspaces: [], cache, onWarning });
    expect(onWarning).toHaveBeenCalledTimes(1);
    expect(onWarning.mock.calls[0]?.[0]).toContain('invalid JSON');
  });

  it('reads an edited file again on the next load, even an edit of the same size', async () => {
    const { cwd, userDir, userFile } = await workspace();
    await writeFile(userFile, settingsWith('check-a'));
    const cache = settledCache();
    await settle();
    expect(commands(await loadHookSettings({ cwd, userDir, trustedWorkspaces: [], cache }))).toEqual(['check-a']);
    await writeFile(userFile, settingsWith('check-b'));
    expect(commands(await loadHookSettings({ cwd, userDir, trustedWorkspaces: [], cache }))).toEqual(['check-b']);
    // Replaced by another file (an editor's save-by-rename).
    const replacement = path.join(userDir, 'settings.json.new');
    await writeFile(replacement, settingsWith('check-c'));
    await rename(replacement, userFile);
    expect(commands(await loadHookSettings({ cwd, userDir, trustedWorkspaces: [], cache }))).toEqual(['check-c']);
    await rm(userFile);
    expect(commands(await loadHookSettings({ cwd, userDir, trustedWorkspaces: [], cache }))).toEqual([]);
  });

  it('without a session, sees a workspace file appear and go, trusted (its hooks) or not (named as skipped)', async () => {
    const { cwd, userDir } = await workspace();
    const cache = settledCache();
    const trusted = () => loadHookSettings({ cwd, userDir, trustWorkspaceSettings: true, cache });
    const untrusted = () => loadHookSettings({ cwd, userDir, trustedWorkspaces: [], cache });
    expect(commands(await trusted())).toEqual([]);
    expect((await untrusted()).untrusted).toEqual([]);
    const file = path.join(cwd, '.claude', 'settings.json');
    await mkdir(path.dirname(file));
    await writeFile(file, settingsWith('workspace-check'));
    expect(commands(await trusted())).toEqual(['workspace-check']);
    expect(await untrusted()).toMatchObject({ settings: {}, untrusted: [file] });
    await rm(file);
    expect(commands(await trusted())).toEqual([]);
    expect((await untrusted()).untrusted).toEqual([]);
  });

  it('does not remember a file changed within the last two seconds: a coarse clock cannot tell two such writes apart', async () => {
    const { cwd, userDir, userFile } = await workspace();
    await writeFile(userFile, settingsWith('check-a'));
    const cache = new HookSettingsCache();
    const first = await loadHookSettings({ cwd, userDir, trustedWorkspaces: [], cache });
    expect(await loadHookSettings({ cwd, userDir, trustedWorkspaces: [], cache })).not.toBe(first);
    // The same files, judged by a clock three seconds on: settled, so remembered.
    const later = new HookSettingsCache({ now: () => Date.now() + 3_000 });
    const remembered = await loadHookSettings({ cwd, userDir, trustedWorkspaces: [], cache: later });
    expect(await loadHookSettings({ cwd, userDir, trustedWorkspaces: [], cache: later })).toBe(remembered);
  });

  it('treats a workspace file that is the user file as the user file, read once', async () => {
    const { cwd, userDir, userFile } = await workspace();
    await writeFile(userFile, settingsWith('user-check'));
    await mkdir(path.join(cwd, '.switchyard'));
    const { symlink } = await import('node:fs/promises');
    await symlink(userFile, path.join(cwd, '.switchyard', 'settings.json'));
    const loaded = await loadHookSettings({ cwd, userDir, trustWorkspaceSettings: true, cache: settledCache() });
    expect(commands(loaded)).toEqual(['user-check']);
  });
});

describe('workspace settings within a session', () => {
  const workspaceFile = (cwd: string): string => path.join(cwd, '.switchyard', 'settings.json');

  it("keeps the hooks of the session's first look: a file created, changed or removed later changes nothing until a new session", async () => {
    const { cwd, userDir, userFile } = await workspace();
    const starts = new SessionStartSettings();
    const onWarning = vi.fn();
    const load = (id: string) =>
      loadHookSettings({
        cwd,
        userDir,
        trustWorkspaceSettings: true,
        onWarning,
        session: { id, starts },
      });
    expect(commands(await load('s1'))).toEqual([]);
    // Created during the session (by the model, say): not trusted in it.
    await mkdir(path.dirname(workspaceFile(cwd)));
    await writeFile(workspaceFile(cwd), settingsWith('planted'));
    expect(commands(await load('s1'))).toEqual([]);
    expect(commands(await load('s1'))).toEqual([]);
    expect(onWarning).toHaveBeenCalledTimes(1);
    expect(onWarning.mock.calls[0]?.[0]).toContain('created during this session');
    // A new session trusts the workspace as it finds it.
    expect(commands(await load('s2'))).toEqual(['planted']);
    // Changed or removed during s2: s2 keeps what it started with.
    await writeFile(workspaceFile(cwd), settingsWith('changed'));
    expect(commands(await load('s2'))).toEqual(['planted']);
    await rm(workspaceFile(cwd));
    expect(commands(await load('s2'))).toEqual(['planted']);
    // The user file, outside the workspace, is read fresh on every look.
    await writeFile(userFile, settingsWith('user-check'));
    expect(commands(await load('s2'))).toEqual(['user-check', 'planted']);
  });

  it('does not warn about a file touched but not changed', async () => {
    const { cwd, userDir } = await workspace();
    await mkdir(path.dirname(workspaceFile(cwd)));
    await writeFile(workspaceFile(cwd), settingsWith('project-check'));
    const starts = new SessionStartSettings();
    const onWarning = vi.fn();
    const load = () =>
      loadHookSettings({ cwd, userDir, trustWorkspaceSettings: true, onWarning, session: { id: 's', starts } });
    expect(commands(await load())).toEqual(['project-check']);
    await writeFile(workspaceFile(cwd), settingsWith('project-check'));
    expect(commands(await load())).toEqual(['project-check']);
    expect(onWarning).not.toHaveBeenCalled();
  });

  it('remembers a bounded number of sessions: the oldest looks again', async () => {
    const { cwd, userDir } = await workspace();
    const starts = new SessionStartSettings({ maxSessions: 1 });
    const load = (id: string) =>
      loadHookSettings({ cwd, userDir, trustWorkspaceSettings: true, session: { id, starts } });
    await load('a');
    await mkdir(path.dirname(workspaceFile(cwd)));
    await writeFile(workspaceFile(cwd), settingsWith('later'));
    expect(commands(await load('a'))).toEqual([]);
    await load('b');
    expect(commands(await load('a'))).toEqual(['later']);
  });
});

describe('sessionHooks', () => {
  it("does not run a trusted workspace's settings file created during the session, and a new session does", async () => {
    const { cwd, userDir } = await workspace();
    const warn = vi.fn();
    const of = sessionHooks({ userSettingsDir: userDir, warn, sessionStarts: new SessionStartSettings() });
    const ask = (sessionId: string) => of({ sessionId, cwd, sessionHooks: undefined, trustWorkspaceSettings: true });
    expect((await ask('s1')).hooks.preToolUse).toEqual([]);
    await mkdir(path.join(cwd, '.claude'));
    await writeFile(path.join(cwd, '.claude', 'settings.json'), settingsWith('planted'));
    expect((await ask('s1')).hooks.preToolUse).toEqual([]);
    expect(warn.mock.calls.map((call) => String(call[0])).join('\n')).toContain('during this session');
    expect((await ask('s2')).hooks.preToolUse).toHaveLength(1);
  });

  const ask = (of: ReturnType<typeof sessionHooks>, cwd: string) =>
    of({ sessionId: 's1', cwd, sessionHooks: undefined, trustWorkspaceSettings: undefined });

  it('applies an edited settings file to the very next call', async () => {
    const { cwd, userDir, userFile } = await workspace();
    const of = sessionHooks({ userSettingsDir: userDir, warn: () => undefined });
    await writeFile(userFile, settingsWith('check-a'));
    expect((await ask(of, cwd)).hooks.preToolUse).toHaveLength(1);
    await writeFile(userFile, JSON.stringify({ hooks: {} }));
    expect((await ask(of, cwd)).hooks.preToolUse).toEqual([]);
  });

  it('lets calls that ask together share one look at the files', async () => {
    const { cwd, userDir, userFile } = await workspace();
    // Just written: not settled, so only sharing (not the cache) can give two calls the same hooks.
    await writeFile(userFile, settingsWith('check-a'));
    const of = sessionHooks({ userSettingsDir: userDir, warn: () => undefined });
    const [one, two] = await Promise.all([ask(of, cwd), ask(of, cwd)]);
    expect(one.hooks).toBe(two.hooks);
    expect((await ask(of, cwd)).hooks).not.toBe(one.hooks);
  });
});

describe('firstLookOnly', () => {
  it('answers an ask for the same cwd, session hooks and trust with the first look, and looks again for any other', async () => {
    let looks = 0;
    const hooksOf: SessionHooksOf = () => {
      looks += 1;
      return Promise.resolve({ hooks: {}, untrustedSettingsFiles: [] });
    };
    const once = firstLookOnly(hooksOf);
    const sessionHooks = { PreToolUse: [] };
    const first = once({ sessionId: 's1', cwd: '/w', sessionHooks, trustWorkspaceSettings: undefined });
    expect(once({ sessionId: 's1', cwd: '/w', sessionHooks, trustWorkspaceSettings: undefined })).toBe(first);
    expect(looks).toBe(1);
    await once({ sessionId: 's1', cwd: '/other', sessionHooks, trustWorkspaceSettings: undefined });
    await once({ sessionId: 's1', cwd: '/w', sessionHooks: { PreToolUse: [] }, trustWorkspaceSettings: undefined });
    await once({ sessionId: 's1', cwd: '/w', sessionHooks, trustWorkspaceSettings: true });
    expect(looks).toBe(4);
  });
});
