import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';

/**
 * The browser tests' Chromium comes from the npm package `@sparticuz/chromium` (a dev dependency), which ships the
 * binary inside the package, brotli-compressed: `npm install` is all a machine needs (it runs on Debian 12 with
 * the libraries a base image has: libnss3, libnspr4, libexpat1). It is unpacked once per machine and version into
 * ~/.cache/switchyard/chromium-<version>/ (about 20 s) and reused by every later run, from any clone.
 * A browser is never downloaded.
 */
const execFileAsync = promisify(execFile);
const packageVersion = ((): string => {
  // The package exports no package.json: find it above its entry point.
  let dir = path.dirname(createRequire(import.meta.url).resolve('@sparticuz/chromium'));
  while (
    !existsSync(path.join(dir, 'package.json')) ||
    !readFileSync(path.join(dir, 'package.json'), 'utf8').includes('"name": "@sparticuz/chromium"')
  ) {
    if (path.dirname(dir) === dir) throw new Error('@sparticuz/chromium: package.json not found (run npm install)');
    dir = path.dirname(dir);
  }
  return (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
})();

/** The flags this machine needs: no sandbox as root, no GPU, and no traffic to Google's hosts (no network here). */
export const testBrowserArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

let unpacking: Promise<string> | undefined;

/** The path of the unpacked Chromium binary, unpacking it first if this machine has not yet. */
export function testBrowserPath(log: (message: string) => void = () => {}): Promise<string> {
  unpacking ??= unpack(log);
  return unpacking;
}

async function unpack(log: (message: string) => void): Promise<string> {
  const cache = path.join(os.homedir(), '.cache', 'switchyard');
  const dir = path.join(cache, `chromium-${packageVersion}`);
  const binary = path.join(dir, 'chromium');
  if (existsSync(binary)) return binary;
  const started = Date.now();
  log(`unpacking Chromium ${packageVersion} from @sparticuz/chromium into ${dir} (once per machine)`);
  await mkdir(cache, { recursive: true });
  // The package unpacks into os.tmpdir(): a child process with TMPDIR pointing at a private folder does it (this
  // process's TMPDIR stays as it is), then the folder moves into place whole, so two test processes unpacking at once,
  // or one killed half-way, never leave a half-written binary behind.
  const staging = await mkdtemp(path.join(cache, `.chromium-${packageVersion}-`));
  const script =
    "const { default: chromium } = await import('@sparticuz/chromium'); process.stdout.write(await chromium.executablePath());";
  const { stdout } = await execFileAsync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: path.dirname(fileURLToPath(import.meta.url)),
    env: { ...process.env, TMPDIR: staging },
  });
  if (path.dirname(stdout.trim()) !== staging)
    throw new Error(`@sparticuz/chromium unpacked to ${stdout.trim()}, not into ${staging}`);
  try {
    await rename(staging, dir);
  } catch (error) {
    // Another process got there first: use its copy.
    await rm(staging, { recursive: true, force: true });
    if (!existsSync(binary)) throw error;
  }
  log(`Chromium ${packageVersion} unpacked in ${Date.now() - started} ms`);
  return binary;
}

/** A headless Chromium for a test, with the flags above. */
export async function launchTestBrowser(): Promise<Browser> {
  const executablePath = await testBrowserPath((message) => process.stderr.write(`[test browser] ${message}\n`));
  return chromium.launch({ executablePath, headless: true, args: testBrowserArgs });
}
