import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostToolUseFailureHookInput } from '../../src/hooks/types.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { testTools } from '../support/test-tools.js';
import { waitFor } from '../support/wait-for.js';

describe('PostToolUse and PostToolUseFailure hooks on a real server', () => {
  let harness: Harness;
  let cwd: string;
  const failures: PostToolUseFailureHookInput[] = [];
  beforeAll(async () => {
    cwd = await scratchDir();
    harness = await createHarness({
      tools: testTools(),
      defaultCwd: cwd,
      hooks: {
        preToolUse: [{ matcher: 'FakeFetch', run: () => ({ additionalContext: 'pre: fetched pages may be stale' }) }],
        postToolUse: [
          {
            matcher: 'FakeFetch',
            run: (input) => ({ additionalContext: `post: saw ${input.toolResponse.content.length} chars` }),
          },
          {
            matcher: 'Sleep',
            run: (input) =>
              (input.toolInput as { label?: string }).label === 'stop'
                ? { continue: false, stopReason: 'post hook said stop' }
                : undefined,
          },
          { matcher: 'Refuse', run: () => ({ additionalContext: 'never: Refuse fails' }) },
          {
            matcher: 'Slow',
            run: () => {
              throw new Error('broken hook');
            },
          },
        ],
        postToolUseFailure: [
          {
            run: (input) => {
              failures.push(input);
              return { additionalContext: `failure seen: ${input.isInterrupt ? 'interrupt' : 'error'}` };
            },
          },
        ],
      },
    });
  });
  afterAll(async () => harness.close());

  it('adds pre and post hook context to the result, numbered, and lets a PostToolUse hook stop the turn', async () => {
    const result = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
      return session.executeTurn({
        turnId: 't',
        calls: [
          { id: 'fetch', name: 'FakeFetch', input: { url: 'https://example.com' } },
          { id: 'stopper', name: 'Sleep', input: { ms: 1, label: 'stop' } },
          { id: 'skipped', name: 'Sleep', input: { ms: 1 } },
          { id: 'hidden', name: 'FakeEdit', input: { file_path: 'never.txt' } },
        ],
      });
    });
    expect(result.results[0]?.modelContent).toBe(
      'fetched https://example.com\n\n[Hook additional context]\n1. pre: fetched pages may be stale\n2. post: saw 27 chars',
    );
    expect(result.results[1]?.turnControl).toEqual({ stopTurn: true, reason: 'post hook said stop' });
    expect(result.stopped).toBe(true);
    expect(result.results[3]).toMatchObject({
      status: 'cancelled',
      modelContent: 'Tool cancelled because a previous tool result requested a turn stop.',
    });
  });

  it('runs PostToolUseFailure on errors, timeouts and cancellations (isInterrupt), and ignores a hook that throws', async () => {
    failures.length = 0;
    const outcome = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      const first = await session.executeTurn({
        turnId: 't1',
        calls: [
          { id: 'refuse', name: 'Refuse', input: {} },
          { id: 'slow', name: 'Slow', input: {} },
        ],
      });
      const second = session.executeTurn({
        turnId: 't2',
        calls: [{ id: 'long', name: 'Sleep', input: { ms: 60_000 } }],
      });
      await waitFor(
        async () => (await session.events()).events,
        (events) => events.some((e) => e.type === 'ToolCallStarted' && e.turnId === 't2'),
      );
      await session.interrupt('esc');
      return { first, second: await second };
    });
    expect(outcome.first.results[0]?.modelContent).toBe(
      '<tool_use_error>nothing to do here</tool_use_error>\n\n[Hook additional context]\n1. failure seen: error',
    );
    expect(outcome.first.results[1]?.modelContent).toBe(
      'Tool execution timed out after 200ms\n\n[Hook additional context]\n1. failure seen: error',
    );
    expect(outcome.second.results[0]?.modelContent).toMatch(
      /\n\n\[Hook additional context\]\n1\. failure seen: interrupt$/,
    );
    expect(failures.map((f) => [f.toolUseId, f.isInterrupt])).toEqual([
      ['refuse', false],
      ['slow', false],
      ['long', true],
    ]);
  });
});

describe('Claude Code command hooks from settings files and session options (real scripts, real Bash)', () => {
  it('runs an existing Claude Code hook script unchanged: it blocks rm -rf in Bash', async () => {
    const { mkdir, writeFile, chmod } = await import('node:fs/promises');
    const path = await import('node:path');
    const { bashTool } = await import('../../src/tools/builtin/bash.js');
    const cwd = await scratchDir();
    // A typical Claude Code PreToolUse hook: reads the event on stdin, exits 2 with a reason on stderr.
    await mkdir(path.join(cwd, '.claude', 'hooks'), { recursive: true });
    const script = path.join(cwd, '.claude', 'hooks', 'block-rm.sh');
    await writeFile(
      script,
      '#!/bin/sh\ninput=$(cat)\nif printf "%s" "$input" | grep -q "rm -rf"; then\n  echo "Blocked: rm -rf is not allowed here" >&2\n  exit 2\nfi\nexit 0\n',
    );
    await chmod(script, 0o755);
    await mkdir(path.join(cwd, '.switchyard'));
    await writeFile(
      path.join(cwd, '.switchyard', 'settings.json'),
      JSON.stringify({
        hooks: {
          PreToolUse: [
            {
              matcher: 'Bash',
              hooks: [{ type: 'command', command: '"$CLAUDE_PROJECT_DIR"/.claude/hooks/block-rm.sh', timeout: 10 }],
            },
          ],
        },
      }),
    );
    const harness = await createHarness({ tools: [bashTool], defaultCwd: cwd });
    try {
      const result = await harness.withWorker(async () => {
        const session = await harness.startSession({
          cwd,
          permissionMode: 'bypassPermissions',
          // The project's own settings file: trusted by the agent builder, as workspace settings must be.
          trustWorkspaceSettings: true,
          // A session-level PostToolUse hook, in the same shape.
          hooks: {
            PostToolUse: [
              {
                matcher: 'Bash',
                hooks: [{ type: 'command', command: 'echo \'{"additionalContext":"checked by session hook"}\'' }],
              },
            ],
          },
        });
        return session.executeTurn({
          turnId: 't',
          calls: [
            { id: 'rm', name: 'Bash', input: { command: 'rm -rf build' } },
            { id: 'ok', name: 'Bash', input: { command: 'echo fine' } },
          ],
        });
      });
      expect(result.results[0]).toMatchObject({
        status: 'denied',
        modelContent: 'Blocked: rm -rf is not allowed here',
      });
      expect(result.results[1]).toMatchObject({
        status: 'success',
        modelContent: 'fine\n\n[Hook additional context]\n1. checked by session hook',
      });
    } finally {
      await harness.close();
    }
  });
});

describe('command hook decisions through a turn (real scripts)', () => {
  it('rewrites input (validated again), stops the turn with continue:false, and never allows when a hook hangs', async () => {
    const { mkdir, writeFile, chmod } = await import('node:fs/promises');
    const path = await import('node:path');
    const { bashTool } = await import('../../src/tools/builtin/bash.js');
    const cwd = await scratchDir();
    const hooksDir = path.join(cwd, 'hooks');
    await mkdir(hooksDir);
    const script = async (name: string, body: string): Promise<string> => {
      const file = path.join(hooksDir, name);
      await writeFile(file, `#!/bin/sh\n${body}\n`);
      await chmod(file, 0o755);
      return file;
    };
    // Each script looks at the command in the event on stdin and answers the way a Claude Code hook would.
    const router = await script(
      'router.sh',
      [
        'input=$(cat)',
        'case "$input" in',
        '  *"echo rewrite-me"*) echo \'{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"echo rewritten"}}}\' ;;',
        '  *"echo break-me"*) echo \'{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":42}}}\' ;;',
        '  *"echo last"*) echo \'{"continue":false,"stopReason":"hook ended the turn"}\' ;;',
        '  *"echo hang"*) sleep 30 ;;',
        'esac',
        'exit 0',
      ].join('\n'),
    );
    const harness = await createHarness({ tools: [bashTool], defaultCwd: cwd });
    try {
      const result = await harness.withWorker(async () => {
        const session = await harness.startSession({
          cwd,
          // dontAsk: whatever would ask is denied, so a hook that says nothing can never let a call through.
          permissionMode: 'dontAsk',
          rules: { allow: ['Bash(echo rewritten)', 'Bash(echo last)', 'Bash(echo after > after.txt)'] },
          hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: router, timeout: 1 }] }] },
        });
        return session.executeTurn({
          turnId: 't',
          calls: [
            { id: 'rewrite', name: 'Bash', input: { command: 'echo rewrite-me' } },
            { id: 'invalid', name: 'Bash', input: { command: 'echo break-me' } },
            { id: 'hang', name: 'Bash', input: { command: 'echo hang > hung.txt' } },
            { id: 'last', name: 'Bash', input: { command: 'echo last' } },
            { id: 'after', name: 'Bash', input: { command: 'echo after > after.txt' } }, // exclusive: a later group
          ],
        });
      });
      const byId = Object.fromEntries(result.results.map((r) => [r.callId, r]));
      expect(byId.rewrite).toMatchObject({ status: 'success', modelContent: 'rewritten\n' });
      expect(byId.invalid?.modelContent).toMatch(
        /^<tool_use_error>InputValidationError: input rewritten by a PreToolUse hook is invalid: command: /,
      );
      expect(byId.hang).toMatchObject({ status: 'denied' });
      expect(byId.last).toMatchObject({
        status: 'success',
        turnControl: { stopTurn: true, reason: 'hook ended the turn' },
      });
      expect(byId.after).toMatchObject({
        status: 'cancelled',
        modelContent: 'Tool cancelled because a previous tool result requested a turn stop.',
      });
    } finally {
      await harness.close();
    }
  });
});
