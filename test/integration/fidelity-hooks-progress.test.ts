import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import { texts } from '../../src/contracts/texts.js';
import { bashTool } from '../../src/tools/builtin/bash.js';
import { connectMcpTools, mcpServersFromConfig } from '../../src/tools/mcp/mcp.js';
import type { McpTool } from '../../src/tools/mcp/mcp.js';
import { readTool } from '../../src/tools/builtin/read.js';
import { writeTool } from '../../src/tools/builtin/write.js';
import { createHarness, scratchDir, uniqueName } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { killCli, startCli } from '../support/cli-process.js';
import { processExists } from '../support/processes.js';
import { waitFor } from '../support/wait-for.js';

/** A Claude Code PostToolUse hook script, unchanged: reads the event from stdin, answers in Claude Code's JSON. */
const CLAUDE_CODE_POST_BASH_HOOK = `
let raw = '';
process.stdin.on('data', (chunk) => (raw += chunk));
process.stdin.on('end', () => {
  const event = JSON.parse(raw);
  require('node:fs').writeFileSync(require('node:path').join(process.env.CLAUDE_PROJECT_DIR, 'post-event.json'), raw);
  const stdout = event.tool_response.stdout.trim();
  console.log(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'stdout seen by the hook: ' + stdout } }));
});
`;

/** A PostToolUse hook that replaces an MCP tool's output (Claude Code's updatedMCPToolOutput). */
const REDACT_MCP_HOOK = `
let raw = '';
process.stdin.on('data', (chunk) => (raw += chunk));
process.stdin.on('end', () => {
  require('node:fs').writeFileSync(require('node:path').join(process.env.CLAUDE_PROJECT_DIR, 'mcp-event.json'), raw);
  console.log(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PostToolUse', updatedMCPToolOutput: [{ type: 'text', text: '[redacted by hook]' }] } }));
});
`;

async function readPid(file: string): Promise<number> {
  return Number((await readFile(file, 'utf8').catch(() => '0')).trim());
}

async function waitForTurnStarted(
  session: SessionHandle,
  turnId: string,
  type: 'ToolCallStarted' | 'TurnStarted' | 'PermissionRequested',
): Promise<void> {
  await waitFor(
    async () => (await session.events()).events,
    (events) => events.some((event) => event.type === type && event.turnId === turnId),
    { what: `${type} of ${turnId}` },
  );
}

describe('Claude Code fidelity: reject message, hook-compatible results and cancellation, live progress (real server)', () => {
  let harness: Harness;
  let cwd: string;
  let mcp: { tools: McpTool[]; close(): Promise<void> };
  beforeAll(async () => {
    cwd = await scratchDir();
    await writeFile(path.join(cwd, 'post-bash.js'), CLAUDE_CODE_POST_BASH_HOOK);
    await writeFile(path.join(cwd, 'redact-mcp.js'), REDACT_MCP_HOOK);
    const servers = mcpServersFromConfig({
      mcpServers: {
        notes: {
          command: process.execPath,
          args: ['--import', 'tsx', path.resolve('test/support/mcp-test-server.ts')],
          cwd: path.resolve('.'),
        },
      },
    });
    mcp = await connectMcpTools(servers);
    harness = await createHarness({ tools: [bashTool, readTool, writeTool, ...mcp.tools], defaultCwd: cwd });
  }, 60_000);
  afterAll(async () => {
    await harness.close();
    await mcp.close();
  });

  it("gives an interrupted `sleep 30` Claude Code's reject message", async () => {
    const result = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
      const turn = session.executeTurn({
        turnId: 't',
        calls: [{ id: 'sleep', name: 'Bash', input: { command: 'sleep 30' } }],
      });
      await waitForTurnStarted(session, 't', 'ToolCallStarted');
      await session.interrupt('user pressed Esc');
      return turn;
    });
    expect(result.results[0]).toMatchObject({ status: 'cancelled', isError: true, modelContent: texts.rejectMessage });
    expect(texts.rejectMessage).toBe(
      "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.",
    );
    // The interrupt's reason is the turn's, not the model's.
    expect(result.stopReason).toBe('interrupted: user pressed Esc');
  });

  it('lets an unchanged Claude Code PostToolUse script read tool_response.stdout of a Bash call', async () => {
    const result = await harness.withWorker(async () => {
      const session = await harness.startSession({
        cwd,
        permissionMode: 'bypassPermissions',
        hooks: {
          PostToolUse: [
            { matcher: 'Bash', hooks: [{ type: 'command', command: 'node "$CLAUDE_PROJECT_DIR"/post-bash.js' }] },
          ],
        },
      });
      return session.executeTurn({
        turnId: 't',
        calls: [{ id: 'echo', name: 'Bash', input: { command: 'echo hello-from-bash' } }],
      });
    });
    expect(result.results[0]?.modelContent).toBe(
      'hello-from-bash\n\n[Hook additional context]\n1. stdout seen by the hook: hello-from-bash',
    );
    const event = JSON.parse(await readFile(path.join(cwd, 'post-event.json'), 'utf8')) as Record<string, unknown>;
    expect(event).toMatchObject({
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_use_id: 'echo',
      tool_input: { command: 'echo hello-from-bash' },
      tool_response: { stdout: 'hello-from-bash\n', stderr: '', interrupted: false, isImage: false },
    });
  });

  it("gives Write's PostToolUse hooks Claude Code's filePath, type and content", async () => {
    await harness.withWorker(async () => {
      const session = await harness.startSession({
        cwd,
        permissionMode: 'bypassPermissions',
        hooks: {
          PostToolUse: [
            { matcher: 'Write', hooks: [{ type: 'command', command: 'cat > "$CLAUDE_PROJECT_DIR"/write-event.json' }] },
          ],
        },
      });
      await session.executeTurn({
        turnId: 't',
        calls: [{ id: 'w', name: 'Write', input: { file_path: 'made.txt', content: 'one\n' } }],
      });
    });
    const event = JSON.parse(await readFile(path.join(cwd, 'write-event.json'), 'utf8')) as { tool_response: unknown };
    expect(event.tool_response).toEqual({
      type: 'create',
      filePath: path.join(cwd, 'made.txt'),
      content: 'one\n',
      structuredPatch: expect.any(Array) as unknown,
      originalFile: null,
    });
  });

  it("replaces an MCP tool's output with a PostToolUse hook's updatedMCPToolOutput, not a built-in tool's", async () => {
    const result = await harness.withWorker(async () => {
      const session = await harness.startSession({
        cwd,
        permissionMode: 'bypassPermissions',
        hooks: {
          PostToolUse: [
            {
              matcher: 'mcp__notes__whoami|Bash',
              hooks: [{ type: 'command', command: 'node "$CLAUDE_PROJECT_DIR"/redact-mcp.js' }],
            },
          ],
        },
      });
      return session.executeTurn({
        turnId: 't',
        calls: [
          { id: 'who', name: 'mcp__notes__whoami', input: {} },
          { id: 'echo', name: 'Bash', input: { command: 'echo kept' } },
        ],
      });
    });
    expect(result.results[0]).toMatchObject({ status: 'success', modelContent: '[redacted by hook]' });
    // Claude Code lets hooks replace MCP outputs only.
    expect(result.results[1]).toMatchObject({ status: 'success', modelContent: 'kept\n' });
  });

  it("shows a running Bash's latest output line in session.progress(), from heartbeats, not history", async () => {
    const seen = await harness.withWorker(async () => {
      // A short heartbeat timeout: heartbeats reach the server every 0.8 × 2 s.
      const session = await harness.startSession({
        cwd,
        permissionMode: 'bypassPermissions',
        heartbeatTimeoutMs: 2_000,
      });
      const turn = session.executeTurn({
        turnId: 't',
        calls: [
          { id: 'loop', name: 'Bash', input: { command: 'for i in $(seq 1 60); do echo line$i; sleep 1; done' } },
        ],
      });
      const first = await waitFor(
        () => session.progress(),
        (progress) => /^line\d+$/.test(progress[0]?.latestLine ?? ''),
        { what: 'a progress line', timeoutMs: 30_000 },
      );
      const firstNumber = Number(first[0]?.latestLine?.slice(4));
      const later = await waitFor(
        () => session.progress(),
        (progress) => Number(progress[0]?.latestLine?.slice(4) ?? 0) > firstNumber,
        { what: 'a later progress line', timeoutMs: 30_000 },
      );
      await session.interrupt();
      const result = await turn;
      return { first: first[0], later: later[0], result, after: await session.progress() };
    });
    expect(seen.first).toMatchObject({ callId: 'loop', toolName: 'Bash', turnId: 't', attempt: 1 });
    expect(seen.first?.outputTail).toContain(`${seen.first?.latestLine ?? ''}\n`);
    expect(Date.parse(seen.later?.updatedAt ?? '')).toBeGreaterThan(0);
    expect(seen.result.results[0]?.modelContent).toBe(texts.rejectMessage);
    // Nothing runs any more, so there is no progress.
    expect(seen.after).toEqual([]);
  });

  it('`switchyard events <id> --follow` prints events and live progress lines until Ctrl-C', async () => {
    const sessionId = uniqueName('follow');
    const env = {
      ...process.env,
      TEMPORAL_ADDRESS: harness.address,
      TEMPORAL_NAMESPACE: harness.namespace,
      SWITCHYARD_TASK_QUEUE: harness.taskQueue,
      HOME: await scratchDir('switchyard-home-'),
    };
    const outcome = await harness.withWorker(async () => {
      const session = await harness.client.startSession(sessionId, {
        cwd,
        permissionMode: 'bypassPermissions',
        heartbeatTimeoutMs: 2_000,
      });
      const follow = startCli(['events', sessionId, '--follow'], env);
      try {
        const turn = session.executeTurn({
          turnId: 't',
          calls: [
            { id: 'loop', name: 'Bash', input: { command: 'for i in $(seq 1 60); do echo line$i; sleep 1; done' } },
          ],
        });
        const lines = (): Array<Record<string, unknown>> =>
          follow
            .output()
            .split('\n')
            .filter((line) => line.startsWith('{'))
            .map((line) => JSON.parse(line) as Record<string, unknown>);
        await waitFor(
          async () => lines(),
          (printed) =>
            printed.some((line) => line.type === 'ToolCallProgress' && /^line\d+$/.test(String(line.latestLine))),
          {
            what: 'a progress line from the CLI',
            timeoutMs: 60_000,
          },
        );
        await session.interrupt();
        await turn;
        await waitFor(
          async () => lines(),
          (printed) => printed.some((line) => line.type === 'TurnCompleted'),
          { what: 'TurnCompleted from the CLI', timeoutMs: 30_000 },
        );
        follow.child.kill('SIGINT');
        return { exit: await follow.exited, printed: lines() };
      } finally {
        await killCli(follow);
      }
    });
    expect(outcome.exit.code).toBe(0);
    const types = outcome.printed.map((line) => line.type);
    expect(types.indexOf('ToolCallStarted')).toBeLessThan(types.indexOf('ToolCallProgress'));
    expect(types.indexOf('ToolCallProgress')).toBeLessThan(types.indexOf('TurnCompleted'));
    expect(outcome.printed.find((line) => line.type === 'ToolCallProgress')).toMatchObject({
      callId: 'loop',
      toolName: 'Bash',
      turnId: 't',
    });
  });

  it('kills a sleeping PreToolUse hook process when the turn is interrupted', async () => {
    const pidFile = path.join(cwd, 'pre-hook.pid');
    const outcome = await harness.withWorker(async () => {
      const session = await harness.startSession({
        cwd,
        permissionMode: 'bypassPermissions',
        hooks: {
          PreToolUse: [
            {
              matcher: 'Bash',
              hooks: [{ type: 'command', command: `echo $$ > "${pidFile}"; sleep 120`, timeout: 300 }],
            },
          ],
        },
      });
      const turn = session.executeTurn({
        turnId: 't',
        calls: [{ id: 'never', name: 'Bash', input: { command: 'echo never > ran.txt' } }],
      });
      const pid = await waitFor(
        () => readPid(pidFile),
        (value) => value > 0,
        { what: 'the hook pid file' },
      );
      expect(processExists(pid)).toBe(true);
      await session.interrupt('stop');
      // Well before the hook would end by itself (120 s).
      await waitFor(
        async () => processExists(pid),
        (alive) => !alive,
        { what: 'the hook process to die', timeoutMs: 30_000 },
      );
      return { result: await turn, pid };
    });
    expect(outcome.result.results[0]).toMatchObject({ status: 'cancelled', modelContent: texts.rejectMessage });
    expect(processExists(outcome.pid)).toBe(false);
    await expect(readFile(path.join(cwd, 'ran.txt'))).rejects.toThrow();
  });

  it('kills a sleeping PermissionRequest hook process when the turn is interrupted', async () => {
    const pidFile = path.join(cwd, 'permission-hook.pid');
    const outcome = await harness.withWorker(async () => {
      const session = await harness.startSession({
        cwd,
        heartbeatTimeoutMs: 2_000,
        hooks: {
          PermissionRequest: [
            {
              matcher: 'Bash',
              hooks: [{ type: 'command', command: `echo $$ > "${pidFile}"; sleep 120`, timeout: 300 }],
            },
          ],
        },
      });
      const turn = session.executeTurn({
        turnId: 't',
        calls: [{ id: 'ask', name: 'Bash', input: { command: 'touch asked.txt' } }],
      });
      const pid = await waitFor(
        () => readPid(pidFile),
        (value) => value > 0,
        { what: 'the hook pid file' },
      );
      expect(processExists(pid)).toBe(true);
      await session.interrupt('stop');
      // Well before the hook would end by itself (120 s).
      await waitFor(
        async () => processExists(pid),
        (alive) => !alive,
        { what: 'the hook process to die', timeoutMs: 30_000 },
      );
      return { result: await turn, pid };
    });
    expect(outcome.result.results[0]).toMatchObject({ status: 'cancelled', modelContent: texts.rejectMessage });
    expect(processExists(outcome.pid)).toBe(false);
  });
});
