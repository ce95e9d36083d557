import { copyFile, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTemporalConnectConfig } from '../../src/config/temporal-connection.js';
import { makeTestCertificates } from '../support/certificates.js';
import type { TestCertificates } from '../support/certificates.js';
import { scratchDir } from '../support/scratch.js';

describe('loadTemporalConnectConfig: where a process connects, as the temporal CLI resolves it', () => {
  let certificates: TestCertificates;
  let home: string;
  let configFile: string;
  beforeAll(async () => {
    certificates = await makeTestCertificates();
    home = await scratchDir('switchyard-home-');
    configFile = path.join(await scratchDir('switchyard-toml-'), 'temporal.toml');
    await writeFile(
      configFile,
      [
        '[profile.default]',
        'address = "default.example:7233"',
        '',
        '[profile.cloud]',
        'address = "ns.acct.tmprl.cloud:7233"',
        'namespace = "ns.acct"',
        'api_key = "profile-key"',
        '',
        '[profile.selfhosted]',
        'address = "temporal.internal:7233"',
        'namespace = "agents"',
        '[profile.selfhosted.tls]',
        `client_cert_path = "${certificates.clientCert}"`,
        `client_key_path = "${certificates.clientKey}"`,
        `server_ca_cert_path = "${certificates.caCert}"`,
        'server_name = "temporal.internal"',
        '',
      ].join('\n'),
    );
  });

  it('with nothing set: localhost:7233, namespace default, TLS and API key off', () => {
    const config = loadTemporalConnectConfig({}, { HOME: home });
    expect(config.connectionOptions).toEqual({ address: 'localhost:7233' });
    expect(config).toMatchObject({ namespace: 'default', addressIsDefault: true });
    expect(config.security).toEqual({ tls: 'off', apiKey: false });
  });

  it('an API key turns TLS on; flags win over variables, variables over the profile', () => {
    const env = { HOME: home, TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'cloud' };
    const fromProfile = loadTemporalConnectConfig({}, env);
    expect(fromProfile.connectionOptions).toEqual({
      address: 'ns.acct.tmprl.cloud:7233',
      apiKey: 'profile-key',
      tls: true,
    });
    expect(fromProfile.namespace).toBe('ns.acct');
    expect(fromProfile.addressSource).toBe(`the "cloud" profile of ${configFile}`);
    expect(fromProfile.security).toEqual({ tls: 'on', apiKey: true, profile: 'cloud' });
    const fromEnv = loadTemporalConnectConfig({}, { ...env, TEMPORAL_API_KEY: 'env-key', TEMPORAL_NAMESPACE: 'other' });
    expect(fromEnv.connectionOptions.apiKey).toBe('env-key');
    expect(fromEnv.namespace).toBe('other');
    const fromFlags = loadTemporalConnectConfig(
      { apiKey: 'flag-key', address: 'flag:1', namespace: 'flagged' },
      { ...env, TEMPORAL_API_KEY: 'env-key' },
    );
    expect(fromFlags.connectionOptions).toMatchObject({ address: 'flag:1', apiKey: 'flag-key' });
    expect(fromFlags).toMatchObject({ namespace: 'flagged', addressSource: '--address' });
  });

  it('mTLS from a profile: the certificates are read into the options, the server name kept', () => {
    const config = loadTemporalConnectConfig(
      { profile: 'selfhosted' },
      { HOME: home, TEMPORAL_CONFIG_FILE: configFile },
    );
    const tls = config.connectionOptions.tls as Exclude<typeof config.connectionOptions.tls, boolean | undefined>;
    expect(tls.serverNameOverride).toBe('temporal.internal');
    expect(tls.serverRootCACertificate?.toString()).toContain('BEGIN CERTIFICATE');
    expect(tls.clientCertPair?.crt.toString()).toContain('BEGIN CERTIFICATE');
    expect(tls.clientCertPair?.key.toString()).toContain('PRIVATE KEY');
    expect(config.security).toEqual({ tls: 'mutual', apiKey: false, profile: 'selfhosted' });
  });

  it('mTLS from the TEMPORAL_TLS_* variables alone', () => {
    const config = loadTemporalConnectConfig(
      {},
      {
        HOME: home,
        TEMPORAL_ADDRESS: '127.0.0.1:7233',
        TEMPORAL_TLS_CLIENT_CERT_PATH: certificates.clientCert,
        TEMPORAL_TLS_CLIENT_KEY_PATH: certificates.clientKey,
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: certificates.caCert,
      },
    );
    expect(config.security.tls).toBe('mutual');
    expect(config.addressSource).toBe('TEMPORAL_ADDRESS');
  });

  it('an empty variable counts as unset', () => {
    const config = loadTemporalConnectConfig(
      {},
      { HOME: home, TEMPORAL_ADDRESS: '', TEMPORAL_API_KEY: '', TEMPORAL_TLS_CLIENT_CERT_PATH: '' },
    );
    expect(config.connectionOptions).toEqual({ address: 'localhost:7233' });
  });

  it('fails closed, naming the file and the reason, when a TLS file cannot be read or is not PEM', () => {
    const missing = path.join(certificates.dir, 'missing.pem');
    expect(() =>
      loadTemporalConnectConfig(
        {},
        { HOME: home, TEMPORAL_TLS_CLIENT_CERT_PATH: missing, TEMPORAL_TLS_CLIENT_KEY_PATH: certificates.clientKey },
      ),
    ).toThrow(
      `the TLS client certificate ${missing} (TEMPORAL_TLS_CLIENT_CERT_PATH or --tls-cert-path) cannot be read: ENOENT`,
    );
    expect(() => loadTemporalConnectConfig({ tlsCaPath: certificates.clientKey }, { HOME: home })).toThrow(
      `the TLS server CA certificate ${certificates.clientKey} (TEMPORAL_TLS_SERVER_CA_CERT_PATH or --tls-ca-path) is not a PEM certificate`,
    );
    expect(() =>
      loadTemporalConnectConfig(
        { tlsCertPath: certificates.clientCert, tlsKeyPath: certificates.clientCert },
        { HOME: home },
      ),
    ).toThrow(
      `the TLS client key ${certificates.clientCert} (TEMPORAL_TLS_CLIENT_KEY_PATH or --tls-key-path) is not a PEM private key`,
    );
  });

  it('fails closed when a client certificate comes without its key, instead of connecting without it', () => {
    expect(() =>
      loadTemporalConnectConfig({}, { HOME: home, TEMPORAL_TLS_CLIENT_CERT_PATH: certificates.clientCert }),
    ).toThrow('a TLS client certificate is given without its client key: set TEMPORAL_TLS_CLIENT_KEY_PATH');
  });

  it('fails closed when the named config file or profile does not exist', () => {
    const missing = path.join(home, 'nowhere.toml');
    expect(() => loadTemporalConnectConfig({}, { HOME: home, TEMPORAL_CONFIG_FILE: missing })).toThrow(
      `the Temporal config file ${missing} (TEMPORAL_CONFIG_FILE) cannot be read: ENOENT`,
    );
    expect(() =>
      loadTemporalConnectConfig({}, { HOME: home, TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'nope' }),
    ).toThrow(`the Temporal config file ${configFile}: Profile 'nope' not found in config data`);
    expect(() => loadTemporalConnectConfig({ profile: 'prod' }, { HOME: home })).toThrow(
      `the Temporal config file ${path.join(home, '.config', 'temporalio', 'temporal.toml')} (profile "prod") cannot be read`,
    );
  });

  it('docs/CONFIGURATION.md: the self-hosted profile and the Cloud API-key line resolve as printed', async () => {
    const doc = await readFile('docs/CONFIGURATION.md', 'utf8');
    const section = doc.slice(doc.indexOf('\n## An existing Temporal cluster\n'));
    const toml = /```toml(?: no-run)?\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    // The printed paths, pointed at this test's certificates under the same names.
    const dir = await scratchDir('switchyard-readme-certs-');
    await copyFile(certificates.clientCert, path.join(dir, 'client.pem'));
    await copyFile(certificates.clientKey, path.join(dir, 'client.key'));
    await copyFile(certificates.caCert, path.join(dir, 'ca.pem'));
    const file = path.join(dir, 'temporal.toml');
    await writeFile(file, toml.replaceAll('/etc/switchyard/', `${dir}/`));
    const profile = loadTemporalConnectConfig({}, { HOME: home, TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'prod' });
    expect(profile.connectionOptions.address).toBe('temporal.internal:7233');
    expect(profile.namespace).toBe('agents');
    expect(profile.security).toEqual({ tls: 'mutual', apiKey: false, profile: 'prod' });

    const cloudLine =
      /```sh(?: no-run)?\n(TEMPORAL_ADDRESS=\S+ TEMPORAL_NAMESPACE=\S+ TEMPORAL_API_KEY=[^\n]+)/.exec(section)?.[1] ??
      '';
    const assignments = Object.fromEntries(
      [...cloudLine.matchAll(/(TEMPORAL_[A-Z_]+)=(<[^>]+>|\S+)/g)].map(([, name = '', value = '']) => [name, value]),
    );
    const cloud = loadTemporalConnectConfig({}, { HOME: home, ...assignments });
    expect(cloud.connectionOptions).toMatchObject({ address: 'us-east-1.aws.api.temporal.io:7233', tls: true });
    expect(cloud).toMatchObject({ namespace: 'agents.a1b2c', security: { tls: 'on', apiKey: true } });
  });
});
