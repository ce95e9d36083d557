/**
 * The console's HTTP routes (split out of src/console/console-server.ts): the token login, who is asking, the actions
 * (`POST /api/approval`, `/api/interrupt`), the pages and their live JSON and stream, and stored outputs.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ArtifactStore } from '../contracts/artifact-store.js';
import { projectErrorMessage } from '../contracts/error-projection.js';
import { detectImageMediaType } from '../tools/support/image-media-type.js';
import type { ConsoleActions } from './console-actions.js';
import type { ConsoleData } from './console-data.js';
import type { ConsoleUser } from './console-users.js';
import { HttpError, SECURITY_HEADERS, readJson, sendJson, sendPage, stringify } from './http-helpers.js';
import { homeBody, homeSections, page, sessionBody, sessionSections } from './render.js';
import type { PageContext, Viewer } from './render.js';
import { hostAllowed, randomToken } from './security.js';
import type { Authentication, ConsoleSecurity } from './security.js';
import type { SessionStreams } from './session-stream.js';

type Authenticated = Exclude<Authentication, { kind: 'none' }>;

export interface ConsoleRoutesOptions {
  data: ConsoleData;
  actions: ConsoleActions;
  streams: SessionStreams;
  artifacts: ArtifactStore;
  /** The users file's people by name (their groups), when the console has one. */
  users: ReadonlyMap<string, ConsoleUser> | undefined;
  boundToLoopback: boolean;
  /** The console's security, known once it listens (its port is part of the cookie names). */
  security: () => ConsoleSecurity | undefined;
}

/** The console's routes: `handle` answers one request. */
export class ConsoleRoutes {
  readonly #options: ConsoleRoutesOptions;

  constructor(options: ConsoleRoutesOptions) {
    this.#options = options;
  }

  /** The person behind a request, with the groups that say which requests they may decide. */
  #viewerOf(authentication: Authenticated): Viewer {
    return { name: authentication.user, groups: this.#options.users?.get(authentication.user)?.groups ?? [] };
  }

  #context(authentication: Authenticated): PageContext {
    return {
      identity: authentication.user,
      viewer: this.#viewerOf(authentication),
      csrfToken: this.#options.security()?.csrfTokenFor(authentication) ?? '',
      nonce: randomToken(),
      now: Date.now(),
    };
  }

  /** Who is asking; `undefined` when the request was a token login, answered here with a redirect. */
  #authenticate(
    request: IncomingMessage,
    response: ServerResponse,
    url: URL,
    security: ConsoleSecurity,
  ): Authenticated | undefined {
    if (!hostAllowed(request.headers.host, { boundToLoopback: this.#options.boundToLoopback }))
      throw new HttpError(421, 'This console answers only on its loopback address.');
    const given = url.searchParams.get('token');
    if (request.method === 'GET' && given !== null) {
      if (!security.tokenMatches(given))
        throw new HttpError(
          401,
          this.#options.users === undefined
            ? 'Wrong token: open the URL `switchyard console` printed.'
            : 'Wrong token: open the console with your own token (?token=…).',
        );
      url.searchParams.delete('token');
      response.writeHead(303, {
        location: `${url.pathname}${url.search}`,
        'set-cookie': security.loginCookies(given),
        'cache-control': 'no-store',
      });
      response.end();
      return undefined;
    }
    const authentication = security.authenticate(request);
    if (authentication.kind === 'none') {
      throw new HttpError(
        401,
        'This console needs its token: open the URL `switchyard console` printed (it ends in ?token=…), or send Authorization: Bearer <token>.',
      );
    }
    return authentication;
  }

  async #act(
    request: IncomingMessage,
    response: ServerResponse,
    url: URL,
    authentication: Authenticated,
    security: ConsoleSecurity,
  ): Promise<void> {
    const refusal = security.refuseStateChange(request, authentication);
    if (refusal !== undefined) throw new HttpError(403, refusal);
    const body = await readJson(request);
    if (url.pathname === '/api/approval')
      return sendJson(response, 200, await this.#options.actions.decide(body, this.#viewerOf(authentication)));
    if (url.pathname === '/api/interrupt')
      return sendJson(response, 200, await this.#options.actions.interrupt(body, this.#viewerOf(authentication)));
    throw new HttpError(404, 'No such action.');
  }

  /** The home and session pages, their live JSON and a session's stream; false when the path is none of them. */
  async #servePage(
    request: IncomingMessage,
    response: ServerResponse,
    url: URL,
    authentication: Authenticated,
  ): Promise<boolean> {
    const { data } = this.#options;
    const pageContext = this.#context(authentication);
    const streamMatch = /^\/stream\/session\/([^/]+)$/.exec(url.pathname);
    if (streamMatch !== null) {
      const sessionId = decodeURIComponent(streamMatch[1] ?? '');
      await this.#options.streams.stream({
        request,
        response,
        sessionId,
        turnId: url.searchParams.get('turn') ?? undefined,
        render: () => this.#context(authentication),
      });
      return true;
    }
    const live = request.headers.accept?.includes('application/json') === true;
    if (url.pathname === '/' || url.pathname === '/fragment/home') {
      const sections = homeSections(await data.homeData(), pageContext);
      if (live || url.pathname !== '/') sendJson(response, 200, stringify(sections));
      else
        sendPage(
          response,
          pageContext,
          page({
            title: 'Switchyard console',
            context: pageContext,
            body: homeBody(sections),
            liveUrl: '/fragment/home',
          }),
        );
      return true;
    }
    const sessionMatch = /^\/(session|fragment\/session)\/([^/]+)$/.exec(url.pathname);
    if (sessionMatch === null) return false;
    const sessionId = decodeURIComponent(sessionMatch[2] ?? '');
    const turnId = url.searchParams.get('turn') ?? undefined;
    const sections = sessionSections(await data.sessionData(sessionId, turnId), pageContext);
    if (live || sessionMatch[1] !== 'session') {
      sendJson(response, 200, stringify(sections));
      return true;
    }
    const turnQuery = turnId === undefined ? '' : `?turn=${encodeURIComponent(turnId)}`;
    sendPage(
      response,
      pageContext,
      page({
        title: `Session ${sessionId} · Switchyard console`,
        context: pageContext,
        body: sessionBody(sections),
        liveUrl: `/fragment/session/${encodeURIComponent(sessionId)}${turnQuery}`,
        streamUrl: `/stream/session/${encodeURIComponent(sessionId)}${turnQuery}`,
      }),
    );
    return true;
  }

  /** A stored output (`/artifact`), or an image result's bytes (`/artifact/image`); false for any other path. */
  async #serveArtifact(response: ServerResponse, url: URL): Promise<boolean> {
    const uri = url.searchParams.get('uri') ?? '';
    if (url.pathname === '/artifact/image') {
      // An image result's bytes (v1.3 `image` display), served only as one of the four image types it was stored as.
      let bytes: Uint8Array;
      try {
        bytes = await this.#options.artifacts.readBytes(uri);
      } catch (error) {
        throw new HttpError(404, `No such artifact: ${projectErrorMessage(error)}`);
      }
      const mediaType = detectImageMediaType(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      if (mediaType === undefined) throw new HttpError(404, 'That artifact is not an image.');
      response.writeHead(200, {
        ...SECURITY_HEADERS,
        'content-type': mediaType,
        'content-security-policy': "sandbox; default-src 'none'",
      });
      response.end(bytes);
      return true;
    }
    if (url.pathname !== '/artifact') return false;
    let content: string;
    try {
      content = await this.#options.artifacts.read(uri);
    } catch (error) {
      throw new HttpError(404, `No such artifact: ${projectErrorMessage(error)}`);
    }
    response.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': 'text/plain; charset=utf-8',
      'content-security-policy': "sandbox; default-src 'none'",
    });
    response.end(content);
    return true;
  }

  /** Answers one request: throws an `HttpError` for the caller to send, or writes the response itself. */
  async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://console.invalid');
    const security = this.#options.security();
    if (security === undefined) throw new HttpError(503, 'starting');
    const authentication = this.#authenticate(request, response, url, security);
    if (authentication === undefined) return;
    if (request.method === 'POST') return this.#act(request, response, url, authentication, security);
    if (request.method !== 'GET' && request.method !== 'HEAD') throw new HttpError(405, 'Method not allowed.');
    if (await this.#servePage(request, response, url, authentication)) return;
    if (await this.#serveArtifact(response, url)) return;
    throw new HttpError(404, 'Not found.');
  }
}
