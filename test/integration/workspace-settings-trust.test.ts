// Trust in a workspace's hook settings is decided when the session starts: a settings file created or changed during
// a session never runs its hooks in that session (the model can write the workspace; a hook runs on the worker,
// unsandboxed). Real server, real Bash, the sandbox off so that nothing but this rule stands in the way.
import { access, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import { bashTool } from '../../src/tools/builtin/bash.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';

const exists = (file: string): Promise<boolean> =>
  access(file).then(
    () => true,
    () => false,
  );
const quote = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`;
/** Settings whose PreToolUse hook on Bash leaves `marker`. */
const settingsTouching = (marker: string): string =>
  JSON.stringify({
    hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: `touch ${quote(marker)}` }] }] },
  });

describe('workspace hook settings are trusted as the session found them', { timeout: 120_000 }, () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await createHarness({ tools: [bashTool] });
  });
  afterAll(async () => harness.close());

  const start = (cwd: string): Promise<SessionHandle> =>
    harness.startSession({
      cwd,
      permissionMode: 'bypassPermissions',
      trustWorkspaceSettings: true,
      sandbox: { mode: 'off' },
    });
  const echo = async (session: SessionHandle, turnId: string): Promise<void> => {
    const turn = await session.executeTurn({
      turnId,
      calls: [{ id: 'b', name: 'Bash', input: { command: 'echo hi' } }],
    });
    expect(turn.results[0]).toMatchObject({ status: 'success', modelContent: 'hi\n' });
  };

  it('a .switchyard/settings.json created mid-session runs no hook in that session; the next session trusts it', async () => {
    const cwd = await scratchDir();
    const marker = path.join(await scratchDir('switchyard-marker-'), 'hook-ran');
    await harness.withWorker(async () => {
      const session = await start(cwd);
      await echo(session, 't1');
      // Created during the session (here by the test; a command of the model's could do the same).
      await mkdir(path.join(cwd, '.switchyard'));
      await writeFile(path.join(cwd, '.switchyard', 'settings.json'), settingsTouching(marker));
      await echo(session, 't2');
      expect(await exists(marker)).toBe(false);
      await echo(await start(cwd), 't1');
      expect(await exists(marker)).toBe(true);
    });
  });

  it('a settings file changed mid-session keeps its first hooks for that session', async () => {
    const cwd = await scratchDir();
    const markers = await scratchDir('switchyard-marker-');
    const first = path.join(markers, 'first');
    const planted = path.join(markers, 'planted');
    await mkdir(path.join(cwd, '.claude'));
    const file = path.join(cwd, '.claude', 'settings.json');
    await writeFile(file, settingsTouching(first));
    await harness.withWorker(async () => {
      const session = await start(cwd);
      await echo(session, 't1');
      expect(await exists(first)).toBe(true);
      await writeFile(file, settingsTouching(planted));
      await echo(session, 't2');
      expect(await exists(planted)).toBe(false);
    });
  });
});
