// Why a connection to Temporal failed, in words that name what is missing. The SDK's two clients say little: the
// JavaScript one "Failed to connect before the deadline", the native one "transport error" or "connection closed",
// whether the server wants a client certificate, does not trust ours, speaks TLS to a plaintext client or the other way
// round. After a failure, one TLS handshake with the same settings tells these apart (it runs only then, and is
// bounded), and the server's PERMISSION_DENIED is turned into what to set.
import net from 'node:net';
import tls from 'node:tls';
import { describeConnectionSecurity } from '../config/temporal-connection.js';
import type { TemporalConnectConfig } from '../config/temporal-connection.js';

/** How long the probe waits for the handshake, and then for an alert the server sends after it (TLS 1.3). */
const PROBE_TIMEOUT_MS = 3_000;
const ALERT_WAIT_MS = 500;

type ProbeOutcome =
  { type: 'secure' } | { type: 'error'; code: string; message: string } | { type: 'unreachable' } | { type: 'timeout' };

function hostAndPort(address: string): { host: string; port: number } {
  const bracketed = /^\[([^\]]+)\]:(\d+)$/.exec(address);
  if (bracketed !== null) return { host: bracketed[1] ?? '', port: Number(bracketed[2]) };
  const colon = address.lastIndexOf(':');
  return colon === -1
    ? { host: address, port: 7233 }
    : { host: address.slice(0, colon), port: Number(address.slice(colon + 1)) };
}

/** One TLS handshake with `options`, and a short wait for an alert after it. */
function probe(address: string, options: tls.ConnectionOptions): Promise<ProbeOutcome> {
  const { host, port } = hostAndPort(address);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: ProbeOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const socket = tls.connect({
      host,
      port,
      ALPNProtocols: ['h2'],
      ...(net.isIP(host) === 0 ? { servername: host } : {}),
      ...options,
    });
    const timer = setTimeout(() => finish({ type: 'timeout' }), PROBE_TIMEOUT_MS);
    socket.once('secureConnect', () => {
      setTimeout(() => finish({ type: 'secure' }), ALERT_WAIT_MS);
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      const code = error.code ?? '';
      if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH' || code === 'EAI_AGAIN')
        finish({ type: 'unreachable' });
      else finish({ type: 'error', code, message: error.message });
    });
  });
}

const SERVER_CERTIFICATE_UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_UNTRUSTED',
]);

/** Whether an alert says the server wants a certificate it did not get, or refused the one it got. */
function clientCertificateAlert(outcome: ProbeOutcome): 'required' | 'refused' | undefined {
  if (outcome.type !== 'error') return undefined;
  if (/CERTIFICATE_REQUIRED|HANDSHAKE_FAILURE/i.test(outcome.code)) return 'required';
  if (/BAD_CERTIFICATE|UNKNOWN_CA|CERTIFICATE_UNKNOWN|DECRYPT_ERROR|ACCESS_DENIED/i.test(outcome.code))
    return 'refused';
  return undefined;
}

/**
 * What a failed connection lacks, found with one TLS handshake using the connection's own settings; undefined when
 * the handshake says nothing (the server is down, or TLS is not the problem).
 */
export async function diagnoseTlsFailure(temporal: TemporalConnectConfig): Promise<string | undefined> {
  const { address, tls: settings } = temporal.connectionOptions;
  const where = `the Temporal server at ${address} (${temporal.addressSource})`;
  if (settings === undefined || settings === false) {
    const outcome = await probe(address, { rejectUnauthorized: false });
    if (outcome.type !== 'secure' && clientCertificateAlert(outcome) === undefined) return undefined;
    const mutual = clientCertificateAlert(outcome) === 'required';
    return `${where} speaks TLS${mutual ? ' and requires a client certificate (mTLS)' : ''}, but this connection has TLS off: set ${
      mutual
        ? 'TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH (or --tls-cert-path and --tls-key-path)'
        : 'TEMPORAL_API_KEY, or TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH'
    }, and TEMPORAL_TLS_SERVER_CA_CERT_PATH when its certificate is not signed by a public CA`;
  }
  const config = settings === true ? {} : settings;
  const outcome = await probe(address, {
    ...(config.serverRootCACertificate === undefined || config.serverRootCACertificate === null
      ? {}
      : { ca: Buffer.from(config.serverRootCACertificate) }),
    ...(config.clientCertPair === undefined || config.clientCertPair === null
      ? {}
      : { cert: Buffer.from(config.clientCertPair.crt), key: Buffer.from(config.clientCertPair.key) }),
    ...(config.serverNameOverride === undefined || config.serverNameOverride === null
      ? {}
      : { servername: config.serverNameOverride }),
  });
  if (outcome.type !== 'error') return undefined;
  const alert = clientCertificateAlert(outcome);
  if (alert === 'required')
    return `${where} requires a client certificate (mTLS) and this connection sends none: set TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH (or --tls-cert-path and --tls-key-path) (${outcome.message})`;
  if (alert === 'refused')
    return `${where} refused this connection's client certificate (TEMPORAL_TLS_CLIENT_CERT_PATH or --tls-cert-path): it is not signed by a CA the server trusts (${outcome.message})`;
  if (SERVER_CERTIFICATE_UNTRUSTED.has(outcome.code))
    return `${where} presents a certificate this connection does not trust: set TEMPORAL_TLS_SERVER_CA_CERT_PATH (or --tls-ca-path) to the CA that signed it (${outcome.message})`;
  if (outcome.code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return `${where} presents a certificate for another name: set TEMPORAL_TLS_SERVER_NAME (or --tls-server-name) to the name in it (${outcome.message})`;
  if (/WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG|UNKNOWN_PROTOCOL/i.test(outcome.code))
    return `${where} does not speak TLS, but this connection has TLS on (${describeConnectionSecurity(temporal.security)}): unset the TLS settings, or set TEMPORAL_TLS=false`;
  return `the TLS handshake with ${where} failed: ${outcome.message}`;
}

/** Whether an error is the server's PERMISSION_DENIED or UNAUTHENTICATED (gRPC 7 or 16). */
export function isPermissionDenied(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current !== undefined && current !== null && depth < 8; depth += 1) {
    const candidate = current as { code?: unknown; message?: string; cause?: unknown };
    if (candidate.code === 7 || candidate.code === 16) return true;
    if (
      /PERMISSION_DENIED|UNAUTHENTICATED|Request unauthorized|does not have permission/i.test(candidate.message ?? '')
    )
      return true;
    current = candidate.cause;
  }
  return false;
}

/** The server's refusal of a request, with what to set: an API key, or another one. */
export function permissionDeniedMessage(temporal: TemporalConnectConfig, error: unknown): string {
  const reason = error instanceof Error ? error.message : String(error);
  const where = `the Temporal server at ${temporal.connectionOptions.address} (${temporal.addressSource})`;
  return temporal.security.apiKey
    ? `${where} refused the API key (TEMPORAL_API_KEY or --api-key): it is wrong, expired, or has no role on namespace ${temporal.namespace} (${reason})`
    : `${where} refused the request: it requires an API key and none is set: set TEMPORAL_API_KEY (or --api-key) (${reason})`;
}
