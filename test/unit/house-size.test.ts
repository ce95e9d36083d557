import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  FILE_SIZE_ALLOWANCES,
  MAX_FILE_LINES,
  MAX_FUNCTION_LINES,
  NAMED_DEFINITION_LIMITS,
  measureFolders,
  measureSource,
  missingNamedDefinitions,
  sizeBreaches,
} from '../../scripts/source-sizes.js';

// The house keeps its shape as it grows: every source file of src/ and scripts/ at most 700 lines, every function
// under 150, and the definitions that once grew past that (`startConsole`, `Scheduler`, `ApprovalBroker`) under 200
// wherever they live. A big concept becomes a folder of files, one per part (docs/ARCHITECTURE.md, Rooms).

const root = fileURLToPath(new URL('../..', import.meta.url));

/** A made-up source: `lines` lines in all, holding one function of `functionLines` lines. */
function madeUpSource(options: { lines: number; functionLines: number; name?: string }): string {
  const body = Array.from({ length: options.functionLines - 2 }, (_, at) => `  const value${at} = ${at};`);
  const fn = [`export function ${options.name ?? 'madeUp'}(): void {`, ...body, '}'];
  const filler = Array.from(
    { length: Math.max(0, options.lines - fn.length) },
    (_, at) => `export const filler${at} = ${at};`,
  );
  return [...fn, ...filler].join('\n') + '\n';
}

describe('the size checker', () => {
  it('measures a function from its signature to its closing brace, and a file by its lines', () => {
    const measure = measureSource('src/made-up.ts', madeUpSource({ lines: 20, functionLines: 12 }));
    expect(measure.lines).toBe(20);
    expect(measure.functions).toEqual([{ name: 'madeUp', line: 1, lines: 12 }]);
  });

  it('names a file over the line limit', () => {
    const measure = measureSource('src/made-up.ts', madeUpSource({ lines: MAX_FILE_LINES + 1, functionLines: 3 }));
    expect(sizeBreaches([measure])).toEqual([
      `src/made-up.ts: ${MAX_FILE_LINES + 1} lines (at most ${MAX_FILE_LINES})`,
    ]);
    const atLimit = measureSource('src/made-up.ts', madeUpSource({ lines: MAX_FILE_LINES, functionLines: 3 }));
    expect(sizeBreaches([atLimit])).toEqual([]);
  });

  it('names a function, a method, an arrow function and a function expression at the function limit', () => {
    const long = Array.from({ length: MAX_FUNCTION_LINES - 2 }, (_, at) => `    step(${at});`).join('\n');
    const source = [
      `function declared() {\n${long}\n}`,
      `class Holder {\n  method() {\n${long}\n  }\n}`,
      `const arrow = () => {\n${long}\n};`,
      `const expression = function () {\n${long}\n};`,
    ].join('\n');
    const breaches = sizeBreaches([measureSource('src/made-up.ts', source)]);
    expect(breaches.map((breach) => /function (\S+):/.exec(breach)?.[1])).toEqual([
      'declared',
      'Holder.method',
      'arrow',
      'expression',
    ]);
    const shorter = source.replaceAll('    step(0);\n', '');
    expect(sizeBreaches([measureSource('src/made-up.ts', shorter)])).toEqual([]);
  });

  it('holds a named definition under its own limit, whatever its kind', () => {
    const limit = NAMED_DEFINITION_LIMITS.Scheduler ?? 0;
    const methods = Array.from({ length: limit }, (_, at) => `  step${at}(): void {}`).join('\n');
    const breaches = sizeBreaches([measureSource('src/made-up.ts', `export class Scheduler {\n${methods}\n}\n`)]);
    expect(breaches).toEqual([`src/made-up.ts:1 Scheduler: ${limit + 2} lines (under ${limit})`]);
    expect(missingNamedDefinitions([measureSource('src/made-up.ts', 'export class Scheduler {}\n')])).toEqual([
      'startConsole',
      'ApprovalBroker',
    ]);
  });
});

describe('the house', () => {
  const measures = measureFolders(root, ['src', 'scripts']);

  it('keeps every file at most 700 lines, every function under 150, and the big definitions under 200', () => {
    expect(sizeBreaches(measures)).toEqual([]);
  });

  it('still defines the definitions it holds by name (a rename updates NAMED_DEFINITION_LIMITS)', () => {
    expect(missingNamedDefinitions(measures)).toEqual([]);
  });

  it('allows a longer file only for a generated table, with its reason', () => {
    for (const [file, reason] of Object.entries(FILE_SIZE_ALLOWANCES)) {
      expect(reason, file).toMatch(/generated/i);
      expect(
        measures.some((measure) => measure.file === file),
        file,
      ).toBe(true);
    }
  });
});
