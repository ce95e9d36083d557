import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionOptions } from '../../src/contracts/session.js';
import type { ToolResult } from '../../src/contracts/tool-result.js';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import { bubblewrapAvailability } from '../../src/tools/sandbox/bubblewrap-availability.js';
import { bashTool } from '../../src/tools/builtin/bash.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { killProcess, spawnWorkerProcess } from '../support/spawn-worker.js';

/**
 * The sandbox's network through real sessions on a real server, with the real Bash and real bubblewrap, as an
 * attacker inside the sandbox would try it: the Temporal frontend of the worker's own server is a loopback port, and
 * a session that may reach `localhost` must not reach it (it could change its own session's policy from there); a
 * malformed request to the proxy must not take the worker down.
 */

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

/** The port of the test's Temporal frontend (`host:port`). */
function frontendPort(address: string): number {
  const port = Number(address.slice(address.lastIndexOf(':') + 1));
  if (!Number.isInteger(port) || port <= 0) throw new Error(`no port in the Temporal address "${address}"`);
  return port;
}

/** What curl got from the proxy for a CONNECT through it to `url` (`%{http_connect}`: 200 tunnel, 403 refused). */
const tunnelStatus = (label: string, url: string): string =>
  `curl -sS -m 10 -o /dev/null -p -w '${label} %{http_connect}\\n' ${url} 2>/dev/null`;

describe('the sandbox network through real sessions (allowedDomains with ports)', { timeout: 180_000 }, () => {
  let harness: Harness;
  let frontend: number;
  beforeAll(async () => {
    const availability = await bubblewrapAvailability();
    if (!availability.available) throw new Error(`these tests need bubblewrap: ${availability.reason}`);
    harness = await createHarness({ tools: [bashTool] });
    frontend = frontendPort(harness.address);
  });
  afterAll(async () => harness.close());

  const bash = async (session: SessionHandle, turnId: string, command: string): Promise<ToolResult> => {
    const turn = await session.executeTurn({ turnId, calls: [{ id: 'b', name: 'Bash', input: { command } }] });
    const [result] = turn.results;
    if (result === undefined) throw new Error('no result');
    return result;
  };

  const networkSession = (cwd: string, allowedDomains: string[]): Promise<SessionHandle> =>
    harness.startSession({
      cwd,
      permissionMode: 'bypassPermissions',
      sandbox: { mode: 'required', network: { allowedDomains } } satisfies SessionOptions['sandbox'],
    });

  it("allowedDomains ['localhost'] reaches no loopback port: not the Temporal frontend, not a host HTTP server", async () => {
    const cwd = await scratchDir();
    const server = await loopbackServer();
    try {
      await harness.withWorker(async () => {
        const session = await networkSession(cwd, ['localhost']);
        const result = await bash(
          session,
          't1',
          [
            tunnelStatus('frontend', `http://localhost:${frontend}/`),
            tunnelStatus('frontend-ip', `http://127.0.0.1:${frontend}/`),
            `curl -sS -m 10 http://localhost:${server.port}/`,
            'echo done',
          ].join('; '),
        );
        expect(result.sandboxed).toBe(true);
        expect(result.modelContent).toContain('frontend 403');
        expect(result.modelContent).toContain('frontend-ip 403');
        expect(result.modelContent).not.toContain('hello from the host');
        expect(result.modelContent).toContain('done');
      });
      expect(server.requests()).toBe(0);
    } finally {
      await server.close();
    }
  });

  it("allowedDomains ['localhost:<port>'] reaches that port and no other (the Temporal frontend refused)", async () => {
    const cwd = await scratchDir();
    const server = await loopbackServer();
    const other = await loopbackServer();
    try {
      await harness.withWorker(async () => {
        const session = await networkSession(cwd, [`localhost:${server.port}`]);
        const allowed = await bash(session, 't1', `curl -sS -m 10 http://localhost:${server.port}/`);
        expect(allowed).toMatchObject({ status: 'success', sandboxed: true });
        expect(allowed.modelContent).toBe('hello from the host\n');
        const refused = await bash(
          session,
          't2',
          [
            tunnelStatus('frontend', `http://localhost:${frontend}/`),
            `curl -sS -m 10 http://localhost:${other.port}/`,
            `curl -sS -m 10 http://127.0.0.1:${server.port}/`,
            'echo done',
          ].join('; '),
        );
        expect(refused.modelContent).toContain('frontend 403');
        expect(refused.modelContent).not.toContain('hello from the host');
        expect(refused.modelContent).toContain('done');
      });
      expect(server.requests()).toBe(1);
      expect(other.requests()).toBe(0);
    } finally {
      await server.close();
      await other.close();
    }
  });

  it('a session whose allowedDomains entry is malformed does not start, and the error names the entry', async () => {
    const cwd = await scratchDir();
    for (const entry of ['localhost:99999', 'localhost:abc', 'example.com/path', '', 'http://example.com']) {
      await expect(networkSession(cwd, [entry]), entry).rejects.toThrow(
        entry === '' ? /allowedDomains/ : new RegExp(entry.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')),
      );
    }
  });
});

describe('a bad-port CONNECT to the sandbox proxy (worker in its own process)', { timeout: 180_000 }, () => {
  let harness: Harness;
  let worker: ChildProcess | undefined;
  beforeAll(async () => {
    harness = await createHarness({ tools: [bashTool] });
  });
  afterAll(async () => {
    if (worker !== undefined) await killProcess(worker);
    await harness.close();
  });

  /** The turn's first result, or a failure naming the worker's exit if the worker dies first. */
  const bashOrWorkerExit = async (
    session: SessionHandle,
    child: ChildProcess,
    turnId: string,
    command: string,
  ): Promise<ToolResult> => {
    const exited = once(child, 'exit').then(([code, signal]) => {
      throw new Error(`the worker process exited (${String(code ?? signal)}) during turn ${turnId}`);
    });
    const turn = session.executeTurn({ turnId, calls: [{ id: 'b', name: 'Bash', input: { command } }] });
    const result = await Promise.race([turn, exited]);
    const [first] = result.results;
    if (first === undefined) throw new Error('no result');
    return first;
  };

  it('CONNECT localhost:99999 (and :0, :65536) is refused; the worker lives and the next call succeeds', async () => {
    const cwd = await scratchDir();
    worker = await spawnWorkerProcess(harness, { tools: 'builtin' });
    const session = await harness.startSession({
      cwd,
      permissionMode: 'bypassPermissions',
      sandbox: { mode: 'required', network: { allowedDomains: ['localhost'] } },
    });
    const connect = (target: string): string =>
      `(exec 3<>/dev/tcp/127.0.0.1/3128 && printf 'CONNECT ${target} HTTP/1.1\\r\\nHost: ${target}\\r\\n\\r\\n' >&3 && head -n 1 <&3)`;
    const attack = await bashOrWorkerExit(
      session,
      worker,
      't1',
      [connect('localhost:99999'), connect('localhost:0'), connect('localhost:65536'), 'echo sent'].join('; '),
    );
    expect(attack.sandboxed).toBe(true);
    expect(attack.modelContent).toContain('sent');
    expect(attack.modelContent.match(/HTTP\/1\.1 400 Bad Request/g)).toHaveLength(3);
    const after = await bashOrWorkerExit(session, worker, 't2', 'echo alive');
    expect(after).toMatchObject({ status: 'success', modelContent: 'alive\n', sandboxed: true });
    expect(worker.exitCode).toBeNull();
  });
});
