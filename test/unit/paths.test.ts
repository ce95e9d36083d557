import { mkdir, open, symlink, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  openFileProblem,
  pathEscapeReason,
  realCwd,
  realPathAsSeenByRules,
  realPathOfOpenFile,
  rememberRealPaths,
} from '../../src/tools/paths.js';
import { scratchDir } from '../support/scratch.js';

describe('rememberRealPaths', () => {
  it('answers each path once: a link retargeted later still gets the first answer, a new one sees the change', async () => {
    const dir = await scratchDir();
    await writeFile(path.join(dir, 'one.txt'), '1');
    await writeFile(path.join(dir, 'two.txt'), '2');
    const link = path.join(dir, 'link.txt');
    await symlink(path.join(dir, 'one.txt'), link);
    const remembered = rememberRealPaths();
    expect(await remembered(link)).toBe(path.join(dir, 'one.txt'));
    await unlink(link);
    await symlink(path.join(dir, 'two.txt'), link);
    expect(await remembered(link)).toBe(path.join(dir, 'one.txt'));
    expect(await rememberRealPaths()(link)).toBe(path.join(dir, 'two.txt'));
  });
});

describe('resolving the cwd and a path', () => {
  /** A `realpath` that answers only when told to, and records what was asked while nothing was answered yet. */
  function heldRealPath() {
    const asked: string[] = [];
    const answers: Array<() => void> = [];
    const realPath = (target: string): Promise<string> => {
      asked.push(target);
      return new Promise((resolve) => answers.push(() => resolve(target)));
    };
    return { asked, realPath, answerAll: () => answers.splice(0).forEach((answer) => answer()) };
  }

  it.each([
    [
      'pathEscapeReason',
      (realPath: (target: string) => Promise<string>) => pathEscapeReason('/w', '/w/a.txt', realPath),
    ],
    [
      'realPathAsSeenByRules',
      (realPath: (target: string) => Promise<string>) => realPathAsSeenByRules('/w', '/w/a.txt', realPath),
    ],
  ])('%s resolves the cwd synchronously: only the path waits for a realpath', async (_name, resolveBoth) => {
    const held = heldRealPath();
    const answer = resolveBoth(held.realPath);
    await new Promise((resolve) => setImmediate(resolve));
    expect(held.asked).toEqual(['/w/a.txt']);
    held.answerAll();
    await answer;
  });

  it('a linked cwd is still seen where it leads: a path through the link is inside, a link out of the real cwd is not', async () => {
    const dir = await scratchDir();
    await mkdir(path.join(dir, 'real'));
    await writeFile(path.join(dir, 'real', 'a.txt'), 'a');
    await writeFile(path.join(dir, 'secret.txt'), 's');
    await symlink(path.join(dir, 'real'), path.join(dir, 'link'));
    await symlink(path.join(dir, 'secret.txt'), path.join(dir, 'real', 'out.txt'));
    const cwd = path.join(dir, 'link');
    expect(await pathEscapeReason(cwd, path.join(cwd, 'a.txt'))).toBeUndefined();
    expect(await pathEscapeReason(cwd, path.join(dir, 'real', 'a.txt'))).toBeUndefined();
    expect(await pathEscapeReason(cwd, path.join(cwd, 'out.txt'))).toMatch(/leads outside/);
    expect(await realPathAsSeenByRules(cwd, path.join(dir, 'real', 'a.txt'))).toBe(path.join(cwd, 'a.txt'));
  });

  it('realCwd resolves a linked cwd, and answers a cwd it cannot resolve as given', async () => {
    const dir = await scratchDir();
    await mkdir(path.join(dir, 'real'));
    await symlink(path.join(dir, 'real'), path.join(dir, 'link'));
    expect(realCwd(path.join(dir, 'link'))).toBe(path.join(dir, 'real'));
    expect(realCwd(path.join(dir, 'missing'))).toBe(path.join(dir, 'missing'));
  });
});

describe('openFileProblem (what a reading tool opened)', () => {
  async function problemOf(target: string, rules: { allow?: string[]; deny?: string[] } = {}, cwd?: string) {
    const handle = await open(target, 'r');
    try {
      return openFileProblem({
        cwd: cwd ?? path.dirname(target),
        toolName: 'Read',
        requestedPath: target,
        openedPath: await realPathOfOpenFile(handle, target),
        allowRules: rules.allow ?? [],
        denyRules: rules.deny ?? [],
      });
    } finally {
      await handle.close();
    }
  }

  it('allows a file inside cwd, and refuses one a link leads outside unless an absolute allow rule names it', async () => {
    const cwd = await scratchDir();
    const outside = await scratchDir();
    await writeFile(path.join(cwd, 'in.txt'), 'in');
    await writeFile(path.join(outside, 'out.txt'), 'out');
    await symlink(path.join(outside, 'out.txt'), path.join(cwd, 'link.txt'));
    expect(await problemOf(path.join(cwd, 'in.txt'))).toBeUndefined();
    expect(await problemOf(path.join(cwd, 'link.txt'), {}, cwd)).toMatchObject({ errorCode: 'path_escape' });
    expect(
      await problemOf(path.join(cwd, 'link.txt'), { allow: [`Read(/${path.join(outside, '*.txt')})`] }, cwd),
    ).toBeUndefined();
    // A whole-tool allow rule does not open paths outside cwd.
    expect(await problemOf(path.join(cwd, 'link.txt'), { allow: ['Read'] }, cwd)).toMatchObject({
      errorCode: 'path_escape',
    });
  });

  it('refuses what a deny rule names, judged on the file reached: beneath a denied folder, through a link', async () => {
    const cwd = await scratchDir();
    await mkdir(path.join(cwd, 'private'));
    await writeFile(path.join(cwd, 'private', 'key.txt'), 'k');
    await symlink(path.join(cwd, 'private', 'key.txt'), path.join(cwd, 'innocent.txt'));
    expect(await problemOf(path.join(cwd, 'innocent.txt'), { deny: ['Read(private/**)'] }, cwd)).toMatchObject({
      errorCode: 'denied_by_rule',
    });
    expect(await problemOf(path.join(cwd, 'innocent.txt'), { deny: ['Read(other/**)'] }, cwd)).toBeUndefined();
  });
});
