import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileArtifactStore } from '../../src/artifacts/file-artifact-store.js';
import type { ArtifactStore } from '../../src/contracts/artifact-store.js';
import { cutUtf8, serializeOutput } from '../../src/activities/serialize-output.js';
import type { ResultBudget } from '../../src/tools/define-tool.js';
import { bashTool } from '../../src/tools/builtin/bash.js';
import { readTool } from '../../src/tools/builtin/read.js';
import { scratchDir } from '../support/scratch.js';

const tool = (budget?: ResultBudget) => ({ name: 'X', ...(budget === undefined ? {} : { resultBudget: budget }) });
const base = { sessionId: 'sess', callId: 'call1' };

describe('serializeOutput', () => {
  it('replaces an empty output with the documented placeholder', async () => {
    expect((await serializeOutput({ ...base, tool: bashTool, content: '' })).modelContent).toBe(
      '(Bash completed with no output)',
    );
    expect((await serializeOutput({ ...base, tool: readTool, content: '  \n' })).modelContent).toBe(
      '(Read completed with no output)',
    );
  });

  it('passes content within min(maxModelBytes, maxInlineBytes) unchanged', async () => {
    const result = await serializeOutput({
      ...base,
      tool: tool({ maxModelBytes: 10, maxInlineBytes: 4, policy: 'truncate', keep: 'head' }),
      content: 'abcd',
    });
    expect(result).toEqual({ modelContent: 'abcd' });
  });

  it('truncates the head with the resultBudget notice and reports the budget', async () => {
    const result = await serializeOutput({
      ...base,
      tool: tool({ maxModelBytes: 10, maxInlineBytes: 4, policy: 'truncate', keep: 'head' }),
      content: 'abcdefghij',
    });
    expect(result.modelContent).toBe('abcd\n[Tool output truncated by resultBudget: 10 bytes, limit 4 bytes]');
    expect(result.budget).toEqual({
      truncated: true,
      originalBytes: 10,
      modelBytes: Buffer.byteLength(result.modelContent),
      policy: 'truncate',
    });
  });

  it('keeps the tail when the budget says so, the notice after it (docs/SEMANTICS.md, Result budget)', async () => {
    const result = await serializeOutput({
      ...base,
      tool: tool({ maxModelBytes: 3, policy: 'truncate', keep: 'tail' }),
      content: 'abcdefghij',
    });
    expect(result.modelContent).toBe('hij\n[Tool output truncated by resultBudget: 10 bytes, limit 3 bytes]');
  });

  it('stores an over-budget output as an artifact and gives the model the persisted-output envelope', async () => {
    const store = new FileArtifactStore(await scratchDir());
    const lines = Array.from({ length: 400 }, (_, index) => `line ${String(index).padStart(4, '0')} ${'x'.repeat(10)}`);
    const content = lines.join('\n');
    const result = await serializeOutput({
      ...base,
      tool: tool({ maxModelBytes: 1_000, policy: 'artifact', keep: 'head' }),
      content,
      store,
    });
    const artifact = result.budget?.artifact ?? '';
    expect(artifact).toMatch(/^switchyard-artifact:\/\/sess\/call1-tool-result-[0-9a-f-]{36}$/);
    const file = store.locate(artifact);
    expect(path.dirname(file)).toBe(path.join(store.root, 'sess'));
    expect(await readFile(file, 'utf8')).toBe(content);
    // 2,000-character preview cut at the last newline in its second half, then "..." because more follows.
    const head = content.slice(0, 2_000);
    const preview = head.slice(0, head.lastIndexOf('\n'));
    expect(result.modelContent).toBe(
      [
        '<persisted-output>',
        `Output too large (${(content.length / 1024).toFixed(1)} KB). Full output saved to: ${artifact}`,
        '',
        'Preview (first 2.0 KB):',
        preview,
        '...',
        '</persisted-output>',
      ].join('\n'),
    );
    expect(result.budget).toMatchObject({ truncated: true, originalBytes: content.length, policy: 'artifact' });
  });

  it('lets a tool format its own envelope', async () => {
    const store = new FileArtifactStore(await scratchDir());
    const result = await serializeOutput({
      ...base,
      tool: {
        name: 'Envelope',
        resultBudget: { maxModelBytes: 5, policy: 'artifact', keep: 'tail' },
        formatPersistedModelContent: (input) => `saved ${input.originalBytes} bytes at ${input.uri}`,
      },
      content: 'hello world',
      store,
    });
    expect(result.modelContent).toMatch(/^saved 11 bytes at switchyard-artifact:\/\/sess\//);
  });

  it('falls back to truncation when the store fails, and the call still succeeds', async () => {
    const failing: ArtifactStore = {
      put: () => Promise.reject(new Error('disk full')),
      read: () => Promise.reject(new Error('no')),
      readBytes: () => Promise.reject(new Error('no')),
      locate: () => '',
    };
    const errors: unknown[] = [];
    const result = await serializeOutput({
      ...base,
      tool: tool({ maxModelBytes: 4, policy: 'artifact', keep: 'head' }),
      content: 'abcdefgh',
      store: failing,
      onStoreError: (error) => errors.push(error),
    });
    expect(result.modelContent).toBe('abcd\n[Tool output truncated by resultBudget: 8 bytes, limit 4 bytes]');
    expect(errors).toHaveLength(1);
  });

  it('moves a spool file into the store and sizes the output by the file', async () => {
    const dir = await scratchDir();
    const store = new FileArtifactStore(dir);
    const spool = path.join(dir, 'spool.txt');
    await writeFile(spool, 'a'.repeat(50_000));
    const result = await serializeOutput({
      ...base,
      tool: tool({ maxModelBytes: 30_000, policy: 'artifact', keep: 'tail' }),
      content: 'a'.repeat(3_000),
      spool: { path: spool, bytes: 50_000 },
      store,
    });
    expect(result.budget).toMatchObject({ originalBytes: 50_000, policy: 'artifact' });
    expect(result.modelContent).toContain('Output too large (48.8 KB)');
    expect((await readFile(store.locate(result.budget?.artifact ?? ''), 'utf8')).length).toBe(50_000);
    await expect(readFile(spool)).rejects.toThrow();
  });

  it('prepares an aggregate-budget envelope for a large result that fits its own budget', async () => {
    const store = new FileArtifactStore(await scratchDir());
    const content = 'y'.repeat(5_000);
    const result = await serializeOutput({ ...base, tool: tool(), content, store });
    expect(result.modelContent).toBe(content);
    expect(result.aggregateReplacement?.envelope).toMatch(/^<persisted-output>\nOutput too large \(4\.9 KB\)/);
    expect(await store.read(result.aggregateReplacement?.artifact ?? '')).toBe(content);
  });

  it('prepares a shorter cut for the aggregate budget when there is no store', async () => {
    const lines = Array.from({ length: 1_000 }, (_, index) => `line ${index}`).join('\n');
    const result = await serializeOutput({ ...base, tool: tool(), content: lines });
    expect(result.modelContent).toBe(lines);
    const head = lines.slice(0, 2_000);
    const kept = head.slice(0, head.lastIndexOf('\n'));
    expect(result.aggregateReplacement).toEqual({
      envelope: `${kept}\n[Tool output truncated by the turn's aggregate budget: ${lines.length} bytes, first ${kept.length} bytes kept]`,
    });
  });

  it('prepares the whole output as an aggregate-budget envelope for a result its own budget truncated', async () => {
    const store = new FileArtifactStore(await scratchDir());
    const content = 'z'.repeat(60_000);
    const result = await serializeOutput({
      ...base,
      tool: tool({ maxModelBytes: 50_000, policy: 'truncate', keep: 'head' }),
      content,
      store,
    });
    expect(result.budget).toMatchObject({ policy: 'truncate', originalBytes: 60_000 });
    expect(result.aggregateReplacement?.envelope).toMatch(
      /^<persisted-output>\nOutput too large \(58\.6 KB\)\. Full output saved to: switchyard-artifact:\/\/sess\//,
    );
    expect(await store.read(result.aggregateReplacement?.artifact ?? '')).toBe(content);
  });

  it('does not ask a store that just failed again, and cuts shorter for the aggregate budget instead', async () => {
    let puts = 0;
    const failing: ArtifactStore = {
      put: () => {
        puts += 1;
        return Promise.reject(new Error('disk full'));
      },
      read: () => Promise.reject(new Error('no')),
      readBytes: () => Promise.reject(new Error('no')),
      locate: () => '',
    };
    const result = await serializeOutput({
      ...base,
      tool: tool({ maxModelBytes: 30_000, policy: 'artifact', keep: 'tail' }),
      content: 'q'.repeat(40_000),
      store: failing,
    });
    expect(puts).toBe(1);
    expect(result.budget).toMatchObject({ policy: 'truncate', originalBytes: 40_000 });
    expect(result.aggregateReplacement).toEqual({
      envelope: `${'q'.repeat(2_000)}\n[Tool output truncated by the turn's aggregate budget: 40000 bytes, last 2000 bytes kept]`,
    });
  });

  it('never splits a multi-byte character', () => {
    expect(cutUtf8('ééé', 3, 'head')).toBe('é');
    expect(cutUtf8('ééé', 3, 'tail')).toBe('é');
  });

  it('refuses artifact URIs that would leave the store', () => {
    const store = new FileArtifactStore('/data');
    expect(() => store.locate('switchyard-artifact://../etc/passwd')).toThrow(/Not a Switchyard artifact URI/);
    expect(() => store.locate('switchyard-artifact://s/..')).toThrow(/Not a Switchyard artifact URI/);
    expect(store.locate('switchyard-artifact://s/c-tool-result-1')).toBe('/data/artifacts/s/c-tool-result-1');
  });
});
