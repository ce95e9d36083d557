/**
 * The sandbox's only way out to the network: an HTTP proxy of the worker that listens on a unix socket and connects
 * only to the hosts of `network.allowedDomains`. The sandbox has a network namespace of its own (loopback only), so a
 * program inside reaches nothing else; a small bridge inside (`BRIDGE_SCRIPT`, run by the worker's node) listens on
 * the sandbox's own 127.0.0.1:3128 and hands each connection to the proxy's socket, and the command gets
 * `HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY` pointing at it.
 *
 * What is checked: the host name a client asks for (`CONNECT host:port`, or the absolute URL of a plain HTTP request),
 * against the list: `example.com` names that host, `*.example.com` its subdomains, `localhost` the worker host's
 * loopback under that name only (`127.0.0.1` is another name and must be listed itself). Each client connection is
 * bound to the one destination checked for its first request. Limits: programs that ignore the proxy variables reach
 * nothing; the proxy resolves names on the worker host, so an allowed name that resolves to an internal address
 * reaches it; the content of allowed connections is not inspected.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** Port of the bridge inside the sandbox's own network namespace (nothing else listens there). */
export const SANDBOX_PROXY_PORT = 3128;

/** Longest request head the proxy reads before it decides. */
const MAX_HEAD_BYTES = 64 * 1024;

/** Lowercased, without a trailing dot or IPv6 brackets. */
export function normalizeHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/\.$/, '')
    .replace(/^\[(.*)\]$/, '$1');
}

/** Whether `host` is one of `allowedDomains` (`example.com` exactly, `*.example.com` any subdomain). */
export function isHostAllowed(host: string, allowedDomains: readonly string[]): boolean {
  const wanted = normalizeHost(host);
  if (wanted === '') return false;
  return allowedDomains.some((entry) => {
    const allowed = normalizeHost(entry);
    if (allowed.startsWith('*.')) return wanted.endsWith(allowed.slice(1)) && wanted.length > allowed.length - 1;
    return wanted === allowed;
  });
}

/** The destination of a proxy request head, or undefined when it names none. */
export function proxyDestination(head: string): { host: string; port: number; connect: boolean } | undefined {
  const requestLine = head.slice(0, head.indexOf('\r\n') >>> 0);
  const [method, target] = requestLine.split(' ');
  if (method === undefined || target === undefined) return undefined;
  if (method.toUpperCase() === 'CONNECT') {
    const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(target);
    if (match === null || match[1] === undefined || match[2] === undefined) return undefined;
    return { host: normalizeHost(match[1]), port: Number(match[2]), connect: true };
  }
  try {
    const url = new URL(target);
    if (url.protocol !== 'http:') return undefined;
    return { host: normalizeHost(url.hostname), port: url.port === '' ? 80 : Number(url.port), connect: false };
  } catch {
    return undefined;
  }
}

function refuse(socket: net.Socket, status: string, message: string): void {
  const body = `Switchyard sandbox: ${message}\n`;
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Plain HTTP through a proxy: the absolute URL becomes a path, and the connection closes after one exchange. */
function originForm(head: string): string {
  const [requestLine = '', ...headers] = head.split('\r\n');
  const [method, target, version] = requestLine.split(' ');
  const url = new URL(target ?? '/');
  const kept = headers.filter(
    (line) => line !== '' && !/^(proxy-connection|connection|proxy-authorization):/i.test(line),
  );
  return [`${method} ${url.pathname}${url.search} ${version}`, ...kept, 'Connection: close', '', ''].join('\r\n');
}

function handle(client: net.Socket, allowedDomains: readonly string[]): void {
  let buffered = Buffer.alloc(0);
  client.on('error', () => client.destroy());
  const onData = (chunk: Buffer): void => {
    buffered = Buffer.concat([buffered, chunk]);
    const end = buffered.indexOf('\r\n\r\n');
    if (end < 0) {
      if (buffered.length > MAX_HEAD_BYTES)
        refuse(client, '431 Request Header Fields Too Large', 'request head too large');
      return;
    }
    client.off('data', onData);
    client.pause();
    const head = buffered.subarray(0, end + 4).toString('latin1');
    const rest = buffered.subarray(end + 4);
    const destination = proxyDestination(head);
    if (destination === undefined) {
      refuse(client, '400 Bad Request', 'only CONNECT and http:// requests through the proxy');
      return;
    }
    if (!isHostAllowed(destination.host, allowedDomains)) {
      refuse(client, '403 Forbidden', `${destination.host} is not in the session's network.allowedDomains`);
      return;
    }
    const upstream = net.connect({ host: destination.host, port: destination.port });
    upstream.on('error', (error) => {
      if (upstream.bytesWritten === 0 && !client.destroyed)
        refuse(client, '502 Bad Gateway', `cannot reach ${destination.host}:${destination.port}: ${error.message}`);
      else client.destroy();
    });
    upstream.once('connect', () => {
      if (destination.connect) client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      else upstream.write(originForm(head));
      if (rest.length > 0) upstream.write(rest);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
    client.on('close', () => upstream.destroy());
  };
  client.on('data', onData);
}

interface RunningProxy {
  socketDirectory: string;
  socketPath: string;
}

const proxies = new Map<string, Promise<RunningProxy>>();

/**
 * The worker's proxy for one list of allowed hosts (one per distinct list, kept for the worker's life), listening on
 * a unix socket in a private folder (mode 0700) that the sandbox binds in read-only.
 */
export function domainProxy(allowedDomains: readonly string[]): Promise<RunningProxy> {
  const list = [...new Set(allowedDomains.map(normalizeHost))].sort();
  const key = list.join(',');
  let running = proxies.get(key);
  if (running === undefined) {
    running = new Promise<RunningProxy>((resolve, reject) => {
      const socketDirectory = mkdtempSync(path.join(os.tmpdir(), 'switchyard-proxy-'));
      const socketPath = path.join(socketDirectory, 'proxy.sock');
      const server = net.createServer((client) => handle(client, list));
      server.once('error', reject);
      server.listen(socketPath, () => {
        server.unref();
        process.once('exit', () => rmSync(socketDirectory, { recursive: true, force: true }));
        resolve({ socketDirectory, socketPath });
      });
    });
    running.catch(() => proxies.delete(key));
    proxies.set(key, running);
  }
  return running;
}

/**
 * Runs inside the sandbox under the worker's node: `node -e BRIDGE_SCRIPT <socket> <port> argv…` listens on
 * 127.0.0.1:<port>, forwards each connection to the proxy's socket, starts argv and exits as it exits.
 */
export const BRIDGE_SCRIPT = [
  "const net = require('node:net');",
  "const { spawn } = require('node:child_process');",
  'const [socketPath, port, file, ...args] = process.argv.slice(1);',
  'const server = net.createServer((client) => {',
  '  const upstream = net.connect(socketPath);',
  "  client.on('error', () => upstream.destroy());",
  "  upstream.on('error', () => client.destroy());",
  '  client.pipe(upstream);',
  '  upstream.pipe(client);',
  '});',
  "server.listen(Number(port), '127.0.0.1', () => {",
  "  const child = spawn(file, args, { stdio: 'inherit' });",
  "  child.on('error', (error) => { process.stderr.write(String(error) + '\\n'); process.exit(127); });",
  "  child.on('exit', (code, signal) => process.exit(code === null ? 128 + (require('node:os').constants.signals[signal] || 9) : code));",
  '});',
].join('\n');
