// The size limits of the house, measured with the TypeScript parser: a source file at most MAX_FILE_LINES lines,
// a function (declaration, method, accessor, constructor, arrow function, function expression) under
// MAX_FUNCTION_LINES, and each of the big named definitions (NAMED_DEFINITION_LIMITS) under its own limit wherever
// it lives. test/unit/house-size.test.ts applies them to src/ and scripts/; docs/ARCHITECTURE.md (Rooms) says why.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export const MAX_FILE_LINES = 700;
/** A function is over the limit at this many lines (its signature through its closing brace, comments above aside). */
export const MAX_FUNCTION_LINES = 150;

/** Definitions that grew past the function limit once, held under their own limit by name, wherever they move. */
export const NAMED_DEFINITION_LIMITS: Readonly<Record<string, number>> = {
  startConsole: 200,
  Scheduler: 200,
  ApprovalBroker: 200,
};

/**
 * Files allowed past MAX_FILE_LINES, each with its reason. Only a generated table may stand here; hand-written code
 * is split by concept instead.
 */
export const FILE_SIZE_ALLOWANCES: Readonly<Record<string, string>> = {};

export interface MeasuredFunction {
  /** The function's name as the source spells it, or `<anonymous>`; a method is `Class.method`. */
  readonly name: string;
  readonly line: number;
  readonly lines: number;
}

export interface MeasuredDefinition {
  readonly name: string;
  readonly line: number;
  readonly lines: number;
}

export interface SourceMeasure {
  readonly file: string;
  readonly lines: number;
  readonly functions: readonly MeasuredFunction[];
  /** Classes, functions and variables holding a function, by their declared name. */
  readonly definitions: readonly MeasuredDefinition[];
}

/** Lines a file holds: a final newline does not start another line. */
export function countLines(text: string): number {
  if (text.length === 0) return 0;
  const newlines = text.split('\n').length - 1;
  return text.endsWith('\n') ? newlines : newlines + 1;
}

function spanLines(node: ts.Node, source: ts.SourceFile): { line: number; lines: number } {
  const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
  const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
  return { line: start + 1, lines: end - start + 1 };
}

function propertyNameText(name: ts.PropertyName | ts.BindingName | undefined): string | undefined {
  if (name === undefined) return undefined;
  if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name)) return name.text;
  if (ts.isStringLiteral(name) || ts.isNumericLiteral(name)) return name.text;
  return undefined;
}

function enclosingClassName(node: ts.Node): string | undefined {
  const parent = node.parent;
  if (parent !== undefined && (ts.isClassDeclaration(parent) || ts.isClassExpression(parent))) {
    return parent.name?.text ?? '<class>';
  }
  return undefined;
}

/** The name a function is known by: its own, the variable or property it is assigned to, or `<anonymous>`. */
function functionName(node: ts.FunctionLikeDeclaration): string {
  if (ts.isConstructorDeclaration(node)) return `${enclosingClassName(node) ?? '<class>'}.constructor`;
  const own = propertyNameText(node.name);
  if (own !== undefined) {
    const owner = enclosingClassName(node);
    return owner === undefined ? own : `${owner}.${own}`;
  }
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    const assigned = propertyNameText(parent.name);
    if (assigned !== undefined) return assigned;
  }
  return '<anonymous>';
}

function isMeasuredFunction(node: ts.Node): node is ts.FunctionLikeDeclaration {
  return (
    (ts.isFunctionDeclaration(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isConstructorDeclaration(node) ||
      ts.isGetAccessorDeclaration(node) ||
      ts.isSetAccessorDeclaration(node) ||
      ts.isArrowFunction(node) ||
      ts.isFunctionExpression(node)) &&
    node.body !== undefined
  );
}

/** A named definition: a class or function declaration, or a variable whose initializer is a class or function. */
function definitionOf(node: ts.Node): { name: string; span: ts.Node } | undefined {
  if ((ts.isClassDeclaration(node) || ts.isFunctionDeclaration(node)) && node.name !== undefined) {
    return { name: node.name.text, span: node };
  }
  if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer !== undefined) {
    const value = node.initializer;
    if (ts.isArrowFunction(value) || ts.isFunctionExpression(value) || ts.isClassExpression(value)) {
      return { name: node.name.text, span: node };
    }
  }
  return undefined;
}

/** Measures one source text: its lines, every function in it and every named definition. */
export function measureSource(file: string, text: string): SourceMeasure {
  const kind = file.endsWith('.js') ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const functions: MeasuredFunction[] = [];
  const definitions: MeasuredDefinition[] = [];
  const visit = (node: ts.Node): void => {
    if (isMeasuredFunction(node)) functions.push({ name: functionName(node), ...spanLines(node, source) });
    const definition = definitionOf(node);
    if (definition !== undefined) definitions.push({ name: definition.name, ...spanLines(definition.span, source) });
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { file, lines: countLines(text), functions, definitions };
}

/** What breaks the limits in a set of measured files, one line each, naming file, line and size. */
export function sizeBreaches(measures: readonly SourceMeasure[]): string[] {
  const breaches: string[] = [];
  for (const measure of measures) {
    if (measure.lines > MAX_FILE_LINES && FILE_SIZE_ALLOWANCES[measure.file] === undefined) {
      breaches.push(`${measure.file}: ${measure.lines} lines (at most ${MAX_FILE_LINES})`);
    }
    for (const fn of measure.functions) {
      if (fn.lines >= MAX_FUNCTION_LINES) {
        breaches.push(
          `${measure.file}:${fn.line} function ${fn.name}: ${fn.lines} lines (under ${MAX_FUNCTION_LINES})`,
        );
      }
    }
    for (const definition of measure.definitions) {
      const limit = NAMED_DEFINITION_LIMITS[definition.name];
      if (limit !== undefined && definition.lines >= limit) {
        breaches.push(
          `${measure.file}:${definition.line} ${definition.name}: ${definition.lines} lines (under ${limit})`,
        );
      }
    }
  }
  return breaches;
}

/** The named definitions of NAMED_DEFINITION_LIMITS that no measured file defines (a rename must update the list). */
export function missingNamedDefinitions(measures: readonly SourceMeasure[]): string[] {
  const defined = new Set(measures.flatMap((measure) => measure.definitions.map((definition) => definition.name)));
  return Object.keys(NAMED_DEFINITION_LIMITS).filter((name) => !defined.has(name));
}

/** Every .ts and .js file under a folder, as paths relative to `root`, sorted. */
export function sourceFilesUnder(root: string, folder: string): string[] {
  const walk = (relative: string): string[] =>
    readdirSync(path.join(root, relative), { withFileTypes: true }).flatMap((entry) => {
      const child = path.posix.join(relative, entry.name);
      if (entry.isDirectory()) return walk(child);
      return entry.isFile() && /\.(ts|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [child] : [];
    });
  return walk(folder).sort();
}

/** Measures every source file of the given folders under `root`. */
export function measureFolders(root: string, folders: readonly string[]): SourceMeasure[] {
  return folders
    .flatMap((folder) => sourceFilesUnder(root, folder))
    .map((file) => measureSource(file, readFileSync(path.join(root, file), 'utf8')));
}
