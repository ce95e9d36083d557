import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { texts } from '../../src/contracts/texts.js';

// docs/SEMANTICS.md quotes every model-facing text exactly as src/contracts/texts.ts has it; a changed text must
// change the document in the same commit.

const semantics = readFileSync(new URL('../../docs/SEMANTICS.md', import.meta.url), 'utf8');
const source = readFileSync(new URL('../../src/contracts/texts.ts', import.meta.url), 'utf8');

/** The template literal a text function returns, as written in the source (`` `Tool not found: ${name}` ``). */
function templateOf(key: string): string {
  const match = new RegExp(`^\\s*${key}:\\s*\\([^)]*\\)\\s*=>\\s*\\n?\\s*(\`.*\`),?$`, 'm').exec(source);
  if (match?.[1] === undefined) throw new Error(`no template found for ${key} in texts.ts`);
  return match[1];
}

describe('docs/SEMANTICS.md, Model-facing texts', () => {
  for (const [key, value] of Object.entries(texts)) {
    it(`quotes ${key} exactly`, () => {
      const quoted = typeof value === 'string' ? value : templateOf(key);
      expect(semantics).toContain(quoted);
      expect(semantics).toContain(`| \`${key}\` |`);
    });
  }
});
