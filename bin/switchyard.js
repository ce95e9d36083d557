#!/usr/bin/env node
// The `switchyard` command. Installed from the package (no src/ there), it runs the built JavaScript in dist/ with
// plain node. In a clone of the repository, it runs the TypeScript sources in src/client/cli.ts through tsx (a dev
// dependency), so an edit needs no rebuild; SWITCHYARD_USE_DIST=1 runs dist/ there too.
import { existsSync } from 'node:fs';

const sources = new URL('../src/client/cli.ts', import.meta.url);
const built = new URL('../dist/client/cli.js', import.meta.url);

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
// A failure can come after the Temporal Runtime is installed (`dev` whose server does not start), whose native
// handles and signal hooks would keep the process alive: a failed command exits now. Success ends on its own.
if (code !== 0) process.exit(code);
