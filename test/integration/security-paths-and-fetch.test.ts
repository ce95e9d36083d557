import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { ApprovalRequest } from '../../src/contracts/approval.js';
import { editTool } from '../../src/tools/builtin/edit.js';
import { webFetchTool } from '../../src/tools/builtin/web-fetch.js';
import { writeTool } from '../../src/tools/builtin/write.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { waitFor } from '../support/wait-for.js';

// Path and fetch attacks on a real server: the built-in Write, Edit and WebFetch, the real permission chain.
describe('protected paths and internal addresses on a real server', () => {
  let harness: Harness;
  let worker: Awaited<ReturnType<Harness['startWorker']>>;
  let server: Server;
  let port: number;
  let requests = 0;
  /** A call of the built-in Write tool, as a model sends it. */
  const write = (id: string, at: string, content: string) => ({ id, name: 'Write', input: { file_path: at, content } });

  const GIT_CONFIG = '[core]\n\trepositoryformatversion = 0\n';

  beforeAll(async () => {
    harness = await createHarness({ tools: [writeTool, editTool, webFetchTool] });
    worker = await harness.startWorker();
    server = createServer((_request, response) => {
      requests += 1;
      response.writeHead(200, { 'content-type': 'text/plain' }).end('local admin page');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    worker.worker.shutdown();
    await worker.done;
    await harness.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const pending = (session: SessionHandle) =>
    waitFor(
      () => session.pendingApprovals(),
      (list) => list.length > 0,
      { what: 'a pending approval' },
    );

  async function repository(): Promise<string> {
    const cwd = await scratchDir();
    await mkdir(path.join(cwd, '.git'));
    await writeFile(path.join(cwd, '.git', 'config'), GIT_CONFIG);
    return cwd;
  }

  it('acceptEdits writes src/a.txt silently but asks before writing .git/config; a deny leaves it untouched', async () => {
    const cwd = await repository();
    const session = await harness.startSession({ cwd, permissionMode: 'acceptEdits', rules: { allow: ['Write'] } });
    const turn = session.executeTurn({
      turnId: 't1',
      calls: [
        { id: 'plain', name: 'Write', input: { file_path: 'src/a.txt', content: 'fine\n' } },
        write('git', '.git/config', '[core]\n\tfsmonitor = touch pwned\n'),
      ],
    });
    const [request] = (await pending(session)) as [ApprovalRequest];
    expect(request).toMatchObject({
      callId: 'git',
      toolName: 'Write',
      input: { file_path: path.join(cwd, '.git', 'config') },
    });
    expect(request.reason).toMatch(/protected path.*git runs programs/);
    // The plain write ran before the protected one asked, without an approval of its own.
    expect(await readFile(path.join(cwd, 'src', 'a.txt'), 'utf8')).toBe('fine\n');
    await session.approve({ requestId: request.requestId, decision: 'deny', inputDigest: request.inputDigest });
    const result = await turn;
    expect(result.results.map((entry) => [entry.callId, entry.status])).toEqual([
      ['plain', 'success'],
      ['git', 'denied'],
    ]);
    expect(await readFile(path.join(cwd, '.git', 'config'), 'utf8')).toBe(GIT_CONFIG);
  });

  it('dontAsk denies writing .git/config or .switchyard/settings.json outright, and still writes src/a.txt under an allow rule', async () => {
    const cwd = await repository();
    const session = await harness.startSession({ cwd, permissionMode: 'dontAsk', rules: { allow: ['Write', 'Edit'] } });
    const settingsEdit = { file_path: '.switchyard/settings.json', old_string: '', new_string: '{"hooks":{}}' };
    const result = await session.executeTurn({
      turnId: 't1',
      calls: [
        write('git', '.git/config', '[core]\n\tfsmonitor = touch pwned\n'),
        { id: 'settings', name: 'Edit', input: settingsEdit },
        { id: 'plain', name: 'Write', input: { file_path: 'src/a.txt', content: 'fine\n' } },
      ],
    });
    expect(result.results.map((entry) => [entry.callId, entry.status])).toEqual([
      ['git', 'denied'],
      ['settings', 'denied'],
      ['plain', 'success'],
    ]);
    expect(result.results[0]?.modelContent).toMatch(/dontAsk/);
    expect(await readFile(path.join(cwd, '.git', 'config'), 'utf8')).toBe(GIT_CONFIG);
    await expect(readFile(path.join(cwd, '.switchyard', 'settings.json'), 'utf8')).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });

  it('denies the cloud metadata address in every spelling, with a whole-tool allow rule and in bypassPermissions', async () => {
    const cwd = await scratchDir();
    const calls = [
      { id: 'plain', name: 'WebFetch', input: { url: 'http://169.254.169.254/latest/meta-data' } },
      { id: 'mapped', name: 'WebFetch', input: { url: 'http://[::ffff:a9fe:a9fe]/latest/meta-data' } },
      { id: 'decimal', name: 'WebFetch', input: { url: 'http://2852039166/latest/meta-data' } },
      { id: 'gcp', name: 'WebFetch', input: { url: 'http://metadata.google.internal./computeMetadata/v1/' } },
    ];
    for (const options of [{ rules: { allow: ['WebFetch'] } }, { permissionMode: 'bypassPermissions' as const }]) {
      const session = await harness.startSession({ cwd, ...options });
      const result = await session.executeTurn({ turnId: 't1', calls });
      for (const entry of result.results) {
        expect(entry.status, `${entry.callId} ${JSON.stringify(options)}`).toBe('denied');
        expect(entry.modelContent).toMatch(/is a cloud metadata address/);
      }
      expect(await session.pendingApprovals()).toEqual([]);
    }
  });

  it('asks before fetching 127.1 even with a whole-tool allow rule and fetches only once approved; an exact-host rule allows it, dontAsk denies it', async () => {
    const cwd = await scratchDir();
    const session = await harness.startSession({ cwd, rules: { allow: ['WebFetch'] } });
    const before = requests;
    const turn = session.executeTurn({
      turnId: 't1',
      calls: [{ id: 'f', name: 'WebFetch', input: { url: `http://127.1:${port}/admin` } }],
    });
    const [request] = (await pending(session)) as [ApprovalRequest];
    // The approver sees the canonical URL: the address that is really fetched.
    expect(request).toMatchObject({ toolName: 'WebFetch', input: { url: `http://127.0.0.1:${port}/admin` } });
    expect(request.reason).toMatch(/127\.0\.0\.1 is a loopback address/);
    expect(requests).toBe(before);
    await session.approve({ requestId: request.requestId, decision: 'allow', inputDigest: request.inputDigest });
    const result = await turn;
    expect(result.results[0]).toMatchObject({ status: 'success' });
    expect(result.results[0]?.modelContent).toMatch(/local admin page$/);
    expect(requests).toBe(before + 1);

    // An allow rule naming the exact host lets it run without asking; dontAsk with a whole-tool rule denies it.
    const named = await harness.startSession({ cwd, rules: { allow: ['WebFetch(domain:127.0.0.1)'] } });
    const allowed = await named.executeTurn({
      turnId: 't1',
      calls: [{ id: 'f', name: 'WebFetch', input: { url: `http://2130706433:${port}/` } }],
    });
    expect(allowed.results[0]).toMatchObject({ status: 'success' });
    const strict = await harness.startSession({ cwd, permissionMode: 'dontAsk', rules: { allow: ['WebFetch'] } });
    const denied = await strict.executeTurn({
      turnId: 't1',
      calls: [{ id: 'f', name: 'WebFetch', input: { url: `http://0x7f.1:${port}/` } }],
    });
    expect(denied.results[0]).toMatchObject({ status: 'denied' });
    expect(requests).toBe(before + 2);
  });
});
