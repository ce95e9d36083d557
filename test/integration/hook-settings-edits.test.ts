// Hook settings edited while a worker runs, with the real Read tool on a real server: a call runs its post hooks from
// the settings its PreToolUse hooks came from, and the edit reaches the next call.
import { access, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinTools } from '../../src/tools/builtin.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';

const exists = (file: string): Promise<boolean> =>
  access(file).then(
    () => true,
    () => false,
  );
const quote = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`;

describe('hook settings edited between calls', () => {
  let harness: Harness;
  let cwd: string;
  let userDir: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    userDir = await scratchDir('switchyard-user-');
    harness = await createHarness({ tools: builtinTools(), defaultCwd: cwd, userSettingsDir: userDir });
  });
  afterAll(async () => harness.close());

  it("runs a Read's PostToolUse hooks from its Prepare's settings, and the edited settings on the next call", async () => {
    await writeFile(path.join(cwd, 'notes.txt'), 'alpha\nbeta\n');
    const settingsFile = path.join(userDir, 'settings.json');
    const postRan = path.join(cwd, 'post-ran');
    // The edit the PreToolUse hook makes: from now on, a PostToolUse hook that leaves a marker (and no PreToolUse).
    const edited = JSON.stringify({
      hooks: { PostToolUse: [{ matcher: 'Read', hooks: [{ type: 'command', command: `touch ${quote(postRan)}` }] }] },
    });
    const nextSettings = path.join(userDir, 'next.json');
    await writeFile(nextSettings, edited);
    await writeFile(
      settingsFile,
      JSON.stringify({
        hooks: {
          PreToolUse: [
            {
              matcher: 'Read',
              hooks: [{ type: 'command', command: `cp ${quote(nextSettings)} ${quote(settingsFile)}` }],
            },
          ],
        },
      }),
    );
    await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      const read = { id: 'r', name: 'Read', input: { file_path: 'notes.txt' } };
      const first = await session.executeTurn({ turnId: 't1', calls: [read] });
      expect(first.results[0]).toMatchObject({ status: 'success' });
      expect(first.results[0]?.modelContent).toContain('beta');
      // The settings changed during the call, after its PreToolUse hooks: its own post hooks are from before.
      expect(await exists(postRan)).toBe(false);
      const second = await session.executeTurn({ turnId: 't2', calls: [read] });
      expect(second.results[0]).toMatchObject({ status: 'success' });
      expect(await exists(postRan)).toBe(true);
    });
  });
});
