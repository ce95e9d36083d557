import { describe, expect, it } from 'vitest';
import { canonicalHost, canonicalUrl, classifyHost, resolvedAddressRefusal } from '../../src/tools/builtin/url-host.js';
import type { HostClass } from '../../src/tools/builtin/url-host.js';

describe('canonicalUrl', () => {
  // The WHATWG parser (Node's URL) already lowercases names and rewrites every IPv4 spelling to dotted decimal;
  // canonicalUrl adds the trailing-dot strip and rewrites IPv4-mapped IPv6 literals to the IPv4 they reach.
  it.each([
    ['http://EVIL.com./', 'http://evil.com/'],
    ['http://evil.com../a', 'http://evil.com/a'],
    ['http://127.1/', 'http://127.0.0.1/'],
    ['http://2130706433/', 'http://127.0.0.1/'],
    ['http://0x7f000001/', 'http://127.0.0.1/'],
    ['http://0x7f.1/', 'http://127.0.0.1/'],
    ['http://0177.0.0.1/', 'http://127.0.0.1/'],
    ['http://%31%32%37.0.0.1/', 'http://127.0.0.1/'],
    ['http://1.2.3.4./', 'http://1.2.3.4/'],
    ['http://[::1]/', 'http://[::1]/'],
    ['http://[0:0:0:0:0:0:0:1]/', 'http://[::1]/'],
    ['http://[::ffff:169.254.169.254]/', 'http://169.254.169.254/'],
    ['http://[0:0:0:0:0:ffff:7f00:1]:8080/x', 'http://127.0.0.1:8080/x'],
    ['http://metadata.google.internal./', 'http://metadata.google.internal/'],
    ['http://ＥＸＡＭＰＬＥ.com/', 'http://example.com/'],
    ['https://Example.COM:443/a?b=1#c', 'https://example.com/a?b=1#c'],
  ])('%s → %s', (url, canonical) => {
    expect(canonicalUrl(url)).toBe(canonical);
  });
});

describe('canonicalHost (the host of a domain rule)', () => {
  it.each([
    ['EVIL.com.', 'evil.com'],
    ['2130706433', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['::1', '[::1]'],
    ['[::ffff:a9fe:a9fe]', '169.254.169.254'],
    ['*.example.com', undefined],
    ['a/b', undefined],
    ['', undefined],
  ])('%s → %s', (text, host) => {
    expect(canonicalHost(text)).toBe(host);
  });
});

describe('classifyHost', () => {
  const rows: Array<[string, HostClass]> = [
    ['evil.com', 'public'],
    ['example.com', 'public'],
    ['8.8.8.8', 'public'],
    ['[2606:4700::1111]', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['0.0.0.0', 'loopback'],
    ['[::1]', 'loopback'],
    ['[::]', 'loopback'],
    ['localhost', 'loopback'],
    ['api.localhost', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.255', 'private'],
    ['100.128.0.1', 'public'],
    ['[fc00::1]', 'private'],
    ['[fdff::1]', 'private'],
    ['[::ffff:10.0.0.1]', 'private'],
    ['[64:ff9b::a00:1]', 'private'],
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'link_local'],
    ['169.254.0.1', 'link_local'],
    ['[fe80::1]', 'link_local'],
    ['[febf::1]', 'link_local'],
    ['[fec0::1]', 'private'],
    ['[::ffff:169.254.169.254]', 'metadata'],
    ['[::ffff:a9fe:101]', 'link_local'],
    ['[64:ff9b::a9fe:a9fe]', 'metadata'],
    ['metadata.google.internal', 'metadata'],
    ['metadata.goog', 'metadata'],
    ['[fd00:ec2::254]', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['224.0.0.1', 'private'],
    ['255.255.255.255', 'private'],
  ];
  it.each(rows)('%s is %s', (host, expected) => {
    expect(classifyHost(host)).toBe(expected);
  });
});

describe('resolvedAddressRefusal (each address a name resolves to, checked as the connection is made)', () => {
  it.each([
    // [host the call names, an address it resolves to, refused?]
    ['example.com', '93.184.215.14', false],
    ['example.com', '169.254.169.254', true],
    ['example.com', '::ffff:169.254.169.254', true],
    ['example.com', 'fe80::1', true],
    ['example.com', '127.0.0.1', true],
    ['example.com', '::1', true],
    ['example.com', '0.0.0.0', true],
    // A name that resolves to a private address is an intranet name: the call was allowed or approved by that name.
    ['intranet.example', '10.1.2.3', false],
    ['localhost', '127.0.0.1', false],
    ['localhost', '::1', false],
    ['localhost', '169.254.169.254', true],
    // Reached only when an allow rule named this exact host.
    ['metadata.google.internal', '169.254.169.254', false],
    ['metadata.google.internal', '127.0.0.1', true],
  ] as const)('%s → %s: refused %s', (hostname, address, refused) => {
    const reason = resolvedAddressRefusal({ hostname, address });
    expect(reason === undefined ? false : true).toBe(refused);
    if (refused) expect(reason).toContain(`${hostname} resolves to ${address}`);
  });
});
