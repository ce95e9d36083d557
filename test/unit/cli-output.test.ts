import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeError, isUnreachable } from '../../src/cli/common.js';
import { statusLine } from '../../src/cli/run-command.js';
import { firstTurnHint } from '../../src/cli/worker-commands.js';
import { scratchDir } from '../support/scratch.js';

describe('the first-turn hint `switchyard dev` prints last', () => {
  it('names a custom namespace and task queue in every command, and a call that works in that directory', async () => {
    const cwd = await scratchDir();
    const hint = firstTurnHint({ address: '127.0.0.1:7233', namespace: 'agents', taskQueue: 'tq-custom', cwd });
    expect(hint).toContain(
      'TEMPORAL_ADDRESS=127.0.0.1:7233 TEMPORAL_NAMESPACE=agents SWITCHYARD_TASK_QUEUE=tq-custom npx switchyard turn',
    );
    expect(hint).toContain('--namespace agents --task-queue tq-custom');
    expect(hint).toContain('-o json');
    // No README.md there: the hint lists files instead of reading one the user does not have.
    expect(hint).toContain('"name":"Glob"');
    expect(hint).not.toContain('README.md');
    await writeFile(path.join(cwd, 'README.md'), '# hi\n');
    expect(firstTurnHint({ address: '127.0.0.1:7233', namespace: 'default', taskQueue: 'switchyard', cwd })).toContain(
      '"file_path":"README.md"',
    );
  });

  it('leaves the defaults out', async () => {
    const cwd = path.join(await scratchDir(), 'w');
    await mkdir(cwd);
    const hint = firstTurnHint({ address: '127.0.0.1:7233', namespace: 'default', taskQueue: 'switchyard', cwd });
    expect(hint).not.toMatch(/TEMPORAL_NAMESPACE|SWITCHYARD_TASK_QUEUE/);
  });
});

describe('CLI error lines', () => {
  it('shows the cause of a rejected update, once each', () => {
    const error = new Error('Workflow Update failed', { cause: new Error('Duplicate call id "c1" in turn t1') });
    expect(describeError(error)).toBe('Workflow Update failed: Duplicate call id "c1" in turn t1');
  });

  it('tells an unreachable server from other failures', () => {
    expect(isUnreachable(new Error('Failed to connect before the deadline'))).toBe(true);
    expect(isUnreachable(Object.assign(new Error('x'), { name: 'TransportError' }))).toBe(true);
    expect(isUnreachable(new Error('Workflow Update failed'))).toBe(false);
  });
});

describe('`run` status lines', () => {
  const call = { id: 'b1', name: 'Bash', input: { command: 'npm test' } };
  it('says what a waiting call waits for and how to approve it', () => {
    const request = {
      requestId: 'req-1',
      turnId: 't',
      callId: 'b1',
      toolName: 'Bash',
      input: { command: 'npm test' },
      inputDigest: 'd',
      requestedAt: new Date().toISOString(),
    };
    expect(statusLine(call, { kind: 'approval', request }, 's1', false)).toBe(
      'b1 Bash: waiting for approval ($ npm test)\n  approve: switchyard approve req-1 --session s1',
    );
  });
  it("shows a running call's latest output line on a terminal only", () => {
    const progress = {
      callId: 'b1',
      toolName: 'Bash',
      turnId: 't',
      latestLine: 'PASS 12 tests',
      updatedAt: '',
      attempt: 1,
    };
    expect(statusLine(call, { kind: 'running', since: Date.now() - 3_000, progress } as never, 's1', true)).toMatch(
      /^b1 Bash: running [34]s \| PASS 12 tests$/,
    );
    expect(statusLine(call, { kind: 'running', since: Date.now() } as never, 's1', false)).toBe('b1 Bash: running');
  });
});
