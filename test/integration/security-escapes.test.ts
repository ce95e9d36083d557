/**
 * Reads and writes around the permission layer, each reproduced through a session on a real server with the real
 * tools and no OS sandbox: `..` after a symlinked directory, values glued to short options, jq modules, a glob that
 * expands into an option, a glob over a directory too large to list, shell forms the splitter cannot see through,
 * file tools reaching a denied file through a symlink, remembered path rules, and hooks settling a protected path.
 */
import { access, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { ApprovalRequest } from '../../src/contracts/approval.js';
import type { ToolResult } from '../../src/contracts/tool-result.js';
import { bashTool } from '../../src/tools/builtin/bash.js';
import { editTool } from '../../src/tools/builtin/edit.js';
import { globTool } from '../../src/tools/builtin/glob.js';
import { grepTool } from '../../src/tools/builtin/grep.js';
import { readTool } from '../../src/tools/builtin/read.js';
import { writeTool } from '../../src/tools/builtin/write.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = 'sk-outside-do-not-print-7373';

const exists = async (file: string): Promise<boolean> =>
  access(file).then(
    () => true,
    () => false,
  );

const pending = (session: SessionHandle): Promise<ApprovalRequest[]> =>
  waitFor(
    () => session.pendingApprovals(),
    (list) => list.length >= 1,
    { what: 'a pending approval' },
  );

/** A workspace `cwd` and, outside it, `outside/secret.txt` (and `outside/creds.json`, `outside/sub/`). */
async function workspace(): Promise<{ cwd: string; outside: string }> {
  const cwd = await scratchDir('switchyard-escape-cwd-');
  const outside = await scratchDir('switchyard-escape-outside-');
  await mkdir(path.join(outside, 'sub'));
  await writeFile(path.join(outside, 'secret.txt'), `TOP ${SECRET}\n`);
  await writeFile(path.join(outside, 'creds.json'), `{"token":"${SECRET}"}\n`);
  return { cwd, outside };
}

async function bashCalls(
  harness: Harness,
  options: Parameters<Harness['startSession']>[0],
  commands: readonly string[],
): Promise<ToolResult[]> {
  return harness.withWorker(async () => {
    const session = await harness.startSession(options);
    const turn = await session.executeTurn({
      turnId: 't',
      calls: commands.map((command, index) => ({ id: `c${index}`, name: 'Bash', input: { command } })),
    });
    return turn.results as ToolResult[];
  });
}

describe('reads and writes around the rules, closed without a sandbox (real server, real tools)', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await createHarness({ tools: [bashTool, readTool, grepTool, globTool, writeTool, editTool] });
  });
  afterAll(async () => harness.close());

  it('in plan mode no spelling reads the outside file: `..` after a symlink, glued option values, jq imports, a glob that becomes -R', async () => {
    const { cwd, outside } = await workspace();
    await symlink(path.join(outside, 'sub'), path.join(cwd, 'd'));
    // `grep -h TOP *` with a file named `-R` becomes `grep -R`, which follows `inner` out.
    await writeFile(path.join(cwd, '-R'), '');
    await writeFile(path.join(cwd, 'a.txt'), 'TOP inside\n');
    await mkdir(path.join(cwd, 'nested'));
    await symlink(outside, path.join(cwd, 'nested', 'inner'));
    await mkdir(path.join(cwd, 'lib'));
    const relativeCreds = path.relative(path.join(cwd, 'lib'), path.join(outside, 'creds'));
    const commands = [
      'cat d/../secret.txt',
      'cd d && cat ../secret.txt',
      `file -m${outside}/secret.txt /dev/null`,
      `grep -f${outside}/secret.txt a.txt`,
      `jq -n -L lib 'import "${relativeCreds}" as $c; $c'`,
      `jq -n -L${outside} 'import "creds" as $c; $c'`,
      'grep -h TOP *',
    ];
    const results = await bashCalls(
      harness,
      { cwd, permissionMode: 'plan', rules: { deny: [`Read(${outside}/**)`] } },
      commands,
    );
    for (const [index, result] of results.entries()) {
      expect(result.status, commands[index]).not.toBe('success');
      expect(result.modelContent, commands[index]).not.toContain(SECRET);
    }
  });

  it('a glob over a directory too large to check fails closed: `cat zz*` does not read through a late symlink', async () => {
    const { cwd, outside } = await workspace();
    await symlink(path.join(outside, 'secret.txt'), path.join(cwd, 'zzz-link'));
    await Promise.all(
      Array.from({ length: 1_500 }, (_, index) =>
        writeFile(path.join(cwd, `zz${String(index).padStart(4, '0')}.txt`), 'x\n'),
      ),
    );
    const outcome = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'plan' });
      const globbed = session.executeTurn({
        turnId: 't1',
        calls: [{ id: 'glob', name: 'Bash', input: { command: 'cat zz*' } }],
      });
      // Not allowed silently: it asks (a read that cannot be located), and the human says no.
      const [request] = (await pending(session)) as [ApprovalRequest];
      await session.approve({ requestId: request.requestId, decision: 'deny', inputDigest: request.inputDigest });
      const named = await session.executeTurn({
        turnId: 't2',
        calls: [{ id: 'named', name: 'Bash', input: { command: 'cat zz0001.txt' } }],
      });
      return { request, globbed: (await globbed).results[0] as ToolResult, named: named.results[0] as ToolResult };
    });
    expect(outcome.request.reason).toMatch(/more than 1000 entries/);
    expect(outcome.globbed.status).toBe('denied');
    expect(JSON.stringify(outcome)).not.toContain(SECRET);
    expect(outcome.named).toMatchObject({ status: 'success', modelContent: 'x\n' });
  });

  it('under deny Bash(rm:*) in bypassPermissions, coproc, here-strings, trap, functions, pipes into sh, ${IFS}, braces and aliases delete nothing', async () => {
    const { cwd } = await workspace();
    const commands = [
      'coproc rm -f v0',
      "sh <<< 'rm -f v1'",
      "trap -- 'rm -f v2' EXIT",
      'function f { rm -f v3; }; f',
      'sh <<EOF\nrm -f v4\nEOF',
      "echo 'rm -f v5' | sh",
      'rm${IFS}-f v6',
      '{rm,-f,v7}',
      'a=rm; $a -f v8',
      "script -qc 'rm -f v9' /dev/null",
      "git -c alias.z='!rm -f v10' z",
    ];
    for (const index of commands.keys()) await writeFile(path.join(cwd, `v${index}`), 'keep\n');
    const results = await bashCalls(
      harness,
      { cwd, permissionMode: 'bypassPermissions', rules: { deny: ['Bash(rm:*)'] } },
      commands,
    );
    for (const [index, result] of results.entries()) expect(result.status, commands[index]).toBe('denied');
    for (const index of commands.keys()) expect(await exists(path.join(cwd, `v${index}`)), commands[index]).toBe(true);
  });

  it('Read, Write and Edit judge rules on the file a symlink reaches, too', async () => {
    const { cwd } = await workspace();
    await mkdir(path.join(cwd, 'docs'));
    await mkdir(path.join(cwd, 'src'));
    await writeFile(path.join(cwd, '.env'), `API_KEY=${SECRET}\n`);
    await symlink('../.env', path.join(cwd, 'docs', 'notes.txt'));
    await symlink('../.env', path.join(cwd, 'src', 'config.txt'));
    const outcome = await harness.withWorker(async () => {
      const plan = await harness.startSession({ cwd, permissionMode: 'plan', rules: { deny: ['Read(.env)'] } });
      const read = await plan.executeTurn({
        turnId: 't',
        calls: [{ id: 'r', name: 'Read', input: { file_path: 'docs/notes.txt' } }],
      });
      const results: ToolResult[] = [];
      for (const permissionMode of ['default', 'acceptEdits'] as const) {
        const session = await harness.startSession({
          cwd,
          permissionMode,
          rules: { allow: ['Edit(src/**)'], deny: ['Edit(.env)'] },
        });
        const keyEdit = { file_path: 'src/config.txt', old_string: 'API_KEY', new_string: 'OWNED' };
        const turn = await session.executeTurn({
          turnId: 't',
          calls: [
            { id: 'w', name: 'Write', input: { file_path: 'src/config.txt', content: 'API_KEY=overwritten\n' } },
            { id: 'e', name: 'Edit', input: keyEdit },
          ],
        });
        results.push(...(turn.results as ToolResult[]));
      }
      return { read: read.results[0] as ToolResult, writes: results };
    });
    expect(outcome.read.status).toBe('denied');
    expect(outcome.read.modelContent).not.toContain(SECRET);
    for (const result of outcome.writes) expect(result.status, result.callId).toBe('denied');
    expect(await readFile(path.join(cwd, '.env'), 'utf8')).toBe(`API_KEY=${SECRET}\n`);
  });

  it('allow_always on a Write to a file named `**` remembers that file only', async () => {
    const { cwd } = await workspace();
    const outcome = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      const first = session.executeTurn({
        turnId: 't1',
        calls: [{ id: 'w', name: 'Write', input: { file_path: '**', content: 'x\n' } }],
      });
      const [request] = (await pending(session)) as [ApprovalRequest];
      await session.approve({
        requestId: request.requestId,
        decision: 'allow_always',
        inputDigest: request.inputDigest,
      });
      await first;
      const second = session.executeTurn({
        turnId: 't2',
        calls: [{ id: 'w', name: 'Write', input: { file_path: 'elsewhere.txt', content: 'y\n' } }],
      });
      const [asked] = (await pending(session)) as [ApprovalRequest];
      await session.approve({ requestId: asked.requestId, decision: 'deny', inputDigest: asked.inputDigest });
      return { rule: request.rememberRule, second: (await second).results[0] as ToolResult };
    });
    expect(outcome.rule).not.toBe(`Write(${cwd}/**)`);
    expect(outcome.second.status).toBe('denied');
    expect(await exists(path.join(cwd, 'elsewhere.txt'))).toBe(false);
  });

  it('a PermissionRequest hook cannot settle a protected path: only a human can', async () => {
    const { cwd } = await workspace();
    await mkdir(path.join(cwd, '.git', 'hooks'), { recursive: true });
    const hooks = {
      permissionRequest: [{ matcher: 'Write', run: () => Promise.resolve({ behavior: 'allow' as const }) }],
    };
    const outcome = await harness.withWorker(
      async () => {
        const session = await harness.startSession({ cwd });
        const hookWrite = { file_path: '.git/hooks/pre-commit', content: '#!/bin/sh\ntouch pwned\n' };
        const turn = session.executeTurn({
          turnId: 't',
          calls: [{ id: 'w', name: 'Write', input: hookWrite }],
        });
        const [request] = (await pending(session)) as [ApprovalRequest];
        await session.approve({ requestId: request.requestId, decision: 'deny', inputDigest: request.inputDigest });
        return (await turn).results[0] as ToolResult;
      },
      { hooks },
    );
    expect(outcome.status).toBe('denied');
    expect(await exists(path.join(cwd, '.git', 'hooks', 'pre-commit'))).toBe(false);
  });
});
