import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** A fresh random token (for the console's access token and CSRF tokens). */
export function randomToken(): string {
  return randomBytes(24).toString('base64url');
}

export function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const index = part.indexOf('=');
    if (index <= 0) continue;
    const name = part.slice(0, index).trim();
    try {
      cookies.set(name, decodeURIComponent(part.slice(index + 1).trim()));
    } catch {
      // a malformed cookie is no cookie
    }
  }
  return cookies;
}

/**
 * Who a request is from. `user` is the person the console decides for: the `by` of their approvals, always from here
 * (the login), never from a request body. `proxy`: named by the trusted reverse-proxy header.
 */
export type Authentication =
  | { kind: 'cookie'; browserSession: string; user: string }
  | { kind: 'header'; user: string }
  | { kind: 'proxy'; user: string }
  | { kind: 'none' };

/** One login the console accepts: a token's sha256 and the person it logs in. */
interface Login {
  user: string;
  tokenSha256: Buffer;
}

/**
 * Access control of the console. Every request needs a token: as the cookie set from `?token=` on the first visit, or
 * as `Authorization: Bearer <token>` (scripts). Either one shared token (`token`, deciding as `identity`), or one
 * token per person (`logins`: the users file). With `userHeader` set, a trusted reverse proxy in front names the
 * person in that header instead (only configure it when every request comes through that proxy). Cookie names
 * carry the port, since cookies are not port-scoped and two consoles on one host must not overwrite each other's.
 */
export class ConsoleSecurity {
  readonly #logins: Login[];
  readonly #userHeader: string | undefined;
  readonly #knownUsers: ReadonlySet<string> | undefined;
  readonly #csrfKey = randomBytes(32);
  readonly cookieName: string;
  readonly sessionCookieName: string;

  constructor(options: {
    port: number;
    /** The shared token (single-person console), deciding as `identity`. */
    token?: string;
    identity?: string;
    /** Per-person logins (name, sha256 of the token); replaces the shared token. */
    logins?: ReadonlyArray<{ user: string; tokenSha256?: string }>;
    /** A header a trusted reverse proxy sets to the logged-in person (`X-Forwarded-User`, `X-Auth-Request-Email`). */
    userHeader?: string;
  }) {
    const logins =
      options.logins ??
      (options.token === undefined
        ? []
        : [{ user: options.identity ?? 'console', tokenSha256: sha256(options.token).toString('hex') }]);
    this.#logins = logins.flatMap((login) =>
      login.tokenSha256 === undefined ? [] : [{ user: login.user, tokenSha256: Buffer.from(login.tokenSha256, 'hex') }],
    );
    this.#knownUsers = options.logins === undefined ? undefined : new Set(options.logins.map((login) => login.user));
    this.#userHeader = options.userHeader?.toLowerCase();
    this.cookieName = `switchyard_console_${options.port}`;
    this.sessionCookieName = `switchyard_console_${options.port}_session`;
  }

  /** The person a token logs in, or undefined (compared as sha256 digests, in constant time, against every login). */
  userForToken(candidate: string | null | undefined): string | undefined {
    if (candidate === undefined || candidate === null || candidate === '') return undefined;
    const digest = sha256(candidate);
    let found: string | undefined;
    for (const login of this.#logins)
      if (timingSafeEqual(digest, login.tokenSha256) && found === undefined) found = login.user;
    return found;
  }

  tokenMatches(candidate: string | null | undefined): boolean {
    return this.userForToken(candidate) !== undefined;
  }

  authenticate(request: IncomingMessage): Authentication {
    if (this.#userHeader !== undefined) {
      const named = request.headers[this.#userHeader];
      const user = typeof named === 'string' ? named.trim() : undefined;
      // With a users file, only its people; a header naming anyone else logs nobody in.
      if (user !== undefined && user !== '' && (this.#knownUsers === undefined || this.#knownUsers.has(user)))
        return { kind: 'proxy', user };
    }
    const authorization = request.headers.authorization;
    if (authorization?.startsWith('Bearer ') === true) {
      const user = this.userForToken(authorization.slice('Bearer '.length).trim());
      if (user !== undefined) return { kind: 'header', user };
    }
    const cookies = parseCookies(request.headers.cookie);
    const browserSession = cookies.get(this.sessionCookieName);
    const user = this.userForToken(cookies.get(this.cookieName));
    if (user !== undefined && browserSession !== undefined && browserSession.length >= 16)
      return { kind: 'cookie', browserSession, user };
    return { kind: 'none' };
  }

  /** Cookies for a browser that presented a valid token: that token and a random browser-session id. */
  loginCookies(token: string): string[] {
    const attributes = 'Path=/; HttpOnly; SameSite=Strict';
    return [
      `${this.cookieName}=${encodeURIComponent(token)}; ${attributes}`,
      `${this.sessionCookieName}=${randomToken()}; ${attributes}`,
    ];
  }

  /** The CSRF token of one browser session: a keyed hash of its session id, embedded in pages, sent back on POSTs. */
  csrfToken(browserSession: string): string {
    return createHmac('sha256', this.#csrfKey).update(browserSession).digest('base64url');
  }

  /** The CSRF token a page for this authentication carries ('' for bearer scripts, which need none). */
  csrfTokenFor(authentication: Authentication): string {
    if (authentication.kind === 'cookie') return this.csrfToken(authentication.browserSession);
    if (authentication.kind === 'proxy') return this.csrfToken(`proxy:${authentication.user}`);
    return '';
  }

  /**
   * Whether a state-changing request may proceed; undefined when it may, else why not. Cross-site requests are
   * refused by `Origin` and `Sec-Fetch-Site`; browser logins (cookie, proxy header) also need the page's CSRF token (a
   * form on another site can send the cookie of a same-site origin, never this header).
   */
  refuseStateChange(request: IncomingMessage, authentication: Authentication): string | undefined {
    const fetchSite = request.headers['sec-fetch-site'];
    if (fetchSite !== undefined && fetchSite !== 'same-origin' && fetchSite !== 'none')
      return `cross-site request refused (Sec-Fetch-Site: ${fetchSite})`;
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== `http://${request.headers.host ?? ''}`)
      return `cross-origin request refused (Origin: ${origin})`;
    if (!(request.headers['content-type'] ?? '').startsWith('application/json'))
      return 'state changes must be JSON (Content-Type: application/json)';
    if (authentication.kind === 'cookie' || authentication.kind === 'proxy') {
      const given = request.headers['x-csrf-token'];
      if (typeof given !== 'string' || !sameSecret(given, this.csrfTokenFor(authentication)))
        return 'missing or wrong CSRF token (reload the page)';
    }
    return undefined;
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** On a loopback bind, only loopback host names are served (a DNS-rebinding page cannot talk to the console). */
export function hostAllowed(hostHeader: string | undefined, options: { boundToLoopback: boolean }): boolean {
  const { boundToLoopback } = options;
  if (!boundToLoopback) return true;
  if (hostHeader === undefined) return false;
  const name = hostHeader.startsWith('[')
    ? hostHeader.slice(0, hostHeader.indexOf(']') + 1)
    : (hostHeader.split(':')[0] ?? '');
  return LOOPBACK_NAMES.has(name.toLowerCase());
}
