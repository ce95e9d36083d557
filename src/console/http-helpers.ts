/**
 * HTTP helpers of the console server (split out of src/console/console-server.ts): errors with a status, security
 * headers, and writing pages and JSON, reading a JSON body.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SafeHtml } from './html.js';
import type { PageContext } from './render.js';

const MAX_BODY_BYTES = 16 * 1024;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
};

export function sendPage(response: ServerResponse, context: PageContext, body: string): void {
  response.writeHead(200, {
    ...SECURITY_HEADERS,
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': `default-src 'none'; script-src 'nonce-${context.nonce}'; style-src 'nonce-${context.nonce}'; style-src-attr 'unsafe-inline'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
  });
  response.end(body);
}

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'application/json; charset=utf-8' });
  response.end(JSON.stringify(body));
}

export function stringify(sections: Record<string, SafeHtml>): Record<string, string> {
  return Object.fromEntries(Object.entries(sections).map(([id, markup]) => [id, markup.html]));
}

export async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, 'Request too large.');
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw new HttpError(400, 'The body is not JSON.');
  }
}
