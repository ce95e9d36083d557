import { chmod, mkdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { commandHooks } from '../../src/hooks/command-hooks.js';
import { runCommandHook } from '../../src/hooks/command-runner.js';
import { loadHookSettings, mergeHookSettings } from '../../src/hooks/hook-settings-file.js';
import { trustedWorkspacesFromEnv } from '../../src/config/environment.js';
import { environmentSettings } from '../../src/config/settings.js';
import { hookSettingsSchema } from '../../src/contracts/hook-settings.js';
import type { HookEventName, HookSettings } from '../../src/contracts/hook-settings.js';
import { hookMatches } from '../../src/hooks/matcher.js';
import type { PreToolUseHookInput } from '../../src/hooks/types.js';
import { scratchDir } from '../support/scratch.js';

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await scratchDir('switchyard-command-hooks-');
  dirs.push(dir);
  return dir;
}
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** Writes an executable `#!/bin/sh` script and returns its path. */
async function script(dir: string, name: string, body: string): Promise<string> {
  const file = path.join(dir, name);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `#!/bin/sh\n${body}\n`);
  await chmod(file, 0o755);
  return file;
}

/** One command hook for one event. */
function settingsFor(
  event: HookEventName,
  command: string,
  options: { matcher?: string; timeout?: number } = {},
): HookSettings {
  return {
    hooks: {
      [event]: [
        {
          ...(options.matcher === undefined ? {} : { matcher: options.matcher }),
          hooks: [{ type: 'command', command, ...(options.timeout === undefined ? {} : { timeout: options.timeout }) }],
        },
      ],
    },
  };
}

function preInput(cwd: string, toolName = 'Bash', toolInput: unknown = { command: 'ls -la' }): PreToolUseHookInput {
  return { sessionId: 'session-1', cwd, toolName, toolInput, toolUseId: 'toolu_1' };
}

/** Runs a PreToolUse script (body of a `#!/bin/sh` file) as the only hook. */
async function preToolUse(
  body: string,
  options: {
    cwd?: string;
    toolInput?: unknown;
    timeout?: number;
    onWarning?: (message: string, details: Record<string, unknown>) => void;
  } = {},
) {
  const cwd = options.cwd ?? (await tempDir());
  const file = await script(cwd, 'hook.sh', body);
  const hooks = commandHooks(
    settingsFor('PreToolUse', file, options.timeout === undefined ? {} : { timeout: options.timeout }),
    options.onWarning === undefined ? {} : { onWarning: options.onWarning },
  );
  const hook = hooks.preToolUse?.[0];
  if (hook === undefined) throw new Error('no hook');
  return hook.run(preInput(cwd, 'Bash', options.toolInput ?? { command: 'ls -la' }));
}

/** Runs the hooks whose matcher fits, the way the activities do. */
async function runMatchingPreToolUse(settings: HookSettings, input: PreToolUseHookInput) {
  const results = [];
  for (const hook of commandHooks(settings).preToolUse ?? []) {
    if (hookMatches(hook.matcher, input.toolName)) results.push(await hook.run(input));
  }
  return results;
}

/** Linux keeps killed, unreaped processes as zombies: they count as dead. */
async function alive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  return stat === undefined ? true : stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}

/** Reads stdin into a JSON file next to the session (Claude Code's "$CLAUDE_PROJECT_DIR"). */
const CAPTURE_STDIN = 'cat > "$CLAUDE_PROJECT_DIR/stdin.json"';

/** Prints a JSON document (heredoc, so no quoting trouble). */
const printJson = (value: unknown): string => `cat <<'JSON'\n${JSON.stringify(value)}\nJSON`;

describe('a Claude Code hook script, unchanged', () => {
  it('blocks rm -rf in Bash with exit 2 and its stderr, from project settings that use $CLAUDE_PROJECT_DIR', async () => {
    const cwd = await tempDir();
    await script(
      cwd,
      '.claude/hooks/block-rm.sh',
      [
        '# PreToolUse hook from a Claude Code project: refuse recursive deletes.',
        `command=$(node -e 'let s="";process.stdin.on("data",(d)=>s+=d).on("end",()=>process.stdout.write(JSON.parse(s).tool_input.command||""))')`,
        'if echo "$command" | grep -q "rm -rf"; then',
        '  echo "Blocked: rm -rf is not allowed in this project" >&2',
        '  exit 2',
        'fi',
        'exit 0',
      ].join('\n'),
    );
    await mkdir(path.join(cwd, '.switchyard'));
    await writeFile(
      path.join(cwd, '.switchyard', 'settings.json'),
      JSON.stringify({
        permissions: { allow: ['Bash(ls:*)'] },
        hooks: {
          PreToolUse: [
            {
              matcher: 'Bash',
              hooks: [{ type: 'command', command: '"$CLAUDE_PROJECT_DIR"/.claude/hooks/block-rm.sh' }],
            },
          ],
        },
      }),
    );
    const onWarning = vi.fn();
    const { settings } = await loadHookSettings({
      cwd,
      userDir: path.join(cwd, 'no-user-dir'),
      trustWorkspaceSettings: true,
      onWarning,
    });
    expect(onWarning).not.toHaveBeenCalled();

    expect(await runMatchingPreToolUse(settings, preInput(cwd, 'Bash', { command: 'rm -rf /tmp/x' }))).toEqual([
      { permissionDecision: 'deny', permissionDecisionReason: 'Blocked: rm -rf is not allowed in this project' },
    ]);
    expect(await runMatchingPreToolUse(settings, preInput(cwd, 'Bash', { command: 'ls -la' }))).toEqual([undefined]);
    // The matcher keeps it off other tools.
    expect(await runMatchingPreToolUse(settings, preInput(cwd, 'Write', { file_path: 'rm -rf', content: '' }))).toEqual(
      [],
    );
  });
});

describe('PreToolUse JSON output', () => {
  it.each(['allow', 'deny', 'ask'] as const)(
    'passes on hookSpecificOutput.permissionDecision %s with its reason',
    async (decision) => {
      const result = await preToolUse(
        printJson({
          hookSpecificOutput: {
            hookEventName: 'PreToolUse',
            permissionDecision: decision,
            permissionDecisionReason: `said ${decision}`,
          },
        }),
      );
      expect(result).toEqual({ permissionDecision: decision, permissionDecisionReason: `said ${decision}` });
    },
  );

  it('accepts the flat permissionDecision and permissionDecisionReason', async () => {
    const result = await preToolUse(printJson({ permissionDecision: 'deny', permissionDecisionReason: 'flat reason' }));
    expect(result).toEqual({ permissionDecision: 'deny', permissionDecisionReason: 'flat reason' });
  });

  it('prefers hookSpecificOutput over the flat form', async () => {
    const result = await preToolUse(
      printJson({
        permissionDecision: 'allow',
        permissionDecisionReason: 'flat',
        hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: 'specific' },
      }),
    );
    expect(result).toEqual({ permissionDecision: 'deny', permissionDecisionReason: 'specific' });
  });

  it('maps the legacy decision: block is deny with the reason, approve is allow', async () => {
    expect(await preToolUse(printJson({ decision: 'block', reason: 'legacy no' }))).toEqual({
      permissionDecision: 'deny',
      permissionDecisionReason: 'legacy no',
    });
    expect(await preToolUse(printJson({ decision: 'approve' }))).toEqual({ permissionDecision: 'allow' });
  });

  it('passes on updatedInput from hookSpecificOutput and from the flat form', async () => {
    expect(
      await preToolUse(
        printJson({
          hookSpecificOutput: {
            hookEventName: 'PreToolUse',
            permissionDecision: 'allow',
            updatedInput: { command: 'ls -l' },
          },
        }),
      ),
    ).toEqual({ permissionDecision: 'allow', updatedInput: { command: 'ls -l' } });
    expect(await preToolUse(printJson({ updatedInput: { command: 'echo safe' } }))).toEqual({
      updatedInput: { command: 'echo safe' },
    });
  });

  it('passes on additionalContext', async () => {
    expect(
      await preToolUse(
        printJson({ hookSpecificOutput: { hookEventName: 'PreToolUse', additionalContext: 'repo is frozen' } }),
      ),
    ).toEqual({
      additionalContext: 'repo is frozen',
    });
    expect(await preToolUse(printJson({ additionalContext: 'flat context' }))).toEqual({
      additionalContext: 'flat context',
    });
  });

  it('passes on continue: false with stopReason', async () => {
    expect(await preToolUse(printJson({ continue: false, stopReason: 'budget spent', suppressOutput: true }))).toEqual({
      continue: false,
      stopReason: 'budget spent',
    });
  });

  it('is no decision for empty output or a JSON object without known fields', async () => {
    expect(await preToolUse('exit 0')).toBeUndefined();
    expect(await preToolUse(printJson({ systemMessage: 'hello user' }))).toBeUndefined();
  });

  it('throws for JSON of the wrong shape, a hookSpecificOutput for another event, invalid JSON, or a JSON array', async () => {
    await expect(preToolUse(printJson({ permissionDecision: 'yes please' }))).rejects.toThrow(
      /PreToolUse hook ".*hook\.sh" printed JSON that does not fit/,
    );
    await expect(
      preToolUse(printJson({ hookSpecificOutput: { hookEventName: 'PostToolUse', permissionDecision: 'allow' } })),
    ).rejects.toThrow(/hookSpecificOutput for PostToolUse, not PreToolUse/);
    await expect(preToolUse('echo \'{"permissionDecision": "allow"\'')).rejects.toThrow(/printed invalid JSON/);
    await expect(preToolUse('echo \'[{"permissionDecision": "allow"}]\'')).rejects.toThrow(
      /printed JSON that is not an object/,
    );
  });
});

describe('PreToolUse exit codes and failures', () => {
  it('makes exit 2 a deny with stderr (trimmed) as the reason, ignoring stdout', async () => {
    const result = await preToolUse(
      `${printJson({ permissionDecision: 'allow' })}\necho '  no writes to prod  ' >&2\nexit 2`,
    );
    expect(result).toEqual({ permissionDecision: 'deny', permissionDecisionReason: 'no writes to prod' });
  });

  it('gives exit 2 without stderr a reason naming the hook', async () => {
    const result = await preToolUse('exit 2');
    expect(result).toMatchObject({
      permissionDecision: 'deny',
      permissionDecisionReason: expect.stringMatching(/^Blocked by PreToolUse hook ".*hook\.sh"$/) as unknown,
    });
  });

  it('throws for another non-zero exit, even after printing an allow', async () => {
    await expect(
      preToolUse(`${printJson({ permissionDecision: 'allow' })}\necho 'config missing' >&2\nexit 1`),
    ).rejects.toThrow(/^PreToolUse hook ".*hook\.sh" exited with code 1: config missing$/);
  });

  it('is no decision for non-JSON output, with a warning', async () => {
    const onWarning = vi.fn();
    expect(await preToolUse('echo hello\nexit 0', { onWarning })).toBeUndefined();
    expect(onWarning).toHaveBeenCalledTimes(1);
    expect(onWarning).toHaveBeenCalledWith(
      expect.stringMatching(/not JSON/),
      expect.objectContaining({ event: 'PreToolUse', stdout: 'hello' }),
    );
  });

  it('kills the whole process group at its timeout (in seconds) and throws', async () => {
    const cwd = await tempDir();
    const started = Date.now();
    const pending = preToolUse(
      'echo $$ > "$CLAUDE_PROJECT_DIR/hook.pid"\nsleep 30 &\necho $! > "$CLAUDE_PROJECT_DIR/child.pid"\nwait',
      { cwd, timeout: 1 },
    );
    await expect(pending).rejects.toThrow(/^PreToolUse hook ".*hook\.sh" timed out after 1s$/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(Date.now() - started).toBeLessThan(10_000);
    const pids = [
      Number(await readFile(path.join(cwd, 'hook.pid'), 'utf8')),
      Number(await readFile(path.join(cwd, 'child.pid'), 'utf8')),
    ];
    for (const pid of pids) {
      expect(pid).toBeGreaterThan(0);
      for (let i = 0; i < 100 && (await alive(pid)); i++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await alive(pid)).toBe(false);
    }
  });
});

describe('runCommandHook', () => {
  it('runs in the session cwd with SWITCHYARD_PROJECT_DIR, CLAUDE_PROJECT_DIR, the process env and extra env', async () => {
    const cwd = await tempDir();
    const outcome = await runCommandHook({
      command:
        'printf "%s|%s|%s|%s|%s" "$(pwd -P)" "$SWITCHYARD_PROJECT_DIR" "$CLAUDE_PROJECT_DIR" "$EXTRA_VAR" "$PATH"',
      timeoutMs: 10_000,
      cwd,
      input: {},
      env: { EXTRA_VAR: 'extra' },
    });
    expect(outcome).toEqual({
      kind: 'ok',
      stdout: [await realpath(cwd), cwd, cwd, 'extra', process.env.PATH].join('|'),
    });
  });

  it('gives the input as JSON on stdin and parses JSON stdout', async () => {
    const cwd = await tempDir();
    const outcome = await runCommandHook({ command: 'cat', timeoutMs: 10_000, cwd, input: { a: 1, b: ['x'] } });
    expect(outcome).toEqual({ kind: 'ok', stdout: '{"a":1,"b":["x"]}', json: { a: 1, b: ['x'] } });
  });

  it('does not care whether the command reads a large stdin', async () => {
    const cwd = await tempDir();
    expect(
      await runCommandHook({ command: 'exit 0', timeoutMs: 10_000, cwd, input: { big: 'x'.repeat(2_000_000) } }),
    ).toEqual({ kind: 'ok', stdout: '' });
  });

  it('reports exit 2 as block, other exits, signals and start failures as errors', async () => {
    const cwd = await tempDir();
    expect(await runCommandHook({ command: 'echo " why " >&2; exit 2', timeoutMs: 10_000, cwd, input: {} })).toEqual({
      kind: 'block',
      reason: 'why',
    });
    expect(await runCommandHook({ command: 'exit 7', timeoutMs: 10_000, cwd, input: {} })).toEqual({
      kind: 'error',
      message: 'exited with code 7',
    });
    expect(await runCommandHook({ command: 'kill -TERM $$', timeoutMs: 10_000, cwd, input: {} })).toEqual({
      kind: 'error',
      message: 'was killed by SIGTERM',
    });
    expect(
      await runCommandHook({ command: 'true', timeoutMs: 10_000, cwd: path.join(cwd, 'missing'), input: {} }),
    ).toMatchObject({
      kind: 'error',
      message: expect.stringMatching(/^failed to start/) as unknown,
    });
  });

  it('kills the process group when aborted', async () => {
    const cwd = await tempDir();
    const controller = new AbortController();
    const pending = runCommandHook({
      command: 'echo $$ > hook.pid; sleep 30',
      timeoutMs: 60_000,
      cwd,
      input: {},
      signal: controller.signal,
    });
    let pid = 0;
    for (let i = 0; i < 100 && pid === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      pid = Number(await readFile(path.join(cwd, 'hook.pid'), 'utf8').catch(() => '0'));
    }
    expect(await alive(pid)).toBe(true);
    controller.abort();
    expect(await pending).toEqual({ kind: 'error', message: 'was cancelled' });
    for (let i = 0; i < 100 && (await alive(pid)); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await alive(pid)).toBe(false);
  });
});

describe('stdin of each event', () => {
  it('has the Claude Code fields for PreToolUse, PermissionRequest, PostToolUse and PostToolUseFailure', async () => {
    const cwd = await tempDir();
    const base = preInput(cwd, 'Bash', { command: 'ls' });
    const common = {
      session_id: 'session-1',
      transcript_path: '',
      cwd,
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
      tool_use_id: 'toolu_1',
    };
    const stdin = async (): Promise<unknown> => JSON.parse(await readFile(path.join(cwd, 'stdin.json'), 'utf8'));

    const pre = commandHooks(settingsFor('PreToolUse', CAPTURE_STDIN)).preToolUse?.[0];
    expect(await pre?.run(base)).toBeUndefined();
    expect(await stdin()).toEqual({ ...common, hook_event_name: 'PreToolUse' });

    const permission = commandHooks(settingsFor('PermissionRequest', CAPTURE_STDIN)).permissionRequest?.[0];
    expect(
      await permission?.run({ ...base, requestId: 'req-9', reason: 'writes outside the project' }),
    ).toBeUndefined();
    expect(await stdin()).toEqual({
      ...common,
      hook_event_name: 'PermissionRequest',
      permission_request_id: 'req-9',
      reason: 'writes outside the project',
    });

    const post = commandHooks(settingsFor('PostToolUse', CAPTURE_STDIN)).postToolUse?.[0];
    // tool_response is the tool's own output (Claude Code's Bash shape), not the model's text.
    const bashOutput = { stdout: 'file-a\nfile-b', stderr: '', interrupted: false, isImage: false, exitCode: 0 };
    expect(
      await post?.run({ ...base, toolResponse: { content: 'file-a\nfile-b', isError: false }, toolOutput: bashOutput }),
    ).toBeUndefined();
    expect(await stdin()).toEqual({ ...common, hook_event_name: 'PostToolUse', tool_response: bashOutput });

    const failure = commandHooks(settingsFor('PostToolUseFailure', CAPTURE_STDIN)).postToolUseFailure?.[0];
    expect(await failure?.run({ ...base, error: 'Exit code 1', isInterrupt: true })).toBeUndefined();
    expect(await stdin()).toEqual({
      ...common,
      hook_event_name: 'PostToolUseFailure',
      error: 'Exit code 1',
      is_interrupt: true,
    });
  });
});

describe('PermissionRequest', () => {
  async function permission(body: string) {
    const cwd = await tempDir();
    const file = await script(cwd, 'hook.sh', body);
    const hook = commandHooks(settingsFor('PermissionRequest', file)).permissionRequest?.[0];
    if (hook === undefined) throw new Error('no hook');
    return hook.run({ ...preInput(cwd), requestId: 'req-1', reason: 'needs approval' });
  }

  it('passes on hookSpecificOutput.decision', async () => {
    expect(
      await permission(
        printJson({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } }),
      ),
    ).toEqual({ behavior: 'allow' });
    expect(
      await permission(
        printJson({
          hookSpecificOutput: {
            hookEventName: 'PermissionRequest',
            decision: { behavior: 'deny', message: 'not on Fridays' },
          },
        }),
      ),
    ).toEqual({ behavior: 'deny', message: 'not on Fridays' });
  });

  it('accepts the flat permissionDecision; ask leaves it to the human', async () => {
    expect(await permission(printJson({ permissionDecision: 'deny', permissionDecisionReason: 'flat no' }))).toEqual({
      behavior: 'deny',
      message: 'flat no',
    });
    expect(await permission(printJson({ permissionDecision: 'ask' }))).toBeUndefined();
  });

  it('makes exit 2 a deny with stderr as the message', async () => {
    expect(await permission('echo "ask a human instead" >&2\nexit 2')).toEqual({
      behavior: 'deny',
      message: 'ask a human instead',
    });
  });

  it('makes continue: false a deny', async () => {
    expect(await permission(printJson({ continue: false, stopReason: 'halt' }))).toEqual({
      behavior: 'deny',
      message: 'halt',
    });
  });

  it('throws instead of allowing when the hook wants a changed input', async () => {
    await expect(
      permission(
        printJson({
          hookSpecificOutput: {
            hookEventName: 'PermissionRequest',
            decision: { behavior: 'allow', updatedInput: { command: 'ls' } },
          },
        }),
      ),
    ).rejects.toThrow(/cannot apply/);
  });

  it('throws for exit 1', async () => {
    await expect(
      permission(`${printJson({ hookSpecificOutput: { decision: { behavior: 'allow' } } })}\nexit 1`),
    ).rejects.toThrow(/PermissionRequest hook .* exited with code 1/);
  });
});

describe('PostToolUse and PostToolUseFailure', () => {
  async function post(body: string, event: 'PostToolUse' | 'PostToolUseFailure' = 'PostToolUse') {
    const cwd = await tempDir();
    const file = await script(cwd, 'hook.sh', body);
    const hooks = commandHooks(settingsFor(event, file));
    const input = preInput(cwd);
    if (event === 'PostToolUse')
      return hooks.postToolUse?.[0]?.run({
        ...input,
        toolResponse: { content: 'ok', isError: false },
        toolOutput: { content: 'ok', isError: false },
      });
    return hooks.postToolUseFailure?.[0]?.run({ ...input, error: 'boom', isInterrupt: false });
  }

  it('passes on additionalContext, continue and stopReason', async () => {
    expect(
      await post(
        printJson({ hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'lint: 2 warnings' } }),
      ),
    ).toEqual({
      additionalContext: 'lint: 2 warnings',
    });
    expect(await post(printJson({ continue: false, stopReason: 'tests broke' }))).toEqual({
      continue: false,
      stopReason: 'tests broke',
    });
    expect(await post(printJson({ decision: 'block', reason: 'fix the formatting' }))).toEqual({
      additionalContext: 'fix the formatting',
    });
  });

  it('makes exit 2 stderr context for the model', async () => {
    expect(await post('echo "type errors in a.ts" >&2\nexit 2')).toEqual({ additionalContext: 'type errors in a.ts' });
    expect(await post('echo "retry with --force" >&2\nexit 2', 'PostToolUseFailure')).toEqual({
      additionalContext: 'retry with --force',
    });
  });

  it('passes on hookSpecificOutput.updatedMCPToolOutput as it was printed', async () => {
    const updated = [{ type: 'text', text: 'redacted' }];
    expect(
      await post(printJson({ hookSpecificOutput: { hookEventName: 'PostToolUse', updatedMCPToolOutput: updated } })),
    ).toEqual({ updatedMCPToolOutput: updated });
  });

  it('does not give plain stdout to the model', async () => {
    expect(await post('echo "formatted 3 files"')).toBeUndefined();
  });

  it('throws for exit 1', async () => {
    await expect(post('exit 1', 'PostToolUseFailure')).rejects.toThrow(
      /^PostToolUseFailure hook .* exited with code 1$/,
    );
  });
});

describe('cancellation', () => {
  it("kills a PreToolUse hook's process group when its run's signal aborts (an interrupted turn)", async () => {
    const cwd = await tempDir();
    const hook = commandHooks(settingsFor('PreToolUse', 'echo $$ > hook.pid; sleep 30')).preToolUse?.[0];
    const controller = new AbortController();
    const pending = hook?.run(preInput(cwd), { signal: controller.signal });
    let pid = 0;
    for (let i = 0; i < 100 && pid === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      pid = Number(await readFile(path.join(cwd, 'hook.pid'), 'utf8').catch(() => '0'));
    }
    expect(await alive(pid)).toBe(true);
    controller.abort();
    await expect(pending).rejects.toThrow(/PreToolUse hook .* was cancelled$/);
    for (let i = 0; i < 100 && (await alive(pid)); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await alive(pid)).toBe(false);
  });
});

describe('matchers', () => {
  it('keeps each group matcher on each of its hooks, in order', async () => {
    const cwd = await tempDir();
    const settings: HookSettings = {
      hooks: {
        PreToolUse: [
          {
            matcher: 'Bash|Write',
            hooks: [
              { type: 'command', command: 'echo "{\\"additionalContext\\": \\"bash-or-write 1\\"}"' },
              { type: 'command', command: 'echo "{\\"additionalContext\\": \\"bash-or-write 2\\"}"' },
            ],
          },
          { matcher: 'mcp__.*', hooks: [{ type: 'command', command: 'echo "{\\"additionalContext\\": \\"mcp\\"}"' }] },
          { matcher: '*', hooks: [{ type: 'command', command: 'echo "{\\"additionalContext\\": \\"star\\"}"' }] },
          { hooks: [{ type: 'command', command: 'echo "{\\"additionalContext\\": \\"none\\"}"' }] },
        ],
      },
    };
    expect(commandHooks(settings).preToolUse?.map((hook) => hook.matcher)).toEqual([
      'Bash|Write',
      'Bash|Write',
      'mcp__.*',
      '*',
      undefined,
    ]);
    const contexts = async (toolName: string) =>
      (await runMatchingPreToolUse(settings, preInput(cwd, toolName))).map((result) => result?.additionalContext);
    expect(await contexts('Bash')).toEqual(['bash-or-write 1', 'bash-or-write 2', 'star', 'none']);
    expect(await contexts('mcp__github__create_issue')).toEqual(['mcp', 'star', 'none']);
    expect(await contexts('BashOutput')).toEqual(['star', 'none']);
  });
});

describe('settings', () => {
  async function writeSettings(dir: string, value: unknown): Promise<void> {
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'settings.json'), typeof value === 'string' ? value : JSON.stringify(value));
  }
  const group = (command: string, matcher?: string) => ({
    ...(matcher === undefined ? {} : { matcher }),
    hooks: [{ type: 'command' as const, command }],
  });

  it('merges the user file before the project file', async () => {
    const cwd = await tempDir();
    const userDir = await tempDir();
    await writeSettings(userDir, {
      hooks: { PreToolUse: [group('user-pre', 'Bash')], PostToolUse: [group('user-post')] },
    });
    await writeSettings(path.join(cwd, '.switchyard'), {
      hooks: { PreToolUse: [{ matcher: 'Write', hooks: [{ type: 'command', command: 'project-pre', timeout: 5 }] }] },
    });
    const onWarning = vi.fn();
    expect((await loadHookSettings({ cwd, userDir, trustWorkspaceSettings: true, onWarning })).settings).toEqual({
      hooks: {
        PreToolUse: [
          group('user-pre', 'Bash'),
          { matcher: 'Write', hooks: [{ type: 'command', command: 'project-pre', timeout: 5 }] },
        ],
        PostToolUse: [group('user-post')],
      },
    });
    expect(onWarning).not.toHaveBeenCalled();
  });

  it('is fine with missing files', async () => {
    const cwd = await tempDir();
    const onWarning = vi.fn();
    expect(
      await loadHookSettings({ cwd, userDir: path.join(cwd, 'nowhere'), trustWorkspaceSettings: true, onWarning }),
    ).toEqual({ settings: { hooks: {} }, untrusted: [] });
    expect(onWarning).not.toHaveBeenCalled();
  });

  it('reports an invalid file and skips it, keeping the other', async () => {
    const cwd = await tempDir();
    const userDir = await tempDir();
    await writeSettings(userDir, '{ "hooks": { "PreToolUse": [ ');
    await writeSettings(path.join(cwd, '.switchyard'), { hooks: { PreToolUse: [group('project-pre')] } });
    const onWarning = vi.fn();
    expect((await loadHookSettings({ cwd, userDir, trustWorkspaceSettings: true, onWarning })).settings).toEqual({
      hooks: { PreToolUse: [group('project-pre')] },
    });
    expect(onWarning).toHaveBeenCalledTimes(1);
    expect(onWarning).toHaveBeenCalledWith(
      expect.stringContaining(`Ignoring hook settings ${path.join(userDir, 'settings.json')}: invalid JSON`),
    );

    await writeSettings(userDir, { hooks: { PreToolUse: [group('user-pre')] } });
    await writeSettings(path.join(cwd, '.switchyard'), {
      hooks: { PreToolUse: [{ hooks: [{ type: 'command', timeout: 'soon' }] }] },
    });
    onWarning.mockClear();
    expect((await loadHookSettings({ cwd, userDir, trustWorkspaceSettings: true, onWarning })).settings).toEqual({
      hooks: { PreToolUse: [group('user-pre')] },
    });
    expect(onWarning).toHaveBeenCalledTimes(1);
    expect(onWarning).toHaveBeenCalledWith(
      expect.stringMatching(/Ignoring hook settings .*\.switchyard\/settings\.json: [\s\S]*command/),
    );
  });

  it('ignores unknown events and keys, and drops non-command hooks with a warning', async () => {
    const cwd = await tempDir();
    await writeSettings(path.join(cwd, '.switchyard'), {
      model: 'opus',
      hooks: {
        Stop: [group('stop-hook')],
        PreToolUse: [
          {
            matcher: 'Bash',
            extra: true,
            hooks: [
              { type: 'prompt', prompt: 'judge it' },
              { type: 'command', command: 'kept', shell: 'zsh' },
            ],
          },
        ],
      },
    });
    const onWarning = vi.fn();
    expect(
      (await loadHookSettings({ cwd, userDir: path.join(cwd, 'nowhere'), trustWorkspaceSettings: true, onWarning }))
        .settings,
    ).toEqual({ hooks: { PreToolUse: [group('kept', 'Bash')] } });
    expect(onWarning).toHaveBeenCalledWith(expect.stringContaining('ignoring PreToolUse:prompt'));
  });

  it('parses with the exported schema and merges user, project and session settings in order', () => {
    expect(hookSettingsSchema.safeParse({ hooks: { PostToolUse: 'nope' } }).success).toBe(false);
    expect(
      hookSettingsSchema.safeParse({
        hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: 'x', timeout: 0 }] }] },
      }).success,
    ).toBe(false);
    const user = { hooks: { PreToolUse: [group('u')] } };
    const project = { hooks: { PreToolUse: [group('p')], PermissionRequest: [group('p-perm')] } };
    const session = { hooks: { PreToolUse: [group('s')] } };
    expect(mergeHookSettings(user, undefined, project, session)).toEqual({
      hooks: { PreToolUse: [group('u'), group('p'), group('s')], PermissionRequest: [group('p-perm')] },
    });
  });
});

describe('workspace settings need trust', () => {
  const hookGroup = (command: string) => ({ matcher: 'Bash', hooks: [{ type: 'command' as const, command }] });
  async function workspaceWithSettings(): Promise<{ cwd: string; userDir: string; files: string[] }> {
    const cwd = await tempDir();
    const userDir = await tempDir();
    await writeFile(
      path.join(userDir, 'settings.json'),
      JSON.stringify({ hooks: { PreToolUse: [hookGroup('user-hook')] } }),
    );
    const files = [
      path.join(cwd, '.claude', 'settings.json'),
      path.join(cwd, '.claude', 'settings.local.json'),
      path.join(cwd, '.switchyard', 'settings.json'),
    ];
    for (const file of files) {
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(
        file,
        JSON.stringify({ hooks: { PreToolUse: [hookGroup(`workspace-hook ${path.relative(cwd, file)}`)] } }),
      );
    }
    return { cwd, userDir, files };
  }

  it('ignores hooks from .switchyard and .claude settings in an untrusted workspace, keeps user hooks, and names the files', async () => {
    const { cwd, userDir, files } = await workspaceWithSettings();
    const loaded = await loadHookSettings({ cwd, userDir, trustedWorkspaces: [] });
    expect(loaded.settings).toEqual({ hooks: { PreToolUse: [hookGroup('user-hook')] } });
    expect(loaded.untrusted).toEqual(files);
  });

  it('loads them in order (user, .claude, .claude local, .switchyard) when the session trusts its workspace', async () => {
    const { cwd, userDir } = await workspaceWithSettings();
    const loaded = await loadHookSettings({ cwd, userDir, trustWorkspaceSettings: true, trustedWorkspaces: [] });
    expect(loaded.settings.hooks?.PreToolUse?.map((group) => group.hooks[0]?.command)).toEqual([
      'user-hook',
      'workspace-hook .claude/settings.json',
      'workspace-hook .claude/settings.local.json',
      'workspace-hook .switchyard/settings.json',
    ]);
    expect(loaded.untrusted).toEqual([]);
  });

  it('trusts a workspace whose real path is in SWITCHYARD_TRUSTED_WORKSPACES or inside one of them', async () => {
    const { cwd, userDir } = await workspaceWithSettings();
    const parent = path.dirname(cwd);
    const trusted = await loadHookSettings({
      cwd,
      userDir,
      trustedWorkspaces: [path.join(parent, 'elsewhere'), parent],
    });
    expect(trusted.settings.hooks?.PreToolUse).toHaveLength(4);
    expect(trusted.untrusted).toEqual([]);
    // A sibling whose name merely starts with the trusted path is not inside it.
    expect((await loadHookSettings({ cwd, userDir, trustedWorkspaces: [`${cwd}-not`] })).untrusted).toHaveLength(3);
    // The env list is `:`-separated; a symlink to the workspace is trusted by its real path.
    const link = path.join(await tempDir(), 'link');
    await symlink(cwd, link);
    expect(trustedWorkspacesFromEnv({ SWITCHYARD_TRUSTED_WORKSPACES: `/nowhere::${link}` })).toEqual([
      '/nowhere',
      link,
    ]);
    expect(
      (
        await loadHookSettings({
          cwd,
          userDir,
          trustedWorkspaces: trustedWorkspacesFromEnv({ SWITCHYARD_TRUSTED_WORKSPACES: `/nowhere:${link}` }),
        })
      ).untrusted,
    ).toEqual([]);
    // A symlinked workspace is judged by where it really is.
    expect((await loadHookSettings({ cwd: link, userDir, trustedWorkspaces: ['/nowhere'] })).untrusted).toHaveLength(3);
  });

  it("takes SWITCHYARD_TRUSTED_WORKSPACES from the worker's settings, passed down, and reads no environment itself", async () => {
    const { cwd, userDir } = await workspaceWithSettings();
    const saved = process.env.SWITCHYARD_TRUSTED_WORKSPACES;
    try {
      // Set in the environment but not passed down: not trusted (the library never falls back to the environment).
      process.env.SWITCHYARD_TRUSTED_WORKSPACES = cwd;
      expect((await loadHookSettings({ cwd, userDir })).untrusted).toHaveLength(3);
      const { trustedWorkspaces } = environmentSettings({ SWITCHYARD_TRUSTED_WORKSPACES: cwd }).worker;
      expect((await loadHookSettings({ cwd, userDir, trustedWorkspaces })).untrusted).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.SWITCHYARD_TRUSTED_WORKSPACES;
      else process.env.SWITCHYARD_TRUSTED_WORKSPACES = saved;
    }
  });
});

describe('command hook environment', () => {
  it('drops worker secrets from the hook environment, keeping PATH and the extra env', async () => {
    const cwd = await tempDir();
    const saved = process.env.MY_API_KEY;
    process.env.MY_API_KEY = 'sekrit';
    try {
      const outcome = await runCommandHook({
        command: 'env',
        timeoutMs: 10_000,
        cwd,
        input: {},
        env: { EXTRA_TOKEN: 'given-by-worker' },
      });
      expect(outcome.kind).toBe('ok');
      const stdout = outcome.kind === 'ok' ? outcome.stdout : '';
      expect(stdout).not.toContain('sekrit');
      expect(stdout).toContain(`PATH=${process.env.PATH}`);
      // The worker's own extra env is deliberate, so it passes.
      expect(stdout).toContain('EXTRA_TOKEN=given-by-worker');
    } finally {
      if (saved === undefined) delete process.env.MY_API_KEY;
      else process.env.MY_API_KEY = saved;
    }
  });
});

describe('the user file seen from inside the workspace', () => {
  it('reads a workspace file that is the user settings file once, as user settings, and does not call it untrusted', async () => {
    const userDir = await tempDir();
    await writeFile(
      path.join(userDir, 'settings.json'),
      JSON.stringify({ hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: 'user-hook' }] }] } }),
    );
    const cwd = await tempDir();
    await symlink(userDir, path.join(cwd, '.switchyard'));
    const loaded = await loadHookSettings({ cwd, userDir, trustedWorkspaces: [] });
    expect(loaded).toEqual({
      settings: { hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: 'user-hook' }] }] } },
      untrusted: [],
    });
    expect(
      (await loadHookSettings({ cwd, userDir, trustWorkspaceSettings: true })).settings.hooks?.PreToolUse,
    ).toHaveLength(1);
  });
});
