import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareCall } from '../../src/activities/prepare-call.js';
import type { ReadyCallPlan } from '../../src/contracts/call-plan.js';
import type { ToolOutputObject } from '../../src/tools/define-tool.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import {
  WEB_FETCH_MARKDOWN_TIMEOUT_MS,
  WEB_FETCH_MAX_BODY_BYTES,
  WEB_FETCH_MAX_HTML_CHARS,
  createWebFetchTool,
  webFetchTool,
} from '../../src/tools/builtin/web-fetch.js';
import { toolContext } from '../support/tool-context.js';

const registry = new ToolRegistry([webFetchTool]);
const cwd = '/nonexistent-cwd';

const HTML = `<!DOCTYPE html>
<html><head><title>Test &amp; Page</title>
<style>body { color: red; }</style>
<script>var x = "<p>not text</p>";</script>
</head>
<body>
<!-- a comment <p>hidden</p> -->
<h1>Hello,   world</h1>
<p>First&nbsp;paragraph with <b>bold</b> and <a href="/x" title="a>b">a link</a>.</p>
<div>Entities: &lt;tag&gt; &quot;q&quot; &#39;s&#39; &#169; &#x263A; &amp;lt;</div>
<ul><li>one</li><li>two</li></ul>
<p>line one<br>line two<br/>
   line three</p>
<noscript>Enable JavaScript</noscript>
<SCRIPT type="text/javascript">document.write('</p>x')</SCRIPT >
<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>
</body></html>`;

const HTML_TEXT = [
  'Test & Page',
  '# Hello, world',
  // &nbsp; decodes to U+00A0, as every HTML parser does.
  'First\u00a0paragraph with **bold** and [a link](/x "a>b").',
  `Entities: <tag> "q" 's' © ☺ &lt;`,
  '-   one\n-   two',
  'line one  \nline two  \nline three',
  '| a | b |\n| --- | --- |\n| c | d |',
].join('\n\n');

/** A page a model would read: headings, links, a list and a table, entities beyond the common few, and a script. */
const ARTICLE = `<!doctype html><html><head><meta charset="utf-8"><title>Caf&eacute; notes</title>
<script>window.track = "<h2>not a heading</h2>";</script></head>
<body><nav><a href="/">Home</a></nav>
<article>
<h1>Brewing &mdash; a guide</h1>
<p>Wait&hellip; then pour&nbsp;slowly. Ratio &frac12; to 1&sup2;, heat &rarr; 93&deg;C &ne; boiling. See <a href="https://example.com/more?a=1&amp;b=2">more &laquo;here&raquo;</a>.</p>
<h2>Steps</h2>
<ol><li>Grind</li><li>Bloom <em>30&nbsp;s</em></li></ol>
<table><thead><tr><th>Bean</th><th>Origin</th></tr></thead><tbody><tr><td>Arabica</td><td>Ethiopia &amp; Brazil</td></tr></tbody></table>
<style>.x { display: none }</style>
</article></body></html>`;

const ARTICLE_MARKDOWN = [
  'Café notes',
  '[Home](/)',
  '# Brewing — a guide',
  'Wait… then pour\u00a0slowly. Ratio ½ to 1², heat → 93°C ≠ boiling. See [more «here»](https://example.com/more?a=1&b=2).',
  '## Steps',
  '1.  Grind\n2.  Bloom _30\u00a0s_',
  '| Bean | Origin |\n| --- | --- |\n| Arabica | Ethiopia & Brazil |',
].join('\n\n');

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52]);

/** Writes `chunk` forever (respecting backpressure) until the client goes away. */
function writeForever(response: ServerResponse, chunk: Buffer, counter: { bytes: number }): void {
  const pump = (): void => {
    while (!response.destroyed && !response.writableEnded) {
      counter.bytes += chunk.length;
      if (!response.write(chunk)) {
        response.once('drain', pump);
        return;
      }
    }
  };
  pump();
}

describe('WebFetch', () => {
  let server: Server;
  let base: string;
  const endless = { bytes: 0 };
  const timers = new Set<NodeJS.Timeout>();

  beforeAll(async () => {
    server = createServer((request: IncomingMessage, response: ServerResponse) => {
      const url = new URL(request.url ?? '/', 'http://127.0.0.1');
      switch (url.pathname) {
        case '/page.html':
          response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(HTML);
          return;
        case '/article.html':
          response.writeHead(200, { 'content-type': 'text/html' }).end(ARTICLE);
          return;
        case '/long.html':
          response
            .writeHead(200, { 'content-type': 'text/html' })
            .end(`<h1>Long</h1><p>${'word '.repeat(WEB_FETCH_MAX_HTML_CHARS / 5)}</p><p>TAIL</p>`);
          return;
        case '/deep.html': {
          const depth = Number(url.searchParams.get('depth') ?? '0');
          response
            .writeHead(200, { 'content-type': 'text/html' })
            .end(`${'<div>'.repeat(depth)}deep${'</div>'.repeat(depth)}`);
          return;
        }
        case '/data.json':
          response.writeHead(200, { 'content-type': 'application/json' }).end('{"a": [1, 2],\n  "b": "<not html>"}');
          return;
        case '/latin1.txt':
          response
            .writeHead(200, { 'content-type': 'text/plain; charset=iso-8859-1' })
            .end(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
          return;
        case '/untyped':
          response.end('plain words, no content type');
          return;
        case '/redirect': {
          const hops = Number(url.searchParams.get('hops') ?? '1');
          const location = hops > 1 ? `/redirect?hops=${hops - 1}` : '/page.html';
          response.writeHead(hops % 2 === 0 ? 301 : 302, { location }).end();
          return;
        }
        case '/to-file':
          response.writeHead(302, { location: 'file:///etc/passwd' }).end();
          return;
        case '/gzip':
          response
            .writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' })
            .end(gzipSync('compressed words'));
          return;
        case '/brotli':
          response
            .writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'br' })
            .end(brotliCompressSync('brotli words'));
          return;
        case '/missing':
          response.writeHead(404, { 'content-type': 'text/plain' }).end('nothing here');
          return;
        case '/endless':
          response.writeHead(200, { 'content-type': 'text/plain' });
          writeForever(response, Buffer.alloc(64 * 1024, 'x'), endless);
          return;
        case '/image.png':
          response.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length }).end(PNG);
          return;
        case '/blob':
          // Chunked: no Content-Length, so the size is counted while the body is drained.
          response.writeHead(200, { 'content-type': 'application/octet-stream' });
          response.write(Buffer.alloc(1000, 1));
          response.end(Buffer.alloc(500, 2));
          return;
        case '/slow': {
          response.writeHead(200, { 'content-type': 'text/plain' });
          const timer = setInterval(() => response.write('.'), 20);
          timers.add(timer);
          response.on('close', () => {
            clearInterval(timer);
            timers.delete(timer);
          });
          return;
        }
        default:
          response.writeHead(500).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    for (const timer of timers) clearInterval(timer);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const prepare = (input: unknown, name = 'WebFetch') =>
    prepareCall({
      registry,
      call: { id: 'c', name, input },
      context: { sessionId: 's', cwd, allowRules: [], denyRules: [] },
    });
  const fetchUrl = async (url: string, prompt?: string): Promise<ToolOutputObject> =>
    (await webFetchTool.execute(
      prompt === undefined ? { url } : { url, prompt },
      toolContext({ cwd }),
    )) as ToolOutputObject;

  it('plans a concurrent call that is not read-only (default mode asks), with url rules and a 60 s deadline', async () => {
    const plan = await prepare({ url: 'HTTPS://Example.COM/a?b=1' });
    expect(plan).toMatchObject({
      kind: 'ready',
      toolName: 'WebFetch',
      input: { url: 'https://example.com/a?b=1' },
      flags: {
        concurrentSafe: true,
        readOnly: false,
        declaredReadOnly: false,
        destructive: false,
        sideEffectScope: 'none',
        idempotent: true,
      },
      ruleKind: 'url',
      ruleContent: 'https://example.com/a?b=1',
      rememberRule: 'WebFetch(domain:example.com)',
      summary: 'WebFetch: https://example.com/a?b=1',
      timeoutMs: 60_000,
    });
    expect(webFetchTool.resultBudget).toEqual({ maxModelBytes: 100_000, policy: 'artifact', keep: 'head' });
    for (const alias of ['web_fetch', 'fetch'])
      expect((await prepare({ url: 'http://example.com/' }, alias)).toolName).toBe('WebFetch');
  });

  it('gives rules the host that is actually fetched', async () => {
    // A URL parser reads `\` as `/`: the host is a.example, whatever a naive reading of `…@b.example` says.
    const plan = await prepare({ url: 'http://a.example\\@b.example/' });
    expect(plan).toMatchObject({
      kind: 'ready',
      ruleContent: 'http://a.example/@b.example/',
      rememberRule: 'WebFetch(domain:a.example)',
    });
  });

  it('refuses other schemes, invalid URLs and URLs with credentials in validateInput', async () => {
    const cases: Array<[string, RegExp]> = [
      ['ftp://127.0.0.1/file.txt', /Unsupported URL scheme "ftp:".*only http and https/],
      ['file:///etc/passwd', /Unsupported URL scheme "file:"/],
      ['not a url', /Invalid URL: not a url/],
      ['http://user:secret@127.0.0.1/', /URLs with credentials are not fetched/],
    ];
    for (const [url, message] of cases) {
      const plan = await prepare({ url });
      expect(plan.kind, url).toBe('rejected');
      expect(plan.kind === 'rejected' && plan.modelContent, url).toMatch(/^<tool_use_error>/);
      expect(plan.kind === 'rejected' && plan.modelContent, url).toMatch(message);
      expect(plan.kind === 'rejected' && plan.modelContent, url).not.toContain('secret');
    }
    expect(
      await webFetchTool.validateInput?.(
        { url: 'ftp://127.0.0.1/' },
        { sessionId: 's', cwd, allowRules: [], denyRules: [] },
      ),
    ).toMatchObject({ ok: false, errorCode: 'unsupported_scheme' });
  });

  it('extracts the text of an HTML page, behind a header', async () => {
    const output = await fetchUrl(`${base}/page.html`);
    expect(output.content).toBe(
      `URL: ${base}/page.html\nStatus: 200\nContent-Type: text/html; charset=utf-8\n\n${HTML_TEXT}`,
    );
    expect(output.isError).toBeUndefined();
  });

  it('converts HTML to Markdown: headings, links, lists and tables kept, every named entity decoded, scripts and styles dropped', async () => {
    const output = await fetchUrl(`${base}/article.html`);
    expect(output.content).toBe(
      `URL: ${base}/article.html\nStatus: 200\nContent-Type: text/html\n\n${ARTICLE_MARKDOWN}`,
    );
    expect(output.content).not.toContain('not a heading');
    expect(output.content).not.toContain('display');
  });

  it('converts only the first WEB_FETCH_MAX_HTML_CHARS characters of a longer page and says so', async () => {
    const output = await fetchUrl(`${base}/long.html`);
    const [header = '', body = ''] = output.content.split('\n\n');
    expect(header).toBe(
      `URL: ${base}/long.html\nStatus: 200\nContent-Type: text/html\n` +
        `Truncated: the HTML is longer than ${WEB_FETCH_MAX_HTML_CHARS} characters; only the first ${WEB_FETCH_MAX_HTML_CHARS} were converted to Markdown.`,
    );
    expect(body).toBe('# Long');
    expect(output.content).not.toContain('TAIL');
  }, 60_000);

  it('fails with a clear error when a deeply nested page overflows the stack or runs past the conversion timeout', async () => {
    const error = (message: string) => ({ name: 'ToolUseError', code: 'html_conversion_failed', message });
    await expect(fetchUrl(`${base}/deep.html?depth=5000`)).rejects.toMatchObject(
      error(`Could not convert the HTML of ${base}/deep.html?depth=5000 to Markdown: Maximum call stack size exceeded`),
    );
    // Parsing 50,000 nested elements takes minutes; the timeout stops it.
    const impatient = createWebFetchTool({ markdownTimeoutMs: 300 });
    await expect(
      impatient.execute({ url: `${base}/deep.html?depth=50000` }, toolContext({ cwd })),
    ).rejects.toMatchObject(
      error(
        `Could not convert the HTML of ${base}/deep.html?depth=50000 to Markdown: Script execution timed out after 300ms`,
      ),
    );
    expect(WEB_FETCH_MARKDOWN_TIMEOUT_MS).toBe(10_000);
  }, 60_000);

  it('returns JSON and other text as it is, decoded by its charset', async () => {
    expect((await fetchUrl(`${base}/data.json`)).content).toBe(
      `URL: ${base}/data.json\nStatus: 200\nContent-Type: application/json\n\n{"a": [1, 2],\n  "b": "<not html>"}`,
    );
    expect((await fetchUrl(`${base}/latin1.txt`)).content).toMatch(/\n\ncafé$/);
    expect((await fetchUrl(`${base}/untyped`)).content).toBe(
      `URL: ${base}/untyped\nStatus: 200\n\nplain words, no content type`,
    );
  });

  it('follows redirects, up to five, and reports the final URL', async () => {
    const output = await fetchUrl(`${base}/redirect?hops=5`);
    expect(output.content.startsWith(`URL: ${base}/page.html\nStatus: 200\n`)).toBe(true);
    expect(output.content.endsWith(HTML_TEXT)).toBe(true);
    await expect(fetchUrl(`${base}/redirect?hops=6`)).rejects.toMatchObject({
      name: 'ToolUseError',
      code: 'too_many_redirects',
    });
  });

  it('refuses a redirect to a scheme other than http(s)', async () => {
    const error: unknown = await fetchUrl(`${base}/to-file`).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'ToolUseError', code: 'redirect_refused' });
    expect((error as Error).message).toBe(
      `Refused the redirect from ${base}/to-file to file:///etc/passwd: WebFetch follows only http and https URLs`,
    );
  });

  it('decompresses gzip and brotli bodies', async () => {
    expect((await fetchUrl(`${base}/gzip`)).content).toMatch(/\n\ncompressed words$/);
    expect((await fetchUrl(`${base}/brotli`)).content).toMatch(/\n\nbrotli words$/);
  });

  it('returns a non-2xx page as an error result with errorCode http_status', async () => {
    expect(await fetchUrl(`${base}/missing`)).toEqual({
      content: `URL: ${base}/missing\nStatus: 404\nContent-Type: text/plain\n\nnothing here`,
      isError: true,
      errorCode: 'http_status',
      // v1.3: the display a UI draws the call from.
      display: {
        type: 'web_fetch',
        url: `${base}/missing`,
        host: new URL(base).host,
        status: 404,
        bytes: 12,
        contentType: 'text/plain',
      },
    });
  });

  it('stops reading an endless body at 10 MB and says so in the header', async () => {
    const before = endless.bytes;
    const output = await fetchUrl(`${base}/endless`);
    const [header, body] = [
      output.content.slice(0, output.content.indexOf('\n\n')),
      output.content.slice(output.content.indexOf('\n\n') + 2),
    ];
    expect(header).toBe(
      `URL: ${base}/endless\nStatus: 200\nContent-Type: text/plain\n` +
        `Truncated: the body is larger than ${WEB_FETCH_MAX_BODY_BYTES} bytes; only the first ${WEB_FETCH_MAX_BODY_BYTES} bytes were read.`,
    );
    expect(body.length).toBe(WEB_FETCH_MAX_BODY_BYTES);
    expect(/^x+$/.test(body)).toBe(true);
    // The server was not drained: it stopped soon after the cap (socket buffers account for the rest).
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(endless.bytes - before).toBeLessThan(WEB_FETCH_MAX_BODY_BYTES + 16 * 1024 * 1024);
  });

  it('describes binaries instead of returning them', async () => {
    expect((await fetchUrl(`${base}/image.png`)).content).toBe(
      `URL: ${base}/image.png\nStatus: 200\nContent-Type: image/png\n\nBinary content (image/png, ${PNG.length} bytes) was not fetched as text.`,
    );
    expect((await fetchUrl(`${base}/blob`)).content).toMatch(
      /\n\nBinary content \(application\/octet-stream, 1500 bytes\) was not fetched as text\.$/,
    );
  });

  it('answers a prompt with a note, not a model', async () => {
    const output = await fetchUrl(`${base}/data.json`, 'What is  b?');
    expect(output.content).toBe(
      `URL: ${base}/data.json\nStatus: 200\nContent-Type: application/json\nPrompt: What is b?\n` +
        'Note: no model is configured to answer the prompt here; Switchyard returns the page text below for you to read and answer it.\n\n' +
        '{"a": [1, 2],\n  "b": "<not html>"}',
    );
  });

  it('fails with a clear message when the host is unreachable', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error: unknown = await fetchUrl(`http://127.0.0.1:${port}/`).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(
      new RegExp(`^Failed to fetch http://127\\.0\\.0\\.1:${port}/: .*ECONNREFUSED`),
    );
  });

  it('stops promptly when the signal aborts mid-download', async () => {
    const controller = new AbortController();
    const pending = webFetchTool.execute({ url: `${base}/slow` }, toolContext({ cwd, signal: controller.signal }));
    const settled = pending.then(
      () => 'resolved',
      () => 'rejected',
    );
    await new Promise((resolve) => setTimeout(resolve, 150));
    const abortedAt = Date.now();
    controller.abort(new Error('turn interrupted'));
    expect(await settled).toBe('rejected');
    // /slow never ends, so without the abort the fetch would never settle; the bound is generous (a loaded CI
    // machine can stall a few hundred milliseconds) and still far below the tool's own deadline.
    expect(Date.now() - abortedAt).toBeLessThan(5_000);
    await expect(pending).rejects.toThrow();
  });

  it('fetches inside the network admission gate', async () => {
    const seen: string[] = [];
    let inside = false;
    const output = (await webFetchTool.execute(
      { url: `${base}/data.json` },
      toolContext({
        cwd,
        admit: async (gate, work) => {
          seen.push(gate);
          inside = true;
          try {
            return await work();
          } finally {
            inside = false;
          }
        },
      }),
    )) as ToolOutputObject;
    expect(seen).toEqual(['network']);
    expect(inside).toBe(false);
    expect(output.content).toContain('"b": "<not html>"');
  });

  it('does not fetch outside the gate: a gate that refuses stops the call', async () => {
    let requests = 0;
    const counting = (): void => {
      requests += 1;
    };
    server.on('request', counting);
    try {
      const refusing = toolContext({ cwd, admit: () => Promise.reject(new Error('gate closed')) });
      await expect(webFetchTool.execute({ url: `${base}/data.json` }, refusing)).rejects.toThrow('gate closed');
      expect(requests).toBe(0);
    } finally {
      server.off('request', counting);
    }
  });

  it('is built on the plan the pipeline resolved', async () => {
    const plan = (await prepare({ url: `${base}/page.html` })) as ReadyCallPlan;
    const output = (await webFetchTool.execute(plan.input, toolContext({ cwd }))) as ToolOutputObject;
    expect(output.content.endsWith(HTML_TEXT)).toBe(true);
  });
});
