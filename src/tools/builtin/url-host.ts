/**
 * Hosts as WebFetch's permission checks see them: one canonical spelling, and what kind of network it reaches.
 *
 * Canonical: the WHATWG URL parser (Node's `URL`) already lowercases names, decodes `%31`, maps full-width letters
 * and rewrites every IPv4 spelling (`127.1`, `2130706433`, `0x7f.1`, `0177.0.0.1`) to dotted decimal; on top of it
 * trailing dots are stripped (`evil.com.` is the same DNS name as `evil.com`) and an IPv4-mapped IPv6 literal
 * (`[::ffff:169.254.169.254]`) becomes the IPv4 address it connects to.
 *
 * Classes: `metadata` and `link_local` are refused unless an allow rule names the exact host; `loopback` and
 * `private` always ask unless an allow rule names the exact host; `public` follows the rules.
 *
 * Pure: no Node built-ins, so the rule matcher could use it too.
 */

export type HostClass = 'public' | 'private' | 'loopback' | 'link_local' | 'metadata';

/** Names of cloud metadata services (GCP); AWS and Azure serve theirs on 169.254.169.254, caught by address. */
const METADATA_HOSTNAMES: ReadonlySet<string> = new Set(['metadata.google.internal', 'metadata.goog']);

/** Metadata addresses outside 169.254.0.0/16, which is link-local as a whole. */
const METADATA_IPV4: ReadonlySet<string> = new Set([
  '169.254.169.254', // AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle
  '100.100.100.200', // Alibaba Cloud
  '168.63.129.16', // Azure WireServer
]);
/** AWS's IPv6 instance metadata endpoint, fd00:ec2::254, as 16-bit groups. */
const METADATA_IPV6 = [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254];

/** A host the URL parser accepted, in canonical form: trailing dots stripped, IPv4-mapped IPv6 as IPv4. */
function canonicalHostname(hostname: string): string {
  const stripped = hostname.replace(/\.+$/, '');
  if (stripped.startsWith('[')) {
    const groups = parseIpv6(stripped.slice(1, -1));
    if (groups !== undefined && isIpv4Mapped(groups)) return ipv4Text(embeddedIpv4(groups));
  }
  return stripped;
}

/**
 * The canonical form of an http(s) URL: what rules match, the approver sees and the handler fetches. Throws a
 * TypeError for an invalid URL or one whose host is empty once trailing dots are stripped (`http://./`).
 */
export function canonicalUrl(text: string): string {
  return canonicalUrlObject(new URL(text)).href;
}

/** {@link canonicalUrl} for a parsed URL (a redirect target); returns a new URL. */
export function canonicalUrlObject(parsed: URL): URL {
  const url = new URL(parsed.href);
  const host = canonicalHostname(url.hostname);
  if (host === '') throw new TypeError(`Invalid URL: ${parsed.href} has no host`);
  if (host !== url.hostname) url.hostname = host;
  return url;
}

/**
 * The canonical host of a `domain:` rule's text (`EVIL.com.` → `evil.com`, `2130706433` → `127.0.0.1`, `::1` →
 * `[::1]`), or undefined when the text is not a bare host (a path, a port, a wildcard, credentials).
 */
export function canonicalHost(text: string): string | undefined {
  if (text === '' || text.includes('*')) return undefined;
  const bracketed = text.includes(':') && !text.startsWith('[') ? `[${text}]` : text;
  let url: URL;
  try {
    url = new URL(`http://${bracketed}/`);
  } catch {
    return undefined;
  }
  if (
    url.username !== '' ||
    url.password !== '' ||
    url.port !== '' ||
    url.pathname !== '/' ||
    url.search !== '' ||
    url.hash !== ''
  )
    return undefined;
  const host = canonicalHostname(url.hostname);
  return host === '' ? undefined : host;
}

/** What a canonical host (`URL.hostname`: names, dotted IPv4, bracketed IPv6) reaches. */
export function classifyHost(host: string): HostClass {
  const name = host.toLowerCase().replace(/\.+$/, '');
  if (name.startsWith('[') && name.endsWith(']')) {
    const groups = parseIpv6(name.slice(1, -1));
    return groups === undefined ? 'public' : classifyIpv6(groups);
  }
  const ipv4 = parseIpv4(name);
  if (ipv4 !== undefined) return classifyIpv4(ipv4);
  // RFC 6761: `localhost` and every name under it are the loopback interface.
  if (name === 'localhost' || name.endsWith('.localhost')) return 'loopback';
  if (METADATA_HOSTNAMES.has(name)) return 'metadata';
  return 'public';
}

/** Whether calls to this class are denied unless an allow rule names the exact host. */
export function isDeniedHostClass(hostClass: HostClass): boolean {
  return hostClass === 'metadata' || hostClass === 'link_local';
}

/** The class in words, after "is": `a cloud metadata address (…)`. */
export function describeHostClass(hostClass: HostClass): string {
  switch (hostClass) {
    case 'metadata':
      return 'a cloud metadata address (it hands out the machine’s cloud credentials)';
    case 'link_local':
      return 'a link-local address (where cloud metadata services live)';
    case 'loopback':
      return 'a loopback address (a service on this machine)';
    case 'private':
      return 'a private-network address';
    case 'public':
      return 'a public address';
    default: {
      const exhaustive: never = hostClass;
      return exhaustive;
    }
  }
}

/**
 * Why a connection to `address` (one address the name `hostname` resolved to) is refused, or undefined when it may
 * go ahead. Checked as the connection is made, so a name that resolves to an internal address — a DNS record
 * pointing at 169.254.169.254, or a rebinding name — cannot reach what its literal address could not:
 * - metadata and link-local addresses only through a name of that class (which needed an exact allow rule);
 * - loopback addresses only through a loopback name (`localhost`, which asked or was allowed by its exact host);
 * - private addresses through any name: an intranet name was allowed or approved as that name (rebinding a public
 *   name to a private address is out of scope; see SECURITY.md).
 */
export function resolvedAddressRefusal(options: { hostname: string; address: string }): string | undefined {
  const addressClass = classifyHost(options.address.includes(':') ? `[${options.address}]` : options.address);
  const hostClass = classifyHost(options.hostname);
  const refused = isDeniedHostClass(addressClass)
    ? !isDeniedHostClass(hostClass)
    : addressClass === 'loopback' && hostClass !== 'loopback';
  if (!refused) return undefined;
  return (
    `${options.hostname} resolves to ${options.address}, ${describeHostClass(addressClass)}; WebFetch does not connect to such an address through ` +
    'another name. Fetch the address itself if you need it: it asks for approval, or needs an allow rule naming that exact host.'
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Addresses

/** Dotted-decimal IPv4 (the only IPv4 form a canonical URL has) as a 32-bit number. */
function parseIpv4(text: string): number | undefined {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (match === null) return undefined;
  const octets = match.slice(1).map(Number);
  if (octets.some((octet) => octet > 255)) return undefined;
  return octets.reduce((value, octet) => value * 256 + octet, 0);
}

function ipv4Text(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
}

function inIpv4Range(value: number, base: string, prefixLength: number): boolean {
  const size = 2 ** (32 - prefixLength);
  return Math.floor(value / size) === Math.floor((parseIpv4(base) ?? 0) / size);
}

function classifyIpv4(value: number): HostClass {
  if (METADATA_IPV4.has(ipv4Text(value))) return 'metadata';
  if (inIpv4Range(value, '169.254.0.0', 16)) return 'link_local';
  // 0.0.0.0/8: connecting to 0.0.0.0 reaches this machine on Linux.
  if (inIpv4Range(value, '127.0.0.0', 8) || inIpv4Range(value, '0.0.0.0', 8)) return 'loopback';
  const privateRanges: Array<[string, number]> = [
    ['10.0.0.0', 8],
    ['172.16.0.0', 12],
    ['192.168.0.0', 16],
    ['100.64.0.0', 10], // carrier-grade NAT, also Tailscale
    ['224.0.0.0', 4], // multicast
    ['240.0.0.0', 4], // reserved, and the broadcast address
  ];
  return privateRanges.some(([base, prefix]) => inIpv4Range(value, base, prefix)) ? 'private' : 'public';
}

/** An IPv6 address (without brackets; a trailing dotted IPv4 allowed) as eight 16-bit groups. */
function parseIpv6(text: string): number[] | undefined {
  let body = text.toLowerCase();
  const zone = body.indexOf('%');
  if (zone !== -1) body = body.slice(0, zone);
  let tail: number[] = [];
  const dotted = /^(.*:)(\d{1,3}(?:\.\d{1,3}){3})$/.exec(body);
  if (dotted !== null) {
    const ipv4 = parseIpv4(dotted[2] ?? '');
    if (ipv4 === undefined) return undefined;
    tail = [Math.floor(ipv4 / 65_536), ipv4 % 65_536];
    // One `0` group stands in for the IPv4 part (two groups) while the groups are counted; it is replaced below.
    body = `${dotted[1] ?? ''}0`;
  }
  const halves = body.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string): number[] | undefined => {
    if (part === '') return [];
    const groups = part
      .split(':')
      .map((group) => (/^[0-9a-f]{1,4}$/.test(group) ? Number.parseInt(group, 16) : Number.NaN));
    return groups.some(Number.isNaN) ? undefined : groups;
  };
  const head = parse(halves[0] ?? '');
  const rest = halves.length === 2 ? parse(halves[1] ?? '') : [];
  if (head === undefined || rest === undefined) return undefined;
  const wanted = tail.length === 0 ? 8 : 7;
  let groups: number[];
  if (halves.length === 2) {
    const missing = wanted - head.length - rest.length;
    if (missing < 1) return undefined;
    groups = [...head, ...new Array<number>(missing).fill(0), ...rest];
  } else {
    groups = head;
  }
  if (groups.length !== wanted) return undefined;
  return tail.length === 0 ? groups : [...groups.slice(0, 6), ...tail];
}

function isIpv4Mapped(groups: readonly number[]): boolean {
  return groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
}

function embeddedIpv4(groups: readonly number[]): number {
  return (groups[6] ?? 0) * 65_536 + (groups[7] ?? 0);
}

function classifyIpv6(groups: readonly number[]): HostClass {
  const first = groups[0] ?? 0;
  if (groups.every((group, index) => group === METADATA_IPV6[index])) return 'metadata';
  const zeroPrefix = groups.slice(0, 6).every((group) => group === 0);
  // `::` (unspecified: this machine on Linux) and `::1`.
  if (zeroPrefix && groups[6] === 0 && (groups[7] === 0 || groups[7] === 1)) return 'loopback';
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) addresses reach an IPv4 host.
  const nat64 = first === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((group) => group === 0);
  if (isIpv4Mapped(groups) || zeroPrefix || nat64) return classifyIpv4(embeddedIpv4(groups));
  if ((first & 0xffc0) === 0xfe80) return 'link_local';
  // fc00::/7 unique local, fec0::/10 the old site-local, ff00::/8 multicast.
  if ((first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfec0 || (first & 0xff00) === 0xff00) return 'private';
  return 'public';
}
