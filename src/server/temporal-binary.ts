import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdir, rename, rm, stat, mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** The Temporal CLI version Switchyard builds: the newest tag whose go.mod lets `go install` accept it. */
export const TEMPORAL_CLI_VERSION = '1.5.1';
const GO_PACKAGE = `github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`;

export type TemporalBinarySource = 'env' | 'path' | 'cache' | 'built';

export interface TemporalBinary {
  path: string;
  source: TemporalBinarySource;
}

export interface FindTemporalBinaryOptions {
  env?: NodeJS.ProcessEnv;
  /** Called with one line of progress (the build takes minutes). */
  onProgress?: (message: string) => void;
  /** Build with Go when nothing else is found. Default true. */
  build?: boolean;
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

async function findOnPath(command: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, command);
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** `~/.cache/switchyard` (or `$XDG_CACHE_HOME/switchyard`, or `SWITCHYARD_CACHE_DIR`): outside any checkout. */
export function switchyardCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SWITCHYARD_CACHE_DIR) return path.resolve(env.SWITCHYARD_CACHE_DIR);
  const base = env.XDG_CACHE_HOME ? path.resolve(env.XDG_CACHE_HOME) : path.join(os.homedir(), '.cache');
  return path.join(base, 'switchyard');
}

export function cachedBinaryPath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(switchyardCacheDir(env), `temporal-cli-${TEMPORAL_CLI_VERSION}`, 'temporal');
}

/**
 * Finds the `temporal` CLI in DESIGN.md §6's order: `TEMPORAL_CLI_PATH`; `temporal` on `PATH`; the user-level
 * cache; a one-time `go install` into that cache. Returns undefined when none applies (callers then fall back to
 * the SDK's download).
 */
export async function findTemporalBinary(options: FindTemporalBinaryOptions = {}): Promise<TemporalBinary | undefined> {
  const env = options.env ?? process.env;
  if (env.TEMPORAL_CLI_PATH) {
    const explicit = path.resolve(env.TEMPORAL_CLI_PATH);
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
  const go = await findOnPath('go', env) ?? ((await isExecutable('/usr/local/go/bin/go')) ? '/usr/local/go/bin/go' : undefined);
  if (go === undefined) return undefined;
  await buildWithGo({ go, target: cached, env, onProgress: options.onProgress ?? (() => {}) });
  return { path: cached, source: 'built' };
}

/** Builds the CLI into a temporary folder beside the cache entry and renames it into place, under a lock. */
async function buildWithGo(options: { go: string; target: string; env: NodeJS.ProcessEnv; onProgress: (message: string) => void }): Promise<void> {
  const { go, target, env, onProgress } = options;
  const dir = path.dirname(target);
  await mkdir(path.dirname(dir), { recursive: true });
  const lock = `${dir}.lock`;
  const release = await acquireLock(lock, onProgress);
  try {
    if (await isExecutable(target)) return; // another process built it while we waited
    const staging = await mkdtemp(`${dir}.build-`);
    onProgress(`Building the Temporal CLI v${TEMPORAL_CLI_VERSION} with Go into ${dir} (one time; this takes a few minutes)…`);
    const started = Date.now();
    const ticker = setInterval(() => onProgress(`…still building the Temporal CLI (${Math.round((Date.now() - started) / 1000)} s)`), 30_000);
    try {
      await run(go, ['install', GO_PACKAGE], { ...env, GOBIN: staging, GOFLAGS: env.GOFLAGS ?? '-trimpath' });
    } finally {
      clearInterval(ticker);
    }
    await rm(dir, { recursive: true, force: true });
    await rename(staging, dir);
    onProgress(`Built the Temporal CLI in ${Math.round((Date.now() - started) / 1000)} s: ${target}`);
  } finally {
    await release();
  }
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

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'inherit', 'pipe'] });
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
