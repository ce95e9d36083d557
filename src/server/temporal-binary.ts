import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, chmod, mkdir, rename, rm, stat, mkdtemp, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { environmentSettings } from '../config/settings.js';
import type { Environment } from '../config/settings.js';

/** The Temporal CLI version Switchyard builds: the newest tag whose go.mod lets `go install` accept it. */
export const TEMPORAL_CLI_VERSION = '1.5.1';
const GO_PACKAGE = `github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`;

/** Where the Temporal SDK downloads its dev server from (`TestWorkflowEnvironment.createLocal`'s `cached-download`). */
export const TEMPORAL_DOWNLOAD_URL = 'https://temporal.download';

export type TemporalBinarySource = 'env' | 'path' | 'cache' | 'downloaded' | 'built';

export interface TemporalBinary {
  path: string;
  source: TemporalBinarySource;
}

export interface FindTemporalBinaryOptions {
  /** The environment to look in (`TEMPORAL_CLI_PATH`, `PATH`, the cache folder). Default: the process's. */
  env?: Environment;
  /** Called with one line of progress (the build takes minutes). */
  onProgress?: (message: string) => void;
  /** Download, else build with Go, when nothing else is found. Default true; false only looks. */
  build?: boolean;
  /** Try the SDK's download before a Go build. Default true. */
  download?: boolean;
  /** Base URL of the download service. Default `TEMPORAL_DOWNLOAD_URL`. */
  downloadUrl?: string;
  /**
   * How long the download may wait for an answer, or between two chunks of the archive, before Switchyard gives up
   * on it and builds with Go instead. Default 8,000 ms.
   */
  downloadTimeoutMs?: number;
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

/** The first executable file named `command` in `env.PATH`'s directories. */
export async function findOnPath(command: string, env: Environment): Promise<string | undefined> {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, command);
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** `~/.cache/switchyard` (or `$XDG_CACHE_HOME/switchyard`, or `SWITCHYARD_CACHE_DIR`): outside any checkout. */
export function switchyardCacheDir(env?: Environment): string {
  return environmentSettings(env).devServer.cacheDir;
}

export function cachedBinaryPath(env?: Environment): string {
  return path.join(switchyardCacheDir(env), `temporal-cli-${TEMPORAL_CLI_VERSION}`, 'temporal');
}

/**
 * Finds the `temporal` CLI in this order: `TEMPORAL_CLI_PATH`; `temporal` on `PATH`; the user-level
 * cache; else, once, into that cache: the SDK's download (seconds, with a short timeout), then a `go install`
 * (minutes). Returns undefined when none applies.
 */
export async function findTemporalBinary(options: FindTemporalBinaryOptions = {}): Promise<TemporalBinary | undefined> {
  // Without `env`, the process's, through the settings function every entry point uses (src/config/settings.ts).
  const settings = environmentSettings(options.env);
  const env = settings.environment;
  const configured = settings.devServer.temporalCliPath;
  if (configured !== undefined) {
    const explicit = path.resolve(configured);
    if (!(await isExecutable(explicit))) {
      throw new Error(`TEMPORAL_CLI_PATH is set to ${explicit}, which is not an executable file`);
    }
    return { path: explicit, source: 'env' };
  }
  const onPath = await findOnPath('temporal', env);
  if (onPath !== undefined) return { path: onPath, source: 'path' };
  const cached = cachedBinaryPath(env);
  if (await isExecutable(cached)) return { path: cached, source: 'cache' };
  if (options.build === false) return undefined;
  const onProgress = options.onProgress ?? (() => {});
  if (options.download !== false) {
    const downloaded = await installIntoCache({
      target: cached,
      onProgress,
      install: (staging) =>
        downloadCli({
          staging,
          env,
          baseUrl: options.downloadUrl ?? TEMPORAL_DOWNLOAD_URL,
          timeoutMs: options.downloadTimeoutMs ?? 8_000,
          onProgress,
        }),
    }).then(
      () => true,
      (error: unknown) => {
        onProgress(
          `Could not download the Temporal CLI (${error instanceof Error ? error.message : String(error)}); trying a Go build…`,
        );
        return false;
      },
    );
    if (downloaded) return { path: cached, source: 'downloaded' };
  }
  const go =
    (await findOnPath('go', env)) ??
    ((await isExecutable('/usr/local/go/bin/go')) ? '/usr/local/go/bin/go' : undefined);
  if (go === undefined) return undefined;
  await installIntoCache({
    target: cached,
    onProgress,
    install: async (staging) => {
      onProgress(
        `Building the Temporal CLI v${TEMPORAL_CLI_VERSION} with Go into ${path.dirname(cached)} (one time; this takes a few minutes)…`,
      );
      const started = Date.now();
      const ticker = setInterval(
        () => onProgress(`…still building the Temporal CLI (${Math.round((Date.now() - started) / 1000)} s)`),
        30_000,
      );
      try {
        await run(go, ['install', GO_PACKAGE], {
          env: { ...env, GOBIN: staging, GOFLAGS: env.GOFLAGS ?? '-trimpath' },
          stdout: 'inherit',
        });
      } finally {
        clearInterval(ticker);
      }
      onProgress(`Built the Temporal CLI in ${Math.round((Date.now() - started) / 1000)} s: ${cached}`);
    },
  });
  return { path: cached, source: 'built' };
}

/**
 * Puts `temporal` into the cache entry of `target`: `install` writes it into a temporary folder beside the entry,
 * which is renamed into place, under a lock (several processes may start at once).
 */
async function installIntoCache(options: {
  target: string;
  onProgress: (message: string) => void;
  install: (staging: string) => Promise<void>;
}): Promise<void> {
  const { target, onProgress } = options;
  const dir = path.dirname(target);
  await mkdir(path.dirname(dir), { recursive: true });
  const release = await acquireLock(`${dir}.lock`, onProgress);
  try {
    if (await isExecutable(target)) return; // another process installed it while we waited
    const staging = await mkdtemp(`${dir}.build-`);
    try {
      await options.install(staging);
      if (!(await isExecutable(path.join(staging, path.basename(target)))))
        throw new Error(`no ${path.basename(target)} executable was produced`);
      await rm(dir, { recursive: true, force: true });
      await rename(staging, dir);
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  } finally {
    await release();
  }
}

/** Where the download service says the archive is, and which file in it is the CLI. */
interface DownloadInfo {
  archive_url: string;
  file_to_extract: string;
}

/**
 * What the Temporal SDK's `cached-download` does (in its Rust core, with no timeout): ask the download service for the
 * archive of this version and platform, fetch it and take the CLI out. Here with a timeout on every wait, so a
 * machine without internet falls through to the Go build within seconds.
 */
async function downloadCli(options: {
  staging: string;
  /** The environment the downloaded binary's `--version` check runs with. */
  env: Environment;
  baseUrl: string;
  timeoutMs: number;
  onProgress: (message: string) => void;
}): Promise<void> {
  const { staging, timeoutMs, onProgress } = options;
  const platform = ({ linux: 'linux', darwin: 'darwin' } as Partial<Record<NodeJS.Platform, string>>)[process.platform];
  const arch = ({ x64: 'amd64', arm64: 'arm64' } as Partial<Record<string, string>>)[process.arch];
  if (platform === undefined || arch === undefined)
    throw new Error(`no download for ${process.platform}/${process.arch}`);
  const query = new URLSearchParams({ arch, platform, format: 'tar.gz' });
  const infoUrl = `${options.baseUrl.replace(/\/+$/, '')}/cli/v${TEMPORAL_CLI_VERSION}?${query}`;
  onProgress(`Downloading the Temporal CLI v${TEMPORAL_CLI_VERSION} (${infoUrl})…`);
  const started = Date.now();
  const infoResponse = await fetch(infoUrl, { signal: AbortSignal.timeout(timeoutMs) }).catch((error: unknown) => {
    throw new Error(`${infoUrl}: ${describeFetchError(error)}`);
  });
  if (!infoResponse.ok) throw new Error(`${infoUrl} answered ${infoResponse.status}`);
  const info = (await infoResponse.json()) as Partial<DownloadInfo>;
  if (
    typeof info.archive_url !== 'string' ||
    !/^https?:\/\//.test(info.archive_url) ||
    typeof info.file_to_extract !== 'string'
  ) {
    throw new Error(`${infoUrl} answered without archive_url and file_to_extract`);
  }
  const archive = await fetchWithIdleTimeout(info.archive_url, timeoutMs);
  const tar = await promisify(gunzip)(archive);
  const binary = fileFromTar(tar, info.file_to_extract);
  if (binary === undefined) throw new Error(`${info.archive_url} has no ${info.file_to_extract}`);
  const file = path.join(staging, 'temporal');
  await writeFile(file, binary);
  await chmod(file, 0o755);
  await run(file, ['--version'], { env: options.env, stdout: 'ignore', timeoutMs: 30_000 });
  onProgress(
    `Downloaded the Temporal CLI (${Math.round(archive.length / 1024 / 1024)} MiB) in ${Math.round((Date.now() - started) / 1000)} s`,
  );
}

function describeFetchError(error: unknown): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
    return 'no answer in time';
  const cause = error instanceof Error ? (error.cause as NodeJS.ErrnoException | undefined) : undefined;
  return cause?.code ?? (error instanceof Error ? error.message : String(error));
}

/** The whole body, giving up when the server is silent for `idleMs` (the archive is tens of MiB: no total limit). */
async function fetchWithIdleTimeout(url: string, idleMs: number): Promise<Buffer> {
  const controller = new AbortController();
  let timer = setTimeout(() => controller.abort(), idleMs);
  try {
    const response = await fetch(url, { signal: controller.signal }).catch((error: unknown) => {
      throw new Error(`${url}: ${controller.signal.aborted ? 'no answer in time' : describeFetchError(error)}`);
    });
    if (!response.ok || response.body === null) throw new Error(`${url} answered ${response.status}`);
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of response.body) {
        clearTimeout(timer);
        timer = setTimeout(() => controller.abort(), idleMs);
        chunks.push(Buffer.from(chunk));
      }
    } catch (error) {
      throw new Error(`${url}: ${controller.signal.aborted ? `no data for ${idleMs} ms` : describeFetchError(error)}`);
    }
    return Buffer.concat(chunks);
  } finally {
    clearTimeout(timer);
  }
}

/** One regular file's content from a tar archive (ustar, GNU long names or pax `path`), by its name. */
export function fileFromTar(tar: Buffer, name: string): Buffer | undefined {
  const wanted = name.replace(/^\.\//, '');
  const text = (bytes: Buffer): string => bytes.toString('utf8').replace(/\0[\s\S]*$/, '');
  let nextName: string | undefined;
  for (let offset = 0; offset + 512 <= tar.length;) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const size = Number.parseInt(text(header.subarray(124, 136)).trim() || '0', 8);
    const type = text(header.subarray(156, 157));
    const prefix = text(header.subarray(257, 263)) === 'ustar' ? text(header.subarray(345, 500)) : '';
    const entryName =
      nextName ?? (prefix === '' ? text(header.subarray(0, 100)) : `${prefix}/${text(header.subarray(0, 100))}`);
    const body = tar.subarray(offset + 512, offset + 512 + size);
    nextName = undefined;
    if (type === 'L') nextName = text(body);
    else if (type === 'x') nextName = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(body.toString('utf8'))?.[1];
    else if ((type === '0' || type === '') && entryName.replace(/^\.\//, '') === wanted) return Buffer.from(body);
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return undefined;
}

async function acquireLock(lock: string, onProgress: (message: string) => void): Promise<() => Promise<void>> {
  const staleMs = 30 * 60_000;
  let told = false;
  for (;;) {
    try {
      await mkdir(lock);
      return async () => {
        await rm(lock, { recursive: true, force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const info = await stat(lock).catch(() => undefined);
      if (info !== undefined && Date.now() - info.mtimeMs > staleMs) {
        await rm(lock, { recursive: true, force: true });
        continue;
      }
      if (!told) onProgress(`Waiting for another process that is building the Temporal CLI (${lock})…`);
      told = true;
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
  }
}

function run(
  command: string,
  args: string[],
  options: { env: Environment; stdout: 'inherit' | 'ignore'; timeoutMs?: number },
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: options.env,
      stdio: ['ignore', options.stdout, 'pipe'],
      ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4_000);
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit ${code}`}):\n${stderr}`));
    });
  });
}
