/**
 * Attacks on the permission layer on a real server, each reproduced through a session: "read-only" git running
 * programs named by the repository's `.git/config`, one read confinement for Bash, Grep and Write, and rules judged
 * on every part of a compound command, with `allow_always` remembering no more than a part (SECURITY.md).
 */
import { execFileSync } from 'node:child_process';
import { access, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { ApprovalRequest } from '../../src/contracts/approval.js';
import type { ToolResult } from '../../src/contracts/tool-result.js';
import { bashTool } from '../../src/tools/builtin/bash.js';
import { grepTool } from '../../src/tools/builtin/grep.js';
import { readTool } from '../../src/tools/builtin/read.js';
import { writeTool } from '../../src/tools/builtin/write.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = 'sk-test-do-not-print-4242';

const exists = async (file: string): Promise<boolean> =>
  access(file).then(
    () => true,
    () => false,
  );

const pending = (session: SessionHandle, count = 1): Promise<ApprovalRequest[]> =>
  waitFor(
    () => session.pendingApprovals(),
    (list) => list.length >= count,
    { what: `${count} pending approval(s)` },
  );

/** Runs one Bash call that must ask: checks what the approver sees, answers, and returns the result. */
async function answerBash(
  session: SessionHandle,
  turnId: string,
  command: string,
  decision: 'allow' | 'allow_always' | 'deny',
): Promise<{ request: ApprovalRequest; result: ToolResult }> {
  const turn = session.executeTurn({ turnId, calls: [{ id: 'c', name: 'Bash', input: { command } }] });
  const [request] = (await pending(session)) as [ApprovalRequest];
  expect(request).toMatchObject({ toolName: 'Bash', input: { command } });
  await session.approve({ requestId: request.requestId, decision, inputDigest: request.inputDigest });
  const { results } = await turn;
  return { request, result: results[0] as ToolResult };
}

describe('Bash permission rules that hold (real server, real processes)', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await createHarness({ tools: [bashTool, readTool, grepTool, writeTool] });
  });
  afterAll(async () => harness.close());

  /** A repository whose own `.git/config` names programs: each one leaves a marker file outside the workspace. */
  async function hostileRepository(): Promise<{ cwd: string; marker: string }> {
    const cwd = await scratchDir('switchyard-hostile-repo-');
    const outside = await scratchDir('switchyard-marker-');
    const marker = path.join(outside, 'repository-program-ran');
    const program = path.join(outside, 'program.sh');
    await writeFile(program, `#!/bin/sh\necho "$@" >> '${marker}'\n`, { mode: 0o755 });
    const git = (...args: string[]) =>
      execFileSync(
        'git',
        ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'core.fsmonitor=false', ...args],
        { cwd, stdio: 'pipe' },
      );
    git('init', '-q', '.');
    await writeFile(path.join(cwd, 'a.txt'), 'one\n');
    git('add', 'a.txt');
    git('commit', '-q', '-m', 'one');
    await writeFile(path.join(cwd, 'a.txt'), 'one\ntwo\n');
    // What a cloned repository (or a model's earlier write) can leave in .git/config.
    git('config', 'core.fsmonitor', program);
    git('config', 'diff.external', program);
    return { cwd, marker };
  }

  it('git status asks in default mode and runs core.fsmonitor only once a human approves', async () => {
    const { cwd, marker } = await hostileRepository();
    const outcome = await harness.withWorker(async () => {
      // The parser wall alone (sandbox off): the marker is outside cwd, where the sandbox would not let the program write.
      const session = await harness.startSession({ cwd, sandbox: { mode: 'off' } });
      const denied = await answerBash(session, 't1', 'git status', 'deny');
      const ranBeforeApproval = await exists(marker);
      const approved = await answerBash(session, 't2', 'git status', 'allow');
      return { denied: denied.result, ranBeforeApproval, approved: approved.result };
    });
    expect(outcome.denied.status).toBe('denied');
    expect(outcome.ranBeforeApproval).toBe(false);
    // The attack is real: once approved, git runs the repository's program.
    expect(outcome.approved.status).toBe('success');
    expect(await exists(marker)).toBe(true);
  });

  it('git status and git diff are denied in plan and dontAsk modes without running the repository programs; git rev-parse still runs', async () => {
    const { cwd, marker } = await hostileRepository();
    const outcome = await harness.withWorker(async () => {
      const plan = await harness.startSession({ cwd, permissionMode: 'plan' });
      const planned = await plan.executeTurn({
        turnId: 't',
        calls: [
          { id: 'status', name: 'Bash', input: { command: 'git status' } },
          { id: 'diff', name: 'Bash', input: { command: 'git diff' } },
          { id: 'log', name: 'Bash', input: { command: 'git log -p --no-ext-diff --no-textconv' } },
          { id: 'rev', name: 'Bash', input: { command: 'git rev-parse --abbrev-ref HEAD' } },
        ],
      });
      const dontAsk = await harness.startSession({ cwd, permissionMode: 'dontAsk' });
      const strict = await dontAsk.executeTurn({
        turnId: 't',
        calls: [{ id: 'diff', name: 'Bash', input: { command: 'git diff --stat' } }],
      });
      return { planned: planned.results, strict: strict.results };
    });
    expect(outcome.planned.map((result) => result.status)).toEqual(['denied', 'denied', 'denied', 'success']);
    expect(outcome.planned[0]?.modelContent).toMatch(/plan mode/);
    expect(outcome.strict[0]).toMatchObject({ status: 'denied', modelContent: expect.stringMatching(/dontAsk/) });
    expect(await exists(marker)).toBe(false);
  });

  it('with deny Read(.env), no Bash spelling, Grep or Write reaches .env, even in bypassPermissions', async () => {
    const cwd = await scratchDir('switchyard-dotenv-');
    await mkdir(path.join(cwd, 'src'));
    await writeFile(path.join(cwd, '.env'), `API_KEY=${SECRET}\n`);
    await writeFile(path.join(cwd, 'src', 'a.ts'), 'export const a = 1;\n');
    const commands = [
      'cat .env',
      'ls && cat .env',
      'cat ./src/../.env',
      'echo $(cat .env)',
      'wc -c < .env',
      'grep -r API_KEY .',
      'cat .e*',
      'timeout 5 head .env',
    ];
    const results = await harness.withWorker(async () => {
      const session = await harness.startSession({
        cwd,
        permissionMode: 'bypassPermissions',
        rules: { deny: ['Read(.env)', 'Edit(.env)'] },
      });
      const turn = await session.executeTurn({
        turnId: 't',
        calls: [
          ...commands.map((command, index) => ({ id: `bash${index}`, name: 'Bash', input: { command } })),
          { id: 'grep', name: 'Grep', input: { pattern: 'API_KEY', path: '.env', output_mode: 'content' } },
          { id: 'write', name: 'Write', input: { file_path: '.env', content: 'API_KEY=replaced\n' } },
          { id: 'fine', name: 'Bash', input: { command: 'cat src/a.ts' } },
        ],
      });
      return turn.results;
    });
    const byId = Object.fromEntries(results.map((result) => [result.callId, result]));
    for (const [index, command] of commands.entries()) {
      expect(byId[`bash${index}`], command).toMatchObject({
        status: 'denied',
        modelContent: expect.stringContaining('Read(.env)'),
      });
    }
    expect(byId.grep).toMatchObject({ status: 'denied', modelContent: expect.stringContaining('Read(.env)') });
    expect(byId.write).toMatchObject({ status: 'denied', modelContent: expect.stringContaining('Edit(.env)') });
    expect(byId.fine).toMatchObject({ status: 'success', modelContent: expect.stringContaining('export const a') });
    expect(JSON.stringify(results)).not.toContain(SECRET);
    expect(await readFile(path.join(cwd, '.env'), 'utf8')).toBe(`API_KEY=${SECRET}\n`);
  });

  it('a read-only command that reads outside cwd, directly or through a symlink, asks instead of running silently', async () => {
    const cwd = await scratchDir('switchyard-confined-');
    const outside = await scratchDir('switchyard-outside-');
    const secretFile = path.join(outside, 'id_rsa');
    await writeFile(secretFile, `${SECRET}\n`);
    await symlink(secretFile, path.join(cwd, 'innocent.txt'));
    const outcome = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      const direct = await answerBash(session, 't1', `cat ${secretFile}`, 'deny');
      const linked = await answerBash(session, 't2', 'cat innocent.txt', 'deny');
      const walked = await answerBash(session, 't3', `cd ${outside} && cat id_rsa`, 'deny');
      return [direct, linked, walked];
    });
    for (const { request, result } of outcome) {
      expect(request.reason).toMatch(/outside the working directory/);
      expect(result.status).toBe('denied');
    }
    expect(JSON.stringify(outcome)).not.toContain(SECRET);
  });

  it('an allow prefix covers one simple command; a deny rule catches every spelling, even in bypassPermissions', async () => {
    const cwd = await scratchDir('switchyard-compound-');
    await writeFile(path.join(cwd, 'keep.txt'), 'keep\n');
    const outcome = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, rules: { allow: ['Bash(touch ok.txt:*)'] } });
      const allowed = await session.executeTurn({
        turnId: 't1',
        calls: [{ id: 'ok', name: 'Bash', input: { command: 'touch ok.txt' } }],
      });
      const compound = await answerBash(session, 't2', 'touch ok.txt && touch pwned.txt', 'deny');
      const substituted = await answerBash(session, 't3', 'touch ok.txt $(touch pwned.txt)', 'deny');
      const bypass = await harness.startSession({
        cwd,
        permissionMode: 'bypassPermissions',
        rules: { deny: ['Bash(rm:*)'] },
      });
      const spellings = [
        'true && \\rm -f keep.txt',
        "'rm' -f keep.txt",
        'echo $(rm -f keep.txt)',
        "bash -c 'rm -f keep.txt'",
        'timeout 5 rm -f keep.txt',
        'FOO=1 /bin/rm -f keep.txt',
      ];
      const denied = await bypass.executeTurn({
        turnId: 't',
        calls: spellings.map((command, index) => ({ id: `s${index}`, name: 'Bash', input: { command } })),
      });
      return {
        allowed: allowed.results[0],
        compound: compound.result,
        substituted: substituted.result,
        denied: denied.results,
        spellings,
      };
    });
    expect(outcome.allowed?.status).toBe('success');
    expect(outcome.compound.status).toBe('denied');
    expect(outcome.substituted.status).toBe('denied');
    expect(await exists(path.join(cwd, 'pwned.txt'))).toBe(false);
    expect(outcome.denied.map((result) => result.status)).toEqual(outcome.spellings.map(() => 'denied'));
    expect(await exists(path.join(cwd, 'keep.txt'))).toBe(true);
  });

  it('allow_always remembers no more than the part that needed approval', async () => {
    const cwd = await scratchDir('switchyard-remember-');
    await mkdir(path.join(cwd, 'sub'));
    await writeFile(path.join(cwd, 'sub', 'a.txt'), 'a\n');
    const outcome = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      await answerBash(session, 't1', 'cd sub && touch b.txt', 'allow_always');
      const state = await session.workflow.query<{ rememberedRules: string[] }>('sessionState');
      const again = await session.executeTurn({
        turnId: 't2',
        calls: [{ id: 'c', name: 'Bash', input: { command: 'touch sub/c.txt' } }],
      });
      const compound = await answerBash(session, 't3', 'touch sub/d.txt && rm -f sub/a.txt', 'deny');
      return { rules: state.rememberedRules, again: again.results[0], compound: compound.result };
    });
    expect(outcome.rules).toEqual(['Bash(touch:*)']);
    expect(outcome.again?.status).toBe('success');
    expect(outcome.compound.status).toBe('denied');
    expect(await exists(path.join(cwd, 'sub', 'a.txt'))).toBe(true);
    expect(await exists(path.join(cwd, 'sub', 'd.txt'))).toBe(false);
  });
});
