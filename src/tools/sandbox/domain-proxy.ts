/**
 * The sandbox's only way out to the network: an HTTP proxy of the worker that listens on a unix socket and connects
 * only to the hosts of `network.allowedDomains`. The sandbox has a network namespace of its own (loopback only), so a
 * program inside reaches nothing else; a small bridge inside (`BRIDGE_SCRIPT`, run by the worker's node) listens on
 * the sandbox's own 127.0.0.1:3128 and hands each connection to the proxy's socket, and the command gets
 * `HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY` pointing at it.
 *
 * What is checked, per request (`CONNECT host:port`, or the absolute URL of a plain HTTP request): the host name
 * against the entries (`example.com` names that host, `*.example.com` its subdomains, `localhost` that name only —
 * `127.0.0.1` is another name), and the port against an entry's port where it has one (`example.com:443`). Then the
 * name is resolved once, on the worker: if any address it resolves to is internal (network-address.ts: loopback,
 * private, link-local, the worker host's own…), it is reached only when a matching entry names this very port — so
 * `localhost` alone opens no loopback service, `localhost:8080` opens that one. The proxy connects to the addresses
 * it checked, never to the name again, so a DNS answer that changes in between (rebinding) changes nothing. Each
 * client connection is bound to the one destination checked for its first request.
 *
 * Nothing a client sends can throw out of the proxy: every handler is guarded, a malformed request (bad request
 * line, bad port, oversized or slow head) gets an HTTP error and a close, an upstream failure closes the client.
 * Limits: programs that ignore the proxy variables reach nothing; the content of allowed connections is not
 * inspected.
 */
import dns from 'node:dns/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseAllowedDomain } from '../../contracts/allowed-domains.js';
import type { AllowedDomain } from '../../contracts/allowed-domains.js';
import { canonicalHost, hostAddresses, internalAddressKind } from './network-address.js';

/** Port of the bridge inside the sandbox's own network namespace (nothing else listens there). */
export const SANDBOX_PROXY_PORT = 3128;

/** Longest request head the proxy reads before it decides. */
const MAX_HEAD_BYTES = 64 * 1024;
/** A client that has not sent a whole request head by then gets 408 and a close. */
const HEAD_TIMEOUT_MS = 30_000;
/** An upstream that does not accept the connection by then: 504. */
const CONNECT_TIMEOUT_MS = 30_000;
/** After an error answer, how long the proxy waits for the client to close before it closes the connection itself. */
const LINGER_MS = 5_000;
/** Client connections open at once per proxy; more are closed as they come. */
const MAX_CONNECTIONS = 256;

/** Lowercased, without a trailing dot or IPv6 brackets; IPv6 literals in one spelling. */
export function normalizeHost(host: string): string {
  return canonicalHost(
    host
      .trim()
      .toLowerCase()
      .replace(/\.$/, '')
      .replace(/^\[(.*)\]$/, '$1'),
  );
}

/** Parses every entry; throws naming the first bad one (the session schema rejects them before, this fails closed). */
export function parseAllowedDomains(entries: readonly string[]): AllowedDomain[] {
  return entries.map((entry) => {
    const parsed = parseAllowedDomain(entry);
    if (!parsed.ok) throw new Error(`sandbox.network.${parsed.problem}`);
    return { ...parsed.domain, host: normalizeHost(parsed.domain.host) };
  });
}

function nameMatches(host: string, domain: AllowedDomain): boolean {
  if (domain.wildcard) return host.endsWith(`.${domain.host}`) && host.length > domain.host.length + 1;
  return host === domain.host;
}

/** Whether the name `host` is one of `allowedDomains` on some port (`example.com` exactly, `*.example.com` any subdomain). */
export function isHostAllowed(host: string, allowedDomains: readonly string[]): boolean {
  const wanted = normalizeHost(host);
  if (wanted === '') return false;
  return allowedDomains.some((entry) => {
    const parsed = parseAllowedDomain(entry);
    return parsed.ok && nameMatches(wanted, { ...parsed.domain, host: normalizeHost(parsed.domain.host) });
  });
}

export type DestinationDecision = { allowed: true; addresses: string[] } | { allowed: false; reason: string };

/**
 * Whether the name and port may be asked for at all, before any lookup: a name no entry lists is never resolved
 * (a lookup of `<data>.attacker.example` would carry data out through DNS).
 */
export function nameDecision(options: {
  host: string;
  port: number;
  domains: readonly AllowedDomain[];
}): { allowed: true; named: AllowedDomain[] } | { allowed: false; reason: string } {
  const { host, port, domains } = options;
  const named = domains.filter((domain) => nameMatches(host, domain));
  if (named.length === 0) return { allowed: false, reason: `${host} is not in the session's network.allowedDomains` };
  if (!named.some((domain) => domain.port === undefined || domain.port === port))
    return { allowed: false, reason: `port ${port} of ${host} is not in the session's network.allowedDomains` };
  return { allowed: true, named };
}

/**
 * Whether `host:port` may be reached, given the addresses `host` resolved to (resolved once, by the caller). An
 * internal address is reached only when a matching entry names `port` itself.
 */
export function decideDestination(options: {
  host: string;
  port: number;
  addresses: readonly string[];
  domains: readonly AllowedDomain[];
  ownAddresses?: readonly string[];
}): DestinationDecision {
  const { host, port, addresses } = options;
  const byName = nameDecision(options);
  if (!byName.allowed) return byName;
  if (addresses.length === 0) return { allowed: false, reason: `${host} resolves to no address` };
  const ownAddresses = options.ownAddresses ?? hostAddresses();
  for (const address of addresses) {
    const kind = internalAddressKind(address, ownAddresses);
    if (kind !== undefined && !byName.named.some((domain) => domain.port === port))
      return {
        allowed: false,
        reason: `${host} resolves to ${address} (${kind} address), reached only on a port listed with it in network.allowedDomains (${host}:${port} is not)`,
      };
  }
  return { allowed: true, addresses: [...addresses] };
}

/** The destination of a proxy request head, or undefined when it names none (or a port that cannot be). */
export function proxyDestination(head: string): { host: string; port: number; connect: boolean } | undefined {
  const lineEnd = head.indexOf('\r\n');
  const requestLine = lineEnd < 0 ? head : head.slice(0, lineEnd);
  const match = /^([A-Za-z]+) ([\x21-\x7e]+) HTTP\/1\.[01]$/.exec(requestLine);
  if (match === null) return undefined;
  const [, method = '', target = ''] = match;
  let destination: { host: string; port: number; connect: boolean };
  if (method.toUpperCase() === 'CONNECT') {
    const parts = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(target);
    if (parts === null) return undefined;
    destination = { host: normalizeHost(parts[1] ?? ''), port: Number(parts[2]), connect: true };
  } else {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return undefined;
    }
    if (url.protocol !== 'http:') return undefined;
    destination = {
      host: normalizeHost(url.hostname),
      port: url.port === '' ? 80 : Number(url.port),
      connect: false,
    };
  }
  if (!Number.isInteger(destination.port) || destination.port < 1 || destination.port > 65_535) return undefined;
  if (!/^[a-z0-9_.:-]+$/.test(destination.host) || destination.host.length > 253) return undefined;
  return destination;
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

export type AddressLookup = (host: string) => Promise<string[]>;

/** Every address of `host` (an IP literal as itself), as the worker's resolver answers now. */
async function lookupAddresses(host: string): Promise<string[]> {
  if (net.isIP(host) !== 0) return [host];
  const answers = await dns.lookup(host, { all: true, verbatim: true });
  return answers.map((answer) => answer.address);
}

export interface DomainProxyOptions {
  allowedDomains: readonly string[];
  socketPath: string;
  /** Resolves a host name to addresses (default: the worker's resolver). */
  lookup?: AddressLookup;
  headTimeoutMs?: number;
  connectTimeoutMs?: number;
  maxConnections?: number;
}

interface ProxySettings {
  domains: readonly AllowedDomain[];
  lookup: AddressLookup;
  headTimeoutMs: number;
  connectTimeoutMs: number;
}

/** One client connection, from its request head to the end of its tunnel. */
function handle(client: net.Socket, settings: ProxySettings): void {
  let buffered = Buffer.alloc(0);
  let decided = false;
  let upstream: net.Socket | undefined;
  const close = (): void => {
    client.destroy();
    upstream?.destroy();
  };
  /** Runs a handler; anything it throws closes this client and goes no further. */
  const guard =
    <A extends unknown[]>(body: (...args: A) => void) =>
    (...args: A): void => {
      try {
        body(...args);
      } catch {
        close();
      }
    };
  const refuse = (status: string, message: string): void => {
    decided = true;
    client.off('data', onData);
    client.setTimeout(0);
    if (client.destroyed || !client.writable) return close();
    const body = `Switchyard sandbox: ${message}\n`;
    client.end(
      `HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    upstream?.destroy();
    setTimeout(() => client.destroy(), LINGER_MS).unref();
  };

  const connect = async (
    destination: { host: string; port: number; connect: boolean },
    head: string,
    rest: Buffer,
  ): Promise<void> => {
    const byName = nameDecision({ ...destination, domains: settings.domains });
    if (!byName.allowed) {
      refuse('403 Forbidden', byName.reason);
      return;
    }
    let addresses: string[];
    try {
      addresses = await settings.lookup(destination.host);
    } catch (error) {
      refuse('502 Bad Gateway', `cannot resolve ${destination.host}: ${(error as Error).message}`);
      return;
    }
    if (client.destroyed) return;
    const decision = decideDestination({ ...destination, addresses, domains: settings.domains });
    if (!decision.allowed) {
      refuse('403 Forbidden', decision.reason);
      return;
    }
    tryAddress(destination, decision.addresses, head, rest);
  };

  /** Connects to the first checked address that answers; each one is an address the decision saw. */
  const tryAddress = (
    destination: { host: string; port: number; connect: boolean },
    addresses: readonly string[],
    head: string,
    rest: Buffer,
  ): void => {
    const [address, ...others] = addresses;
    if (address === undefined || client.destroyed) return;
    const socket = net.connect({ host: address, port: destination.port });
    upstream = socket;
    socket.setTimeout(settings.connectTimeoutMs);
    let connected = false;
    socket.on(
      'timeout',
      guard(() => {
        if (connected) return;
        socket.destroy();
        if (others.length > 0) tryAddress(destination, others, head, rest);
        else refuse('504 Gateway Timeout', `${destination.host}:${destination.port} did not answer`);
      }),
    );
    socket.on(
      'error',
      guard((error: Error) => {
        if (connected) return close();
        socket.destroy();
        if (others.length > 0) tryAddress(destination, others, head, rest);
        else refuse('502 Bad Gateway', `cannot reach ${destination.host}:${destination.port}: ${error.message}`);
      }),
    );
    socket.once(
      'connect',
      guard(() => {
        connected = true;
        socket.setTimeout(0);
        if (client.destroyed) return close();
        if (destination.connect) client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        else socket.write(originForm(head));
        if (rest.length > 0) socket.write(rest);
        client.pipe(socket);
        socket.pipe(client);
        client.resume();
      }),
    );
  };

  const onData = guard((chunk: Buffer) => {
    if (decided) return;
    buffered = Buffer.concat([buffered, chunk]);
    const end = buffered.indexOf('\r\n\r\n');
    if (end < 0) {
      if (buffered.length > MAX_HEAD_BYTES) refuse('431 Request Header Fields Too Large', 'request head too large');
      return;
    }
    if (end + 4 > MAX_HEAD_BYTES) {
      refuse('431 Request Header Fields Too Large', 'request head too large');
      return;
    }
    decided = true;
    client.off('data', onData);
    client.pause();
    client.setTimeout(0);
    const head = buffered.subarray(0, end + 4).toString('latin1');
    const rest = buffered.subarray(end + 4);
    buffered = Buffer.alloc(0);
    const destination = proxyDestination(head);
    if (destination === undefined) {
      refuse('400 Bad Request', 'only CONNECT host:port and http:// requests (ports 1-65535) through the proxy');
      return;
    }
    connect(destination, head, rest).catch(() => close());
  });

  client.on('error', () => close());
  client.on('close', () => upstream?.destroy());
  // The server keeps half-open connections, so a client that ends its side before a whole head still gets an answer.
  client.on(
    'end',
    guard(() => {
      if (!decided) refuse('400 Bad Request', 'the request head ended before its blank line');
    }),
  );
  client.setTimeout(settings.headTimeoutMs);
  client.on(
    'timeout',
    guard(() => {
      if (!decided) refuse('408 Request Timeout', 'the request head did not arrive in time');
    }),
  );
  client.on('data', onData);
}

/** Starts a proxy for `allowedDomains` on `socketPath`; `close()` stops it and ends its connections. */
export async function startDomainProxy(options: DomainProxyOptions): Promise<{ close(): Promise<void> }> {
  const settings: ProxySettings = {
    domains: parseAllowedDomains(options.allowedDomains),
    lookup: options.lookup ?? lookupAddresses,
    headTimeoutMs: options.headTimeoutMs ?? HEAD_TIMEOUT_MS,
    connectTimeoutMs: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
  };
  const clients = new Set<net.Socket>();
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    clients.add(client);
    client.on('close', () => clients.delete(client));
    try {
      handle(client, settings);
    } catch {
      client.destroy();
    }
  });
  server.maxConnections = options.maxConnections ?? MAX_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Past listening, a server error (none is expected) must not end the worker: the calls using it fail instead.
  server.on('error', () => undefined);
  server.unref();
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of clients) client.destroy();
        server.close(() => resolve());
      }),
  };
}

interface RunningProxy {
  socketDirectory: string;
  socketPath: string;
}

const proxies = new Map<string, Promise<RunningProxy>>();

/**
 * The worker's proxy for one list of allowed hosts (one per distinct list, kept for the worker's life), listening on
 * a unix socket in a private folder (mode 0700) that the sandbox binds in read-only. A bad entry rejects, naming it.
 */
export function domainProxy(allowedDomains: readonly string[]): Promise<RunningProxy> {
  let key: string;
  try {
    key = [
      ...new Set(
        parseAllowedDomains(allowedDomains).map(
          (domain) =>
            `${domain.wildcard ? '*.' : ''}${domain.host.includes(':') ? `[${domain.host}]` : domain.host}${domain.port === undefined ? '' : `:${domain.port}`}`,
        ),
      ),
    ]
      .sort()
      .join(',');
  } catch (error) {
    return Promise.reject(error as Error);
  }
  let running = proxies.get(key);
  if (running === undefined) {
    running = (async () => {
      const socketDirectory = mkdtempSync(path.join(os.tmpdir(), 'switchyard-proxy-'));
      const socketPath = path.join(socketDirectory, 'proxy.sock');
      await startDomainProxy({ allowedDomains: key.split(','), socketPath });
      process.once('exit', () => rmSync(socketDirectory, { recursive: true, force: true }));
      return { socketDirectory, socketPath };
    })();
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
