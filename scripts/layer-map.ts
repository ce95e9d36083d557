// The layer map of src/: its folders (and its root file) in layers, lowest first. A file may import from its own
// folder and from folders of lower layers, never from its own layer's other folders or from a higher layer, so no two
// folders import each other. Type-only imports count as imports: a type is part of what a folder knows about.
// test/unit/house-layers.test.ts checks every import in src/ against it; docs/ARCHITECTURE.md's Rooms table lists
// the same layers in the same order (test/unit/house-docs.test.ts).
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export const LAYERS: readonly (readonly string[])[] = [
  ['contracts'],
  ['workflows'],
  ['artifacts'],
  ['tools'],
  ['hooks'],
  ['approvals'],
  ['activities'],
  ['config'],
  ['server', 'client'],
  ['worker', 'console', 'gateway'],
  ['cli', 'index.ts'],
];

/** One import (or re-export, or dynamic import) of a file in src/ from another file in src/. */
export interface SourceImport {
  /** The importing file, relative to the repository (`src/tools/builtin/bash.ts`). */
  readonly file: string;
  /** The imported module as resolved against the importing file (`src/artifacts/session-disk.js`). */
  readonly target: string;
  readonly typeOnly: boolean;
}

/** The room of a path under src/: its first folder, or the root file's name (`index.ts`). */
export function roomOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] !== 'src') throw new Error(`${file} is not under src/`);
  const room = parts[1] ?? '';
  return parts.length > 2 ? room : room.replace(/\.js$/, '.ts');
}

/** `import type …`: erased from the output. (`import { type X }` still loads the module, under verbatimModuleSyntax.) */
function isTypeOnlyImport(node: ts.ImportDeclaration): boolean {
  return node.importClause?.isTypeOnly === true;
}

/** The relative imports of one source text, static, re-exports, dynamic `import()` and `import('…')` types alike. */
export function importsOf(file: string, text: string): SourceImport[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: SourceImport[] = [];
  const add = (specifier: string, typeOnly: boolean): void => {
    if (!specifier.startsWith('.')) return;
    found.push({ file, target: path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier)), typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, isTypeOnlyImport(node));
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node.isTypeOnly);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      add(node.arguments[0].text, false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const literal = node.argument.literal;
      if (ts.isStringLiteral(literal)) add(literal.text, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The imports of every file, read from disk; `files` are relative to `root`. */
export function importsOfFiles(root: string, files: readonly string[]): SourceImport[] {
  return files.flatMap((file) => importsOf(file, readFileSync(path.join(root, file), 'utf8')));
}

function layerIndex(layers: readonly (readonly string[])[]): Map<string, number> {
  const index = new Map<string, number>();
  layers.forEach((layer, at) => layer.forEach((room) => index.set(room, at)));
  return index;
}

/**
 * Imports that break the map, one line each: into a higher layer, into another folder of the same layer, or from
 * or into a room the map does not list.
 */
export function layerBreaches(
  imports: readonly SourceImport[],
  layers: readonly (readonly string[])[] = LAYERS,
): string[] {
  const index = layerIndex(layers);
  const breaches: string[] = [];
  for (const { file, target, typeOnly } of imports) {
    if (!target.startsWith('src/')) continue;
    const from = roomOf(file);
    const to = roomOf(target);
    if (from === to) continue;
    const kind = typeOnly ? 'type import' : 'import';
    const fromLayer = index.get(from);
    const toLayer = index.get(to);
    if (fromLayer === undefined || toLayer === undefined) {
      breaches.push(`${file}: ${kind} of ${target}: ${fromLayer === undefined ? from : to} is not in the layer map`);
    } else if (toLayer > fromLayer) {
      breaches.push(`${file}: ${kind} of ${target}: ${from} (layer ${fromLayer}) imports ${to}, a higher layer`);
    } else if (toLayer === fromLayer) {
      breaches.push(`${file}: ${kind} of ${target}: ${from} imports ${to}, a folder of its own layer`);
    }
  }
  return breaches;
}

/** Circles among rooms in the import graph (Tarjan's strongly connected components of two or more rooms). */
export function roomCycles(imports: readonly SourceImport[]): string[][] {
  const edges = new Map<string, Set<string>>();
  for (const { file, target } of imports) {
    if (!target.startsWith('src/')) continue;
    const from = roomOf(file);
    const to = roomOf(target);
    if (!edges.has(from)) edges.set(from, new Set());
    if (!edges.has(to)) edges.set(to, new Set());
    if (from !== to) edges.get(from)?.add(to);
  }
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (room: string): void => {
    order.set(room, order.size);
    low.set(room, order.get(room) ?? 0);
    stack.push(room);
    onStack.add(room);
    for (const next of edges.get(room) ?? []) {
      if (!order.has(next)) {
        connect(next);
        low.set(room, Math.min(low.get(room) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) {
        low.set(room, Math.min(low.get(room) ?? 0, order.get(next) ?? 0));
      }
    }
    if (low.get(room) !== order.get(room)) return;
    const component: string[] = [];
    for (;;) {
      const member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      component.push(member);
      if (member === room) break;
    }
    if (component.length > 1) cycles.push(component.sort());
  };
  for (const room of [...edges.keys()].sort()) if (!order.has(room)) connect(room);
  return cycles;
}

/** The rooms of src/ on disk: its folders and its root source files. */
export function roomsOnDisk(root: string): string[] {
  return readdirSync(path.join(root, 'src'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() || (entry.isFile() && /\.(ts|js)$/.test(entry.name)))
    .map((entry) => entry.name)
    .sort();
}

/** Base names that more than one file carries (`index.ts` aside: a folder's entry), each with its files. */
export function sharedBaseNames(files: readonly string[]): string[] {
  const byName = new Map<string, string[]>();
  for (const file of files) {
    const name = path.posix.basename(file);
    if (name === 'index.ts') continue;
    byName.set(name, [...(byName.get(name) ?? []), file]);
  }
  return [...byName]
    .filter(([, holders]) => holders.length > 1)
    .map(([name, holders]) => `${name}: ${holders.join(', ')}`);
}
