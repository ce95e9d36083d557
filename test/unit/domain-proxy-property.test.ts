import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isHostAllowed, startDomainProxy } from '../../src/tools/sandbox/domain-proxy.js';

/**
 * The sandbox proxy, driven in this process on its unix socket with what a hostile sandboxed program could send:
 * random bytes, random request lines, bad ports, non-ASCII, oversized heads, clients that stop mid-head, vanish, or
 * half-close. Nothing may throw out of the proxy (no uncaughtException / unhandledRejection while it runs), and every
 * client that waits gets an answer or a close. Runs are seeded: fast-check prints the seed and the shrunk input.
 */

/** An upstream on loopback that says it is HTTP, then echoes: the allowed destination of the runs. */
async function echoServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.write('HTTP/1.1 200 OK\r\n\r\n');
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

type Ending = 'end' | 'destroy' | 'stay';

/** Sends `chunks` to the proxy and ends as `ending` says; resolves with what came back once the proxy closed. */
function exchange(socketPath: string, chunks: readonly Buffer[], ending: Ending): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const client = net.connect(socketPath);
    const received: Buffer[] = [];
    client.on('data', (chunk: Buffer) => received.push(chunk));
    client.on('error', () => undefined);
    client.on('close', () => resolve(Buffer.concat(received)));
    client.once('connect', () => {
      for (const chunk of chunks) client.write(chunk);
      if (ending === 'end') client.end();
      if (ending === 'destroy') {
        client.destroy();
        resolve(undefined);
      }
    });
  });
}

describe('the sandbox proxy under random input (fast-check)', { timeout: 120_000 }, () => {
  let folder: string;
  let socketPath: string;
  let upstream: Awaited<ReturnType<typeof echoServer>>;
  let proxy: { close(): Promise<void> };
  const escaped: unknown[] = [];
  const lookedUp = new Set<string>();
  const allowedDomains = (port: number): string[] => [
    'localhost',
    `localhost:${port}`,
    '*.example.test',
    'example.test:443',
    '[::1]:1',
  ];
  const onEscape = (error: unknown): void => {
    escaped.push(error);
  };

  beforeAll(async () => {
    process.on('uncaughtException', onEscape);
    process.on('unhandledRejection', onEscape);
    folder = await mkdtemp(path.join(os.tmpdir(), 'switchyard-proxy-test-'));
    socketPath = path.join(folder, 'proxy.sock');
    upstream = await echoServer();
    proxy = await startDomainProxy({
      allowedDomains: allowedDomains(upstream.port),
      socketPath,
      // No DNS in a unit test: the test's names resolve to loopback, anything else is not found.
      async lookup(host) {
        lookedUp.add(host);
        if (host === 'localhost' || host === 'example.test' || host.endsWith('.example.test')) return ['127.0.0.1'];
        if (net.isIP(host) !== 0) return [host];
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      },
      headTimeoutMs: 100,
      connectTimeoutMs: 2_000,
    });
  });

  afterAll(async () => {
    await proxy.close();
    await upstream.close();
    await rm(folder, { recursive: true, force: true });
    process.off('uncaughtException', onEscape);
    process.off('unhandledRejection', onEscape);
  });

  it('answers or closes every client, and nothing escapes it', async () => {
    const host = fc.oneof(
      fc.constantFrom(
        'localhost',
        'LOCALHOST.',
        '127.0.0.1',
        '[::1]',
        '::1',
        'example.test',
        'a.example.test',
        'evil.test',
        '',
        '[',
        '[zz]',
        'a..b',
        'ü.example.test',
      ),
      fc.string({ maxLength: 20 }),
      fc.string({ maxLength: 8, unit: 'binary' }),
    );
    const port = fc.oneof(
      fc.constantFrom('UPSTREAM', '0', '99999', '65535', '65536', '443', '-1', '', 'abc', '00080', '1e3', '1'),
      fc.integer({ min: 0, max: 200_000 }).map(String),
      fc.string({ maxLength: 6 }),
    );
    const requestLine = fc
      .record({
        method: fc.oneof(fc.constantFrom('CONNECT', 'connect', 'GET', 'POST', 'GeT', ''), fc.string({ maxLength: 8 })),
        form: fc.constantFrom('authority', 'absolute', 'origin'),
        host,
        port,
        version: fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/2', '', 'http/1.1'),
        headers: fc.array(fc.string({ maxLength: 40 }), { maxLength: 4 }),
        end: fc.constantFrom('\r\n\r\n', '\r\n', '\n\n', ''),
        body: fc.uint8Array({ maxLength: 200 }),
      })
      .map(({ method, form, host: name, port: number, version, headers, end, body }) => {
        const authority = `${name}:${number}`;
        const target =
          form === 'authority' ? authority : form === 'absolute' ? `http://${authority}/path?q=1` : '/path';
        const head = [`${method} ${target} ${version}`, ...headers].join('\r\n') + end;
        return Buffer.concat([Buffer.from(head, 'utf8'), Buffer.from(body)]);
      });
    // Well-formed heads to the allowed names, on any port number: where a bad port once took the worker down.
    const wellFormed = fc
      .record({
        method: fc.constantFrom('CONNECT', 'GET'),
        host: fc.constantFrom('localhost', 'a.example.test', 'example.test', '[::1]', '127.0.0.1'),
        port: fc.oneof(
          fc.integer({ min: 0, max: 200_000 }),
          fc.constantFrom(0, 1, 443, 65_535, 65_536, 99_999, upstream.port),
        ),
        rest: fc.uint8Array({ maxLength: 100 }),
      })
      .map(({ method, host: name, port: number, rest }) => {
        const target = method === 'CONNECT' ? `${name}:${number}` : `http://${name}:${number}/`;
        return Buffer.concat([Buffer.from(`${method} ${target} HTTP/1.1\r\nHost: ${name}\r\n\r\n`), Buffer.from(rest)]);
      });
    const input = fc.oneof(
      { weight: 4, arbitrary: wellFormed },
      { weight: 6, arbitrary: requestLine },
      { weight: 3, arbitrary: fc.uint8Array({ maxLength: 4_096 }).map((bytes) => Buffer.from(bytes)) },
      { weight: 1, arbitrary: fc.constant(Buffer.alloc(70 * 1024, 'A')) },
      {
        weight: 1,
        arbitrary: fc.constant(Buffer.from(`GET http://localhost:1/ HTTP/1.1\r\nX: ${'y'.repeat(70_000)}`)),
      },
    );
    const cuts = fc.array(fc.nat(), { maxLength: 3 });
    const ending = fc.constantFrom<Ending>('end', 'destroy', 'stay');

    await fc.assert(
      fc.asyncProperty(input, cuts, ending, async (raw, cutPoints, how) => {
        const bytes = Buffer.from(raw.toString('latin1').replaceAll('UPSTREAM', String(upstream.port)), 'latin1');
        // A client that stays silent after a whole head may have opened a tunnel: that one ends its side instead.
        const finalEnding: Ending = how === 'stay' && bytes.includes('\r\n\r\n') ? 'end' : how;
        const points = [...new Set(cutPoints.map((point) => point % (bytes.length + 1)))].sort((a, b) => a - b);
        const chunks = [0, ...points].map((start, index) => bytes.subarray(start, [...points, bytes.length][index]));
        const received = await exchange(socketPath, chunks, finalEnding);
        if (received !== undefined && received.length > 0)
          expect(received.subarray(0, 9).toString('latin1')).toBe('HTTP/1.1 ');
      }),
      { numRuns: 300 },
    );

    expect(escaped).toEqual([]);
    // Only listed names were ever resolved: an unlisted name never reaches DNS, where it could carry data out.
    for (const host of lookedUp) expect(isHostAllowed(host, allowedDomains(upstream.port)), host).toBe(true);
    // Still serving: a well-formed tunnel to the allowed port works after all that.
    const after = await exchange(
      socketPath,
      [Buffer.from(`CONNECT localhost:${upstream.port} HTTP/1.1\r\n\r\nping`)],
      'end',
    );
    expect(after?.toString('latin1')).toBe('HTTP/1.1 200 Connection Established\r\n\r\nHTTP/1.1 200 OK\r\n\r\nping');
  });
});
