import { execFileSync } from 'node:child_process';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cachedBinaryPath, fileFromTar, findTemporalBinary } from '../../src/server/temporal-binary.js';
import { scratchDir } from '../support/scratch.js';

async function fakeExecutable(file: string, output = 'fake'): Promise<string> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `#!/bin/sh\necho ${output}\n`);
  await chmod(file, 0o755);
  return file;
}

describe('findTemporalBinary', () => {
  it('prefers TEMPORAL_CLI_PATH over PATH and the cache', async () => {
    const dir = await scratchDir();
    const explicit = await fakeExecutable(path.join(dir, 'explicit', 'temporal'));
    await fakeExecutable(path.join(dir, 'bin', 'temporal'));
    const env = {
      TEMPORAL_CLI_PATH: explicit,
      PATH: path.join(dir, 'bin'),
      SWITCHYARD_CACHE_DIR: path.join(dir, 'cache'),
    };
    expect(await findTemporalBinary({ env, build: false })).toEqual({ path: explicit, source: 'env' });
  });

  it('fails clearly when TEMPORAL_CLI_PATH is not executable', async () => {
    const dir = await scratchDir();
    await expect(
      findTemporalBinary({ env: { TEMPORAL_CLI_PATH: path.join(dir, 'nope') }, build: false }),
    ).rejects.toThrow(/not an executable file/);
  });

  it('uses temporal on PATH before the cache', async () => {
    const dir = await scratchDir();
    const onPath = await fakeExecutable(path.join(dir, 'bin', 'temporal'));
    const env = {
      PATH: `${path.join(dir, 'empty')}:${path.join(dir, 'bin')}`,
      SWITCHYARD_CACHE_DIR: path.join(dir, 'cache'),
    };
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
    expect(cachedBinaryPath({ HOME: '/home/u' } as NodeJS.ProcessEnv)).toMatch(
      /\.cache\/switchyard\/temporal-cli-1\.5\.1\/temporal$/,
    );
    expect(cachedBinaryPath({ XDG_CACHE_HOME: '/x' })).toBe('/x/switchyard/temporal-cli-1.5.1/temporal');
  });

  it('returns undefined when nothing is found and building is off', async () => {
    const dir = await scratchDir();
    expect(
      await findTemporalBinary({ env: { PATH: path.join(dir, 'empty'), SWITCHYARD_CACHE_DIR: dir }, build: false }),
    ).toBeUndefined();
  });
});

describe('findTemporalBinary without a binary: the download, then Go', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(
      servers.splice(0).map((server) => {
        server.closeAllConnections();
        return new Promise((resolve) => server.close(resolve));
      }),
    );
  });

  /** A stand-in for temporal.download: the info document, then a tar.gz holding `temporal` under `entry`. */
  async function downloadService(options: {
    entry: string;
    silent?: boolean;
  }): Promise<{ url: string; requests: string[] }> {
    const dir = await scratchDir();
    await fakeExecutable(path.join(dir, 'archive', options.entry), 'temporal version 1.5.1');
    const archive = path.join(dir, 'cli.tar.gz');
    execFileSync('tar', ['-czf', archive, '-C', path.join(dir, 'archive'), options.entry]);
    const requests: string[] = [];
    const server = createServer((request, response) => {
      requests.push(request.url ?? '');
      if (options.silent) return; // accepts the connection, never answers
      if (request.url?.startsWith('/cli/')) {
        const { port } = server.address() as AddressInfo;
        response.setHeader('content-type', 'application/json');
        response.end(
          JSON.stringify({ archive_url: `http://127.0.0.1:${port}/archive.tar.gz`, file_to_extract: options.entry }),
        );
      } else {
        void readFile(archive).then((bytes) => response.end(bytes));
      }
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
  }

  /** A `go` whose `install` writes a fake `temporal` into GOBIN, as the real one would after minutes. */
  async function fakeGo(dir: string): Promise<string> {
    const bin = path.join(dir, 'gobin');
    await mkdir(bin, { recursive: true });
    await writeFile(
      path.join(bin, 'go'),
      '#!/bin/sh\nPATH=/usr/bin:/bin\nprintf \'#!/bin/sh\\necho built\\n\' > "$GOBIN/temporal"\nchmod 755 "$GOBIN/temporal"\n',
    );
    await chmod(path.join(bin, 'go'), 0o755);
    return bin;
  }

  it('downloads the CLI into the cache before trying Go, as the SDK would', async () => {
    const dir = await scratchDir();
    const service = await downloadService({ entry: 'temporal' });
    const env = { PATH: await fakeGo(dir), SWITCHYARD_CACHE_DIR: path.join(dir, 'cache') };
    const found = await findTemporalBinary({ env, downloadUrl: service.url });
    expect(found).toEqual({ path: cachedBinaryPath(env), source: 'downloaded' });
    expect(execFileSync(cachedBinaryPath(env), ['--version']).toString()).toContain('temporal version 1.5.1');
    expect(service.requests[0]).toMatch(/^\/cli\/v1\.5\.1\?arch=(amd64|arm64)&platform=(linux|darwin)&format=tar\.gz$/);
    // The next lookup finds the cache and asks nobody.
    expect(await findTemporalBinary({ env, downloadUrl: service.url })).toEqual({
      path: cachedBinaryPath(env),
      source: 'cache',
    });
    expect(service.requests).toHaveLength(2);
  });

  it('gives up on a silent download service after the timeout and builds with Go', async () => {
    const dir = await scratchDir();
    const service = await downloadService({ entry: 'temporal', silent: true });
    const env = { PATH: await fakeGo(dir), SWITCHYARD_CACHE_DIR: path.join(dir, 'cache') };
    const progress: string[] = [];
    const found = await findTemporalBinary({
      env,
      downloadUrl: service.url,
      downloadTimeoutMs: 300,
      onProgress: (message) => progress.push(message),
    });
    expect(found).toEqual({ path: cachedBinaryPath(env), source: 'built' });
    expect(execFileSync(cachedBinaryPath(env)).toString()).toBe('built\n');
    expect(progress.join('\n')).toMatch(
      /Could not download the Temporal CLI \(.*no answer in time\); trying a Go build/,
    );
  });

  it('falls through to Go when nothing listens at the download address', async () => {
    const dir = await scratchDir();
    const service = await downloadService({ entry: 'temporal' });
    await new Promise((resolve) => servers.pop()?.close(resolve));
    const env = { PATH: await fakeGo(dir), SWITCHYARD_CACHE_DIR: path.join(dir, 'cache') };
    expect(await findTemporalBinary({ env, downloadUrl: service.url })).toEqual({
      path: cachedBinaryPath(env),
      source: 'built',
    });
  });

  it('leaves no half-installed cache entry when the download and the Go build both fail', async () => {
    const dir = await scratchDir();
    const bin = path.join(dir, 'gobin');
    await fakeExecutable(path.join(bin, 'go'), 'no module cache; exit 1');
    await writeFile(path.join(bin, 'go'), '#!/bin/sh\necho "go: no module cache" >&2\nexit 1\n');
    const env = { PATH: bin, SWITCHYARD_CACHE_DIR: path.join(dir, 'cache') };
    await expect(findTemporalBinary({ env, downloadUrl: 'http://127.0.0.1:9' })).rejects.toThrow(
      /go install .* failed \(exit 1\):\ngo: no module cache/,
    );
    expect(await findTemporalBinary({ env, build: false })).toBeUndefined();
  });

  it('takes the CLI out of a tar archive by name, with or without a ./ prefix and in a subfolder', async () => {
    const dir = await scratchDir();
    await fakeExecutable(path.join(dir, 'a', 'sub', 'temporal'), 'x');
    await writeFile(path.join(dir, 'a', 'LICENSE'), 'MIT');
    const tar = execFileSync('tar', ['-cf', '-', '-C', path.join(dir, 'a'), './LICENSE', 'sub/temporal']);
    expect(fileFromTar(tar, 'sub/temporal')?.toString()).toContain('echo x');
    expect(fileFromTar(tar, 'LICENSE')?.toString()).toBe('MIT');
    expect(fileFromTar(tar, 'temporal')).toBeUndefined();
  });
});
