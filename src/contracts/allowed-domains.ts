// The entries of `sandbox.network.allowedDomains`: `host` or `host:port`, `*.example.com` for subdomains, IPv6 in
// brackets (`[::1]:8080`). Pure string work, so the session schema (loaded by the workflows) and the worker's proxy
// (src/tools/sandbox/domain-proxy.ts) read an entry the same way.

/** One parsed entry: `host` lowercased, without a trailing dot or IPv6 brackets; `port` only when written. */
export interface AllowedDomain {
  /** The entry as written. */
  entry: string;
  host: string;
  /** `*.example.com`: any subdomain of `host`, not `host` itself. */
  wildcard: boolean;
  port?: number;
}

export type AllowedDomainParse = { ok: true; domain: AllowedDomain } | { ok: false; problem: string };

const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
const IPV6_LITERAL = /^[0-9a-f:.]+$/;
const MAX_HOST_LENGTH = 253;

function parsePort(text: string): number | string {
  if (!/^\d{1,5}$/.test(text)) return `the port must be a number from 1 to 65535, got "${text}"`;
  const port = Number(text);
  return port >= 1 && port <= 65_535 ? port : `the port must be a number from 1 to 65535, got ${port}`;
}

function hostProblem(host: string): string | undefined {
  if (host === '') return 'no host';
  if (host.length > MAX_HOST_LENGTH) return `the host is longer than ${MAX_HOST_LENGTH} characters`;
  if (!host.split('.').every((label) => LABEL.test(label)))
    return 'a host is a name (letters, digits, "-", "_", dots) or an IP address, with no scheme, path or user';
  return undefined;
}

/** Reads one `allowedDomains` entry; a problem names the entry and what is wrong with it. */
export function parseAllowedDomain(entry: string): AllowedDomainParse {
  const fail = (problem: string): AllowedDomainParse => ({
    ok: false,
    problem: `allowedDomains entry "${entry}": ${problem}`,
  });
  const text = entry.toLowerCase();
  if (text === '') return fail('empty');
  if (/[/?#@\s]/.test(text) || text.includes('://'))
    return fail('write a host or host:port (example.com, *.example.com, localhost:8080), not a URL or path');
  let host: string;
  let portText: string | undefined;
  if (text.startsWith('[')) {
    const match = /^\[([^\]]*)\](?::(.*))?$/.exec(text);
    if (match === null) return fail('an IPv6 address is written as [::1] or [::1]:8080');
    host = match[1] ?? '';
    portText = match[2];
    if (!IPV6_LITERAL.test(host) || host.split(':').length < 3) return fail(`"${host}" is not an IPv6 address`);
  } else {
    const colons = text.split(':').length - 1;
    if (colons > 1) return fail('an IPv6 address is written in brackets, as [::1] or [::1]:8080');
    const at = text.indexOf(':');
    host = at < 0 ? text : text.slice(0, at);
    portText = at < 0 ? undefined : text.slice(at + 1);
  }
  let wildcard = false;
  if (host.startsWith('*.')) {
    wildcard = true;
    host = host.slice(2);
  }
  if (host.includes('*')) return fail('a wildcard is written only as a first label, as *.example.com');
  if (!text.startsWith('[')) {
    host = host.replace(/\.$/, '');
    const problem = hostProblem(host);
    if (problem !== undefined) return fail(problem);
  }
  const domain: AllowedDomain = { entry, host, wildcard };
  if (portText !== undefined) {
    const port = parsePort(portText);
    if (typeof port === 'string') return fail(port);
    domain.port = port;
  }
  return { ok: true, domain };
}

/** Why an entry is not a valid `allowedDomains` entry, or undefined when it is one. */
export function allowedDomainProblem(entry: string): string | undefined {
  const parsed = parseAllowedDomain(entry);
  return parsed.ok ? undefined : parsed.problem;
}
