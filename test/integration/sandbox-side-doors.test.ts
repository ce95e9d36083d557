import { access, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SessionOptions } from '../../src/contracts/session.js';
import type { ToolResult } from '../../src/contracts/tool-result.js';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import { bubblewrapAvailability } from '../../src/tools/sandbox/bubblewrap-availability.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { killProcess, spawnWorkerProcess } from '../support/spawn-worker.js';
import { waitFor } from '../support/wait-for.js';

/**
 * Side doors around the OS sandbox, tried as an attacker would through real sessions on a real server, with the real
 * Bash and real bubblewrap: a launcher planted where the worker's PATH looks first, a worker TMPDIR outside /tmp that
 * shows other sessions' proxy sockets and spool files, and a session option that would lower the worker's
 * `SWITCHYARD_SANDBOX=required`.
 */

const exists = (file: string): Promise<boolean> =>
  access(file).then(
    () => true,
    () => false,
  );

/** Sets worker env vars for one test (the in-process worker reads them per call). */
function workerEnv(): { set(values: Record<string, string>): void; restore(): void } {
  const saved = new Map<string, string | undefined>();
  return {
    set(values) {
      for (const [name, value] of Object.entries(values)) {
        if (!saved.has(name)) saved.set(name, process.env[name]);
        process.env[name] = value;
      }
    },
    restore() {
      for (const [name, value] of saved) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      saved.clear();
    },
  };
}

/** A loopback HTTP server on the worker's host that counts the requests it got. */
async function loopbackServer(): Promise<{ port: number; requests: () => number; close: () => Promise<void> }> {
  let count = 0;
  const server = http.createServer((_request, response) => {
    count += 1;
    response.end('hello from the host\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests: () => count,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Every unix socket under `folder` (a few levels deep). */
async function socketsUnder(folder: string, depth = 3): Promise<string[]> {
  const found: string[] = [];
  const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const file = path.join(folder, entry.name);
    if (entry.isSocket()) found.push(file);
    else if (entry.isDirectory() && depth > 0) found.push(...(await socketsUnder(file, depth - 1)));
  }
  return found;
}

const bash = async (
  session: SessionHandle,
  turnId: string,
  command: string,
  extra: Record<string, unknown> = {},
): Promise<ToolResult> => {
  const turn = await session.executeTurn({ turnId, calls: [{ id: 'b', name: 'Bash', input: { command, ...extra } }] });
  const [result] = turn.results;
  if (result === undefined) throw new Error('no result');
  return result;
};

describe('sandbox side doors through real sessions (real bubblewrap, spawned workers)', { timeout: 240_000 }, () => {
  let harness: Harness;
  let home: string;
  beforeAll(async () => {
    const availability = await bubblewrapAvailability();
    if (!availability.available) throw new Error(`these tests need bubblewrap: ${availability.reason}`);
    harness = await createHarness({ tools: builtinTools() });
    // The worker user's home: a fake one with the key an attacker wants.
    home = await scratchDir('switchyard-home-');
    await mkdir(path.join(home, '.ssh'));
    await writeFile(path.join(home, '.ssh', 'id_ed25519'), 'PRIVATE-KEY-MATERIAL\n');
  });
  afterAll(async () => harness.close());

  const requiredSession = (cwd: string, sandbox: SessionOptions['sandbox'] = {}): Promise<SessionHandle> =>
    harness.startSession({ cwd, permissionMode: 'bypassPermissions', sandbox: { mode: 'required', ...sandbox } });

  it("a bwrap, stdbuf and head planted in the session's node_modules/.bin (first on the worker's PATH) never run: later calls stay sandboxed", async () => {
    const cwd = await scratchDir();
    const outside = await scratchDir('switchyard-outside-');
    const marker = path.join(outside, 'planted-program-ran');
    // Started the README way: `npx switchyard worker` in the project folder puts its node_modules/.bin first.
    const worker = await spawnWorkerProcess(harness, {
      tools: 'builtin',
      env: { HOME: home, PATH: `${path.join(cwd, 'node_modules', '.bin')}:${process.env.PATH ?? '/usr/bin:/bin'}` },
    });
    try {
      const session = await requiredSession(cwd);
      // Each planted program leaves a marker outside cwd (only an unconfined process can), then does its job
      // unconfined: the planted bwrap drops every option and runs the command as it is.
      const plant = [
        'mkdir -p node_modules/.bin',
        `printf '%s\\n' '#!/bin/bash' 'echo bwrap >> ${marker}' 'while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do shift; done; shift; exec "$@"' > node_modules/.bin/bwrap`,
        `printf '%s\\n' '#!/bin/bash' 'echo stdbuf >> ${marker}' 'exec /usr/bin/stdbuf "$@"' > node_modules/.bin/stdbuf`,
        `printf '%s\\n' '#!/bin/bash' 'echo head >> ${marker}' 'exec /usr/bin/head "$@"' > node_modules/.bin/head`,
        'chmod +x node_modules/.bin/*',
        'echo planted',
      ].join(' && ');
      const planted = await bash(session, 't1', plant);
      expect(planted).toMatchObject({ status: 'success', sandboxed: true, modelContent: 'planted\n' });

      const read = await bash(session, 't2', `cat ${home}/.ssh/id_ed25519; echo x > ${outside}/escaped; echo done`);
      expect(read.sandboxed).toBe(true);
      expect(read.modelContent).toContain('done');
      expect(read.modelContent).not.toContain('PRIVATE-KEY-MATERIAL');

      const started = await bash(session, 't3', `cat ${home}/.ssh/id_ed25519; echo background-done`, {
        run_in_background: true,
      });
      expect(started).toMatchObject({ status: 'success', sandboxed: true });
      const taskId = started.backgroundTask?.taskId ?? '';
      const output = await session.executeTurn({
        turnId: 't4',
        calls: [{ id: 'read', name: 'TaskOutput', input: { task_id: taskId, timeout: 60_000 } }],
      });
      const text = output.results[0]?.modelContent ?? '';
      expect(text).toContain('background-done');
      expect(text).not.toContain('PRIVATE-KEY-MATERIAL');
    } finally {
      await killProcess(worker);
    }
    expect(await exists(path.join(outside, 'escaped'))).toBe(false);
    expect(await exists(marker)).toBe(false);
  });

  it("with the worker's TMPDIR outside /tmp, a session with no network neither sees nor uses another session's proxy socket or spool files", async () => {
    const workerTemporary = await mkdtemp('/var/tmp/switchyard-worker-tmp-');
    const server = await loopbackServer();
    const worker = await spawnWorkerProcess(harness, {
      tools: 'builtin',
      env: { HOME: home, TMPDIR: workerTemporary },
    });
    try {
      const networked = await requiredSession(await scratchDir(), {
        network: { allowedDomains: [`localhost:${server.port}`] },
      });
      expect(await bash(networked, 't1', 'echo with-network')).toMatchObject({ status: 'success', sandboxed: true });
      const sockets = await socketsUnder(workerTemporary);
      expect(sockets.length).toBeGreaterThan(0);
      // What another session's Bash leaves there: a spool file of its output.
      await writeFile(path.join(workerTemporary, 'switchyard-bash-other-session.out'), 'SPOOL-SECRET\n');

      const isolated = await requiredSession(await scratchDir());
      const node = process.execPath;
      const connect = (socket: string): string =>
        `${node} -e 'const s = require("node:net").connect(process.argv[1]); s.on("connect", () => { console.log("SOCKET-CONNECTED"); s.write("GET http://localhost:${server.port}/ HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n"); }); s.on("data", (d) => process.stdout.write(d)); s.on("error", (e) => console.log("refused", e.code));' ${socket}`;
      const probe = await bash(
        isolated,
        't1',
        [
          `ls -la ${workerTemporary}`,
          `cat ${workerTemporary}/switchyard-bash-other-session.out`,
          ...sockets.flatMap((socket) => [`test -S ${socket} && echo SOCKET-VISIBLE`, connect(socket)]),
          'echo done',
        ].join('; '),
      );
      expect(probe.sandboxed).toBe(true);
      expect(probe.modelContent).toContain('done');
      for (const leaked of [
        'SPOOL-SECRET',
        'SOCKET-VISIBLE',
        'SOCKET-CONNECTED',
        'hello from the host',
        'switchyard-proxy',
      ])
        expect(probe.modelContent, leaked).not.toContain(leaked);
      expect(server.requests()).toBe(0);
      // The host's folder is untouched: the mask is the sandbox's view only.
      expect((await stat(path.join(workerTemporary, 'switchyard-bash-other-session.out'))).size).toBeGreaterThan(0);
    } finally {
      await killProcess(worker);
      await server.close();
      await rm(workerTemporary, { recursive: true, force: true });
    }
  });
});

describe("the worker's SWITCHYARD_SANDBOX=required is a floor a session cannot lower", { timeout: 120_000 }, () => {
  let harness: Harness;
  const env = workerEnv();
  beforeAll(async () => {
    harness = await createHarness({ tools: builtinTools() });
  });
  afterEach(() => env.restore());
  afterAll(async () => harness.close());

  it.each(['off', 'auto'] as const)(
    'a session admitted with sandbox.mode "%s" has its Bash calls refused with sandbox_unavailable on a worker with SWITCHYARD_SANDBOX=required; nothing runs unsandboxed',
    async (mode) => {
      const cwd = await scratchDir();
      await harness.withWorker(async () => {
        // Admitted by a worker without the floor (session start checks the worker it starts on)...
        const session = await harness.startSession({ cwd, permissionMode: 'bypassPermissions', sandbox: { mode } });
        // A session that names a mode is admitted by its worker before it installs its handlers: wait for them.
        await waitFor(
          () =>
            session.pendingApprovals().then(
              () => true,
              () => false,
            ),
          (ready) => ready,
          { what: 'the session to be admitted' },
        );
        const before = await bash(session, 't1', 'echo ok');
        expect(before).toMatchObject({ status: 'success', modelContent: 'ok\n' });
        // ...its next calls land on a worker that requires the sandbox: each call holds the floor itself.
        env.set({ SWITCHYARD_SANDBOX: 'required' });
        const turn = await session.executeTurn({
          turnId: 't2',
          calls: [
            { id: 'fg', name: 'Bash', input: { command: 'echo ran > ran.txt; echo ok' } },
            { id: 'bg', name: 'Bash', input: { command: 'echo ran > bg.txt', run_in_background: true } },
          ],
        });
        expect(turn.results).toHaveLength(2);
        for (const result of turn.results) {
          expect(result).toMatchObject({ status: 'error', isError: true, errorCode: 'sandbox_unavailable' });
          expect(result.modelContent).toContain('This worker requires the OS sandbox (SWITCHYARD_SANDBOX=required)');
          expect(result.modelContent).toContain(`sandbox.mode "${mode}" was refused`);
        }
      });
      expect(await exists(path.join(cwd, 'ran.txt'))).toBe(false);
      expect(await exists(path.join(cwd, 'bg.txt'))).toBe(false);
    },
  );
});
