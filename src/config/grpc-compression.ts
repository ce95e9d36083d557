/**
 * Transport compression for the SDK's native connections (workers, and `SwitchyardClient.connect({ native: true })`).
 * The SDK gzips every request body of a native connection and asks for gzipped responses, so the server compresses
 * each poll answer (a session's new history events) and the worker each workflow task's completion (its results):
 * CPU on both sides for every turn. Over a network that buys bandwidth; to a server on the same machine it buys
 * nothing, so a loopback address gets no compression and any other address keeps the SDK's gzip. (Measured with
 * Node's zlib at the default level: about 0.4 ms to compress and 0.14 ms to decompress 21 KB of source text, the size
 * of a four-Read turn's results; docs/CONCEPTS.md, "Transport compression".)
 */
import net from 'node:net';

/** The host part of `host:port`, `[v6]:port`, or a bare host. */
function hostOf(address: string): string {
  const trimmed = address.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(trimmed);
  if (bracketed?.[1] !== undefined) return bracketed[1];
  if (net.isIPv6(trimmed)) return trimmed;
  const colon = trimmed.lastIndexOf(':');
  return colon === -1 ? trimmed : trimmed.slice(0, colon);
}

/** Whether `address` names this machine: `localhost` (or a name under it), 127.0.0.0/8 or ::1. */
export function isLoopbackAddress(address: string): boolean {
  const host = hostOf(address).toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (net.isIPv4(host)) return host.startsWith('127.');
  if (net.isIPv6(host)) return host === '::1' || host === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(host);
  return false;
}

/** The `grpcCompression` option for a native connection to `address`: none on loopback, the SDK's default elsewhere. */
export function grpcCompressionFor(address: string): { grpcCompression?: { codec: 'none' } } {
  return isLoopbackAddress(address) ? { grpcCompression: { codec: 'none' } } : {};
}
