/**
 * Which IP addresses the sandbox proxy treats as internal: the worker host itself and the networks behind it, which
 * a host in `network.allowedDomains` reaches only on a port written with it (see domain-proxy.ts). Internal:
 * loopback, private (RFC 1918, IPv6 unique-local, CGNAT 100.64/10), link-local, unspecified, multicast and reserved
 * ranges, the same addresses inside IPv6 (IPv4-mapped, IPv4-compatible, NAT64, 6to4), and every address of the
 * worker host's network interfaces.
 */
import net from 'node:net';
import os from 'node:os';

export type InternalAddressKind =
  'loopback' | 'private' | 'link-local' | 'unspecified' | 'multicast' | 'reserved' | "the worker host's own";

/** The 4 bytes of an IPv4 address, or undefined. */
function ipv4Bytes(text: string): number[] | undefined {
  if (!net.isIPv4(text)) return undefined;
  return text.split('.').map(Number);
}

/** The 16 bytes of an IPv6 address (zone id dropped, embedded dotted IPv4 read), or undefined. */
function ipv6Bytes(text: string): number[] | undefined {
  const address = text.replace(/%.*$/, '');
  if (!net.isIPv6(address)) return undefined;
  let groups = address;
  const tail: number[] = [];
  const lastColon = groups.lastIndexOf(':');
  const dotted = ipv4Bytes(groups.slice(lastColon + 1));
  if (dotted !== undefined) {
    tail.push(...dotted);
    groups = `${groups.slice(0, lastColon + 1)}0:0`;
  }
  const [before = '', after] = groups.split('::');
  const read = (part: string): number[] => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const head = read(before);
  const rest = after === undefined ? [] : read(after);
  const words = [...head, ...new Array<number>(8 - head.length - rest.length).fill(0), ...rest];
  const bytes = words.flatMap((word) => [word >> 8, word & 0xff]);
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes;
}

function inPrefix(bytes: readonly number[], prefix: readonly number[], bits: number): boolean {
  for (let bit = 0; bit < bits; bit += 8) {
    const take = Math.min(8, bits - bit);
    const mask = (0xff << (8 - take)) & 0xff;
    if (((bytes[bit / 8] ?? 0) & mask) !== ((prefix[bit / 8] ?? 0) & mask)) return false;
  }
  return true;
}

const IPV4_RANGES: ReadonlyArray<[number[], number, InternalAddressKind]> = [
  [[0, 0, 0, 0], 8, 'unspecified'],
  [[10, 0, 0, 0], 8, 'private'],
  [[100, 64, 0, 0], 10, 'private'],
  [[127, 0, 0, 0], 8, 'loopback'],
  [[169, 254, 0, 0], 16, 'link-local'],
  [[172, 16, 0, 0], 12, 'private'],
  [[192, 0, 0, 0], 24, 'reserved'],
  [[192, 168, 0, 0], 16, 'private'],
  [[198, 18, 0, 0], 15, 'reserved'],
  [[224, 0, 0, 0], 4, 'multicast'],
  [[240, 0, 0, 0], 4, 'reserved'],
];

function ipv4Kind(bytes: readonly number[]): InternalAddressKind | undefined {
  return IPV4_RANGES.find(([prefix, bits]) => inPrefix(bytes, prefix, bits))?.[2];
}

function ipv6Kind(bytes: readonly number[]): InternalAddressKind | undefined {
  const zero = (from: number, to: number): boolean => bytes.slice(from, to).every((byte) => byte === 0);
  if (zero(0, 16)) return 'unspecified';
  if (zero(0, 15) && bytes[15] === 1) return 'loopback';
  // IPv4 inside IPv6: mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::a.b.c.d, 6to4 2002:aabb:ccdd::.
  if (zero(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return ipv4Kind(bytes.slice(12)) ?? undefined;
  if (zero(0, 12)) return ipv4Kind(bytes.slice(12)) ?? 'reserved';
  if (inPrefix(bytes, [0x00, 0x64, 0xff, 0x9b], 32) && zero(4, 12)) return ipv4Kind(bytes.slice(12));
  if (inPrefix(bytes, [0x20, 0x02], 16)) return ipv4Kind(bytes.slice(2, 6));
  if (inPrefix(bytes, [0xfc], 7)) return 'private';
  if (inPrefix(bytes, [0xfe, 0x80], 10)) return 'link-local';
  if (inPrefix(bytes, [0xfe, 0xc0], 10)) return 'private';
  if (inPrefix(bytes, [0xff], 8)) return 'multicast';
  return undefined;
}

/** An address as comparable bytes (IPv4-mapped IPv6 as its IPv4), or undefined when `text` is no IP address. */
function comparable(text: string): string | undefined {
  const v4 = ipv4Bytes(text);
  if (v4 !== undefined) return v4.join('.');
  const v6 = ipv6Bytes(text);
  if (v6 === undefined) return undefined;
  if (v6.slice(0, 10).every((byte) => byte === 0) && v6[10] === 0xff && v6[11] === 0xff) return v6.slice(12).join('.');
  return v6.join(',');
}

/** The addresses of the worker host's network interfaces, as read now. */
export function hostAddresses(): string[] {
  return Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).map((entry) => entry.address));
}

/**
 * What kind of internal address `address` is, or undefined for a public one. Anything that is not an IP address
 * counts as internal (`reserved`): the caller only ever passes resolved addresses, and a surprise fails closed.
 */
export function internalAddressKind(
  address: string,
  ownAddresses: readonly string[] = hostAddresses(),
): InternalAddressKind | undefined {
  const v4 = ipv4Bytes(address);
  const v6 = v4 === undefined ? ipv6Bytes(address) : undefined;
  if (v4 === undefined && v6 === undefined) return 'reserved';
  const kind = v4 !== undefined ? ipv4Kind(v4) : ipv6Kind(v6 ?? []);
  if (kind !== undefined) return kind;
  const key = comparable(address);
  return ownAddresses.some((own) => comparable(own) === key) ? "the worker host's own" : undefined;
}

/** An IPv6 literal in one spelling (RFC 5952: `0:0::1` and `::1` alike), for comparing hosts; anything else as it is. */
export function canonicalHost(host: string): string {
  if (!net.isIPv6(host)) return host;
  try {
    return new URL(`http://[${host}]/`).hostname.slice(1, -1);
  } catch {
    return host;
  }
}
