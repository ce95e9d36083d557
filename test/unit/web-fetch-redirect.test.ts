import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createWebFetchTool, webFetchTool } from '../../src/tools/builtin/web-fetch.js';
import { scratchDir } from '../support/scratch.js';
import { toolContext } from '../support/tool-context.js';

describe('WebFetch redirects', () => {
  it('does not follow a redirect to another host, so per-host rules cannot be slipped past', async () => {
    const server = createServer((_request, response) => {
      const { port } = server.address() as AddressInfo;
      response.writeHead(302, { location: `http://public.example:${port}/elsewhere` }).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const run = webFetchTool.execute(
        { url: `http://127.0.0.1:${port}/start` },
        toolContext({ cwd: await scratchDir() }),
      );
      await expect(run).rejects.toMatchObject({
        code: 'cross_host_redirect',
        message: expect.stringContaining(`redirects to a different host: http://public.example:${port}/elsewhere`),
      });
    } finally {
      server.close();
    }
  });
});

interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

describe('WebFetch redirects and resolved addresses: internal addresses the call was not allowed to reach', () => {
  /** A server on 127.0.0.1 that counts requests and answers each path with `respond`. */
  async function localServer(respond: (path: string, port: number) => Answer) {
    let requests = 0;
    const server = createServer((request, response) => {
      requests += 1;
      const { port } = server.address() as AddressInfo;
      const answer = respond(request.url ?? '/', port);
      response.writeHead(answer.status, answer.headers).end(answer.body ?? '');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      port: (server.address() as AddressInfo).port,
      requests: () => requests,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }

  it('refuses a redirect to a cloud-metadata address, naming why', async () => {
    const server = await localServer(() => ({
      status: 302,
      headers: { location: 'http://169.254.169.254/latest/meta-data/iam/security-credentials/' },
    }));
    try {
      const run = webFetchTool.execute(
        { url: `http://127.0.0.1:${server.port}/start` },
        toolContext({ cwd: await scratchDir() }),
      );
      await expect(run).rejects.toMatchObject({
        code: 'redirect_refused',
        message: expect.stringMatching(/169\.254\.169\.254 is a cloud metadata address/),
      });
    } finally {
      await server.close();
    }
  });

  it('refuses redirects to every spelling of a metadata, link-local or loopback host', async () => {
    const targets = [
      'http://[::ffff:a9fe:a9fe]/',
      'http://2852039166/',
      'http://metadata.google.internal./',
      'http://[fe80::1]/',
      'http://localhost./admin',
      'http://10.0.0.1/',
    ];
    for (const location of targets) {
      const server = await localServer(() => ({ status: 301, headers: { location } }));
      try {
        const run = webFetchTool.execute(
          { url: `http://127.0.0.1:${server.port}/` },
          toolContext({ cwd: await scratchDir() }),
        );
        await expect(run, location).rejects.toMatchObject({ code: 'redirect_refused' });
      } finally {
        await server.close();
      }
    }
  });

  it('refuses a public name that resolves to a metadata address, before connecting', async () => {
    const tool = createWebFetchTool({ lookupHost: () => Promise.resolve([{ address: '169.254.169.254', family: 4 }]) });
    const run = tool.execute(
      { url: 'http://metadata-alias.test/latest/meta-data' },
      toolContext({ cwd: await scratchDir() }),
    );
    await expect(run).rejects.toMatchObject({
      code: 'blocked_address',
      message: expect.stringMatching(/metadata-alias\.test resolves to 169\.254\.169\.254, a cloud metadata address/),
    });
    const mapped = createWebFetchTool({
      lookupHost: () =>
        Promise.resolve([
          { address: '93.184.215.14', family: 4 },
          { address: '::ffff:169.254.169.254', family: 6 },
        ]),
    });
    await expect(
      mapped.execute({ url: 'http://mixed.test/' }, toolContext({ cwd: await scratchDir() })),
    ).rejects.toMatchObject({ code: 'blocked_address' });
  });

  it('refuses a public name that resolves to loopback (DNS rebinding to local services), so the local server sees nothing', async () => {
    const server = await localServer(() => ({ status: 200, body: 'local secret' }));
    try {
      const tool = createWebFetchTool({ lookupHost: () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]) });
      const run = tool.execute({ url: `http://rebind.test:${server.port}/` }, toolContext({ cwd: await scratchDir() }));
      await expect(run).rejects.toMatchObject({
        code: 'blocked_address',
        message: expect.stringMatching(/rebind\.test resolves to 127\.0\.0\.1, a loopback address/),
      });
      expect(server.requests()).toBe(0);
    } finally {
      await server.close();
    }
  });

  it('still fetches localhost when the call named it (it was asked for or allowed by its exact host)', async () => {
    const server = await localServer((path): Answer =>
      path === '/start'
        ? { status: 302, headers: { location: '/end' } }
        : { status: 200, headers: { 'content-type': 'text/plain' }, body: 'hello' },
    );
    try {
      const output = await webFetchTool.execute(
        { url: `http://localhost:${server.port}/start` },
        toolContext({ cwd: await scratchDir() }),
      );
      expect(typeof output === 'string' ? output : output.content).toMatch(/\n\nhello$/);
    } finally {
      await server.close();
    }
  });
});
