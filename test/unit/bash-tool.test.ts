import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bashTool } from '../../src/tools/bash.js';
import type { ToolOutputObject } from '../../src/tools/define-tool.js';
import { scratchDir } from '../support/scratch.js';
import { toolContext } from '../support/tool-context.js';

async function run(command: string, options: { signal?: AbortSignal; timeout?: number; cwd?: string } = {}): Promise<ToolOutputObject> {
  const cwd = options.cwd ?? (await scratchDir());
  const output = await bashTool.execute(
    { command, ...(options.timeout === undefined ? {} : { timeout: options.timeout }) },
    toolContext({ cwd, ...(options.signal === undefined ? {} : { signal: options.signal }) }),
  );
  return typeof output === 'string' ? { content: output } : output;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('Bash (real processes)', () => {
  it('runs in cwd and gives stdout and stderr to the model', async () => {
    const cwd = await scratchDir();
    const output = await run('pwd; echo oops >&2', { cwd });
    expect(output.isError).toBe(false);
    expect(output.content).toContain(cwd);
    expect(output.content).toContain('oops');
  });

  it('makes a non-zero exit an error result with the exit code', async () => {
    const output = await run('echo partial; exit 3');
    expect(output).toMatchObject({ isError: true, errorCode: 'exit_code', content: 'partial\nExit code 3' });
    expect(output.display).toMatchObject({ type: 'bash_output', exitCode: 3 });
  });

  it('keeps memory bounded for endless output and kills it at its own timeout', async () => {
    const before = process.memoryUsage().rss;
    const output = await run('yes', { timeout: 1_500 });
    expect(output.isError).toBe(true);
    expect(output.content).toMatch(/Command timed out after 1500ms and was killed\.$/);
    expect(Buffer.byteLength(output.content)).toBeLessThan(70 * 1024);
    // The whole output went to a spool file, not to memory.
    expect(output.spool?.bytes).toBeGreaterThan(1_000_000);
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
    if (output.spool !== undefined) {
      expect((await readFile(output.spool.path)).length).toBe(output.spool.bytes);
      await rm(output.spool.path);
    }
  });

  it('kills the whole process tree when cancelled', async () => {
    const cwd = await scratchDir();
    const controller = new AbortController();
    const pending = run('sleep 100 & echo $! > child.pid; wait', { signal: controller.signal, cwd });
    let pid = 0;
    for (let i = 0; i < 100 && pid === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      pid = Number(await readFile(path.join(cwd, 'child.pid'), 'utf8').catch(() => '0'));
    }
    expect(alive(pid)).toBe(true);
    controller.abort(new Error('interrupted'));
    await expect(pending).rejects.toThrow();
    for (let i = 0; i < 100 && alive(pid); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(alive(pid)).toBe(false);
  });

  it('leaves nothing running after the command ends', async () => {
    const cwd = await scratchDir();
    const output = await run('sleep 100 & echo $!', { cwd });
    const pid = Number(output.content.trim());
    for (let i = 0; i < 100 && alive(pid); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(alive(pid)).toBe(false);
  });

  it('is concurrent and needs no approval only for read-only commands; rules see the command prefix', () => {
    const concurrentSafe = bashTool.concurrentSafe as (input: { command: string }) => boolean;
    expect(concurrentSafe({ command: 'git log --oneline | head -5' })).toBe(true);
    expect(concurrentSafe({ command: 'npm install' })).toBe(false);
    expect(bashTool.rememberRule?.({ command: 'npm run test -- --watch' })).toBe('Bash(npm run test:*)');
  });
});
