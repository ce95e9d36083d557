import { randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { SwitchyardGateway } from './mcp-gateway.js';

/** The largest JSON-RPC request body the gateway reads (a call's input is far smaller). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface GatewayHttpServer {
  /** `http://127.0.0.1:<port>/mcp` */
  url: string;
  port: number;
  close(): Promise<void>;
}

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function fail(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new RangeError(`request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : (JSON.parse(text) as unknown);
}

/**
 * The gateway over MCP's streamable HTTP transport, on 127.0.0.1 only, at `/mcp`. Every request must carry
 * `Authorization: Bearer <token>` (401 otherwise) and a Host header naming this address (a page in a browser cannot
 * reach it through DNS rebinding). Each MCP session (one `initialize`) gets its own server on the shared gateway.
 */
export async function startGatewayHttp(
  gateway: SwitchyardGateway,
  options: { port: number; token: string },
): Promise<GatewayHttpServer> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  let allowedHosts: string[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (url.pathname !== '/mcp') return fail(res, 404, 'not found: the MCP endpoint is /mcp');
      const auth = req.headers.authorization ?? '';
      if (!auth.startsWith('Bearer ') || !sameToken(auth.slice('Bearer '.length), options.token)) {
        return fail(res, 401, 'missing or wrong bearer token', { 'www-authenticate': 'Bearer' });
      }
      const sessionHeader = req.headers['mcp-session-id'];
      const mcpSession = Array.isArray(sessionHeader) ? sessionHeader[0] : sessionHeader;
      let body: unknown;
      if (req.method === 'POST') {
        try {
          body = await readBody(req);
        } catch (error) {
          return fail(res, 400, `bad request body: ${(error as Error).message}`);
        }
      }
      let transport = mcpSession === undefined ? undefined : transports.get(mcpSession);
      if (transport === undefined) {
        if (mcpSession !== undefined) return fail(res, 404, `no MCP session "${mcpSession}" (initialize again)`);
        if (req.method !== 'POST' || !isInitializeRequest(body))
          return fail(res, 400, 'no MCP session: send initialize first');
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableDnsRebindingProtection: true,
          allowedHosts,
          onsessioninitialized: (id) => {
            transports.set(id, created);
          },
        });
        created.onclose = () => {
          if (created.sessionId !== undefined) transports.delete(created.sessionId);
        };
        await gateway.createServer().connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res, body);
    })().catch((error: unknown) => {
      if (!res.headersSent) fail(res, 500, (error as Error).message);
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  allowedHosts = [`127.0.0.1:${port}`, `localhost:${port}`];
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    async close() {
      await Promise.all([...transports.values()].map((transport) => transport.close()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
