import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
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

export type Authentication = { kind: 'cookie'; browserSession: string } | { kind: 'header' } | { kind: 'none' };

/**
 * Access control of the console. The token is required on every request: as the cookie set from `?token=` on the
 * first visit, or as `Authorization: Bearer <token>` (scripts). Cookie names carry the port, since cookies are not
 * port-scoped and two consoles on one host must not overwrite each other's.
 */
export class ConsoleSecurity {
  readonly #token: string;
  readonly #csrfKey = randomBytes(32);
  readonly cookieName: string;
  readonly sessionCookieName: string;

  constructor(options: { token: string; port: number }) {
    this.#token = options.token;
    this.cookieName = `switchyard_console_${options.port}`;
    this.sessionCookieName = `switchyard_console_${options.port}_session`;
  }

  tokenMatches(candidate: string | null | undefined): boolean {
    return sameSecret(candidate ?? undefined, this.#token);
  }

  authenticate(request: IncomingMessage): Authentication {
    const authorization = request.headers.authorization;
    if (authorization?.startsWith('Bearer ') === true && this.tokenMatches(authorization.slice('Bearer '.length).trim())) return { kind: 'header' };
    const cookies = parseCookies(request.headers.cookie);
    const browserSession = cookies.get(this.sessionCookieName);
    if (this.tokenMatches(cookies.get(this.cookieName)) && browserSession !== undefined && browserSession.length >= 16) return { kind: 'cookie', browserSession };
    return { kind: 'none' };
  }

  /** Cookies for a browser that presented the token: the token itself and a random browser-session id. */
  loginCookies(): string[] {
    const attributes = 'Path=/; HttpOnly; SameSite=Strict';
    return [`${this.cookieName}=${encodeURIComponent(this.#token)}; ${attributes}`, `${this.sessionCookieName}=${randomToken()}; ${attributes}`];
  }

  /** The CSRF token of one browser session: a keyed hash of its session id, embedded in pages, sent back on POSTs. */
  csrfToken(browserSession: string): string {
    return createHmac('sha256', this.#csrfKey).update(browserSession).digest('base64url');
  }

  /**
   * Whether a state-changing request may proceed; undefined when it may, else why not. Cross-site requests are
   * refused by `Origin` and `Sec-Fetch-Site`; cookie-authenticated ones also need the session's CSRF token (a form
   * on another site can send the cookie of a same-site origin, never this header).
   */
  refuseStateChange(request: IncomingMessage, authentication: Authentication): string | undefined {
    const fetchSite = request.headers['sec-fetch-site'];
    if (fetchSite !== undefined && fetchSite !== 'same-origin' && fetchSite !== 'none') return `cross-site request refused (Sec-Fetch-Site: ${fetchSite})`;
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== `http://${request.headers.host ?? ''}`) return `cross-origin request refused (Origin: ${origin})`;
    if (!(request.headers['content-type'] ?? '').startsWith('application/json')) return 'state changes must be JSON (Content-Type: application/json)';
    if (authentication.kind === 'cookie') {
      const given = request.headers['x-csrf-token'];
      if (typeof given !== 'string' || !sameSecret(given, this.csrfToken(authentication.browserSession))) return 'missing or wrong CSRF token (reload the page)';
    }
    return undefined;
  }
}

const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** On a loopback bind, only loopback host names are served (a DNS-rebinding page cannot talk to the console). */
export function hostAllowed(hostHeader: string | undefined, options: { boundToLoopback: boolean }): boolean {
  const { boundToLoopback } = options;
  if (!boundToLoopback) return true;
  if (hostHeader === undefined) return false;
  const name = hostHeader.startsWith('[') ? hostHeader.slice(0, hostHeader.indexOf(']') + 1) : hostHeader.split(':')[0] ?? '';
  return LOOPBACK_NAMES.has(name.toLowerCase());
}
