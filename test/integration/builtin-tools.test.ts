import { once } from 'node:events';
import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { ToolCall } from '../../src/contracts/tool-call.js';
import type { TurnResult } from '../../src/contracts/tool-result.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { allEvents, answer, eventsOfType, sessionStateOf, waitForPendingApprovals } from '../support/session-probes.js';

const exists = (file: string): Promise<boolean> =>
  access(file).then(
    () => true,
    () => false,
  );

/**
 * Every built-in tool through a real session, with the real tool (`builtinTools()`), not the stand-ins of
 * `test/support/test-tools.ts`: what a model sees in its results, what an approver sees in `pendingApprovals`, and
 * what happens on disk.
 */
describe('built-in tools through a session (real tools, real server)', () => {
  let harness: Harness;
  let worker: { worker: Worker; done: Promise<void> };
  beforeAll(async () => {
    harness = await createHarness({ tools: builtinTools() });
    worker = await harness.startWorker();
  });
  afterAll(async () => {
    worker.worker.shutdown();
    await worker.done;
    await harness.close();
  });

  const turn = (session: SessionHandle, turnId: string, calls: ToolCall[]): Promise<TurnResult> =>
    session.executeTurn({ turnId, calls });
  const permissionRequests = async (session: SessionHandle) =>
    eventsOfType(await allEvents(session), 'PermissionRequested');

  it('Read returns numbered lines, honours offset and limit, and needs no approval', async () => {
    const cwd = await scratchDir();
    await writeFile(path.join(cwd, 'notes.txt'), 'one\ntwo\nthree\nfour\nfive\n');
    const session = await harness.startSession({ cwd });
    const { results } = await turn(session, 't1', [
      { id: 'all', name: 'Read', input: { file_path: 'notes.txt' } },
      { id: 'window', name: 'Read', input: { file_path: path.join(cwd, 'notes.txt'), offset: 2, limit: 2 } },
      { id: 'missing', name: 'Read', input: { file_path: 'nope.txt' } },
    ]);
    expect(results[0]).toMatchObject({
      status: 'success',
      modelContent: '     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour\n     5\tfive',
    });
    expect(results[1]).toMatchObject({ status: 'success', modelContent: '     2\ttwo\n     3\tthree' });
    expect(results[2]).toMatchObject({
      status: 'error',
      modelContent: `<tool_use_error>File does not exist: ${path.join(cwd, 'nope.txt')}</tool_use_error>`,
    });
    expect(await permissionRequests(session)).toEqual([]);
  });

  it('Write asks in default mode with a diff preview and the rule allow_always would remember; the file changes only once approved', async () => {
    const cwd = await scratchDir();
    const file = path.join(cwd, 'config.txt');
    await writeFile(file, 'name = old\nsize = 1\n');
    const session = await harness.startSession({ cwd });
    const pending = turn(session, 't1', [
      { id: 'w', name: 'Write', input: { file_path: 'config.txt', content: 'name = new\nsize = 1\n' } },
    ]);
    const [request] = await waitForPendingApprovals(session);
    expect(request).toMatchObject({
      callId: 'w',
      toolName: 'Write',
      input: { file_path: file },
      rememberRule: `Write(${file})`,
    });
    // The approver sees the change itself: the old line removed, the new one added, the unchanged line as context.
    expect(request?.preview).toContain('-name = old');
    expect(request?.preview).toContain('+name = new');
    expect(request?.preview).toContain(' size = 1');
    // Nothing is written while the approval waits.
    expect(await readFile(file, 'utf8')).toBe('name = old\nsize = 1\n');
    if (request === undefined) throw new Error('no pending approval');
    await answer(session, request, 'allow');
    const { results } = await pending;
    expect(results[0]).toMatchObject({
      status: 'success',
      modelContent: `The file ${file} has been updated.`,
      display: { type: 'file_diff' },
    });
    expect(await readFile(file, 'utf8')).toBe('name = new\nsize = 1\n');
  });

  it('Edit asks in default mode with a diff preview; a denial leaves the file alone, an approval edits it', async () => {
    const cwd = await scratchDir();
    const file = path.join(cwd, 'config.txt');
    await writeFile(file, 'name = old\nsize = 1\n');
    const session = await harness.startSession({ cwd });
    const sizeEdit = { file_path: 'config.txt', old_string: 'size = 1', new_string: 'size = 2' };
    const edit: ToolCall = { id: 'e', name: 'Edit', input: sizeEdit };

    const denied = turn(session, 't1', [edit]);
    const [first] = await waitForPendingApprovals(session);
    expect(first).toMatchObject({ callId: 'e', toolName: 'Edit', rememberRule: `Edit(${file})` });
    expect(first?.preview).toContain('-size = 1');
    expect(first?.preview).toContain('+size = 2');
    if (first === undefined) throw new Error('no pending approval');
    await answer(session, first, 'deny');
    expect((await denied).results[0]).toMatchObject({ status: 'denied', isError: true });
    expect(await readFile(file, 'utf8')).toBe('name = old\nsize = 1\n');

    const approved = turn(session, 't2', [edit]);
    const [second] = await waitForPendingApprovals(session);
    if (second === undefined) throw new Error('no pending approval');
    await answer(session, second, 'allow');
    expect((await approved).results[0]).toMatchObject({ status: 'success', display: { type: 'file_diff' } });
    expect(await readFile(file, 'utf8')).toBe('name = old\nsize = 2\n');
  });

  it('Write and Edit run without asking in acceptEdits mode', async () => {
    const cwd = await scratchDir();
    const session = await harness.startSession({ cwd, permissionMode: 'acceptEdits' });
    const { results } = await turn(session, 't1', [
      { id: 'w', name: 'Write', input: { file_path: 'docs/new.md', content: '# Title\ndraft\n' } },
      { id: 'e', name: 'Edit', input: { file_path: 'docs/new.md', old_string: 'draft', new_string: 'final' } },
    ]);
    expect(results.map((result) => result.status)).toEqual(['success', 'success']);
    expect(results[0]?.modelContent).toBe(`File created successfully at: ${path.join(cwd, 'docs/new.md')}`);
    expect(await readFile(path.join(cwd, 'docs/new.md'), 'utf8')).toBe('# Title\nfinal\n');
    // No approval was ever requested (the event log records every request, even one answered at once).
    expect(await permissionRequests(session)).toEqual([]);
  });

  it('Glob names the matching files and no others', async () => {
    const cwd = await scratchDir();
    await mkdir(path.join(cwd, 'src/lib'), { recursive: true });
    await mkdir(path.join(cwd, 'docs'));
    for (const file of ['src/a.ts', 'src/lib/b.ts', 'docs/c.md', 'd.ts']) await writeFile(path.join(cwd, file), 'x\n');
    const session = await harness.startSession({ cwd });
    const { results } = await turn(session, 't1', [
      { id: 'deep', name: 'Glob', input: { pattern: '**/*.ts' } },
      { id: 'under', name: 'Glob', input: { pattern: '*.ts', path: 'src' } },
      { id: 'none', name: 'Glob', input: { pattern: '**/*.py' } },
    ]);
    const lines = (content: string | undefined): string[] => (content ?? '').split('\n').sort();
    expect(lines(results[0]?.modelContent)).toEqual(
      ['d.ts', 'src/a.ts', 'src/lib/b.ts'].map((file) => path.join(cwd, file)).sort(),
    );
    expect(lines(results[1]?.modelContent)).toEqual([path.join(cwd, 'src/a.ts')]);
    expect(results[2]).toMatchObject({ status: 'success', modelContent: 'No files found' });
    expect(await permissionRequests(session)).toEqual([]);
  });

  it('Grep names the matching lines and files, with line numbers, case folding and a file glob', async () => {
    const cwd = await scratchDir();
    await mkdir(path.join(cwd, 'src'));
    await writeFile(path.join(cwd, 'src/a.ts'), 'const beta = 2;\nexport const alpha = 1;\n');
    await writeFile(path.join(cwd, 'src/b.ts'), '// Alpha here\n');
    await writeFile(path.join(cwd, 'notes.md'), 'alpha in the notes\n');
    const session = await harness.startSession({ cwd });
    const { results } = await turn(session, 't1', [
      { id: 'lines', name: 'Grep', input: { pattern: 'alpha', output_mode: 'content', '-n': true } },
      { id: 'files', name: 'Grep', input: { pattern: 'alpha', '-i': true, glob: '*.ts' } },
      { id: 'none', name: 'Grep', input: { pattern: 'gamma' } },
    ]);
    expect((results[0]?.modelContent ?? '').split('\n').sort()).toEqual(
      [
        `${path.join(cwd, 'notes.md')}:1:alpha in the notes`,
        `${path.join(cwd, 'src/a.ts')}:2:export const alpha = 1;`,
      ].sort(),
    );
    expect((results[1]?.modelContent ?? '').split('\n').sort()).toEqual(
      [path.join(cwd, 'src/a.ts'), path.join(cwd, 'src/b.ts')].sort(),
    );
    expect(results[2]).toMatchObject({ status: 'success', modelContent: 'No matches found' });
    expect(await permissionRequests(session)).toEqual([]);
  });

  it('Bash runs a read-only command without asking, asks before any other, and makes a non-zero exit an error result', async () => {
    const cwd = await scratchDir();
    await writeFile(path.join(cwd, 'hello.txt'), 'hello from a file\n');
    const session = await harness.startSession({ cwd });
    const readOnly = await turn(session, 't1', [
      { id: 'cat', name: 'Bash', input: { command: 'cat hello.txt' } },
      { id: 'fail', name: 'Bash', input: { command: 'cat missing.txt' } },
    ]);
    expect(readOnly.results[0]).toMatchObject({ status: 'success', modelContent: 'hello from a file\n' });
    expect(readOnly.results[1]).toMatchObject({ status: 'error', isError: true, errorCode: 'exit_code' });
    expect(readOnly.results[1]?.modelContent).toMatch(/missing\.txt: No such file or directory\nExit code 1$/);
    expect(await permissionRequests(session)).toEqual([]);

    const writing = turn(session, 't2', [{ id: 'touch', name: 'Bash', input: { command: 'touch made.txt' } }]);
    const [request] = await waitForPendingApprovals(session);
    expect(request).toMatchObject({
      callId: 'touch',
      toolName: 'Bash',
      input: { command: 'touch made.txt' },
      rememberRule: 'Bash(touch:*)',
    });
    expect(await exists(path.join(cwd, 'made.txt'))).toBe(false);
    if (request === undefined) throw new Error('no pending approval');
    await answer(session, request, 'allow');
    expect((await writing).results[0]).toMatchObject({
      status: 'success',
      modelContent: '(Bash completed with no output)',
    });
    expect(await exists(path.join(cwd, 'made.txt'))).toBe(true);
  });

  describe('WebFetch against a local HTTP server', () => {
    let server: Server;
    let base: string;
    let requests = 0;
    beforeAll(async () => {
      server = createServer((request, response) => {
        requests += 1;
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        response.end(
          `<html><head><title>Local page</title><script>var hidden = 1;</script></head><body><p>Hello from the test server at ${request.url}</p></body></html>`,
        );
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      server.close();
      await once(server, 'close');
    });

    it('asks before fetching a loopback address, returns the page text once approved, and asks again next time', async () => {
      const session = await harness.startSession({ cwd: await scratchDir() });
      const before = requests;
      const pending = turn(session, 't1', [{ id: 'f', name: 'WebFetch', input: { url: `${base}/first` } }]);
      const [request] = await waitForPendingApprovals(session);
      expect(request).toMatchObject({
        callId: 'f',
        toolName: 'WebFetch',
        input: { url: `${base}/first` },
        rememberRule: 'WebFetch(domain:127.0.0.1)',
      });
      expect(request?.reason).toContain('loopback');
      expect(requests).toBe(before); // nothing fetched while the approval waits
      if (request === undefined) throw new Error('no pending approval');
      // Even "always": a loopback host asks every time unless an allow rule names it.
      await answer(session, request, 'allow_always');
      const [result] = (await pending).results;
      expect(result?.status).toBe('success');
      expect(result?.modelContent).toContain(`URL: ${base}/first`);
      expect(result?.modelContent).toContain('Status: 200');
      expect(result?.modelContent).toContain('Hello from the test server at /first');
      expect(result?.modelContent).not.toContain('<p>');
      expect(result?.modelContent).not.toContain('hidden');
      expect(requests).toBe(before + 1);

      const again = turn(session, 't2', [{ id: 'g', name: 'WebFetch', input: { url: `${base}/second` } }]);
      const [second] = await waitForPendingApprovals(session);
      if (second === undefined) throw new Error('no pending approval');
      await answer(session, second, 'deny');
      expect((await again).results[0]).toMatchObject({ status: 'denied' });
      expect(requests).toBe(before + 1); // a denied fetch never reaches the server
    });

    it('fetches without asking when an allow rule names the exact loopback host', async () => {
      const session = await harness.startSession({
        cwd: await scratchDir(),
        rules: { allow: ['WebFetch(domain:127.0.0.1)'] },
      });
      const { results } = await turn(session, 't1', [{ id: 'f', name: 'WebFetch', input: { url: `${base}/allowed` } }]);
      expect(results[0]?.status).toBe('success');
      expect(results[0]?.modelContent).toContain('Hello from the test server at /allowed');
      expect(await permissionRequests(session)).toEqual([]);
    });
  });

  it('TodoWrite replaces the session todo list, which the sessionState query shows', async () => {
    const session = await harness.startSession({ cwd: await scratchDir() });
    const plan = [
      { content: 'Write the tests', status: 'in_progress', activeForm: 'Writing the tests' },
      { content: 'Run the tests', status: 'pending' },
    ];
    const first = await turn(session, 't1', [{ id: 'todo', name: 'TodoWrite', input: { todos: plan } }]);
    expect(first.results[0]?.status).toBe('success');
    expect(first.results[0]?.modelContent).toMatch(
      /^Todos have been modified successfully\. 2 todos: 0 completed, 1 in progress, 1 pending\./,
    );
    expect((await sessionStateOf(session)).state.todos).toEqual(plan);

    const done = [{ content: 'Write the tests', status: 'completed' }];
    const twoInProgress = [
      { content: 'a', status: 'in_progress' },
      { content: 'b', status: 'in_progress' },
    ];
    const second = await turn(session, 't2', [
      { id: 'todo2', name: 'TodoWrite', input: { todos: done } },
      // Two items in progress: refused, and the list stays as the call before left it.
      { id: 'bad', name: 'TodoWrite', input: { todos: twoInProgress } },
    ]);
    expect(second.results.map((result) => result.status)).toEqual(['success', 'error']);
    expect((await sessionStateOf(session)).state.todos).toEqual(done);
    expect(await permissionRequests(session)).toEqual([]);
  });

  it('submit_result hands in the result and stops the turn: later calls are cancelled and never run', async () => {
    const cwd = await scratchDir();
    const session = await harness.startSession({ cwd, permissionMode: 'acceptEdits' });
    const result = await turn(session, 't1', [
      { id: 'before', name: 'Write', input: { file_path: 'before.txt', content: 'written\n' } },
      { id: 'submit', name: 'submit_result', input: { result: { answer: 42 } } },
      { id: 'after', name: 'Write', input: { file_path: 'after.txt', content: 'never\n' } },
      { id: 'ls', name: 'Bash', input: { command: 'ls' } },
    ]);
    const cancelled = 'Tool cancelled because a previous tool result requested a turn stop.';
    expect(result.stopped).toBe(true);
    expect(result.stopReason).toBe('submit_result requested a turn stop');
    expect(result.results.map((entry) => [entry.callId, entry.status])).toEqual([
      ['before', 'success'],
      ['submit', 'success'],
      ['after', 'cancelled'],
      ['ls', 'cancelled'],
    ]);
    expect(result.results[1]?.modelContent).toBe('{\n  "answer": 42\n}');
    expect(result.results[2]?.modelContent).toBe(cancelled);
    expect(result.results[3]?.modelContent).toBe(cancelled);
    expect(await exists(path.join(cwd, 'before.txt'))).toBe(true);
    expect(await exists(path.join(cwd, 'after.txt'))).toBe(false);
    // The cancelled calls never started.
    const started = eventsOfType(await allEvents(session), 'ToolCallStarted').map((event) => event.callId);
    expect(started).toEqual(['before', 'submit']);
  });
});
