import { describe, expect, it } from 'vitest';
import { parseAllowedDomain } from '../../src/contracts/allowed-domains.js';
import { sessionOptionsSchema } from '../../src/contracts/schemas.js';
import { formatZodError } from '../../src/contracts/tool-call.js';
import { decideDestination, parseAllowedDomains, proxyDestination } from '../../src/tools/sandbox/domain-proxy.js';
import { canonicalHost, internalAddressKind } from '../../src/tools/sandbox/network-address.js';

describe('allowedDomains entries: host or host:port', () => {
  it('reads names, wildcards, ports and bracketed IPv6', () => {
    const read = (entry: string): unknown => {
      const parsed = parseAllowedDomain(entry);
      return parsed.ok ? parsed.domain : parsed.problem;
    };
    expect(read('example.com')).toEqual({ entry: 'example.com', host: 'example.com', wildcard: false });
    expect(read('Example.COM.')).toEqual({ entry: 'Example.COM.', host: 'example.com', wildcard: false });
    expect(read('localhost:8080')).toEqual({ entry: 'localhost:8080', host: 'localhost', wildcard: false, port: 8080 });
    expect(read('*.example.com:443')).toEqual({
      entry: '*.example.com:443',
      host: 'example.com',
      wildcard: true,
      port: 443,
    });
    expect(read('[::1]:8080')).toEqual({ entry: '[::1]:8080', host: '::1', wildcard: false, port: 8080 });
    expect(read('[::1]')).toEqual({ entry: '[::1]', host: '::1', wildcard: false });
    expect(read('127.0.0.1:65535')).toMatchObject({ host: '127.0.0.1', port: 65_535 });
  });

  it('rejects a bad entry with a problem naming it', () => {
    const cases: Array<[string, RegExp]> = [
      ['host:99999', /"host:99999": the port must be a number from 1 to 65535, got 99999/],
      ['host:0', /"host:0": the port must be a number from 1 to 65535/],
      ['host:abc', /"host:abc": the port must be a number from 1 to 65535, got "abc"/],
      ['host:', /"host:": the port must be/],
      ['', /entry "": empty/],
      ['example.com/path', /"example.com\/path": write a host or host:port/],
      ['http://example.com', /not a URL or path/],
      ['user@example.com', /not a URL or path/],
      ['exa mple.com', /not a URL or path/],
      ['::1', /IPv6 address is written in brackets/],
      ['[::1', /IPv6 address is written as \[::1\]/],
      ['[example.com]:80', /is not an IPv6 address/],
      ['*', /wildcard is written only as a first label/],
      ['a.*.example.com', /wildcard is written only as a first label/],
      ['exa_mple..com', /a host is a name/],
      ['-bad.com', /a host is a name/],
    ];
    for (const [entry, problem] of cases) {
      const parsed = parseAllowedDomain(entry);
      expect(parsed.ok, entry).toBe(false);
      if (!parsed.ok) expect(parsed.problem, entry).toMatch(problem);
    }
  });

  it('the session options schema rejects a bad entry, naming it', () => {
    const parsed = sessionOptionsSchema.safeParse({
      sandbox: { network: { allowedDomains: ['ok.com', 'host:99999'] } },
    });
    expect(parsed.success).toBe(false);
    if (!parsed.success)
      expect(formatZodError(parsed.error)).toBe(
        'sandbox.network.allowedDomains.1: allowedDomains entry "host:99999": the port must be a number from 1 to 65535, got 99999',
      );
    expect(
      sessionOptionsSchema.safeParse({
        sandbox: { network: { allowedDomains: ['localhost', 'localhost:8080', '*.github.com', '[::1]:9000'] } },
      }).success,
    ).toBe(true);
  });

  it('the proxy fails closed on a list the schema would reject', () => {
    expect(() => parseAllowedDomains(['example.com', 'localhost:abc'])).toThrow(
      'sandbox.network.allowedDomains entry "localhost:abc": the port must be a number from 1 to 65535, got "abc"',
    );
  });
});

describe('internal addresses (reached only on a port written with their name)', () => {
  const own = ['192.0.2.10', '2001:db8::10', '::ffff:198.51.100.7'];
  it('classifies loopback, private, link-local, unspecified and the host’s own addresses', () => {
    const kinds: Array<[string, string | undefined]> = [
      ['127.0.0.1', 'loopback'],
      ['127.255.0.9', 'loopback'],
      ['::1', 'loopback'],
      ['0:0:0:0:0:0:0:1', 'loopback'],
      ['10.1.2.3', 'private'],
      ['172.16.0.1', 'private'],
      ['172.31.255.255', 'private'],
      ['192.168.1.1', 'private'],
      ['100.64.0.1', 'private'],
      ['fc00::1', 'private'],
      ['fd12:3456::1', 'private'],
      ['169.254.169.254', 'link-local'],
      ['fe80::1', 'link-local'],
      ['fe80::1%eth0', 'link-local'],
      ['0.0.0.0', 'unspecified'],
      ['::', 'unspecified'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['::ffff:7f00:1', 'loopback'],
      ['::ffff:10.0.0.1', 'private'],
      ['::ffff:169.254.169.254', 'link-local'],
      ['64:ff9b::127.0.0.1', 'loopback'],
      ['2002:7f00:1::', 'loopback'],
      ['224.0.0.1', 'multicast'],
      ['ff02::1', 'multicast'],
      ['255.255.255.255', 'reserved'],
      ['not-an-address', 'reserved'],
      ['192.0.2.10', "the worker host's own"],
      ['2001:db8::10', "the worker host's own"],
      ['::ffff:192.0.2.10', "the worker host's own"],
      ['198.51.100.7', "the worker host's own"],
      ['93.184.216.34', undefined],
      ['172.32.0.1', undefined],
      ['100.128.0.1', undefined],
      ['2606:2800:220:1:248:1893:25c8:1946', undefined],
      ['::ffff:93.184.216.34', undefined],
    ];
    for (const [address, kind] of kinds) expect(internalAddressKind(address, own), address).toBe(kind);
  });

  it('spells IPv6 literals one way, for comparing names', () => {
    expect(canonicalHost('0:0:0:0:0:0:0:1')).toBe(canonicalHost('::1'));
    expect(canonicalHost('::ffff:127.0.0.1')).toBe(canonicalHost('::ffff:7f00:1'));
    expect(canonicalHost('0:0:0:0:0:0:0:1')).toBe('::1');
    expect(canonicalHost('example.com')).toBe('example.com');
  });
});

describe('decideDestination: the name, the port, then the resolved addresses', () => {
  const decide = (
    entries: string[],
    host: string,
    port: number,
    addresses: string[],
  ): { allowed: boolean; reason?: string } => {
    const decision = decideDestination({
      host,
      port,
      addresses,
      domains: parseAllowedDomains(entries),
      ownAddresses: [],
    });
    return decision.allowed ? { allowed: true } : decision;
  };

  it('localhost alone opens no loopback service; localhost:<port> opens that port only', () => {
    expect(decide(['localhost'], 'localhost', 7233, ['127.0.0.1'])).toEqual({
      allowed: false,
      reason:
        'localhost resolves to 127.0.0.1 (loopback address), reached only on a port listed with it in network.allowedDomains (localhost:7233 is not)',
    });
    expect(decide(['localhost:8080'], 'localhost', 8080, ['127.0.0.1', '::1']).allowed).toBe(true);
    expect(decide(['localhost:8080'], 'localhost', 7233, ['127.0.0.1'])).toEqual({
      allowed: false,
      reason: "port 7233 of localhost is not in the session's network.allowedDomains",
    });
    expect(decide(['localhost', 'localhost:8080'], 'localhost', 8080, ['127.0.0.1']).allowed).toBe(true);
    expect(decide(['localhost', 'localhost:8080'], 'localhost', 8081, ['127.0.0.1']).allowed).toBe(false);
  });

  it('a public name that resolves (or rebinds) to an internal address needs its port written too', () => {
    expect(decide(['example.com'], 'example.com', 443, ['93.184.216.34']).allowed).toBe(true);
    expect(decide(['example.com'], 'example.com', 443, ['93.184.216.34', '10.0.0.5']).allowed).toBe(false);
    expect(decide(['example.com'], 'example.com', 443, ['169.254.169.254']).allowed).toBe(false);
    expect(decide(['example.com:443'], 'example.com', 443, ['10.0.0.5']).allowed).toBe(true);
    expect(decide(['example.com:443'], 'example.com', 80, ['93.184.216.34']).allowed).toBe(false);
    expect(decide(['example.com'], 'example.com', 443, []).allowed).toBe(false);
  });

  it('wildcards keep working, under the same rule', () => {
    expect(decide(['*.example.com'], 'api.example.com', 443, ['93.184.216.34']).allowed).toBe(true);
    expect(decide(['*.example.com'], 'example.com', 443, ['93.184.216.34']).allowed).toBe(false);
    expect(decide(['*.example.com'], 'evil-example.com', 443, ['93.184.216.34']).allowed).toBe(false);
    expect(decide(['*.example.com'], 'internal.example.com', 443, ['192.168.0.2']).allowed).toBe(false);
    expect(decide(['*.example.com:443'], 'internal.example.com', 443, ['192.168.0.2']).allowed).toBe(true);
  });

  it("the worker host's own addresses count as internal", () => {
    const domains = parseAllowedDomains(['myhost']);
    expect(
      decideDestination({
        host: 'myhost',
        port: 22,
        addresses: ['203.0.113.5'],
        domains,
        ownAddresses: ['203.0.113.5'],
      }),
    ).toMatchObject({ allowed: false });
    expect(
      decideDestination({ host: 'myhost', port: 22, addresses: ['203.0.113.5'], domains, ownAddresses: [] }),
    ).toMatchObject({ allowed: true });
  });

  it('IPv6 literals match in any spelling', () => {
    expect(decide(['[::1]:8080'], canonicalHost('0:0::1'), 8080, ['::1']).allowed).toBe(true);
  });
});

describe('proxyDestination refuses what names no valid destination', () => {
  it('bad ports, bad request lines and non-ASCII give no destination', () => {
    for (const head of [
      'CONNECT localhost:99999 HTTP/1.1\r\n\r\n',
      'CONNECT localhost:0 HTTP/1.1\r\n\r\n',
      'CONNECT localhost:65536 HTTP/1.1\r\n\r\n',
      'CONNECT localhost HTTP/1.1\r\n\r\n',
      'CONNECT localhost:80\r\n\r\n',
      'CONNECT  localhost:80 HTTP/1.1\r\n\r\n',
      'CONNECT l\u00fcbeck.de:443 HTTP/1.1\r\n\r\n',
      'CONNECT exa\u0000mple.com:443 HTTP/1.1\r\n\r\n',
      'GET http://localhost:0/ HTTP/1.1\r\n\r\n',
      'GET http://localhost:70000/ HTTP/1.1\r\n\r\n',
      '\r\n\r\n',
    ])
      expect(proxyDestination(head), JSON.stringify(head)).toBeUndefined();
    expect(proxyDestination('CONNECT localhost:65535 HTTP/1.1\r\n\r\n')).toEqual({
      host: 'localhost',
      port: 65_535,
      connect: true,
    });
  });
});
