import { mkdir, symlink, truncate, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { prepareCall } from '../../src/activities/prepare-call.js';
import type { ReadyCallPlan } from '../../src/contracts/call-plan.js';
import { readTool } from '../../src/tools/builtin/read.js';
import type { ToolOutput } from '../../src/tools/define-tool.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { scratchDir } from '../support/scratch.js';
import { toolContext } from '../support/tool-context.js';

const registry = new ToolRegistry([readTool]);

/** The model's text of a Read output (the tool returns an object with its hook response). */
function modelText(output: ToolOutput): string {
  return typeof output === 'string' ? output : output.content;
}

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
  const prepare = (input: unknown, name = 'Read') =>
    prepareCall({
      registry,
      call: { id: 'c', name, input },
      context: { sessionId: 's', cwd, allowRules: [], denyRules: [] },
    });
  const execute = async (plan: ReadyCallPlan) => modelText(await readTool.execute(plan.input, toolContext({ cwd })));

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

  it("gives PostToolUse hooks Claude Code's Read output: the lines without numbers", async () => {
    const plan = await prepare({ file_path: 'a.txt', offset: 2 });
    const output = await readTool.execute((plan as ReadyCallPlan).input, toolContext({ cwd }));
    expect(typeof output === 'object' && output.hookResponse).toEqual({
      type: 'text',
      file: { filePath: path.join(cwd, 'a.txt'), content: 'two\nthree', numLines: 2, startLine: 2, totalLines: 3 },
    });
  });

  it('accepts an alias and a JSON-string input', async () => {
    const plan = await prepare('{"file_path":"a.txt","offset":3}', 'read_file');
    expect(plan.kind).toBe('ready');
    expect(await execute(plan as ReadyCallPlan)).toBe('     3\tthree');
  });

  it('names an unknown tool in the documented text', async () => {
    expect(await prepare({}, 'Teleport')).toMatchObject({
      kind: 'rejected',
      modelContent: 'Tool not found: Teleport',
      stage: 'lookup',
    });
  });

  it('wraps schema failures as InputValidationError', async () => {
    const plan = await prepare({ file_path: 'a.txt', limit: 'ten' });
    expect(plan).toMatchObject({ kind: 'rejected', stage: 'validation' });
    expect(plan.kind === 'rejected' && plan.modelContent).toMatch(
      /^<tool_use_error>InputValidationError: limit: .*<\/tool_use_error>$/,
    );
    const notJson = await prepare('{oops');
    expect(notJson.kind === 'rejected' && notJson.modelContent).toMatch(
      /^<tool_use_error>InputValidationError: input is not valid JSON/,
    );
  });

  it('refuses missing files, directories, paths outside cwd and symlinks that lead out', async () => {
    const cases: Array<[string, RegExp]> = [
      ['missing.txt', /File does not exist/],
      ['dir', /is a directory/],
      ['../elsewhere.txt', /outside the session's working directory/],
      [path.join(outside, 'secret.txt'), /outside the session's working directory/],
      ['link.txt', /through a symlink/],
      // The file's stat goes along with the confinement check: outside cwd, the escape is what the model reads.
      [path.join(outside, 'missing.txt'), /outside the session's working directory/],
      [outside, /outside the session's working directory/],
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
    const plan = (allowRules: string[]) =>
      prepareCall({
        registry,
        call: { id: 'c', name: 'Read', input: { file_path: target } },
        context: { sessionId: 's', cwd, allowRules, denyRules: [] },
      });
    expect((await plan([])).kind).toBe('rejected');
    expect((await plan(['Read'])).kind).toBe('rejected');
    expect((await plan(['Write(' + outside + '/**)'])).kind).toBe('rejected');
    expect((await plan([`Read(${outside}/**)`])).kind).toBe('ready');
  });
});

describe('Read of large files', () => {
  let cwd: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    // 200 MB that cost no disk: a few text lines, then a hole the file system reads as NUL bytes.
    const head = Array.from({ length: 1_000 }, (_, index) => `line ${index + 1} ${'x'.repeat(20)}`).join('\n');
    await writeFile(path.join(cwd, 'huge.log'), `${head}\n`);
    await truncate(path.join(cwd, 'huge.log'), 200 * 1024 * 1024);
    await writeFile(path.join(cwd, 'medium.txt'), `${'y'.repeat(99)}\n`.repeat(3_000)); // 300,000 bytes
  });
  const prepare = (input: unknown) =>
    prepareCall({
      registry,
      call: { id: 'c', name: 'Read', input },
      context: { sessionId: 's', cwd, allowRules: [], denyRules: [] },
    });
  const execute = async (input: unknown) => {
    const plan = await prepare(input);
    if (plan.kind !== 'ready') return plan.modelContent;
    return modelText(await readTool.execute(plan.input, toolContext({ cwd })));
  };

  it('streams the requested lines of a 200 MB file with bounded memory', async () => {
    const peakBefore = process.resourceUsage().maxRSS;
    // CPU time of this test process, not wall time, so a busy machine does not fail it: both reads cost a few
    // milliseconds; merely reading the whole 200 MB through a stream costs about 450 ms of CPU on a 2-core CI machine.
    const cpuBefore = process.cpuUsage();
    expect(await execute({ file_path: 'huge.log', offset: 2, limit: 2 })).toBe(
      `     2\tline 2 ${'x'.repeat(20)}\n     3\tline 3 ${'x'.repeat(20)}`,
    );
    expect(await execute({ file_path: 'huge.log', limit: 1 })).toBe(`     1\tline 1 ${'x'.repeat(20)}`);
    const cpu = process.cpuUsage(cpuBefore);
    expect((cpu.user + cpu.system) / 1_000).toBeLessThan(250);
    // maxRSS is in KiB: the peak grew by less than 64 MiB (loading the file would add at least 400 MiB).
    expect(process.resourceUsage().maxRSS - peakBefore).toBeLessThan(64 * 1024);
  });

  it('refuses a file over the size cap when no range is given, suggesting offset and limit', async () => {
    const message = await execute({ file_path: 'medium.txt' });
    expect(message).toMatch(
      /^<tool_use_error>File content \(293\.0 KB\) exceeds the maximum size Read returns without a range \(256 KB\)/,
    );
    expect(message).toMatch(/use offset and limit to read part of it/);
    expect(await execute({ file_path: 'medium.txt', offset: 2_999 })).toBe(
      `  2999\t${'y'.repeat(99)}\n  3000\t${'y'.repeat(99)}`,
    );
    expect(await execute({ file_path: 'medium.txt', limit: 1 })).toBe(`     1\t${'y'.repeat(99)}`);
  });

  it('follows SWITCHYARD_READ_MAX_FILE_BYTES', async () => {
    process.env.SWITCHYARD_READ_MAX_FILE_BYTES = '400000';
    try {
      expect(await execute({ file_path: 'medium.txt' })).toMatch(/^     1\ty{99}\n/);
    } finally {
      delete process.env.SWITCHYARD_READ_MAX_FILE_BYTES;
    }
  });

  it('stops before the result budget with the offset to continue at, however large the limit', async () => {
    await writeFile(path.join(cwd, 'wide.txt'), `${'w'.repeat(999)}\n`.repeat(1_000)); // ~1 MB of output asked for
    const output = String(await execute({ file_path: 'wide.txt', offset: 1, limit: 1_000_000 }));
    expect(Buffer.byteLength(output)).toBeLessThanOrEqual(262_144);
    const outputLines = output.split('\n');
    const last = outputLines.at(-1) ?? '';
    const match =
      /^\(Output stops before line (\d+): one Read returns at most 262144 bytes\. Continue with offset (\d+)\.\)$/.exec(
        last,
      );
    expect(match?.[1]).toBe(String(outputLines.length));
    expect(match?.[2]).toBe(match?.[1]);
    expect(outputLines.at(-2)).toBe(`${String(outputLines.length - 1).padStart(6)}\t${'w'.repeat(999)}`);
  });

  it('keeps the output format: CRLF, cut long lines, a last line without newline, offset past the end', async () => {
    await writeFile(path.join(cwd, 'format.txt'), `a\r\n${'z'.repeat(2_500)}\r\n\nlast`);
    expect(await execute({ file_path: 'format.txt' })).toBe(
      `     1\ta\n     2\t${'z'.repeat(2_000)}… [line truncated]\n     3\t\n     4\tlast`,
    );
    await expect(execute({ file_path: 'format.txt', offset: 5 })).rejects.toThrow(
      'offset 5 is past the end of the file (4 lines)',
    );
    await writeFile(path.join(cwd, 'empty.txt'), '');
    expect(await execute({ file_path: 'empty.txt', offset: 3 })).toBe('');
  });

  it('refuses a named pipe instead of blocking on it', async () => {
    execFileSync('mkfifo', [path.join(cwd, 'pipe')]);
    expect(await execute({ file_path: 'pipe' })).toMatch(/^<tool_use_error>.*pipe is not a regular file/);
  });
});
