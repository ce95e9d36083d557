import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cachedBinaryPath, findTemporalBinary } from '../../src/server/temporal-binary.js';
import { scratchDir } from '../support/scratch.js';

async function fakeExecutable(file: string): Promise<string> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, '#!/bin/sh\necho fake\n');
  await chmod(file, 0o755);
  return file;
}

describe('findTemporalBinary', () => {
  it('prefers TEMPORAL_CLI_PATH over PATH and the cache', async () => {
    const dir = await scratchDir();
    const explicit = await fakeExecutable(path.join(dir, 'explicit', 'temporal'));
    await fakeExecutable(path.join(dir, 'bin', 'temporal'));
    const env = { TEMPORAL_CLI_PATH: explicit, PATH: path.join(dir, 'bin'), SWITCHYARD_CACHE_DIR: path.join(dir, 'cache') };
    expect(await findTemporalBinary({ env, build: false })).toEqual({ path: explicit, source: 'env' });
  });

  it('fails clearly when TEMPORAL_CLI_PATH is not executable', async () => {
    const dir = await scratchDir();
    await expect(findTemporalBinary({ env: { TEMPORAL_CLI_PATH: path.join(dir, 'nope') }, build: false })).rejects.toThrow(/not an executable file/);
  });

  it('uses temporal on PATH before the cache', async () => {
    const dir = await scratchDir();
    const onPath = await fakeExecutable(path.join(dir, 'bin', 'temporal'));
    const env = { PATH: `${path.join(dir, 'empty')}:${path.join(dir, 'bin')}`, SWITCHYARD_CACHE_DIR: path.join(dir, 'cache') };
    await fakeExecutable(cachedBinaryPath(env));
    expect(await findTemporalBinary({ env, build: false })).toEqual({ path: onPath, source: 'path' });
  });

  it('reuses the user-level cache without building', async () => {
    const dir = await scratchDir();
    const env = { PATH: path.join(dir, 'empty'), SWITCHYARD_CACHE_DIR: path.join(dir, 'cache') };
    const cached = await fakeExecutable(cachedBinaryPath(env));
    expect(cached).toBe(path.join(dir, 'cache', 'temporal-cli-1.5.1', 'temporal'));
    expect(await findTemporalBinary({ env, build: false })).toEqual({ path: cached, source: 'cache' });
  });

  it('keeps the cache outside the checkout, under ~/.cache/switchyard by default', () => {
    expect(cachedBinaryPath({ HOME: '/home/u' } as NodeJS.ProcessEnv)).toMatch(/\.cache\/switchyard\/temporal-cli-1\.5\.1\/temporal$/);
    expect(cachedBinaryPath({ XDG_CACHE_HOME: '/x' })).toBe('/x/switchyard/temporal-cli-1.5.1/temporal');
  });

  it('returns undefined when nothing is found and building is off', async () => {
    const dir = await scratchDir();
    expect(await findTemporalBinary({ env: { PATH: path.join(dir, 'empty'), SWITCHYARD_CACHE_DIR: dir }, build: false })).toBeUndefined();
  });
});
