import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Comments and docs cite only files inside this repository: the next maintainer has no design notes, no source
// documents and no issue tracker of this project, only docs/ARCHITECTURE.md and docs/SEMANTICS.md. This test fails
// on a reference to any of those outside documents, naming every file and line that has one.

const root = fileURLToPath(new URL('../..', import.meta.url));
const self = fileURLToPath(import.meta.url);

/** Folders searched whole, and single files at the top of the repository. */
const folders = ['src', 'docs', 'test', 'bench', 'examples', 'scripts'];
const topLevelFiles = ['README.md', 'SECURITY.md', 'RELIABILITY.md', 'BENCHMARKS.md'];
const textExtensions = new Set([
  '.ts',
  '.mts',
  '.cts',
  '.js',
  '.mjs',
  '.cjs',
  '.md',
  '.json',
  '.sh',
  '.yml',
  '.yaml',
  '.html',
  '.css',
]);
const skippedFolders = new Set(['node_modules', 'dist', '.git']);

/** The outside design notes, the two source documents, the project's issues, the shared folder beside the checkout. */
const OUTSIDE_REFERENCE = /DESIGN\.md|seed 00[01]|issue #?[0-9]+|\.\.\/shared|seeds\//i;

function filesUnder(folder: string): string[] {
  let entries;
  try {
    entries = readdirSync(folder, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) return skippedFolders.has(entry.name) ? [] : filesUnder(full);
    return entry.isFile() && textExtensions.has(path.extname(entry.name)) ? [full] : [];
  });
}

function outsideReferences(): string[] {
  const files = [
    ...folders.flatMap((folder) => filesUnder(path.join(root, folder))),
    ...topLevelFiles.map((file) => path.join(root, file)),
  ];
  const hits: string[] = [];
  for (const file of files) {
    if (file === self) continue;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    text.split('\n').forEach((line, index) => {
      const match = OUTSIDE_REFERENCE.exec(line);
      if (match !== null)
        hits.push(`${path.relative(root, file)}:${index + 1}: ${match[0]} — ${line.trim().slice(0, 120)}`);
    });
  }
  return hits;
}

describe('references to documents outside the repository', () => {
  it('recognises each kind of outside reference', () => {
    for (const sample of [
      'see DESIGN.md §3',
      'seed 000 `ToolDeadline`',
      'Seed 001 §4.6.2',
      'issue 10, item 4',
      'Issue #16',
      '../shared/seeds',
      'seeds/000',
    ]) {
      expect(OUTSIDE_REFERENCE.test(sample), sample).toBe(true);
    }
    for (const sample of [
      'docs/SEMANTICS.md, Result budget',
      'FAULT_SEED=9003',
      'seed 9200: 0 violations',
      'wire contract v1.1',
    ]) {
      expect(OUTSIDE_REFERENCE.test(sample), sample).toBe(false);
    }
  });

  it('finds the searched folders non-empty, so an empty search cannot pass', () => {
    expect(filesUnder(path.join(root, 'src')).length).toBeGreaterThan(50);
    expect(filesUnder(path.join(root, 'docs')).map((file) => path.basename(file))).toEqual(
      expect.arrayContaining(['ARCHITECTURE.md', 'SEMANTICS.md']),
    );
  });

  it('finds none in src/, docs/, tests, benchmarks, examples, scripts and the top-level documents', () => {
    expect(outsideReferences()).toEqual([]);
  });
});
