#!/usr/bin/env node
// The `switchyard` command. It runs the built JavaScript in dist/ with plain node: installed from the package (no
// src/ there), and in a clone of the repository whose dist/ is at least as new as every file in src/. In a clone
// where src/ changed since the build, it runs the TypeScript sources in src/cli/main.ts through tsx (a dev
// dependency), so an edit needs no rebuild, and says so on a terminal (tsx's first compile takes a while).
// SWITCHYARD_USE_DIST=1 always runs dist/; SWITCHYARD_USE_SOURCES=1 always runs src/.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const sources = new URL('../src/cli/main.ts', import.meta.url);
const built = new URL('../dist/cli/main.js', import.meta.url);

/** The newest modification time of a file below `dir` (0 when there is none). */
function newestBelow(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestBelow(file));
    else if (entry.isFile()) newest = Math.max(newest, statSync(file).mtimeMs);
  }
  return newest;
}

/** Whether to run src/ through tsx: a clone whose sources changed since dist/ was built (or has no dist/). */
function runSources() {
  if (!existsSync(sources) || process.env.SWITCHYARD_USE_DIST === '1') return false;
  if (process.env.SWITCHYARD_USE_SOURCES === '1' || !existsSync(built)) return true;
  const srcDir = fileURLToPath(new URL('../src', import.meta.url));
  return newestBelow(srcDir) > statSync(built).mtimeMs;
}

async function loadCli() {
  if (runSources()) {
    const tsx = await import('tsx/esm/api').catch(() => undefined);
    if (tsx !== undefined) {
      if (process.stderr.isTTY)
        process.stderr.write(
          'switchyard: src/ is newer than dist/: running the sources through tsx (the first run compiles them, up to a minute; `npm run build` makes later starts fast)\n',
        );
      tsx.register();
      return import(sources.href);
    }
  }
  if (!existsSync(built)) {
    process.stderr.write('switchyard: dist/ is missing; run `npm run build` (or `npm install`, which builds) first.\n');
    process.exit(1);
  }
  return import(built.href);
}

const { main } = await loadCli();
const code = await main(process.argv.slice(2));
// The command is done: exit once what it wrote has been handed to the OS. Left alone, a timer of a library (a gRPC
// retry of a last query, the Temporal Runtime's native handles and signal hooks) could keep the process alive, or
// throw after the command has printed its result.
await Promise.all(
  [process.stdout, process.stderr].map((stream) => new Promise((resolve) => stream.write('', () => resolve()))),
);
process.exit(code);
