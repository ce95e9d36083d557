import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApprovalRequest } from '../../src/contracts/approval.js';
import { createHarness, scratchDir, uniqueName } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { killCli, startCli } from '../support/cli-process.js';
import { freePort } from '../support/free-port.js';
import { waitFor } from '../support/wait-for.js';

// Switchyard as an MCP server, driven by the official MCP SDK client (a real client, not project code), over stdio and
// over streamable HTTP, against a real session on the test server with the real built-in tools.

const BIN = path.resolve('bin/switchyard.js');

type TextContent = { type: string; text?: string };
const textOf = (result: object): string =>
  (((result as { content?: unknown }).content ?? []) as TextContent[]).map((block) => block.text ?? '').join('\n');

let harness: Harness;
let cwd: string;
let worker: Awaited<ReturnType<Harness['startWorker']>>;
let env: Record<string, string>;

beforeAll(async () => {
  harness = await createHarness();
  cwd = await scratchDir('switchyard-mcp-gateway-');
  await writeFile(path.join(cwd, 'hello.txt'), 'hello from the workspace\nsecond line\n');
  worker = await harness.startWorker({ defaultCwd: cwd });
  env = Object.fromEntries(
    Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  Object.assign(env, {
    TEMPORAL_ADDRESS: harness.address,
    TEMPORAL_NAMESPACE: harness.namespace,
    SWITCHYARD_TASK_QUEUE: harness.taskQueue,
    SWITCHYARD_DATA_DIR: harness.dataDir,
  });
});

afterAll(async () => {
  worker.worker.shutdown();
  await worker.done;
  await harness.close();
});

async function pendingFor(sessionId: string, toolName: string): Promise<ApprovalRequest> {
  const pending = await waitFor(
    () =>
      harness.client
        .session(sessionId)
        .pendingApprovals()
        .catch(() => [] as ApprovalRequest[]),
    (list) => list.some((request) => request.toolName === toolName),
    { what: `a pending ${toolName} approval in ${sessionId}`, timeoutMs: 60_000 },
  );
  return pending.find((request) => request.toolName === toolName)!;
}

/** Lists, reads, and runs a Bash call that waits for an approval sent over the wire contract. */
async function exerciseGateway(client: Client, sessionId: string, file: string): Promise<void> {
  const { tools } = await client.listTools();
  const read = tools.find((tool) => tool.name === 'Read');
  const bash = tools.find((tool) => tool.name === 'Bash');
  expect(read?.inputSchema.properties).toHaveProperty('file_path');
  expect(read?.annotations?.readOnlyHint).toBe(true);
  expect(bash?.inputSchema.properties).toHaveProperty('command');
  expect(bash?.inputSchema.required).toContain('command');

  const readResult = await client.callTool({ name: 'Read', arguments: { file_path: 'hello.txt' } });
  expect(readResult.isError).toBeFalsy();
  expect(textOf(readResult)).toContain('hello from the workspace');

  const progress: string[] = [];
  let settled = false;
  const touch = client
    .callTool({ name: 'Bash', arguments: { command: `touch ${file}` } }, undefined, {
      timeout: 120_000,
      resetTimeoutOnProgress: true,
      onprogress: (update) => {
        if (update.message !== undefined) progress.push(update.message);
      },
    })
    .finally(() => {
      settled = true;
    });
  const request = await pendingFor(sessionId, 'Bash');
  // The request stays open while the call waits, and the client hears which request to approve.
  await waitFor(
    async () => progress,
    (messages) => messages.some((message) => message.includes(request.requestId)),
    { what: 'a progress message naming the request' },
  );
  expect(settled).toBe(false);
  expect(existsSync(path.join(cwd, file))).toBe(false);

  await harness.client
    .session(sessionId)
    .approve({ requestId: request.requestId, decision: 'allow', inputDigest: request.inputDigest, by: 'test' });
  const result = await touch;
  expect(result.isError).toBeFalsy();
  expect(existsSync(path.join(cwd, file))).toBe(true);
}

describe('switchyard mcp over stdio', () => {
  it('lists the session tools, reads a file, and keeps a Bash call open until it is approved', async () => {
    const sessionId = uniqueName('mcp-stdio');
    const client = new Client({ name: 'switchyard-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'mcp', '--session', sessionId, '--cwd', cwd],
        env,
        stderr: 'ignore',
      }),
    );
    try {
      await exerciseGateway(client, sessionId, 'made-over-stdio.txt');
    } finally {
      await client.close();
    }
  });

  it('runs the Claude Code configuration the README shows', async () => {
    const readme = await readFile('README.md', 'utf8');
    const block = /```json mcp-config\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block, 'README has a ```json mcp-config block').toBeDefined();
    const config = JSON.parse(block!) as { mcpServers: { switchyard: { command: string; args: string[] } } };
    const server = config.mcpServers.switchyard;
    // The block runs the package installed in the project through npx; in this clone the same command is
    // bin/switchyard.js.
    expect([server.command, server.args[0]]).toEqual(['npx', 'switchyard']);
    const sessionId = uniqueName('mcp-readme');
    const args = server.args
      .slice(1)
      .map((arg, index, all) => (all[index - 1] === '--session' ? sessionId : all[index - 1] === '--cwd' ? cwd : arg));
    const client = new Client({ name: 'claude-code-style', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [BIN, ...args], env, stderr: 'ignore' }),
    );
    try {
      const result = await client.callTool({ name: 'Read', arguments: { file_path: 'hello.txt', limit: 1 } });
      expect(textOf(result)).toContain('hello from the workspace');
      expect(textOf(result)).not.toContain('second line');
    } finally {
      await client.close();
    }
  });

  it('leaves a waiting call pending when the client goes away, and re-attaches a client that sends it again', async () => {
    const sessionId = uniqueName('mcp-reattach');
    const connect = async (): Promise<Client> => {
      const client = new Client({ name: 'switchyard-test', version: '1.0.0' });
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [BIN, 'mcp', '--session', sessionId, '--cwd', cwd],
          env,
          stderr: 'ignore',
        }),
      );
      return client;
    };
    const first = await connect();
    const abandoned = first
      .callTool({ name: 'Bash', arguments: { command: 'touch made-after-reconnect.txt' } }, undefined, {
        timeout: 120_000,
      })
      .catch((error: unknown) => error);
    const request = await pendingFor(sessionId, 'Bash');
    await first.close();
    await abandoned;
    // Still pending in the session: the gateway going away decided nothing.
    expect((await harness.client.session(sessionId).pendingApprovals()).map((pending) => pending.requestId)).toEqual([
      request.requestId,
    ]);

    const second = await connect();
    try {
      const again = second.callTool(
        { name: 'Bash', arguments: { command: 'touch made-after-reconnect.txt' } },
        undefined,
        { timeout: 120_000 },
      );
      // Re-attached, not a second call: still one pending request.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect((await harness.client.session(sessionId).pendingApprovals()).map((pending) => pending.requestId)).toEqual([
        request.requestId,
      ]);
      await harness.client
        .session(sessionId)
        .approve({ requestId: request.requestId, decision: 'allow', inputDigest: request.inputDigest });
      const result = await again;
      expect(result.isError).toBeFalsy();
      expect(existsSync(path.join(cwd, 'made-after-reconnect.txt'))).toBe(true);
    } finally {
      await second.close();
    }
  });
});

describe('switchyard mcp over streamable HTTP', () => {
  it('serves the same tools on 127.0.0.1 with a bearer token, and refuses a request without it', async () => {
    const sessionId = uniqueName('mcp-http');
    const port = await freePort();
    const token = `test-token-${sessionId}`;
    const cli = startCli(['mcp', '--session', sessionId, '--cwd', cwd, '--http', String(port)], {
      ...env,
      SWITCHYARD_MCP_TOKEN: token,
    });
    try {
      await waitFor(
        async () => cli.output(),
        (output) => output.includes(`http://127.0.0.1:${port}/mcp`),
        { what: 'the gateway listening', timeoutMs: 60_000 },
      );
      const url = new URL(`http://127.0.0.1:${port}/mcp`);

      const refused = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(refused.status).toBe(401);
      const wrong = new Client({ name: 'switchyard-test', version: '1.0.0' });
      await expect(
        wrong.connect(
          new StreamableHTTPClientTransport(url, {
            requestInit: { headers: { authorization: 'Bearer not-the-token' } },
          }),
        ),
      ).rejects.toThrow();

      const client = new Client({ name: 'switchyard-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
      );
      try {
        await exerciseGateway(client, sessionId, 'made-over-http.txt');
      } finally {
        await client.close();
      }
    } finally {
      await killCli(cli);
    }
  });
});
