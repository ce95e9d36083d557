#!/usr/bin/env node
// The `switchyard` command. Installed from the package (no src/ there), it runs the built JavaScript in dist/ with
// plain node. In a clone of the repository, it runs the TypeScript sources in src/cli/main.ts through tsx (a dev
// dependency), so an edit needs no rebuild; SWITCHYARD_USE_DIST=1 runs dist/ there too.
import { existsSync } from 'node:fs';

const sources = new URL('../src/cli/main.ts', import.meta.url);
const built = new URL('../dist/cli/main.js', import.meta.url);

async function loadCli() {
  if (existsSync(sources) && process.env.SWITCHYARD_USE_DIST !== '1') {
    const tsx = await import('tsx/esm/api').catch(() => undefined);
    if (tsx !== undefined) {
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
