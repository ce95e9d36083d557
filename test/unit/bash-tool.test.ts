import { readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BASH_LIMITS, RESULT_BUDGETS } from '../../src/contracts/defaults.js';
import { bashTool } from '../../src/tools/builtin/bash.js';
import type { ToolOutputObject } from '../../src/tools/define-tool.js';
import { scratchDir } from '../support/scratch.js';
import { toolContext } from '../support/tool-context.js';
import { processExists } from '../support/processes.js';

/**
 * Runs Bash directly. `unsandboxed`: outside the OS sandbox, for tests that follow a child by its pid (inside the
 * sandbox pids are those of its own namespace; test/integration/sandbox.test.ts covers what the sandbox kills).
 */
async function run(
  command: string,
  options: { signal?: AbortSignal; timeout?: number; cwd?: string; unsandboxed?: boolean } = {},
): Promise<ToolOutputObject> {
  const cwd = options.cwd ?? (await scratchDir());
  const output = await bashTool.execute(
    { command, ...(options.timeout === undefined ? {} : { timeout: options.timeout }) },
    toolContext({
      cwd,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.unsandboxed === true ? { sandbox: { mode: 'off' } } : {}),
    }),
  );
  return typeof output === 'string' ? { content: output } : output;
}

describe('Bash (real processes)', () => {
  it('runs in cwd and gives stdout and stderr to the model', async () => {
    const cwd = await scratchDir();
    const output = await run('pwd; echo oops >&2', { cwd });
    expect(output.isError).toBe(false);
    expect(output.content).toContain(cwd);
    expect(output.content).toContain('oops');
  });

  it('fails at once when the shell cannot start (its cwd does not exist)', async () => {
    const missing = path.join(await scratchDir(), 'gone');
    const started = Date.now();
    // Before the fix the shell never started, no exit event came, and the call hung until its 120 s deadline.
    await expect(run('echo never', { cwd: missing, timeout: 60_000 })).rejects.toThrow(
      `Bash could not start /bin/bash in ${missing}`,
    );
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('makes a non-zero exit an error result with the exit code', async () => {
    const output = await run('echo partial; exit 3');
    expect(output).toMatchObject({ isError: true, errorCode: 'exit_code', content: 'partial\nExit code 3' });
    expect(output.display).toMatchObject({ type: 'bash_output', exitCode: 3 });
  });

  it('keeps memory bounded for endless output and kills it at its own timeout', async () => {
    const before = process.memoryUsage().rss;
    // A cap above what `yes` writes in 1.5 s, so the timeout stops it (the cap has its own tests below).
    const savedCap = process.env.SWITCHYARD_BASH_MAX_SPOOL_BYTES;
    process.env.SWITCHYARD_BASH_MAX_SPOOL_BYTES = String(4 * 1024 * 1024 * 1024);
    const output = await run('yes', { timeout: 1_500 }).finally(() => {
      if (savedCap === undefined) delete process.env.SWITCHYARD_BASH_MAX_SPOOL_BYTES;
      else process.env.SWITCHYARD_BASH_MAX_SPOOL_BYTES = savedCap;
    });
    expect(output.isError).toBe(true);
    expect(output.content).toMatch(/Command timed out after 1500ms and was killed\.$/);
    expect(Buffer.byteLength(output.content)).toBeLessThan(70 * 1024);
    // The whole output went to a spool file, not to memory.
    expect(output.spool?.bytes).toBeGreaterThan(1_000_000);
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
    if (output.spool !== undefined) {
      expect((await stat(output.spool.path)).size).toBe(output.spool.bytes);
      await rm(output.spool.path);
    }
  }, 30_000); // 1.5 s of `yes`, then the kill and the spool's tail: seconds on a loaded CI machine

  it('kills the whole process tree when cancelled', async () => {
    const cwd = await scratchDir();
    const controller = new AbortController();
    const pending = run('sleep 100 & echo $! > child.pid; wait', { signal: controller.signal, cwd, unsandboxed: true });
    let pid = 0;
    for (let i = 0; i < 100 && pid === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      pid = Number(await readFile(path.join(cwd, 'child.pid'), 'utf8').catch(() => '0'));
    }
    expect(processExists(pid)).toBe(true);
    controller.abort(new Error('interrupted'));
    await expect(pending).rejects.toThrow();
    for (let i = 0; i < 100 && processExists(pid); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(processExists(pid)).toBe(false);
  });

  it('leaves nothing running after the command ends', async () => {
    const cwd = await scratchDir();
    const output = await run('sleep 100 & echo $!', { cwd, unsandboxed: true });
    const pid = Number(output.content.trim());
    for (let i = 0; i < 100 && processExists(pid); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(processExists(pid)).toBe(false);
  });

  it('is concurrent and needs no approval only for read-only commands; rules see the command prefix', () => {
    const concurrentSafe = bashTool.concurrentSafe as (input: { command: string }) => boolean;
    expect(concurrentSafe({ command: 'ls -la | head -5' })).toBe(true);
    expect(concurrentSafe({ command: 'npm install' })).toBe(false);
    expect(bashTool.rememberRule?.({ command: 'npm run test -- --watch' })).toBe('Bash(npm run test:*)');
  });
});

describe('Bash environment policy', () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
  });

  it('hides worker secrets and unlisted settings from `env` and /proc/self/environ, and keeps PATH, HOME and included variables', async () => {
    process.env.MY_API_KEY = 'sekrit-key';
    process.env.GITHUB_TOKEN = 'sekrit-token';
    process.env.db_password = 'sekrit-password';
    process.env.AWS_SECRET_ACCESS_KEY = 'sekrit-aws';
    process.env.GOOGLE_APPLICATION_CREDENTIALS = '/sekrit/creds.json';
    process.env.UNLISTED_SETTING = 'sekrit-unlisted';
    process.env.ORDINARY_SETTING = 'visible';
    process.env.SWITCHYARD_ENV_INCLUDE = 'ORDINARY_SETTING';
    const output = await run('env; tr "\\0" "\\n" < /proc/self/environ');
    expect(output.content).not.toContain('sekrit');
    expect(output.content).toContain('ORDINARY_SETTING=visible');
    expect(output.content).toContain(`HOME=${process.env.HOME}`);
    expect(output.content).toContain(`PATH=${process.env.PATH}`);
    expect(output.content).toContain('SWITCHYARD_SESSION_ID=s');
  });

  it('lets the worker pass a secret on with SWITCHYARD_ENV_INCLUDE and drop more with SWITCHYARD_ENV_EXCLUDE', async () => {
    process.env.NPM_TOKEN = 'npm-token-value';
    process.env.GITHUB_TOKEN = 'github-token-value';
    process.env.INTERNAL_URL = 'internal-url-value';
    process.env.NPM_CONFIG_REGISTRY = 'https://registry.example/';
    // A secret-looking name passes only when written out; a wildcard passes the rest.
    process.env.SWITCHYARD_ENV_INCLUDE = 'NPM_*,NPM_TOKEN,INTERNAL_*';
    process.env.SWITCHYARD_ENV_EXCLUDE = 'INTERNAL_*';
    const output = await run('env');
    expect(output.content).toContain('NPM_TOKEN=npm-token-value');
    expect(output.content).toContain('NPM_CONFIG_REGISTRY=https://registry.example/');
    expect(output.content).not.toContain('github-token-value');
    expect(output.content).not.toContain('internal-url-value');
  });
});

describe('Bash spool cap', () => {
  const saved = process.env.SWITCHYARD_BASH_MAX_SPOOL_BYTES;
  afterEach(() => {
    if (saved === undefined) delete process.env.SWITCHYARD_BASH_MAX_SPOOL_BYTES;
    else process.env.SWITCHYARD_BASH_MAX_SPOOL_BYTES = saved;
  });

  it('stops `cat /dev/zero` at the cap, kills its process group and says so', async () => {
    process.env.SWITCHYARD_BASH_MAX_SPOOL_BYTES = String(2 * 1024 * 1024);
    const started = Date.now();
    const output = await run('cat /dev/zero', { timeout: 60_000 });
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(output).toMatchObject({ isError: true, errorCode: 'output_limit' });
    expect(output.content).toMatch(
      /Output exceeded the limit of 2097152 bytes for one Bash call \(SWITCHYARD_BASH_MAX_SPOOL_BYTES\); the command was stopped\.$/,
    );
    expect(output.spool?.bytes).toBeLessThanOrEqual(2 * 1024 * 1024);
    if (output.spool !== undefined) {
      expect((await stat(output.spool.path)).size).toBeLessThanOrEqual(2 * 1024 * 1024);
      await rm(output.spool.path);
    }
  });

  it('kills children that keep writing after the shell is stopped', async () => {
    process.env.SWITCHYARD_BASH_MAX_SPOOL_BYTES = String(1024 * 1024);
    const cwd = await scratchDir();
    const output = await run('(yes & echo $! > child.pid; wait)', { cwd, timeout: 60_000, unsandboxed: true });
    expect(output.errorCode).toBe('output_limit');
    const pid = Number(await readFile(path.join(cwd, 'child.pid'), 'utf8'));
    for (let i = 0; i < 100 && processExists(pid); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(processExists(pid)).toBe(false);
    if (output.spool !== undefined) await rm(output.spool.path);
  });

  it('has a named default and rejects a bad SWITCHYARD_BASH_MAX_SPOOL_BYTES', async () => {
    expect(BASH_LIMITS.spoolBytes).toBeGreaterThanOrEqual(RESULT_BUDGETS.Bash.maxModelBytes);
    process.env.SWITCHYARD_BASH_MAX_SPOOL_BYTES = 'lots';
    await expect(run('echo hi')).rejects.toThrow(/SWITCHYARD_BASH_MAX_SPOOL_BYTES must be a positive integer/);
  });
});

describe('Bash summary', () => {
  it("shows the command a human approves, never the model's description", () => {
    expect(bashTool.summarize?.({ command: 'rm -rf build', description: 'List files' })).toBe('rm -rf build');
    expect(bashTool.summarize?.({ command: 'ls' })).toBe('ls');
  });
});
