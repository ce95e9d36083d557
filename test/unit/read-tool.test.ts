import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { prepareCall } from '../../src/activities/prepare-call.js';
import type { ReadyCallPlan } from '../../src/contracts/call-plan.js';
import { readTool } from '../../src/tools/read.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { scratchDir } from '../support/scratch.js';
import { toolContext } from '../support/tool-context.js';

const registry = new ToolRegistry([readTool]);

describe('Read and the front of the pipeline', () => {
  let cwd: string;
  let outside: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    outside = await scratchDir();
    await writeFile(path.join(cwd, 'a.txt'), 'one\ntwo\nthree\n');
    await writeFile(path.join(cwd, 'bin.dat'), Buffer.from([1, 0, 2]));
    await mkdir(path.join(cwd, 'dir'));
    await writeFile(path.join(outside, 'secret.txt'), 'secret');
    await symlink(path.join(outside, 'secret.txt'), path.join(cwd, 'link.txt'));
  });
  const prepare = (input: unknown, name = 'Read') => prepareCall({ registry, call: { id: 'c', name, input }, context: { sessionId: 's', cwd, allowRules: [], denyRules: [] } });
  const execute = async (plan: ReadyCallPlan) =>
    readTool.execute(plan.input, toolContext({ cwd }));

  it('resolves a relative path against cwd and plans a concurrent, read-only, idempotent call', async () => {
    const plan = await prepare({ file_path: 'a.txt' });
    expect(plan).toMatchObject({
      kind: 'ready',
      toolName: 'Read',
      input: { file_path: path.join(cwd, 'a.txt') },
      flags: { concurrentSafe: true, readOnly: true, destructive: false, sideEffectScope: 'none', idempotent: true },
      summary: `Read: ${path.join(cwd, 'a.txt')}`,
      timeoutMs: 30_000,
    });
    expect(await execute(plan as ReadyCallPlan)).toBe('     1\tone\n     2\ttwo\n     3\tthree');
  });

  it('accepts an alias and a JSON-string input', async () => {
    const plan = await prepare('{"file_path":"a.txt","offset":3}', 'read_file');
    expect(plan.kind).toBe('ready');
    expect(await execute(plan as ReadyCallPlan)).toBe('     3\tthree');
  });

  it('names an unknown tool in the seed text', async () => {
    expect(await prepare({}, 'Teleport')).toMatchObject({ kind: 'rejected', modelContent: 'Tool not found: Teleport', stage: 'lookup' });
  });

  it('wraps schema failures as InputValidationError', async () => {
    const plan = await prepare({ file_path: 'a.txt', limit: 'ten' });
    expect(plan).toMatchObject({ kind: 'rejected', stage: 'validation' });
    expect(plan.kind === 'rejected' && plan.modelContent).toMatch(/^<tool_use_error>InputValidationError: limit: .*<\/tool_use_error>$/);
    const notJson = await prepare('{oops');
    expect(notJson.kind === 'rejected' && notJson.modelContent).toMatch(/^<tool_use_error>InputValidationError: input is not valid JSON/);
  });

  it('refuses missing files, directories, paths outside cwd and symlinks that lead out', async () => {
    const cases: Array<[string, RegExp]> = [
      ['missing.txt', /File does not exist/],
      ['dir', /is a directory/],
      ['../elsewhere.txt', /outside the session's working directory/],
      [path.join(outside, 'secret.txt'), /outside the session's working directory/],
      ['link.txt', /through a symlink/],
    ];
    for (const [filePath, message] of cases) {
      const plan = await prepare({ file_path: filePath });
      expect(plan.kind, filePath).toBe('rejected');
      expect(plan.kind === 'rejected' && plan.modelContent, filePath).toMatch(message);
      expect(plan.kind === 'rejected' && plan.modelContent, filePath).toMatch(/^<tool_use_error>/);
    }
  });

  it('refuses binary files as a business failure', async () => {
    const plan = await prepare({ file_path: 'bin.dat' });
    await expect(execute(plan as ReadyCallPlan)).rejects.toThrow(/Cannot read binary file/);
  });
});

describe('paths outside cwd', () => {
  it('are refused unless an allow rule of the same tool names them with an absolute pattern', async () => {
    const cwd = await scratchDir();
    const outside = await scratchDir();
    await writeFile(path.join(outside, 'shared.txt'), 'shared\n');
    const target = path.join(outside, 'shared.txt');
    const plan = (allowRules: string[]) => prepareCall({ registry, call: { id: 'c', name: 'Read', input: { file_path: target } }, context: { sessionId: 's', cwd, allowRules, denyRules: [] } });
    expect((await plan([])).kind).toBe('rejected');
    expect((await plan(['Read'])).kind).toBe('rejected');
    expect((await plan(['Write(' + outside + '/**)'])).kind).toBe('rejected');
    expect((await plan([`Read(${outside}/**)`])).kind).toBe('ready');
  });
});
