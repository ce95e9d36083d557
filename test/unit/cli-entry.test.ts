import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../..', import.meta.url));

/**
 * bin/switchyard.js in a scratch clone whose src/cli/main.ts and dist/cli/main.js each print which one ran: the
 * entry picks dist/ when it is at least as new as every source, so a fresh clone's first command does not wait for
 * tsx to compile src/.
 */
describe('bin/switchyard.js', () => {
  let root: string;
  const sourceMain = (): string => path.join(root, 'src', 'cli', 'main.ts');
  const builtMain = (): string => path.join(root, 'dist', 'cli', 'main.js');
  const which = async (env: NodeJS.ProcessEnv = {}): Promise<string> =>
    (
      await run(process.execPath, [path.join(root, 'bin', 'switchyard.js')], {
        env: { PATH: process.env.PATH, ...env },
      })
    ).stdout;
  const age = async (file: string, secondsAgo: number): Promise<void> => {
    const when = new Date(Date.now() - secondsAgo * 1000);
    await utimes(file, when, when);
  };

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'switchyard-bin-'));
    await mkdir(path.join(root, 'bin'));
    await mkdir(path.dirname(sourceMain()), { recursive: true });
    await mkdir(path.dirname(builtMain()), { recursive: true });
    await copyFile(path.join(repo, 'bin', 'switchyard.js'), path.join(root, 'bin', 'switchyard.js'));
    await symlink(path.join(repo, 'node_modules'), path.join(root, 'node_modules'));
    await writeFile(path.join(root, 'package.json'), JSON.stringify({ type: 'module' }));
    const main = (name: string): string =>
      `export async function main(): Promise<number> { process.stdout.write('${name}'); return 0; }\n`;
    await writeFile(sourceMain(), main('src'));
    await writeFile(builtMain(), main('dist').replace(': Promise<number>', ''));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('runs dist/ when it was built after the last change to src/', async () => {
    await age(sourceMain(), 60);
    await age(builtMain(), 10);
    expect(await which()).toBe('dist');
  });

  it('runs src/ through tsx when a source changed since the build', async () => {
    await age(builtMain(), 60);
    await age(sourceMain(), 10);
    expect(await which()).toBe('src');
    expect(await which({ SWITCHYARD_USE_DIST: '1' })).toBe('dist');
  });

  it('SWITCHYARD_USE_SOURCES=1 runs src/ even when dist/ is newer', async () => {
    await age(sourceMain(), 60);
    await age(builtMain(), 10);
    expect(await which({ SWITCHYARD_USE_SOURCES: '1' })).toBe('src');
  });
});
