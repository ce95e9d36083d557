import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { webFetchTool } from '../../src/tools/web-fetch.js';
import { scratchDir } from '../support/scratch.js';
import { toolContext } from '../support/tool-context.js';

describe('WebFetch redirects', () => {
  it('does not follow a redirect to another host, so per-host rules cannot be slipped past', async () => {
    const server = createServer((_request, response) => {
      const { port } = server.address() as AddressInfo;
      response.writeHead(302, { location: `http://localhost:${port}/elsewhere` }).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const run = webFetchTool.execute({ url: `http://127.0.0.1:${port}/start` }, toolContext({ cwd: await scratchDir() }));
      await expect(run).rejects.toMatchObject({ code: 'cross_host_redirect', message: expect.stringContaining(`redirects to a different host: http://localhost:${port}/elsewhere`) });
    } finally {
      server.close();
    }
  });
});
