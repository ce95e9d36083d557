import { readFile } from 'node:fs/promises';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApprovalRequest } from '../../src/contracts/approval.js';
import type { TurnResult } from '../../src/contracts/tool-result.js';
import { makeTestCertificates } from '../support/certificates.js';
import type { TestCertificates } from '../support/certificates.js';
import { cliEnvironment, killCli, runCli, startCli } from '../support/cli-process.js';
import type { CliProcess } from '../support/cli-process.js';
import { createHarness, scratchDir, uniqueName } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { waitFor } from '../support/wait-for.js';

/**
 * mTLS in front of the test's Temporal server, as a TLS-terminating proxy (Envoy, nginx, a load balancer) puts it:
 * the client certificate must be signed by the test CA. The dev server takes no TLS settings; the full server with
 * mTLS on its own frontend is `npm run test:cluster` (test/cluster/secured-cluster.test.ts).
 */
async function startMtlsProxy(
  certificates: TestCertificates,
  upstream: string,
): Promise<{ address: string; close(): Promise<void> }> {
  const [host = '127.0.0.1', port = '7233'] = upstream.split(':');
  const sockets = new Set<net.Socket>();
  const server = tls.createServer(
    {
      key: await readFile(certificates.serverKey),
      cert: await readFile(certificates.serverCert),
      ca: await readFile(certificates.caCert),
      requestCert: true,
      rejectUnauthorized: true,
      ALPNProtocols: ['h2'],
    },
    (client) => {
      const server = net.connect(Number(port), host);
      for (const socket of [client, server]) {
        sockets.add(socket);
        socket.on('error', () => client.destroy());
        socket.on('close', () => sockets.delete(socket));
      }
      client.pipe(server).pipe(client);
    },
  );
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('switchyard worker and the CLI through mTLS, with the TEMPORAL_TLS_* variables alone', () => {
  let harness: Harness;
  let certificates: TestCertificates;
  let proxy: { address: string; close(): Promise<void> };
  let base: NodeJS.ProcessEnv;
  const started: CliProcess[] = [];
  beforeAll(async () => {
    harness = await createHarness();
    certificates = await makeTestCertificates();
    proxy = await startMtlsProxy(certificates, harness.address);
    base = await cliEnvironment(harness, { TEMPORAL_ADDRESS: proxy.address });
  });
  afterAll(async () => {
    await Promise.all(started.map(killCli));
    await proxy?.close();
    await harness?.close();
  });

  it('run a turn with an approval; without the client certificate a command stops at once, saying so', async () => {
    const env = {
      ...base,
      TEMPORAL_TLS_CLIENT_CERT_PATH: certificates.clientCert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: certificates.clientKey,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: certificates.caCert,
    };
    const cwd = await scratchDir('switchyard-mtls-cwd-');
    const worker = startCli(['worker', '--cwd', cwd], env);
    started.push(worker);
    const connected = await worker.waitForLog(
      (line) => typeof line.msg === 'string' && line.msg.startsWith('Temporal: '),
      'the worker to log its connection',
    );
    expect(connected).toMatchObject({ address: proxy.address, tls: 'mutual', apiKey: false });
    await worker.waitForLog((line) => line.msg === 'worker started', 'the worker to start');

    const sessionId = uniqueName('mtls');
    const target = path.join(cwd, 'through-mtls.txt');
    const turn = startCli(
      [
        'turn',
        '--session',
        sessionId,
        '--cwd',
        cwd,
        '--calls',
        JSON.stringify([{ id: 'w', name: 'Write', input: { file_path: target, content: 'mutual\n' } }]),
      ],
      env,
    );
    started.push(turn);
    const [request] = await waitFor(
      async () =>
        JSON.parse(
          (await runCli(['pending', '--session', sessionId, '--json'], env).catch(() => ({ stdout: '[]' }))).stdout,
        ) as ApprovalRequest[],
      (list) => list.length === 1,
      { what: 'the Write to wait for approval', timeoutMs: 60_000 },
    );
    await runCli(['approve', (request as ApprovalRequest).requestId, '--session', sessionId], env);
    const { code, stdout } = await turn.exited;
    expect(code, turn.output()).toBe(0);
    expect((JSON.parse(stdout) as TurnResult).results[0]?.status).toBe('success');
    expect(await readFile(target, 'utf8')).toBe('mutual\n');

    const startedAt = Date.now();
    const refused = await runCli(['pending'], {
      ...env,
      TEMPORAL_TLS_CLIENT_CERT_PATH: '',
      TEMPORAL_TLS_CLIENT_KEY_PATH: '',
    }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(refused?.code).toBe(1);
    expect(refused?.stderr).toMatch(
      /requires a client certificate \(mTLS\) and this connection sends none: set TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH/,
    );
    expect(Date.now() - startedAt).toBeLessThan(20_000);

    // A certificate file that cannot be read stops the command before it connects, naming the file.
    const missing = path.join(cwd, 'missing.pem');
    const unreadable = await runCli(['pending'], { ...env, TEMPORAL_TLS_CLIENT_CERT_PATH: missing }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(unreadable?.code).toBe(2);
    expect(unreadable?.stderr).toContain(
      `the TLS client certificate ${missing} (TEMPORAL_TLS_CLIENT_CERT_PATH or --tls-cert-path) cannot be read: ENOENT`,
    );
  });
});
