import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { UsageError } from './common.js';

const TYPESCRIPT = new Set(['.ts', '.mts', '.cts', '.tsx']);
let typescriptLoader: Promise<boolean> | undefined;

/**
 * Whether a `.ts` module can be imported: Node 20 cannot by itself, so the TypeScript loader of `tsx` is registered
 * once, from the user's project (or this package's, in a clone). False when `tsx` is not installed.
 */
async function canImportTypeScript(): Promise<boolean> {
  typescriptLoader ??= import('tsx/esm/api').then(
    (tsx: { register: () => unknown }) => {
      tsx.register();
      return true;
    },
    () => false,
  );
  return typescriptLoader;
}

/**
 * Imports a module named on the command line (`--tools`, `--evaluator`). A TypeScript file goes through `tsx`; without
 * it the error says what to do instead of Node's "Unknown file extension". Any failure is a usage error naming the flag.
 */
export async function importCommandLineModule(file: string, flag: string): Promise<Record<string, unknown>> {
  if (TYPESCRIPT.has(path.extname(file)) && !(await canImportTypeScript())) {
    throw new UsageError(
      `${flag} ${file} is TypeScript, which Node runs only through tsx: install it beside your project (npm install --save-dev tsx) or pass the compiled .js file`,
    );
  }
  try {
    return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    throw new UsageError(`${flag} ${file} could not be loaded: ${(error as Error).message}`);
  }
}
