import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { pipeline } from 'node:stream';
import type { Readable } from 'node:stream';
import { TextDecoder } from 'node:util';
import { runInNewContext } from 'node:vm';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import TurndownService from 'turndown';
import { z } from 'zod';
import type { PermissionFacts } from '../../contracts/call-plan.js';
import { RESULT_BUDGETS, TOOL_TIMEOUTS } from '../../contracts/defaults.js';
import { parseRule } from '../../contracts/permission-rules.js';
import { ToolUseError, defineTool } from '../define-tool.js';
import type { Tool, ToolOutputObject, ToolPrepareContext } from '../define-tool.js';
import {
  canonicalHost,
  canonicalUrl,
  canonicalUrlObject,
  classifyHost,
  describeHostClass,
  isDeniedHostClass,
  resolvedAddressRefusal,
} from './url-host.js';
import { webFetchDisplay } from '../support/displays.js';

/** Largest response body read; the rest is not downloaded. */
export const WEB_FETCH_MAX_BODY_BYTES = 10 * 1024 * 1024;
/** Longest HTML converted to Markdown, in characters: turndown takes seconds per megabyte and blocks the worker meanwhile. */
export const WEB_FETCH_MAX_HTML_CHARS = 2 * 1024 * 1024;
/** Longest time HTML → Markdown may take (it blocks the worker meanwhile). */
export const WEB_FETCH_MARKDOWN_TIMEOUT_MS = 10_000;
/** Redirects followed before giving up. */
export const WEB_FETCH_MAX_REDIRECTS = 5;
/** Bytes sniffed for a NUL when the server names no content type. */
const SNIFF_BYTES = 8_192;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const FETCHABLE_PROTOCOLS = new Set(['http:', 'https:']);

const webFetchInputSchema = z.strictObject({
  url: z.string().min(1).describe('The http or https URL to fetch'),
  prompt: z
    .string()
    .optional()
    .describe('What to look for in the page; the page text is returned for you to read with it in mind'),
});

// ---------------------------------------------------------------------------------------------------------------
// HTML → Markdown

/** The part of a DOM table row (domino's, inside turndown) that the table rule reads. */
interface TableRowNode {
  children: ArrayLike<{ nodeName: string }>;
  closest(selector: string): { querySelector(selector: string): unknown } | null;
}

/**
 * turndown with ATX headings, fenced code and `-` bullets; `script`, `style`, `noscript` and `template` dropped with
 * their content; the `<title>` a paragraph of its own; tables as GFM pipe tables (the first row is the header).
 */
function createMarkdownConverter(): TurndownService {
  const service = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
  service.remove(['script', 'style', 'noscript', 'template']);
  service.addRule('title', { filter: 'title', replacement: (content) => `\n\n${content.trim()}\n\n` });
  service.addRule('tableSection', { filter: ['thead', 'tbody', 'tfoot'], replacement: (content) => content });
  service.addRule('tableCell', {
    filter: ['th', 'td'],
    replacement: (content) => ` ${content.replace(/\s+/g, ' ').trim().replaceAll('|', '\\|')} |`,
  });
  service.addRule('tableRow', {
    filter: 'tr',
    replacement: (content, node) => {
      const row = node as unknown as TableRowNode;
      const cells = Array.from(row.children).filter(
        (child) => child.nodeName === 'TD' || child.nodeName === 'TH',
      ).length;
      const header = row.closest('table')?.querySelector('tr') === row;
      return `\n|${content}${header ? `\n|${' --- |'.repeat(cells)}` : ''}`;
    },
  });
  service.addRule('table', { filter: 'table', replacement: (content) => `\n\n${content.trim()}\n\n` });
  return service;
}

const markdownConverter = createMarkdownConverter();

/**
 * An HTML document as Markdown (turndown): headings, links, lists, emphasis, code and tables survive; every entity is
 * decoded. Lines of only spaces between blank lines (left by whitespace around dropped elements) are removed.
 *
 * The conversion is synchronous and an HTML parser spends time on each tag in proportion to the depth of nesting, so
 * a page of thousands of nested elements takes minutes: it runs under a `vm` timeout of `timeoutMs`, which stops it.
 * Throws when it times out, or when the nesting overflows the stack.
 */
export function htmlToMarkdown(
  html: string,
  { timeoutMs = WEB_FETCH_MARKDOWN_TIMEOUT_MS }: { timeoutMs?: number } = {},
): string {
  const convert = (text: string): string => markdownConverter.turndown(text);
  const markdown = runInNewContext('convert(html)', { convert, html }, { timeout: timeoutMs }) as string;
  return markdown.replace(/\n\n[ \t]+(?=\n\n)/g, '');
}

// ---------------------------------------------------------------------------------------------------------------
// Fetching

type ContentKind = 'html' | 'text' | 'binary' | 'unknown';

function contentKind(mimeType: string): ContentKind {
  if (mimeType === '') return 'unknown';
  if (mimeType === 'text/html' || mimeType === 'application/xhtml+xml') return 'html';
  if (mimeType.startsWith('text/')) return 'text';
  if (
    [
      'application/json',
      'application/xml',
      'application/javascript',
      'application/ecmascript',
      'application/x-javascript',
    ].includes(mimeType)
  )
    return 'text';
  if (/^application\/[\w.+-]+\+(?:json|xml)$/.test(mimeType)) return 'text';
  return 'binary';
}

function decoderFor(contentType: string): TextDecoder {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1];
  if (charset !== undefined) {
    try {
      return new TextDecoder(charset);
    } catch {
      // Unknown charset: fall back to UTF-8.
    }
  }
  return new TextDecoder('utf-8');
}

/** Reads at most `limit` bytes of a body, keeping them unless `keep` is false; the rest is never downloaded. */
async function readCapped(
  body: Readable,
  options: { limit: number; keep: boolean },
): Promise<{ bytes: Buffer; total: number; truncated: boolean }> {
  const { limit, keep } = options;
  const chunks: Buffer[] = [];
  let total = 0;
  let truncated = false;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    const room = limit - total;
    if (buffer.byteLength > room) {
      if (keep && room > 0) chunks.push(buffer.subarray(0, room));
      total += room;
      truncated = true;
      // Leaving the loop destroys the stream, and with it the connection.
      break;
    }
    if (keep) chunks.push(buffer);
    total += buffer.byteLength;
  }
  return { bytes: Buffer.concat(chunks), total, truncated };
}

/** The response body, decompressed when the server used one of the encodings WebFetch asks for. */
function decodedBody(response: IncomingMessage): Readable {
  const encoding = (response.headers['content-encoding'] ?? '').trim().toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'br'
        ? createBrotliDecompress()
        : encoding === 'deflate'
          ? createInflate()
          : undefined;
  if (decoder === undefined) return response;
  // An error on either side destroys both and surfaces on the decoder, which the reader iterates.
  pipeline(response, decoder, () => undefined);
  return decoder;
}

/** The useful part of a fetch failure: the socket's own message (`connect ECONNREFUSED …`), with its code. */
function describeCause(error: unknown): string {
  let cause: unknown = error instanceof Error && error.cause !== undefined ? error.cause : error;
  if (cause instanceof AggregateError && cause.message === '' && cause.errors.length > 0) cause = cause.errors[0];
  if (!(cause instanceof Error)) return String(cause);
  const code = (cause as NodeJS.ErrnoException).code;
  const message = cause.message !== '' ? cause.message : (code ?? cause.name);
  return code !== undefined && !message.includes(code) ? `${message} (${code})` : message;
}

interface FetchedPage {
  url: string;
  status: number;
  contentType: string;
  kind: ContentKind;
  body: Buffer;
  /** Bytes of the body (for binaries, from Content-Length when the server sent one). */
  bytes: number;
  truncated: boolean;
}

/** Resolves a name to all its addresses (the system resolver by default; tests inject one). */
export type LookupHost = (hostname: string) => Promise<ReadonlyArray<{ address: string; family: number }>>;

const systemLookupHost: LookupHost = (hostname) => dnsLookup(hostname, { all: true });

/**
 * The `lookup` of every connection WebFetch makes: it resolves the name, then refuses the connection when any
 * address is one the name may not lead to (`resolvedAddressRefusal`). The check and the connect use the same
 * answer, so a name cannot resolve to a public address for the check and to 169.254.169.254 for the connect.
 * IP literals never reach a lookup: their class is checked on the URL.
 */
function guardedLookup(lookupHost: LookupHost): LookupFunction {
  return (hostname, options, callback) => {
    lookupHost(hostname).then(
      (addresses) => {
        for (const { address } of addresses) {
          const refusal = resolvedAddressRefusal({ hostname, address });
          if (refusal !== undefined) {
            callback(new ToolUseError(refusal, 'blocked_address'), '', 0);
            return;
          }
        }
        const wanted =
          options.family === 4 || options.family === 6
            ? addresses.filter((entry) => entry.family === options.family)
            : addresses;
        const first = wanted[0];
        if (first === undefined) {
          callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
        } else if (options.all === true) {
          callback(
            null,
            wanted.map((entry) => ({ address: entry.address, family: entry.family })),
          );
        } else {
          callback(null, first.address, first.family);
        }
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, '', 0),
    );
  };
}

/** Sends one GET and resolves with the response head; the body is left to the caller. */
function sendRequest(options: { url: URL; signal: AbortSignal; lookup: LookupFunction }): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const send = options.url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(
      options.url,
      {
        method: 'GET',
        signal: options.signal,
        lookup: options.lookup,
        // A fresh connection per request: a pooled socket would skip the lookup that checks where it leads.
        agent: false,
        headers: {
          'user-agent': 'Switchyard-WebFetch/0.1',
          accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.8',
          'accept-encoding': 'gzip, br',
        },
      },
      resolve,
    );
    request.once('error', reject);
    request.end();
  });
}

type RedirectCheck = { type: 'follow'; url: URL } | { type: 'refused'; error: ToolUseError };

/**
 * Whether WebFetch follows a redirect from `from` (a hop of the call that started at `start`) to `target`, and the
 * canonical URL it then fetches. Refused: other schemes; a hop to another host that is not public (metadata,
 * link-local, loopback, private), which the call was not allowed to reach; and a hop to any other host, because
 * rules name hosts.
 */
function checkRedirect(options: { from: URL; start: URL; target: URL }): RedirectCheck {
  const { from, start } = options;
  const refuse = (message: string, code: string): RedirectCheck => ({
    type: 'refused',
    error: new ToolUseError(message, code),
  });
  if (!FETCHABLE_PROTOCOLS.has(options.target.protocol)) {
    return refuse(
      `Refused the redirect from ${from.href} to ${options.target.href}: WebFetch follows only http and https URLs`,
      'redirect_refused',
    );
  }
  let target: URL;
  try {
    target = canonicalUrlObject(options.target);
  } catch {
    return refuse(`${from.href} redirected to an invalid URL: ${options.target.href}`, 'redirect_refused');
  }
  const targetClass = classifyHost(target.hostname);
  if (target.hostname !== start.hostname && targetClass !== 'public') {
    return refuse(
      `Refused the redirect from ${from.href} to ${target.href}: ${target.hostname} is ${describeHostClass(targetClass)}, which this call was not allowed to reach.`,
      'redirect_refused',
    );
  }
  if (target.host !== start.host) {
    // Rules like WebFetch(domain:x) name hosts: following a redirect to another host would slip past them.
    return refuse(
      `${from.href} redirects to a different host: ${target.href}. WebFetch does not follow redirects across hosts (permission rules apply per host); call WebFetch again with that URL if you need it.`,
      'cross_host_redirect',
    );
  }
  return { type: 'follow', url: target };
}

/** GETs `startUrl`, following up to five redirects on its host, and reads at most the body cap. */
async function fetchPage(options: {
  startUrl: string;
  signal: AbortSignal;
  lookupHost: LookupHost;
}): Promise<FetchedPage> {
  const { signal } = options;
  const start = canonicalUrlObject(new URL(options.startUrl));
  const lookup = guardedLookup(options.lookupHost);
  let url = start;
  for (let redirects = 0; ; redirects++) {
    let response: IncomingMessage;
    try {
      response = await sendRequest({ url, signal, lookup });
    } catch (error) {
      if (signal.aborted || error instanceof ToolUseError) throw error;
      throw new Error(`Failed to fetch ${url.href}: ${describeCause(error)}`, { cause: error });
    }
    try {
      const status = response.statusCode ?? 0;
      const locationHeader = response.headers.location;
      if (REDIRECT_STATUSES.has(status) && locationHeader !== undefined) {
        let location: URL;
        try {
          location = new URL(locationHeader, url);
        } catch {
          throw new ToolUseError(`${url.href} redirected to an invalid URL: ${locationHeader}`, 'redirect_refused');
        }
        const redirect = checkRedirect({ from: url, start, target: location });
        if (redirect.type === 'refused') throw redirect.error;
        const target = redirect.url;
        if (redirects >= WEB_FETCH_MAX_REDIRECTS) {
          throw new ToolUseError(
            `Too many redirects fetching ${start.href} (more than ${WEB_FETCH_MAX_REDIRECTS}); the last one led to ${target.href}`,
            'too_many_redirects',
          );
        }
        url = target;
        continue;
      }

      const contentType = response.headers['content-type'] ?? '';
      const kind = contentKind((contentType.split(';')[0] ?? '').trim().toLowerCase());
      const declaredLength = Number(response.headers['content-length'] ?? Number.NaN);
      if (
        kind === 'binary' &&
        Number.isSafeInteger(declaredLength) &&
        declaredLength >= 0 &&
        response.headers['content-encoding'] === undefined
      ) {
        // The size is known: a binary is not downloaded at all.
        return {
          url: url.href,
          status,
          contentType,
          kind,
          body: Buffer.alloc(0),
          bytes: declaredLength,
          truncated: false,
        };
      }
      try {
        const read = await readCapped(decodedBody(response), {
          limit: WEB_FETCH_MAX_BODY_BYTES,
          keep: kind !== 'binary',
        });
        return {
          url: url.href,
          status,
          contentType,
          kind,
          body: read.bytes,
          bytes: read.total,
          truncated: read.truncated,
        };
      } catch (error) {
        if (signal.aborted) throw error;
        throw new Error(`Failed to fetch ${url.href}: ${describeCause(error)}`, { cause: error });
      }
    } finally {
      // Whatever was not read is not downloaded: the connection is not reused (`agent: false`).
      response.destroy();
    }
  }
}

/** The page body as the model reads it, and whether only the head of its HTML was converted. */
function bodyText(
  page: FetchedPage,
  { markdownTimeoutMs }: { markdownTimeoutMs: number },
): { text: string; htmlCut: boolean } {
  let kind = page.kind;
  if (kind === 'unknown') kind = page.body.subarray(0, SNIFF_BYTES).includes(0) ? 'binary' : 'text';
  const type = page.contentType === '' ? 'unknown type' : (page.contentType.split(';')[0] ?? '').trim();
  if (kind === 'binary') {
    const size = page.truncated ? `more than ${page.bytes} bytes` : `${page.bytes} bytes`;
    return { text: `Binary content (${type}, ${size}) was not fetched as text.`, htmlCut: false };
  }
  const text = decoderFor(page.contentType).decode(page.body);
  if (kind !== 'html') return { text, htmlCut: false };
  const htmlCut = text.length > WEB_FETCH_MAX_HTML_CHARS;
  try {
    return {
      text: htmlToMarkdown(htmlCut ? text.slice(0, WEB_FETCH_MAX_HTML_CHARS) : text, { timeoutMs: markdownTimeoutMs }),
      htmlCut,
    };
  } catch (error) {
    // A vm timeout's error comes from another realm: not `instanceof Error`, but it has a message.
    const message =
      typeof error === 'object' && error !== null && 'message' in error ? String(error.message) : String(error);
    throw new ToolUseError(
      `Could not convert the HTML of ${page.url} to Markdown: ${message}`,
      'html_conversion_failed',
    );
  }
}

/** Dependencies of WebFetch; tests hand in fakes. */
export interface WebFetchToolOptions {
  /** Resolves names for connections (every answer is checked before connecting). Default: the system resolver. */
  lookupHost?: LookupHost;
  /** Longest time HTML → Markdown may take. Default {@link WEB_FETCH_MARKDOWN_TIMEOUT_MS}. */
  markdownTimeoutMs?: number;
}

/** The host of a `WebFetch(domain:…)` rule, canonical, or undefined for other rules. */
function domainRuleHost(text: string): string | undefined {
  try {
    const rule = parseRule(text);
    if (rule.toolName !== 'WebFetch' || rule.content === undefined || !rule.content.startsWith('domain:'))
      return undefined;
    return canonicalHost(rule.content.slice('domain:'.length));
  } catch {
    return undefined;
  }
}

/**
 * Facts for the permission chain from the canonical URL: a deny rule in any spelling of its host denies; metadata and
 * link-local hosts are denied and loopback and private hosts strongly asked, unless an allow rule names the exact host.
 */
function hostFacts(url: string, context: ToolPrepareContext): PermissionFacts {
  const host = new URL(url).hostname;
  // The rule matcher compares the rule's text as written: `domain:EVIL.COM.` or `domain:2130706433` would miss.
  const denyRule = context.denyRules.find((text) => {
    const domain = domainRuleHost(text);
    return domain !== undefined && (host === domain || host.endsWith(`.${domain}`));
  });
  if (denyRule !== undefined)
    return { deny: { reason: `Permission to use WebFetch was denied by the rule ${denyRule}.` } };
  const hostClass = classifyHost(host);
  if (hostClass === 'public') return {};
  if (context.allowRules.some((text) => domainRuleHost(text) === host)) return {};
  const what = `${host} is ${describeHostClass(hostClass)}`;
  if (isDeniedHostClass(hostClass)) {
    return {
      deny: {
        reason: `WebFetch refused ${url}: ${what}. Only an allow rule naming this exact host, WebFetch(domain:${host}), permits it.`,
      },
    };
  }
  return {
    strongAsk: {
      reason: `${url}: ${what}, so WebFetch asks every time; only an allow rule naming this exact host, WebFetch(domain:${host}), lifts that.`,
    },
  };
}

/**
 * Builds WebFetch: it fetches a web page and returns its text for the agent's model to read. It calls no model: a
 * `prompt` is answered by the model that reads the result.
 *
 * Internal addresses: the URL is canonical before rules see it (`canonicalUrl`); metadata and link-local hosts are
 * denied and loopback and private hosts always ask (`hostFacts`), unless an allow rule names the exact host; each
 * redirect is checked with the same classes (`redirectRefusal`), and each address a name resolves to as the
 * connection is made (`guardedLookup`).
 */
export function createWebFetchTool(options: WebFetchToolOptions = {}): Tool {
  const lookupHost = options.lookupHost ?? systemLookupHost;
  const markdownTimeoutMs = options.markdownTimeoutMs ?? WEB_FETCH_MARKDOWN_TIMEOUT_MS;
  return defineTool({
    name: 'WebFetch',
    aliases: ['web_fetch', 'fetch'],
    description:
      'Fetches an http or https URL (following up to 5 redirects on the same host, reading at most 10 MB) and returns the page as text: ' +
      'HTML is converted to Markdown (headings, links, lists and tables kept; scripts and styles dropped), JSON, XML and other text is returned as it is; binaries are only described. ' +
      'No model runs here: when you give a prompt, read the returned text with it in mind.',
    inputSchema: webFetchInputSchema,
    // Fetching changes nothing, so calls may share a group. But the tool is NOT declared read-only: it reaches the
    // network (an exfiltration channel, internal addresses), so `default` mode asks before each fetch. Users allow
    // hosts with rules such as `WebFetch(domain:example.com)` (ruleKind `url`), or the whole tool with `WebFetch`.
    concurrentSafe: true,
    readOnly: false,
    sideEffectScope: 'none',
    idempotent: true,
    timeout: { defaultMs: TOOL_TIMEOUTS.WebFetch.defaultMs, maxMs: TOOL_TIMEOUTS.WebFetch.maxMs },
    resultBudget: RESULT_BUDGETS.WebFetch,
    ruleKind: 'url',
    ruleContent: (input) => input.url,
    summarize: (input) => input.url,
    validateInput(input) {
      let parsed: URL;
      try {
        parsed = new URL(input.url);
      } catch {
        return { ok: false, message: `Invalid URL: ${input.url}`, errorCode: 'invalid_url' };
      }
      if (!FETCHABLE_PROTOCOLS.has(parsed.protocol)) {
        return {
          ok: false,
          message: `Unsupported URL scheme "${parsed.protocol}" in ${input.url}: WebFetch fetches only http and https URLs`,
          errorCode: 'unsupported_scheme',
        };
      }
      if (parsed.username !== '' || parsed.password !== '') {
        return {
          ok: false,
          message: `URLs with credentials are not fetched: ${parsed.protocol}//…@${parsed.host}`,
          errorCode: 'invalid_url',
        };
      }
      try {
        canonicalUrlObject(parsed);
      } catch {
        return { ok: false, message: `Invalid URL: ${input.url} has no host`, errorCode: 'invalid_url' };
      }
      return { ok: true };
    },
    // The canonical form is what rules match, the approver sees and the handler fetches: a rule and the request must
    // see the same host (`http://a.example\@b.example` is host a.example; `EVIL.com.` is evil.com; `127.1` is 127.0.0.1).
    resolveInput: (input) => ({ ...input, url: canonicalUrl(input.url) }),
    permissionFacts: (input, context) => hostFacts(input.url, context),
    async execute(input, context): Promise<ToolOutputObject> {
      const page = await context.admit('network', () =>
        fetchPage({ startUrl: input.url, signal: context.signal, lookupHost }),
      );
      context.signal.throwIfAborted();
      const body = bodyText(page, { markdownTimeoutMs });
      const header = [`URL: ${page.url}`, `Status: ${page.status}`];
      if (page.contentType !== '') header.push(`Content-Type: ${page.contentType}`);
      if (page.truncated && page.kind !== 'binary') {
        header.push(
          `Truncated: the body is larger than ${WEB_FETCH_MAX_BODY_BYTES} bytes; only the first ${WEB_FETCH_MAX_BODY_BYTES} bytes were read.`,
        );
      }
      if (body.htmlCut) {
        header.push(
          `Truncated: the HTML is longer than ${WEB_FETCH_MAX_HTML_CHARS} characters; only the first ${WEB_FETCH_MAX_HTML_CHARS} were converted to Markdown.`,
        );
      }
      if (input.prompt !== undefined && input.prompt.trim() !== '') {
        // In the header, not after the text: the budget keeps the head of a long page.
        header.push(`Prompt: ${input.prompt.replace(/\s+/g, ' ').trim()}`);
        header.push(
          'Note: no model is configured to answer the prompt here; Switchyard returns the page text below for you to read and answer it.',
        );
      }
      const content = `${header.join('\n')}\n\n${body.text}`;
      // What a UI draws (v1.3): where it went, the answer's status and the body's size.
      const display = webFetchDisplay({
        url: page.url,
        status: page.status,
        bytes: page.bytes,
        ...(page.contentType === '' ? {} : { contentType: page.contentType }),
      });
      if (page.status < 200 || page.status > 299) return { content, isError: true, errorCode: 'http_status', display };
      return { content, display };
    },
  });
}

/** WebFetch with the system resolver. */
export const webFetchTool = createWebFetchTool();
