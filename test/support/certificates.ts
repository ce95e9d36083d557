import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { scratchDir } from './scratch.js';

/** PEM files of a private CA, a server certificate it signed (for 127.0.0.1 and localhost) and a client one. */
export interface TestCertificates {
  dir: string;
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A client certificate signed by another CA: a server that checks client certificates refuses it. */
  strangerCert: string;
  strangerKey: string;
}

const openssl = (args: string[], cwd: string): Promise<unknown> => promisify(execFile)('openssl', args, { cwd });

/** A self-signed CA (EC P-256, a day long) in `dir`, as `<name>.pem` and `<name>-key.pem`. */
async function makeCa(dir: string, name: string): Promise<void> {
  await openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      `${name}-key.pem`,
      '-out',
      `${name}.pem`,
      '-days',
      '1',
      '-subj',
      `/CN=${name}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
}

/** A leaf certificate for `name` signed by the CA `ca`, with the extensions in `extensions` (an openssl ext file). */
async function makeLeaf(dir: string, name: string, ca: string, extensions: string): Promise<void> {
  await writeFile(path.join(dir, `${name}.ext`), extensions);
  await openssl(
    [
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      `${name}-key.pem`,
      '-out',
      `${name}.csr`,
      '-subj',
      `/CN=${name}`,
    ],
    dir,
  );
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${ca}.pem`,
      '-CAkey',
      `${ca}-key.pem`,
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '1',
      '-extfile',
      `${name}.ext`,
    ],
    dir,
  );
}

/** Makes the certificates with `openssl` in a fresh scratch dir (about a second). */
export async function makeTestCertificates(): Promise<TestCertificates> {
  const dir = await scratchDir('switchyard-tls-');
  await makeCa(dir, 'ca');
  await makeCa(dir, 'stranger-ca');
  await makeLeaf(
    dir,
    'server',
    'ca',
    'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n',
  );
  await makeLeaf(
    dir,
    'client',
    'ca',
    'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=clientAuth\n',
  );
  await makeLeaf(
    dir,
    'stranger',
    'stranger-ca',
    'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=clientAuth\n',
  );
  const file = (name: string): string => path.join(dir, name);
  return {
    dir,
    caCert: file('ca.pem'),
    caKey: file('ca-key.pem'),
    serverCert: file('server.pem'),
    serverKey: file('server-key.pem'),
    clientCert: file('client.pem'),
    clientKey: file('client-key.pem'),
    strangerCert: file('stranger.pem'),
    strangerKey: file('stranger-key.pem'),
  };
}
