import { lstat, mkdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { CallPlan } from '../../src/contracts/call-plan.js';
import { ToolUseError } from '../../src/tools/define-tool.js';
import type { ToolOutput, ToolOutputObject } from '../../src/tools/define-tool.js';
import { editTool, planEdit } from '../../src/tools/builtin/edit.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { APPROVAL_PREVIEW_CHARS, writeTool } from '../../src/tools/builtin/write.js';
import { scratchDir } from '../support/scratch.js';
import { toolContext } from '../support/tool-context.js';
import { planner, ready, rejection } from '../support/tool-plans.js';

const registry = new ToolRegistry([writeTool, editTool]);
const prepare = planner(registry.list());
// Scratch directories live in the test run's temporary directory, removed when the run ends.
const tempDir = (): Promise<string> => scratchDir();

async function run(cwd: string, plan: CallPlan): Promise<ToolOutputObject> {
  const ok = ready(plan);
  const tool = registry.lookup(ok.toolName);
  if (tool === undefined) throw new Error(`no tool ${ok.toolName}`);
  const output: ToolOutput = await tool.execute(ok.input, toolContext({ cwd }));
  if (typeof output === 'string') throw new Error('expected an output object with a display');
  return output;
}

describe('Write', () => {
  let cwd: string;
  let outside: string;
  beforeEach(async () => {
    cwd = await tempDir();
    outside = await tempDir();
  });

  it('plans an exclusive, non-read-only, non-idempotent workspace call that edits files inside cwd', async () => {
    const plan = ready(await prepare(cwd, 'Write', { file_path: 'a.txt', content: 'x\n' }));
    expect(plan).toMatchObject({
      toolName: 'Write',
      input: { file_path: path.join(cwd, 'a.txt'), content: 'x\n' },
      flags: {
        concurrentSafe: false,
        readOnly: false,
        destructive: false,
        sideEffectScope: 'workspace',
        idempotent: false,
      },
      ruleKind: 'path',
      ruleContent: path.join(cwd, 'a.txt'),
      editsInsideCwd: true,
      summary: `Write: ${path.join(cwd, 'a.txt')}`,
      timeoutMs: 30_000,
    });
    expect(ready(await prepare(cwd, 'write_file', { file_path: 'a.txt', content: '' })).toolName).toBe('Write');
  });

  it('creates a new file with its parent directories, with a file_diff from the empty text', async () => {
    const target = path.join(cwd, 'deep', 'er', 'new.txt');
    const plan = await prepare(cwd, 'Write', { file_path: 'deep/er/new.txt', content: 'one\ntwo\n' });
    expect(ready(plan).approval?.preview).toBe(
      `--- a/${target.slice(1)}\n+++ b/${target.slice(1)}\n@@ -0,0 +1,2 @@\n+one\n+two\n`,
    );
    const output = await run(cwd, plan);
    expect(output.content).toBe(`File created successfully at: ${target}`);
    expect(output.display).toEqual({
      type: 'file_diff',
      filePath: target,
      truncated: false,
      hunks: [{ oldStart: 0, oldLines: 0, newStart: 1, newLines: 2, lines: ['+one', '+two'] }],
    });
    expect(await readFile(target, 'utf8')).toBe('one\ntwo\n');
  });

  it('overwrites an existing file and shows the change', async () => {
    const target = path.join(cwd, 'a.txt');
    await writeFile(target, 'keep\nold\n');
    const plan = await prepare(cwd, 'Write', { file_path: target, content: 'keep\nnew\n' });
    expect(ready(plan).approval?.preview).toContain('@@ -1,2 +1,2 @@\n keep\n-old\n+new\n');
    const output = await run(cwd, plan);
    expect(output.content).toBe(`The file ${target} has been updated.`);
    expect(output.display).toMatchObject({
      type: 'file_diff',
      hunks: [{ oldStart: 1, oldLines: 2, newStart: 1, newLines: 2, lines: [' keep', '-old', '+new'] }],
    });
    expect(await readFile(target, 'utf8')).toBe('keep\nnew\n');
  });

  it('cuts the approval preview to about 4,000 characters', async () => {
    const content = Array.from({ length: 2_000 }, (_, index) => `line ${index} `.padEnd(60, '.')).join('\n');
    const preview = ready(await prepare(cwd, 'Write', { file_path: 'big.txt', content })).approval?.preview ?? '';
    expect(preview.length).toBeGreaterThan(APPROVAL_PREVIEW_CHARS);
    expect(preview.length).toBeLessThan(APPROVAL_PREVIEW_CHARS + 40);
    expect(preview.endsWith('… (preview truncated)')).toBe(true);
  });

  it('overwrites a binary file with a text display instead of a diff', async () => {
    await writeFile(path.join(cwd, 'blob.bin'), Buffer.from([1, 0, 2, 3]));
    const output = await run(cwd, await prepare(cwd, 'Write', { file_path: 'blob.bin', content: 'text\n' }));
    expect(output.display).toEqual({
      type: 'text',
      text: `${path.join(cwd, 'blob.bin')} was a binary file (4 bytes); no diff is shown`,
    });
    expect(await readFile(path.join(cwd, 'blob.bin'), 'utf8')).toBe('text\n');
  });

  it('refuses a directory at validation and at execution', async () => {
    await mkdir(path.join(cwd, 'dir'));
    expect(rejection(await prepare(cwd, 'Write', { file_path: 'dir', content: 'x' }))).toMatch(
      /^<tool_use_error>.*dir is a directory, not a file<\/tool_use_error>$/,
    );
    const plan = await prepare(cwd, 'Write', { file_path: 'later', content: 'x' });
    await mkdir(path.join(cwd, 'later'));
    await expect(run(cwd, plan)).rejects.toThrow(ToolUseError);
    await expect(run(cwd, plan)).rejects.toThrow(/is a directory/);
  });

  it('refuses a FIFO instead of blocking on it', async () => {
    execFileSync('mkfifo', [path.join(cwd, 'pipe')]);
    expect(rejection(await prepare(cwd, 'Write', { file_path: 'pipe', content: 'x' }))).toBe(
      `<tool_use_error>${path.join(cwd, 'pipe')} is not a regular file</tool_use_error>`,
    );
    expect(rejection(await prepare(cwd, 'Edit', { file_path: 'pipe', old_string: 'a', new_string: 'b' }))).toBe(
      `<tool_use_error>${path.join(cwd, 'pipe')} is not a regular file</tool_use_error>`,
    );
  });

  it('refuses a path under a regular file as a ToolUseError', async () => {
    await writeFile(path.join(cwd, 'file'), 'x');
    const plan = await prepare(cwd, 'Write', { file_path: 'file/child.txt', content: 'x' });
    await expect(run(cwd, plan)).rejects.toThrow(ToolUseError);
  });

  it('refuses paths outside cwd: .., an absolute path elsewhere, a symlinked directory or file that leads out', async () => {
    await symlink(outside, path.join(cwd, 'out-dir'));
    await writeFile(path.join(outside, 'victim.txt'), 'safe');
    await symlink(path.join(outside, 'victim.txt'), path.join(cwd, 'out-file'));
    const cases: Array<[string, RegExp]> = [
      ['../escape.txt', /outside the session's working directory/],
      [path.join(outside, 'abs.txt'), /outside the session's working directory/],
      ['out-dir/new.txt', /through a symlink/],
      ['out-file', /through a symlink/],
    ];
    for (const [filePath, message] of cases) {
      expect(rejection(await prepare(cwd, 'Write', { file_path: filePath, content: 'pwned' })), filePath).toMatch(
        message,
      );
    }
    expect(await readFile(path.join(outside, 'victim.txt'), 'utf8')).toBe('safe');
  });

  it('writes outside cwd only when a Write allow rule names the path', async () => {
    const target = path.join(outside, 'sub', 'ok.txt');
    const input = { file_path: target, content: 'allowed\n' };
    expect((await prepare(cwd, 'Write', input, ['Write'])).kind).toBe('rejected');
    expect((await prepare(cwd, 'Write', input, [`Edit(${outside}/**)`])).kind).toBe('rejected');
    const plan = await prepare(cwd, 'Write', input, [`Write(${outside}/**)`]);
    expect(ready(plan).editsInsideCwd).toBe(false);
    expect((await run(cwd, plan)).content).toBe(`File created successfully at: ${target}`);
    expect(await readFile(target, 'utf8')).toBe('allowed\n');
  });
});

describe('Edit', () => {
  let cwd: string;
  let outside: string;
  let target: string;
  const text =
    ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'iota', 'kappa'].join('\n') + '\n';
  beforeEach(async () => {
    cwd = await tempDir();
    outside = await tempDir();
    target = path.join(cwd, 'greek.txt');
    await writeFile(target, text);
  });
  const edit = (input: Record<string, unknown>, allowRules: string[] = []) =>
    prepare(cwd, 'Edit', { file_path: 'greek.txt', ...input }, allowRules);

  it('plans an exclusive file-editing call with a diff preview', async () => {
    const plan = ready(await edit({ old_string: 'beta', new_string: 'BETA' }));
    expect(plan).toMatchObject({
      toolName: 'Edit',
      input: { file_path: target },
      flags: { concurrentSafe: false, readOnly: false, sideEffectScope: 'workspace', idempotent: false },
      ruleContent: target,
      editsInsideCwd: true,
      timeoutMs: 30_000,
    });
    expect(plan.approval?.preview).toBe(
      `--- a/${target.slice(1)}\n+++ b/${target.slice(1)}\n@@ -1,5 +1,5 @@\n alpha\n-beta\n+BETA\n gamma\n delta\n epsilon\n`,
    );
    for (const alias of ['replace', 'edit_file'])
      expect(
        ready(await prepare(cwd, alias, { file_path: 'greek.txt', old_string: 'beta', new_string: 'b' })).toolName,
      ).toBe('Edit');
  });

  it('replaces a unique string and returns the file_diff hunks', async () => {
    const output = await run(cwd, await edit({ old_string: 'eta\ntheta', new_string: 'ETA' }));
    expect(output.content).toBe(`The file ${target} has been updated.`);
    expect(await readFile(target, 'utf8')).toBe(text.replace('\neta\ntheta\n', '\nETA\n'));
    expect(output.display).toEqual({
      type: 'file_diff',
      filePath: target,
      truncated: false,
      hunks: [
        {
          oldStart: 4,
          oldLines: 7,
          newStart: 4,
          newLines: 6,
          lines: [' delta', ' epsilon', ' zeta', '-eta', '-theta', '+ETA', ' iota', ' kappa'],
        },
      ],
    });
  });

  it('replaces every occurrence with replace_all and reports how many', async () => {
    await writeFile(target, 'x = 1;\ny = x + x;\nz = 2;\n');
    const output = await run(cwd, await edit({ old_string: 'x', new_string: 'w', replace_all: true }));
    expect(output.content).toBe(`The file ${target} has been updated. Replaced 3 occurrences of old_string.`);
    expect(await readFile(target, 'utf8')).toBe('w = 1;\ny = w + w;\nz = 2;\n');
    expect(output.display).toMatchObject({
      hunks: [
        {
          oldStart: 1,
          oldLines: 3,
          newStart: 1,
          newLines: 3,
          lines: ['-x = 1;', '-y = x + x;', '+w = 1;', '+y = w + w;', ' z = 2;'],
        },
      ],
    });
  });

  it('inserts new_string literally ($& and $1 are not patterns)', async () => {
    await run(cwd, await edit({ old_string: 'gamma', new_string: '$&-$1-$$' }));
    expect(await readFile(target, 'utf8')).toContain('\n$&-$1-$$\n');
  });

  it('rejects bad edits with the Claude Code messages', async () => {
    await writeFile(path.join(cwd, 'bin.dat'), Buffer.from([0x61, 0, 0x62]));
    await mkdir(path.join(cwd, 'dir'));
    await writeFile(path.join(cwd, 'twice.txt'), 'same\nsame\n');
    const cases: Array<[Record<string, unknown>, string]> = [
      [
        { file_path: 'missing.txt', old_string: 'a', new_string: 'b' },
        `File does not exist: ${path.join(cwd, 'missing.txt')}`,
      ],
      [
        { old_string: 'beta', new_string: 'beta' },
        'No changes to make: old_string and new_string are exactly the same.',
      ],
      [{ old_string: 'omega', new_string: 'x' }, 'String to replace not found in file.\nString: omega'],
      [
        { file_path: 'twice.txt', old_string: 'same', new_string: 'other' },
        'Found 2 matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.',
      ],
      [
        { file_path: 'bin.dat', old_string: 'a', new_string: 'c' },
        `Cannot edit binary file: ${path.join(cwd, 'bin.dat')}`,
      ],
      [{ file_path: 'dir', old_string: 'a', new_string: 'c' }, `${path.join(cwd, 'dir')} is a directory, not a file`],
      [{ old_string: '', new_string: 'x' }, 'Cannot create new file - file already exists.'],
    ];
    for (const [input, message] of cases) {
      expect(rejection(await edit(input)), JSON.stringify(input)).toBe(`<tool_use_error>${message}</tool_use_error>`);
    }
    expect(await readFile(path.join(cwd, 'twice.txt'), 'utf8')).toBe('same\nsame\n');
  });

  it('creates a missing file (and its directories) when old_string is empty', async () => {
    const newFile = path.join(cwd, 'new', 'file.txt');
    const output = await run(
      cwd,
      await prepare(cwd, 'Edit', { file_path: 'new/file.txt', old_string: '', new_string: 'hello\n' }),
    );
    expect(output.content).toBe(`File created successfully at: ${newFile}`);
    expect(output.display).toMatchObject({
      hunks: [{ oldStart: 0, oldLines: 0, newStart: 1, newLines: 1, lines: ['+hello'] }],
    });
    expect(await readFile(newFile, 'utf8')).toBe('hello\n');
  });

  it('re-checks the match at execution and fails if the file changed since validation', async () => {
    const plan = await edit({ old_string: 'beta', new_string: 'BETA' });
    await writeFile(target, 'alpha\nb3ta\n');
    const changed = await readFile(target, 'utf8');
    await expect(run(cwd, plan)).rejects.toThrow(ToolUseError);
    await expect(run(cwd, plan)).rejects.toThrow(
      /^String to replace not found in file\.\nString: beta\n\(The file changed/,
    );
    expect(await readFile(target, 'utf8')).toBe(changed);

    await writeFile(target, text);
    const ambiguous = await edit({ old_string: 'gamma', new_string: 'G' });
    await writeFile(target, 'gamma gamma\n');
    await expect(run(cwd, ambiguous)).rejects.toThrow(/^Found 2 matches/);

    await writeFile(target, text);
    const vanished = await edit({ old_string: 'delta', new_string: 'D' });
    await rm(target);
    await expect(run(cwd, vanished)).rejects.toThrow(/^File does not exist/);
  });

  it('refuses paths outside cwd: .., an absolute path elsewhere, a symlink that leads out', async () => {
    await writeFile(path.join(outside, 'victim.txt'), 'alpha\n');
    await symlink(path.join(outside, 'victim.txt'), path.join(cwd, 'link.txt'));
    const cases: Array<[string, RegExp]> = [
      [path.relative(cwd, path.join(outside, 'victim.txt')), /outside the session's working directory/],
      [path.join(outside, 'victim.txt'), /outside the session's working directory/],
      ['link.txt', /through a symlink/],
    ];
    for (const [filePath, message] of cases) {
      expect(
        rejection(await prepare(cwd, 'Edit', { file_path: filePath, old_string: 'alpha', new_string: 'x' })),
        filePath,
      ).toMatch(message);
    }
    expect(await readFile(path.join(outside, 'victim.txt'), 'utf8')).toBe('alpha\n');
  });

  it('edits outside cwd only when an Edit allow rule names the path', async () => {
    const victim = path.join(outside, 'shared.txt');
    await writeFile(victim, 'alpha\n');
    const input = { file_path: victim, old_string: 'alpha', new_string: 'omega' };
    expect((await prepare(cwd, 'Edit', input, [`Write(${outside}/**)`])).kind).toBe('rejected');
    const plan = await prepare(cwd, 'Edit', input, [`Edit(${outside}/**)`]);
    await run(cwd, plan);
    expect(await readFile(victim, 'utf8')).toBe('omega\n');
    expect((await stat(victim)).isFile()).toBe(true);
  });
});

describe('planEdit', () => {
  it('counts non-overlapping occurrences', () => {
    expect(planEdit('aaaa', { old_string: 'aa', new_string: 'b', replace_all: true })).toEqual({
      ok: true,
      after: 'bb',
      replacements: 2,
    });
    expect(planEdit('aaa', { old_string: 'aa', new_string: 'b' })).toEqual({ ok: true, after: 'ba', replacements: 1 });
    expect(planEdit('', { old_string: '', new_string: 'new' })).toEqual({ ok: true, after: 'new', replacements: 1 });
  });
});

describe('Write and Edit re-check the path at execution (a symlink swapped in after approval)', () => {
  let cwd: string;
  let outside: string;
  beforeEach(async () => {
    cwd = await tempDir();
    outside = await tempDir();
  });

  /** Validates and plans the call as the pipeline does before approval, so the swap happens after every check. */
  async function planned(name: 'Write' | 'Edit', input: Record<string, unknown>) {
    const plan = ready(await prepare(cwd, name, input));
    const tool = registry.lookup(name);
    if (tool === undefined) throw new Error(`no tool ${name}`);
    expect(await tool.validateInput?.(plan.input, { sessionId: 's', cwd, allowRules: [], denyRules: [] })).toEqual({
      ok: true,
    });
    return { plan, execute: () => tool.execute(plan.input, toolContext({ cwd })) };
  }

  it('Write: the parent directory swapped for a symlink to outside fails and writes nothing outside', async () => {
    await mkdir(path.join(cwd, 'sub'));
    const call = await planned('Write', { file_path: 'sub/a.txt', content: 'pwned\n' });
    await rm(path.join(cwd, 'sub'), { recursive: true });
    await symlink(outside, path.join(cwd, 'sub'));
    await expect(call.execute()).rejects.toMatchObject({
      name: 'ToolUseError',
      code: 'path_changed',
      message: expect.stringMatching(/sub\/a\.txt.*outside the session's working directory/s),
    });
    await expect(stat(path.join(outside, 'a.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('Write: a missing parent whose existing ancestor was swapped creates no directories outside', async () => {
    await mkdir(path.join(cwd, 'sub'));
    const call = await planned('Write', { file_path: 'sub/deep/er/a.txt', content: 'pwned\n' });
    await rm(path.join(cwd, 'sub'), { recursive: true });
    await symlink(outside, path.join(cwd, 'sub'));
    await expect(call.execute()).rejects.toMatchObject({ code: 'path_changed' });
    await expect(stat(path.join(outside, 'deep'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('Write: the file swapped for a symlink to an outside file fails and leaves that file (and its secret) alone', async () => {
    await writeFile(path.join(cwd, 'a.txt'), 'old\n');
    await writeFile(path.join(outside, 'id_rsa'), 'SECRET KEY\n');
    const call = await planned('Write', { file_path: 'a.txt', content: 'pwned\n' });
    await rm(path.join(cwd, 'a.txt'));
    await symlink(path.join(outside, 'id_rsa'), path.join(cwd, 'a.txt'));
    const error: unknown = await call.execute().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'ToolUseError', code: 'path_changed' });
    expect(String((error as Error).message)).not.toContain('SECRET');
    expect(await readFile(path.join(outside, 'id_rsa'), 'utf8')).toBe('SECRET KEY\n');
  });

  it('Edit: the parent directory or the file swapped for a symlink to outside fails and changes nothing outside', async () => {
    await mkdir(path.join(cwd, 'sub'));
    await writeFile(path.join(cwd, 'sub', 'a.txt'), 'alpha\n');
    await writeFile(path.join(outside, 'a.txt'), 'alpha\n');
    const viaParent = await planned('Edit', { file_path: 'sub/a.txt', old_string: 'alpha', new_string: 'pwned' });
    await rm(path.join(cwd, 'sub'), { recursive: true });
    await symlink(outside, path.join(cwd, 'sub'));
    await expect(viaParent.execute()).rejects.toMatchObject({ code: 'path_changed' });
    expect(await readFile(path.join(outside, 'a.txt'), 'utf8')).toBe('alpha\n');

    await writeFile(path.join(cwd, 'b.txt'), 'alpha\n');
    const viaFile = await planned('Edit', { file_path: 'b.txt', old_string: 'alpha', new_string: 'pwned' });
    await rm(path.join(cwd, 'b.txt'));
    await symlink(path.join(outside, 'a.txt'), path.join(cwd, 'b.txt'));
    await expect(viaFile.execute()).rejects.toMatchObject({ code: 'path_changed' });
    expect(await readFile(path.join(outside, 'a.txt'), 'utf8')).toBe('alpha\n');

    const creation = await planned('Edit', { file_path: 'sub2/new.txt', old_string: '', new_string: 'pwned' });
    await symlink(outside, path.join(cwd, 'sub2'));
    await expect(creation.execute()).rejects.toMatchObject({ code: 'path_changed' });
    await expect(stat(path.join(outside, 'new.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('Write: a dangling symlink to outside (which validation resolves to its own inside path) fails and creates nothing outside', async () => {
    await symlink(path.join(outside, 'planted.txt'), path.join(cwd, 'dangling.txt'));
    const call = await planned('Write', { file_path: 'dangling.txt', content: 'pwned\n' });
    await expect(call.execute()).rejects.toMatchObject({ code: 'path_changed' });
    await expect(stat(path.join(outside, 'planted.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('Write: a FIFO swapped in after validation is refused without blocking', async () => {
    await writeFile(path.join(cwd, 'a.txt'), 'old\n');
    const call = await planned('Write', { file_path: 'a.txt', content: 'new\n' });
    await rm(path.join(cwd, 'a.txt'));
    execFileSync('mkfifo', [path.join(cwd, 'a.txt')]);
    await expect(call.execute()).rejects.toMatchObject({ code: 'not_a_file' });
  });

  it('still writes and edits through a symlink that stays inside cwd, changing its target', async () => {
    await mkdir(path.join(cwd, 'real'));
    await writeFile(path.join(cwd, 'real', 'a.txt'), 'alpha\n');
    await symlink(path.join(cwd, 'real'), path.join(cwd, 'alias'));
    await symlink(path.join(cwd, 'real', 'a.txt'), path.join(cwd, 'a-link.txt'));
    await (await planned('Edit', { file_path: 'alias/a.txt', old_string: 'alpha', new_string: 'beta' })).execute();
    expect(await readFile(path.join(cwd, 'real', 'a.txt'), 'utf8')).toBe('beta\n');
    await (await planned('Write', { file_path: 'a-link.txt', content: 'gamma\n' })).execute();
    expect(await readFile(path.join(cwd, 'real', 'a.txt'), 'utf8')).toBe('gamma\n');
    expect((await lstat(path.join(cwd, 'a-link.txt'))).isSymbolicLink()).toBe(true);
  });
});
