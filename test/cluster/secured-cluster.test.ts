import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SwitchyardClient } from '../../src/client/switchyard-client.js';
import { temporalConnectConfigFromEnv } from '../../src/config/environment.js';
import type { ApprovalRequest } from '../../src/contracts/approval.js';
import type { TurnResult } from '../../src/contracts/tool-result.js';
import { makeTestCertificates } from '../support/certificates.js';
import type { TestCertificates } from '../support/certificates.js';
import { killCli, runCli, startCli } from '../support/cli-process.js';
import type { CliProcess } from '../support/cli-process.js';
import { freePort } from '../support/free-port.js';
import { scratchDir, uniqueName } from '../support/harness.js';
import { waitFor } from '../support/wait-for.js';
import { startCluster } from './cluster.js';
import type { Cluster, ClusterSecurity } from './cluster.js';
import { startJwtIssuer } from './jwt-issuer.js';
import type { JwtIssuer } from './jwt-issuer.js';

// `npm run test:cluster`, secured: the same production-shaped cluster with mTLS on its frontend, then with JWT
// authorization. Every process connects with only the variables the `temporal` CLI and the Temporal SDKs read
// (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TLS_*, TEMPORAL_API_KEY, or TEMPORAL_PROFILE and a temporal.toml)
// and runs a turn with an approval; without the certificate, or with a wrong key, each stops at once saying what is
// missing.

/** How long a refused start may take: a bounded connect (5 s) and one TLS handshake, never a retry loop. */
const REFUSED_WITHIN_MS = 20_000;

interface SecuredSetup {
  security: ClusterSecurity;
  /** The variables that reach the server: the client certificate, or the API key. */
  env: Record<string, string>;
  /** The same through a temporal.toml profile: TEMPORAL_CONFIG_FILE and TEMPORAL_PROFILE only. */
  profileEnv: Record<string, string>;
  /** Variables that reach the frontend but lack what it asks for (no certificate, no key), with the words expected. */
  lacking: { env: Record<string, string>; says: RegExp };
  /** Variables with the wrong credential (a client certificate of another CA, a key signed by another issuer). */
  wrong: { env: Record<string, string>; says: RegExp };
  close(): Promise<void>;
}

async function mtlsSetup(certificates: TestCertificates, configDir: string): Promise<SecuredSetup> {
  const tlsEnv = {
    TEMPORAL_TLS_CLIENT_CERT_PATH: certificates.clientCert,
    TEMPORAL_TLS_CLIENT_KEY_PATH: certificates.clientKey,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: certificates.caCert,
  };
  const toml = path.join(configDir, 'temporal.toml');
  return {
    security: { kind: 'mtls', certificates },
    env: tlsEnv,
    profileEnv: { TEMPORAL_CONFIG_FILE: toml, TEMPORAL_PROFILE: 'secured' },
    lacking: {
      env: { TEMPORAL_TLS_SERVER_CA_CERT_PATH: certificates.caCert },
      says: /requires a client certificate \(mTLS\) and this connection sends none: set TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH/,
    },
    wrong: {
      env: {
        ...tlsEnv,
        TEMPORAL_TLS_CLIENT_CERT_PATH: certificates.strangerCert,
        TEMPORAL_TLS_CLIENT_KEY_PATH: certificates.strangerKey,
      },
      says: /refused this connection's client certificate \(TEMPORAL_TLS_CLIENT_CERT_PATH or --tls-cert-path\)/,
    },
    close: async () => {},
  };
}

async function jwtSetup(certificates: TestCertificates, issuer: JwtIssuer): Promise<SecuredSetup> {
  const worker = issuer.token({ sub: 'switchyard', permissions: ['default:write'] });
  return {
    security: {
      kind: 'jwt',
      certificates,
      jwksUrl: issuer.jwksUrl,
      adminToken: issuer.token({ sub: 'operator', permissions: ['temporal-system:admin'] }),
    },
    env: { TEMPORAL_API_KEY: worker, TEMPORAL_TLS_SERVER_CA_CERT_PATH: certificates.caCert },
    profileEnv: {},
    lacking: {
      env: { TEMPORAL_TLS_SERVER_CA_CERT_PATH: certificates.caCert },
      says: /refused the request: it requires an API key and none is set: set TEMPORAL_API_KEY/,
    },
    wrong: {
      env: {
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: certificates.caCert,
        TEMPORAL_API_KEY: issuer.strangerToken({ sub: 'switchyard', permissions: ['default:write'] }),
      },
      says: /refused the API key \(TEMPORAL_API_KEY or --api-key\)/,
    },
    close: () => issuer.close(),
  };
}

/** A temporal.toml whose `secured` profile holds what `env` says, as the `temporal` CLI writes it. */
async function writeProfile(file: string, address: string, env: Record<string, string>): Promise<void> {
  const lines = ['[profile.secured]', `address = "${address}"`, 'namespace = "default"'];
  if (env.TEMPORAL_API_KEY !== undefined) lines.push(`api_key = "${env.TEMPORAL_API_KEY}"`);
  lines.push('[profile.secured.tls]');
  if (env.TEMPORAL_TLS_CLIENT_CERT_PATH !== undefined)
    lines.push(`client_cert_path = "${env.TEMPORAL_TLS_CLIENT_CERT_PATH}"`);
  if (env.TEMPORAL_TLS_CLIENT_KEY_PATH !== undefined)
    lines.push(`client_key_path = "${env.TEMPORAL_TLS_CLIENT_KEY_PATH}"`);
  if (env.TEMPORAL_TLS_SERVER_CA_CERT_PATH !== undefined)
    lines.push(`server_ca_cert_path = "${env.TEMPORAL_TLS_SERVER_CA_CERT_PATH}"`);
  await writeFile(file, `${lines.join('\n')}\n`);
}

for (const kind of ['mtls', 'jwt'] as const) {
  describe(`on a cluster secured with ${kind === 'mtls' ? 'mTLS on the frontend' : 'JWT authorization'}`, () => {
    let setup: SecuredSetup;
    let cluster: Cluster;
    let cwd: string;
    /** Only the standard variables, beside what every switchyard process of a test gets (its own HOME, data dir). */
    let base: NodeJS.ProcessEnv;
    const taskQueue = uniqueName(`secured-${kind}`);
    const started: CliProcess[] = [];

    beforeAll(async () => {
      const certificates = await makeTestCertificates();
      const configDir = await scratchDir('switchyard-temporal-config-');
      setup =
        kind === 'mtls'
          ? await mtlsSetup(certificates, configDir)
          : await jwtSetup(certificates, await startJwtIssuer());
      cluster = await startCluster({
        security: setup.security,
        progress: (line) => process.stderr.write(`[cluster ${kind}] ${line}\n`),
      });
      cwd = await scratchDir('switchyard-secured-cwd-');
      const inherited = Object.fromEntries(
        Object.entries(process.env).filter(
          ([name]) => !name.startsWith('TEMPORAL_') && !name.startsWith('SWITCHYARD_'),
        ),
      );
      base = {
        ...inherited,
        HOME: await scratchDir('switchyard-home-'),
        SWITCHYARD_DATA_DIR: await scratchDir('switchyard-data-'),
        SWITCHYARD_USER_SETTINGS_DIR: await scratchDir('switchyard-user-'),
        SWITCHYARD_TASK_QUEUE: taskQueue,
        SWITCHYARD_LOG_FORMAT: 'json',
        TEMPORAL_ADDRESS: cluster.address,
        TEMPORAL_NAMESPACE: cluster.namespace,
      };
      if (kind === 'mtls') {
        await writeProfile(path.join(configDir, 'temporal.toml'), cluster.address, setup.env);
      }
    }, 1_800_000);
    afterAll(async () => {
      await Promise.all(started.map(killCli));
      await cluster?.stop();
      await setup?.close();
    });

    const start = (args: string[], env: NodeJS.ProcessEnv): CliProcess => {
      const cli = startCli(args, env);
      started.push(cli);
      return cli;
    };

    it('the worker, the CLI, the client, the console and `switchyard mcp` connect with the standard variables alone and run turns with approvals', async () => {
      const env = { ...base, ...setup.env };
      // The CLI through the temporal.toml profile where there is one (mTLS), else the same variables as the worker.
      const { TEMPORAL_ADDRESS: _address, TEMPORAL_NAMESPACE: _namespace, ...baseWithoutServer } = base;
      const cliEnv: NodeJS.ProcessEnv = kind === 'mtls' ? { ...baseWithoutServer, ...setup.profileEnv } : env;
      const worker = start(['worker', '--cwd', cwd], env);
      const connected = await worker.waitForLog(
        (line) => typeof line.msg === 'string' && line.msg.startsWith('Temporal: '),
        'the worker to log its connection',
      );
      expect(connected).toMatchObject(kind === 'mtls' ? { tls: 'mutual', apiKey: false } : { tls: 'on', apiKey: true });
      await worker.waitForLog((line) => line.msg === 'worker started', 'the worker to start');

      // switchyard turn waits for the approval that `pending` shows and `approve` gives; `audit` records it.
      const sessionId = uniqueName('secured-turn');
      const target = path.join(cwd, `${sessionId}.txt`);
      const turn = start(
        [
          'turn',
          '--session',
          sessionId,
          '--cwd',
          cwd,
          '--calls',
          JSON.stringify([{ id: 'w', name: 'Write', input: { file_path: target, content: 'approved\n' } }]),
        ],
        cliEnv,
      );
      const [request] = await waitFor(
        async () =>
          JSON.parse(
            (await runCli(['pending', '--session', sessionId, '--json'], cliEnv).catch(() => ({ stdout: '[]' })))
              .stdout,
          ) as ApprovalRequest[],
        (list) => list.length === 1,
        { what: 'the Write to wait for approval', timeoutMs: 120_000 },
      );
      await runCli(['approve', (request as ApprovalRequest).requestId, '--session', sessionId], cliEnv);
      const turnExit = await turn.exited;
      expect(turnExit.code, turn.output()).toBe(0);
      expect((JSON.parse(turnExit.stdout) as TurnResult).results[0]?.status).toBe('success');
      expect(await readFile(target, 'utf8')).toBe('approved\n');
      const audit = JSON.parse((await runCli(['audit', '--session', sessionId, '--json'], cliEnv)).stdout) as unknown[];
      expect(JSON.stringify(audit)).toContain((request as ApprovalRequest).requestId);

      // The console, on the same variables: it connects, says how, and lists a waiting call.
      const client = await SwitchyardClient.connect({
        connectionOptions: temporalConnectConfigFromEnv({}, env).connectionOptions,
        namespace: cluster.namespace,
        taskQueue,
      });
      try {
        const consoleCli = start(['console', '--port', '0'], env);
        const loginUrl = await waitFor(
          async () => /Approval console: (\S+)/.exec(consoleCli.output())?.[1],
          (found) => found !== undefined,
          { what: 'the console to print its URL', timeoutMs: 60_000 },
        );
        expect(consoleCli.output()).toContain(kind === 'mtls' ? 'TLS on (mutual), API key off' : 'TLS on, API key on');

        // switchyard mcp (streamable HTTP): a Write waits for the approval the library client gives.
        const mcpSession = uniqueName('secured-mcp');
        const port = await freePort();
        const mcp = start(['mcp', '--session', mcpSession, '--cwd', cwd, '--http', String(port)], {
          ...env,
          SWITCHYARD_MCP_TOKEN: 'secured-test-token',
        });
        await waitFor(
          async () => mcp.output(),
          (output) => output.includes(`http://127.0.0.1:${port}/mcp`),
          { what: 'the gateway listening', timeoutMs: 60_000 },
        );
        const mcpClient = new McpClient({ name: 'switchyard-test', version: '1.0.0' });
        await mcpClient.connect(
          new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
            requestInit: { headers: { authorization: 'Bearer secured-test-token' } },
          }),
        );
        try {
          const mcpTarget = path.join(cwd, `${mcpSession}.txt`);
          const call = mcpClient.callTool(
            { name: 'Write', arguments: { file_path: mcpTarget, content: 'over mcp\n' } },
            undefined,
            { timeout: 120_000, resetTimeoutOnProgress: true },
          );
          const [mcpRequest] = await waitFor(
            () =>
              client
                .session(mcpSession)
                .pendingApprovals()
                .catch(() => [] as ApprovalRequest[]),
            (list) => list.length === 1,
            { what: 'the MCP Write to wait for approval', timeoutMs: 120_000 },
          );
          // The console lists it (its home page's data, as the page's script asks for it).
          const token = new URL(loginUrl ?? '').searchParams.get('token') ?? '';
          await waitFor(
            async () =>
              (
                await fetch(new URL('/', loginUrl), {
                  headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
                })
              ).text(),
            (body) => body.includes(mcpSession),
            { what: 'the console to list the MCP session', timeoutMs: 60_000 },
          );
          const approval = mcpRequest as ApprovalRequest;
          await client.session(mcpSession).approve({
            requestId: approval.requestId,
            decision: 'allow',
            inputDigest: approval.inputDigest,
            by: 'secured-test',
          });
          expect((await call).isError).toBeFalsy();
          expect(await readFile(mcpTarget, 'utf8')).toBe('over mcp\n');
        } finally {
          await mcpClient.close();
        }
      } finally {
        await client.client.connection.close();
      }
    });

    it('without the credential, or with a wrong one, each process stops at once saying what is missing', async () => {
      for (const attempt of [setup.lacking, setup.wrong]) {
        const env = { ...base, ...attempt.env };
        for (const args of [
          ['pending'],
          [
            'turn',
            '--session',
            uniqueName('refused'),
            '--calls',
            JSON.stringify([{ id: 'g', name: 'Glob', input: { pattern: '*' } }]),
          ],
          ['audit'],
          ['worker', '--cwd', cwd],
          ['console', '--port', '0'],
          ['mcp', '--session', uniqueName('refused'), '--cwd', cwd, '--http', '0'],
        ]) {
          const startedAt = Date.now();
          const cli = start(args, env);
          const { code } = await cli.exited;
          const elapsed = Date.now() - startedAt;
          expect(code, `switchyard ${args[0] ?? ''}: ${cli.output()}`).not.toBe(0);
          expect(cli.output(), `switchyard ${args[0] ?? ''}`).toMatch(attempt.says);
          expect(elapsed, `switchyard ${args[0] ?? ''} took ${elapsed} ms`).toBeLessThan(REFUSED_WITHIN_MS);
        }
      }
    });
  });
}
