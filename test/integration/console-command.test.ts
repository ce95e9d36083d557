import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import { killCli, startCli } from '../support/cli-process.js';
import type { CliProcess } from '../support/cli-process.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { waitForPendingApprovals } from '../support/session-probes.js';
import { waitFor } from '../support/wait-for.js';

// `switchyard console` run as the real binary (bin/switchyard.js) against the test's server: docs/CLI.md
// "switchyard console" (every request needs the printed token) and src/cli/console-command.ts (serves until SIGINT or
// SIGTERM, then closes and returns 0). test/integration/console.test.ts covers the pages themselves, in a browser.

/** What the console prints on stderr once it serves: `Approval console: http://127.0.0.1:PORT/?token=…`. */
const LOGIN_URL = /Approval console: (http:\/\/127\.0\.0\.1:\d+\/\?token=[^\s]+)/;

/** Whether anything accepts a TCP connection on the port (false once the console closed its server). */
const listening = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

describe('`switchyard console` against a real server', { timeout: 180_000 }, () => {
  let harness: Harness;
  let worker: Awaited<ReturnType<Harness['startWorker']>>;
  let env: NodeJS.ProcessEnv;
  let session: SessionHandle;
  let turn: Promise<unknown>;
  const started: CliProcess[] = [];

  beforeAll(async () => {
    const cwd = await scratchDir();
    harness = await createHarness({ defaultCwd: cwd });
    worker = await harness.startWorker();
    env = {
      ...process.env,
      TEMPORAL_ADDRESS: harness.address,
      TEMPORAL_NAMESPACE: harness.namespace,
      SWITCHYARD_USER_SETTINGS_DIR: await scratchDir('switchyard-user-'),
      HOME: await scratchDir('switchyard-home-'),
      SWITCHYARD_CONSOLE_TOKEN: undefined,
      SWITCHYARD_CONSOLE_USERS_FILE: undefined,
    };
    // A Bash call waiting for a human: what the console lists.
    session = await harness.startSession({ cwd });
    turn = session.executeTurn({
      turnId: 't1',
      calls: [{ id: 'wait-for-me', name: 'Bash', input: { command: 'touch approved.txt' } }],
    });
    turn.catch(() => undefined);
    await waitForPendingApprovals(session);
  });
  afterAll(async () => {
    await Promise.all(started.map(killCli));
    await session?.workflow.terminate('console command test done').catch(() => undefined);
    worker?.worker.shutdown();
    await worker?.done;
    await harness?.close();
  });

  /** Starts the console on a free port and resolves with its login URL once it prints it. */
  const startConsoleCli = async (): Promise<{ cli: CliProcess; url: URL; token: string }> => {
    const cli = startCli(['console', '--port', '0', '--identity', 'cli-test'], env);
    started.push(cli);
    const printed = await waitFor(
      async () => {
        if (cli.child.exitCode !== null) throw new Error(`switchyard console exited early:\n${cli.output()}`);
        return LOGIN_URL.exec(cli.output())?.[1];
      },
      (found) => found !== undefined,
      { what: 'the console to print its URL', timeoutMs: 60_000 },
    );
    const url = new URL(printed ?? '');
    return { cli, url, token: url.searchParams.get('token') ?? '' };
  };

  it('serves the pending approvals only with its token, and stops with exit 0 on SIGINT (Ctrl-C)', async () => {
    const { cli, url, token } = await startConsoleCli();
    expect(token).toMatch(/^\S{16,}$/);
    const home = new URL('/', url);
    const bearer = { authorization: `Bearer ${token}` };

    // The home page's data, as the page's script asks for it: lists the waiting Bash call (visibility may lag).
    const sections = await waitFor(
      async () => {
        const response = await fetch(home, { headers: { ...bearer, accept: 'application/json' } });
        return { status: response.status, body: await response.text() };
      },
      (answer) =>
        answer.status === 200 && answer.body.includes(session.sessionId) && answer.body.includes('touch approved.txt'),
      { what: 'the console to list the pending Bash call', timeoutMs: 60_000 },
    );
    expect(sections.status).toBe(200);
    const page = await fetch(home, { headers: bearer });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain(session.sessionId);

    // Without the token, or with another, nothing is served.
    const refusedHeaders: Array<Record<string, string>> = [
      {},
      { accept: 'application/json' },
      { authorization: 'Bearer not-the-token' },
    ];
    for (const headers of refusedHeaders) {
      const refused = await fetch(home, { headers, redirect: 'manual' });
      expect(refused.status, JSON.stringify(headers)).toBe(401);
      expect(await refused.text()).not.toContain(session.sessionId);
    }
    const wrongLogin = await fetch(new URL('/?token=not-the-token', url), { redirect: 'manual' });
    expect(wrongLogin.status).toBe(401);
    // The printed URL logs in: a cookie, and the token dropped from the address.
    const login = await fetch(url, { redirect: 'manual' });
    expect(login.status).toBe(303);
    expect(login.headers.get('location')).toBe('/');
    expect(login.headers.get('set-cookie')).toBeTruthy();

    cli.child.kill('SIGINT');
    expect(await cli.exited).toMatchObject({ code: 0, signal: null });
    expect(await listening(Number(url.port))).toBe(false);
  });

  it('stops with exit 0 on SIGTERM', async () => {
    const { cli, url, token } = await startConsoleCli();
    expect((await fetch(new URL('/', url), { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toMatchObject({ code: 0, signal: null });
    expect(await listening(Number(url.port))).toBe(false);
  });
});
