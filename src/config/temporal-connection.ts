// Where every Switchyard process connects — the worker, the client, each CLI command, the console and the MCP
// gateway — resolved the way the Temporal SDKs and the `temporal` CLI resolve it (`@temporalio/envconfig`): the
// `temporal.toml` profile (`TEMPORAL_PROFILE`, else `default`; the file is `TEMPORAL_CONFIG_FILE`, else
// `~/.config/temporalio/temporal.toml`), overridden by `TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, `TEMPORAL_API_KEY`
// and `TEMPORAL_TLS_*`, overridden by the command's flags (`--address`, `--namespace`, `--api-key`,
// `--tls-cert-path`, `--tls-key-path`, `--tls-ca-path`, `--tls-server-name`, `--profile`). Switchyard adds two
// things: an empty variable counts as unset, as for its own variables; and it fails closed — a named config file,
// profile or TLS file that cannot be read or parsed stops startup with the file and the reason, where the SDK would
// connect without TLS or without the client certificate.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TLSConfig } from '@temporalio/client';
import { loadClientConfigProfile } from '@temporalio/envconfig';
import type { ClientConfigProfile, ConfigDataSource } from '@temporalio/envconfig';
import { DEFAULT_NAMESPACE } from '../contracts/defaults.js';

/** The address a connection uses when nothing names one: the dev server's. */
export const DEFAULT_TEMPORAL_ADDRESS = 'localhost:7233';

/** The `temporal` CLI's connection flags, as each `switchyard` command takes them. */
export interface TemporalConnectionFlags {
  /** `--address host:port`. */
  address?: string | undefined;
  /** `--namespace NAME`. */
  namespace?: string | undefined;
  /** `--api-key KEY`: sent as `Authorization: Bearer KEY`, and turns TLS on. */
  apiKey?: string | undefined;
  /** `--tls-cert-path FILE`: the client certificate (PEM) for mTLS; needs `tlsKeyPath`. */
  tlsCertPath?: string | undefined;
  /** `--tls-key-path FILE`: the client certificate's private key (PEM). */
  tlsKeyPath?: string | undefined;
  /** `--tls-ca-path FILE`: the CA that signed the server's certificate (PEM); default the system's roots. */
  tlsCaPath?: string | undefined;
  /** `--tls-server-name NAME`: the name to check the server's certificate against, when not the address's host. */
  tlsServerName?: string | undefined;
  /** `--profile NAME`: the `temporal.toml` profile. */
  profile?: string | undefined;
}

/** What secures a connection, for the start-up line: never the secrets themselves. */
export interface TemporalConnectionSecurity {
  /** `off`; `on` (the server's certificate is checked); `mutual` (and a client certificate is presented). */
  tls: 'off' | 'on' | 'mutual';
  apiKey: boolean;
  /** The `temporal.toml` profile used, when one was found. */
  profile?: string;
}

/** A resolved connection: options for `NativeConnection.connect` or `Connection.connect`, and the namespace. */
export interface TemporalConnectConfig {
  /** Address, TLS, API key and gRPC metadata, as both SDK connections take them. */
  connectionOptions: {
    address: string;
    tls?: TLSConfig | boolean;
    apiKey?: string;
    metadata?: Record<string, string>;
  };
  namespace: string;
  /** Where `address` came from, as a person should read it. */
  addressSource: string;
  /** True when nothing named an address (flag, variable or profile): `localhost:7233`, where the dev server runs. */
  addressIsDefault: boolean;
  security: TemporalConnectionSecurity;
}

/** A connection setting that cannot be used: startup stops with this message. */
export class TemporalConfigError extends Error {
  override readonly name = 'TemporalConfigError';
}

/** The variables envconfig reads, with empty values dropped: an empty variable means unset. */
function nonEmpty(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''),
  );
}

/** The `temporal.toml` envconfig reads: `TEMPORAL_CONFIG_FILE`, else the user's config dir (as envconfig finds it). */
export function temporalConfigFile(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const named = env.TEMPORAL_CONFIG_FILE;
  if (named !== undefined && named !== '') return named;
  if (os.platform() === 'win32') return env.APPDATA ? path.join(env.APPDATA, 'temporalio', 'temporal.toml') : undefined;
  if (os.platform() === 'darwin')
    return env.HOME ? path.join(env.HOME, 'Library', 'Application Support', 'temporalio', 'temporal.toml') : undefined;
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg !== undefined && xdg !== '')
    return path.isAbsolute(xdg) ? path.join(xdg, 'temporalio', 'temporal.toml') : undefined;
  return env.HOME ? path.join(env.HOME, '.config', 'temporalio', 'temporal.toml') : undefined;
}

type TlsFileRole = 'clientCert' | 'clientKey' | 'serverCACert';

const TLS_FILE_NAMES: Record<TlsFileRole, { what: string; variable: string; flag: string }> = {
  clientCert: {
    what: 'TLS client certificate',
    variable: 'TEMPORAL_TLS_CLIENT_CERT_PATH',
    flag: '--tls-cert-path',
  },
  clientKey: { what: 'TLS client key', variable: 'TEMPORAL_TLS_CLIENT_KEY_PATH', flag: '--tls-key-path' },
  serverCACert: {
    what: 'TLS server CA certificate',
    variable: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
    flag: '--tls-ca-path',
  },
};

/** A TLS file's bytes, checked to be what it claims (a PEM certificate or key); an unusable one throws, naming it. */
function tlsFileData(role: TlsFileRole, source: ConfigDataSource): Buffer {
  const { what, variable, flag } = TLS_FILE_NAMES[role];
  const named = 'path' in source ? `${what} ${path.resolve(source.path)} (${variable} or ${flag})` : `${what} data`;
  let data: Buffer;
  try {
    data = 'path' in source ? readFileSync(source.path) : Buffer.from(source.data);
  } catch (error) {
    throw new TemporalConfigError(`the ${named} cannot be read: ${(error as Error).message}`, { cause: error });
  }
  try {
    if (role === 'clientKey') createPrivateKey(data);
    else new X509Certificate(data);
  } catch (error) {
    throw new TemporalConfigError(
      `the ${named} is not a PEM ${role === 'clientKey' ? 'private key' : 'certificate'}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  return data;
}

/** The profile from the config file and the environment, as envconfig loads it; a named file that is missing throws. */
function loadProfile(flags: TemporalConnectionFlags, env: Record<string, string>): ClientConfigProfile {
  const file = temporalConfigFile(env);
  const profileName = flags.profile ?? env.TEMPORAL_PROFILE;
  // envconfig treats a missing file as no file; a file named on purpose (or a profile asked for) must exist.
  if (file !== undefined && (env.TEMPORAL_CONFIG_FILE !== undefined || profileName !== undefined)) {
    try {
      readFileSync(file);
    } catch (error) {
      const why = env.TEMPORAL_CONFIG_FILE !== undefined ? 'TEMPORAL_CONFIG_FILE' : `profile "${profileName}"`;
      throw new TemporalConfigError(
        `the Temporal config file ${path.resolve(file)} (${why}) cannot be read: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }
  try {
    return loadClientConfigProfile({
      ...(flags.profile === undefined ? {} : { profile: flags.profile }),
      overrideEnvVars: env,
    });
  } catch (error) {
    throw new TemporalConfigError(
      `the Temporal config file ${file === undefined ? '(none)' : path.resolve(file)}: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

/**
 * Where to connect, resolved as the `temporal` CLI resolves it: flags over `TEMPORAL_*` variables over the
 * `temporal.toml` profile, then the defaults (`localhost:7233`, namespace `default`, no TLS). TLS is on when any TLS
 * setting or an API key is given (as in the SDK), unless `TEMPORAL_TLS=false` or the profile's `tls.disabled`. Throws
 * `TemporalConfigError`, naming the file or setting, when a named file cannot be read or parsed, or when a client
 * certificate comes without its key (or the other way round).
 */
export function loadTemporalConnectConfig(
  flags: TemporalConnectionFlags = {},
  environment: Readonly<Record<string, string | undefined>>,
): TemporalConnectConfig {
  const env = nonEmpty(environment);
  const given = nonEmpty(flags as Record<string, string | undefined>) as TemporalConnectionFlags;
  const profile = loadProfile(given, env);
  const tls = { ...profile.tls };
  if (given.tlsCertPath !== undefined) tls.clientCert = { path: given.tlsCertPath };
  if (given.tlsKeyPath !== undefined) tls.clientKey = { path: given.tlsKeyPath };
  if (given.tlsCaPath !== undefined) tls.serverCACert = { path: given.tlsCaPath };
  if (given.tlsServerName !== undefined) tls.serverName = given.tlsServerName;
  const apiKey = given.apiKey ?? profile.apiKey;
  const address = given.address ?? profile.address ?? DEFAULT_TEMPORAL_ADDRESS;
  const profileName = given.profile ?? env.TEMPORAL_PROFILE;
  const addressSource =
    given.address !== undefined
      ? '--address'
      : env.TEMPORAL_ADDRESS !== undefined
        ? 'TEMPORAL_ADDRESS'
        : profile.address !== undefined
          ? `the "${profileName ?? 'default'}" profile of ${temporalConfigFile(env) ?? 'temporal.toml'}`
          : 'the default; TEMPORAL_ADDRESS is not set';
  if ((tls.clientCert === undefined) !== (tls.clientKey === undefined)) {
    const missing = tls.clientCert === undefined ? 'clientCert' : 'clientKey';
    const present = missing === 'clientCert' ? 'clientKey' : 'clientCert';
    throw new TemporalConfigError(
      `a ${TLS_FILE_NAMES[present].what} is given without its ${TLS_FILE_NAMES[missing].what.replace('TLS ', '')}: set ${TLS_FILE_NAMES[missing].variable} (or ${TLS_FILE_NAMES[missing].flag}) too`,
    );
  }
  const anyTls = Object.keys(tls).length > 0;
  const disabled = tls.disabled === true;
  let tlsOption: TLSConfig | boolean | undefined;
  if (disabled) tlsOption = false;
  else if (anyTls) {
    tlsOption = {
      ...(tls.serverName === undefined ? {} : { serverNameOverride: tls.serverName }),
      ...(tls.serverCACert === undefined
        ? {}
        : { serverRootCACertificate: tlsFileData('serverCACert', tls.serverCACert) }),
      ...(tls.clientCert === undefined || tls.clientKey === undefined
        ? {}
        : {
            clientCertPair: {
              crt: tlsFileData('clientCert', tls.clientCert),
              key: tlsFileData('clientKey', tls.clientKey),
            },
          }),
    };
  } else if (apiKey !== undefined) tlsOption = true;
  const security: TemporalConnectionSecurity = {
    tls: tlsOption === undefined || tlsOption === false ? 'off' : tls.clientCert !== undefined ? 'mutual' : 'on',
    apiKey: apiKey !== undefined,
    ...(profileName === undefined ? {} : { profile: profileName }),
  };
  return {
    connectionOptions: {
      address,
      ...(tlsOption === undefined ? {} : { tls: tlsOption }),
      ...(apiKey === undefined ? {} : { apiKey }),
      ...(profile.grpcMeta === undefined ? {} : { metadata: profile.grpcMeta }),
    },
    namespace: given.namespace ?? profile.namespace ?? DEFAULT_NAMESPACE,
    addressSource,
    addressIsDefault: given.address === undefined && profile.address === undefined,
    security,
  };
}

/** `TLS mutual, API key off (profile prod)`: a connection's security in words, without its secrets. */
export function describeConnectionSecurity(security: TemporalConnectionSecurity): string {
  const tls = security.tls === 'off' ? 'TLS off' : security.tls === 'mutual' ? 'TLS on (mutual)' : 'TLS on';
  const profile = security.profile === undefined ? '' : `; profile ${security.profile}`;
  return `${tls}, API key ${security.apiKey ? 'on' : 'off'}${profile}`;
}
