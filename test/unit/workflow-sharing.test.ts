import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { sharedModulesModule } from '../../src/worker/workflow-bundle-options.js';

const workflows = path.dirname(sharedModulesModule);

/** Relative modules a file imports or re-exports for their values (type-only imports load nothing). */
function valueImports(text: string): string[] {
  return [...text.matchAll(/^(?:import|export)\s+(?!type\b)[^;]*?from\s+'(\.{1,2}\/[^']+)\.js'/gms)].map(
    (match) => match[1] as string,
  );
}

/** Every source file the workflow sandbox loads from this repository, from the shared-modules list down. */
async function workflowGraph(): Promise<Map<string, string>> {
  const graph = new Map<string, string>();
  const visit = async (file: string): Promise<void> => {
    if (graph.has(file)) return;
    const text = await readFile(file, 'utf8');
    graph.set(file, text);
    for (const imported of valueImports(text)) await visit(path.resolve(path.dirname(file), `${imported}.ts`));
  };
  await visit(sharedModulesModule);
  return graph;
}

/** Paths (`module.export.key...`) under `value` that reach a zod schema (an object that owns `_zod`). */
function schemaPaths(value: unknown, at: string, seen = new Set<unknown>(), depth = 0): string[] {
  if (value === null || typeof value !== 'object' || seen.has(value) || depth > 8) return [];
  seen.add(value);
  if (Object.hasOwn(value, '_zod')) return [at];
  return Reflect.ownKeys(value).flatMap((key) => {
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    // The SDK reads exports through their getters too; read them the same way.
    const child = descriptor?.get === undefined ? descriptor?.value : (value as Record<PropertyKey, unknown>)[key];
    return schemaPaths(child, `${at}.${String(key)}`, seen, depth + 1);
  });
}

/**
 * The workflow modules are evaluated once per worker and shared by every workflow (src/workflows/shared-modules.ts
 * says what that asks of them). These checks keep a module from breaking it; a broken one shows at run time only as
 * one session's state leaking into another, or as a frozen schema throwing on its first parse.
 */
describe('workflow modules shared between sessions', () => {
  it('loads every workflow module and every src/contracts module the workflows use', async () => {
    const files = [...(await workflowGraph()).keys()].map((file) => path.relative(path.join(workflows, '..'), file));
    expect(files).toContain('workflows/tool-session.ts');
    expect(files).toContain('workflows/local-activity-barrier.ts');
    expect(files).toContain('contracts/tool-call.ts');
    expect(files).not.toContain('contracts/schemas.ts');
  });

  it('keeps no module-level variable in any module the workflows load', async () => {
    for (const [file, text] of await workflowGraph()) {
      expect(text, `${path.basename(file)} declares a module-level let or var`).not.toMatch(
        /^(export\s+)?(let|var)\s/m,
      );
    }
  });

  it('exports no zod schema from any module the workflows load (the SDK freezes what they export)', async () => {
    const found: string[] = [];
    for (const file of (await workflowGraph()).keys()) {
      const exports: unknown = await import(pathToFileURL(file).href);
      found.push(...schemaPaths(exports, path.basename(file)));
    }
    expect(found).toEqual([]);
    // The check finds a schema where one is exported.
    const { sessionOptionsSchema } = await import('../../src/contracts/schemas.js');
    expect(schemaPaths({ sessionOptionsSchema }, 'schemas.ts')).toEqual(['schemas.ts.sessionOptionsSchema']);
  });

  it('reaches the schemas through functions, which parse after the module objects are frozen', async () => {
    const { sessionSchemas } = await import('../../src/contracts/session.js');
    const { toolCallSchemas } = await import('../../src/contracts/tool-call.js');
    const frozen = Object.freeze({ sessionSchemas, toolCallSchemas });
    expect(Object.isFrozen(frozen.sessionSchemas().options)).toBe(false);
    expect(frozen.toolCallSchemas().executeTurn.safeParse({ turnId: 't', calls: [] }).success).toBe(true);
    expect(frozen.sessionSchemas().options.safeParse({ maxConcurrency: 0 }).success).toBe(false);
  });
});
