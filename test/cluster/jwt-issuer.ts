// A JWT issuer for the JWT-authorized cluster: an RSA key whose public half is served as a JWKS document on
// 127.0.0.1 (the server's `jwtKeyProvider.keySourceURIs`), and tokens in the shape the server's default claim mapper
// reads: `sub`, and `permissions` as `<namespace>:<role>` (`temporal-system:admin` for the operator commands).
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface JwtIssuer {
  /** Where the JWKS document is served. */
  jwksUrl: string;
  /** A token signed with the served key. */
  token(claims: { sub: string; permissions: string[] }): string;
  /** A token of the same shape signed with a key the server does not know: a wrong key. */
  strangerToken(claims: { sub: string; permissions: string[] }): string;
  close(): Promise<void>;
}

const base64url = (value: Buffer | string): string => Buffer.from(value).toString('base64url');

function signToken(privateKey: KeyObject, kid: string, claims: Record<string, unknown>): string {
  const header = base64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid }));
  const now = Math.floor(Date.now() / 1000);
  const payload = base64url(JSON.stringify({ iat: now, exp: now + 3_600, ...claims }));
  const signature = sign('sha256', Buffer.from(`${header}.${payload}`), privateKey);
  return `${header}.${payload}.${base64url(signature)}`;
}

export async function startJwtIssuer(): Promise<JwtIssuer> {
  const kid = randomUUID();
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwks = JSON.stringify({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' }] });
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(jwks);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    jwksUrl: `http://127.0.0.1:${port}/jwks.json`,
    token: (claims) => signToken(privateKey, kid, claims),
    // The same kid, so the server looks the key up and finds the signature wrong.
    strangerToken: (claims) => signToken(stranger.privateKey, kid, claims),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
