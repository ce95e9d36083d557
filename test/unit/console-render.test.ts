import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/contracts/events.js';
import { escapeHtml, html } from '../../src/console/html.js';
import { describeDecision, renderInput, sandboxBadge } from '../../src/console/render.js';
import { ConsoleSecurity, hostAllowed } from '../../src/console/security.js';
import { sha256Hex } from '../../src/console/console-users.js';
import { buildTurnTimeline } from '../../src/console/timeline.js';

const at = (ms: number): string => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();

describe('console rendering', () => {
  it('escapes every interpolated value, quotes included', () => {
    expect(escapeHtml(`<script>alert("x")</script>&'`)).toBe(
      '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;',
    );
    expect(html`<p title="${'" onmouseover="x'}">${'<b>'}</p>`.html).toBe(
      '<p title="&quot; onmouseover=&quot;x">&lt;b&gt;</p>',
    );
  });

  it('shows the Bash command itself, not only the model’s description', () => {
    const shown = renderInput({
      toolName: 'Bash',
      input: { command: 'rm -rf build && echo "<done>"', description: 'Clean up' },
    }).html;
    expect(shown).toContain('rm -rf build &amp;&amp; echo &quot;&lt;done&gt;&quot;');
    expect(shown).toContain('Clean up');
  });

  it('shows the directory a Bash command would run in', () => {
    const shown = renderInput({
      toolName: 'Bash',
      input: { command: 'rm -rf build' },
      cwd: '/home/ann/<project>',
    }).html;
    expect(shown).toContain('<p class="cwd muted">in <code>/home/ann/&lt;project&gt;</code></p>');
    expect(renderInput({ toolName: 'Bash', input: { command: 'ls' } }).html).not.toContain('class="cwd');
  });

  it('colours an Edit preview as a diff and shows a WebFetch host', () => {
    const diff = renderInput({
      toolName: 'Edit',
      input: { file_path: '/w/a.txt' },
      preview: '--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new',
    }).html;
    expect(diff).toContain('<span class="del">-old\n</span>');
    expect(diff).toContain('<span class="add">+new\n</span>');
    expect(renderInput({ toolName: 'WebFetch', input: { url: 'https://example.org:8443/x' } }).html).toContain(
      '<b class="host">example.org:8443</b>',
    );
  });

  it('says loudly when a call ran outside the OS sandbox', () => {
    expect(sandboxBadge({ sandboxed: false }).html).toBe(' · <span class="badge status-error">not sandboxed</span>');
    expect(sandboxBadge({ sandboxed: true }).html).toBe(' · <span class="muted">sandboxed</span>');
    expect(sandboxBadge({}).html).toBe('');
  });

  it('says why a decision was ignored', () => {
    const base = {
      seq: 0,
      at: at(0),
      requestId: 'r1',
      decision: 'allow' as const,
      by: 'ann',
      verified: false,
      policyVersion: 1,
    };
    expect(describeDecision({ ...base, outcome: 'accepted' })).toBe('Approve took effect (by ann).');
    expect(describeDecision({ ...base, verified: true, outcome: 'accepted' })).toBe(
      'Approve took effect (by ann, signature verified).',
    );
    expect(
      describeDecision({ ...base, outcome: 'ignored', ignoredBecause: 'expired', detail: 'the grant expired at x' }),
    ).toContain('had expired');
    expect(
      describeDecision({
        ...base,
        outcome: 'ignored',
        ignoredBecause: 'hook_answered_first',
        detail: 'a PermissionRequest hook answered first',
      }),
    ).toBe('Approve was ignored: a PermissionRequest hook answered first.');
    expect(
      describeDecision({ ...base, outcome: 'ignored', ignoredBecause: 'digest_mismatch', detail: 'expected a, got b' }),
    ).toContain('did not match');
  });
});

describe('console timeline', () => {
  it('puts each group in its own lane and shades the approval wait', () => {
    const events = [
      { seq: 0, at: at(0), turnId: 't1', type: 'TurnStarted', callIds: ['r1', 'r2', 'b1'], streaming: false },
      {
        seq: 1,
        at: at(1),
        turnId: 't1',
        type: 'ToolCallScheduled',
        callId: 'r1',
        toolName: 'Read',
        groupIndex: 0,
        groups: [['r1', 'r2'], ['b1']],
      },
      { seq: 2, at: at(1), turnId: 't1', type: 'ToolCallScheduled', callId: 'r2', toolName: 'Read', groupIndex: 0 },
      { seq: 3, at: at(1), turnId: 't1', type: 'ToolCallScheduled', callId: 'b1', toolName: 'Bash', groupIndex: 1 },
      {
        seq: 4,
        at: at(20),
        turnId: 't1',
        type: 'ToolCallResult',
        callId: 'r1',
        toolName: 'Read',
        status: 'success',
        totalMs: 19,
        permissionWaitMs: 0,
        originalBytes: 1,
        modelBytes: 1,
        truncated: false,
      },
      {
        seq: 5,
        at: at(21),
        turnId: 't1',
        type: 'ToolCallResult',
        callId: 'r2',
        toolName: 'Read',
        status: 'success',
        totalMs: 20,
        permissionWaitMs: 0,
        originalBytes: 1,
        modelBytes: 1,
        truncated: false,
      },
      {
        seq: 6,
        at: at(30),
        turnId: 't1',
        type: 'PermissionRequested',
        callId: 'b1',
        requestId: 'q1',
        toolName: 'Bash',
      },
      {
        seq: 7,
        at: at(900),
        turnId: 't1',
        type: 'PermissionResolved',
        callId: 'b1',
        requestId: 'q1',
        decision: 'allow',
        source: 'user',
      },
      {
        seq: 8,
        at: at(910),
        turnId: 't1',
        type: 'ToolCallStarted',
        callId: 'b1',
        toolName: 'Bash',
        readOnly: false,
        sideEffectScope: 'external',
      },
      {
        seq: 9,
        at: at(950),
        turnId: 't1',
        type: 'ToolCallError',
        callId: 'b1',
        toolName: 'Bash',
        status: 'error',
        message: 'exit 1',
      },
      { seq: 10, at: at(960), turnId: 't1', type: 'TurnCompleted', stopped: false, resultCount: 3 },
    ] as SessionEvent[];
    const timeline = buildTurnTimeline(events, 't1');
    expect(timeline?.lanes.map((lane) => lane.calls.map((call) => call.callId))).toEqual([['r1', 'r2'], ['b1']]);
    expect(timeline?.lanes[1]?.calls[0]).toMatchObject({
      status: 'error',
      approval: { from: Date.parse(at(30)), to: Date.parse(at(900)) },
      readOnly: false,
    });
    expect(timeline?.completedAt).toBe(Date.parse(at(960)));
    expect(buildTurnTimeline(events, 'other')).toBeUndefined();
  });
});

describe('console security', () => {
  const request = (headers: Record<string, string>): IncomingMessage => ({ headers }) as unknown as IncomingMessage;
  const security = new ConsoleSecurity({ token: 'secret-token-123', identity: 'ann', port: 9 });

  it('needs the token as a cookie (with a browser session) or a bearer header', () => {
    expect(security.authenticate(request({})).kind).toBe('none');
    expect(security.authenticate(request({ authorization: 'Bearer secret-token-123' })).kind).toBe('header');
    expect(security.authenticate(request({ authorization: 'Bearer secret-token-124' })).kind).toBe('none');
    const cookie = 'switchyard_console_9=secret-token-123; switchyard_console_9_session=abcdefghijklmnopqrstuvwx';
    expect(security.authenticate(request({ cookie }))).toEqual({
      kind: 'cookie',
      browserSession: 'abcdefghijklmnopqrstuvwx',
      user: 'ann',
    });
  });

  it('logs each person in with their own token, and trusts a proxy header only when configured', () => {
    const logins = [
      { user: 'alice', tokenSha256: sha256Hex('alice-token-0123456789') },
      { user: 'bob', tokenSha256: sha256Hex('bob-token-0123456789') },
    ];
    const perPerson = new ConsoleSecurity({ port: 9, logins });
    expect(perPerson.authenticate(request({ authorization: 'Bearer alice-token-0123456789' }))).toEqual({
      kind: 'header',
      user: 'alice',
    });
    expect(perPerson.authenticate(request({ authorization: 'Bearer bob-token-0123456789' }))).toEqual({
      kind: 'header',
      user: 'bob',
    });
    // No header is trusted unless configured.
    expect(perPerson.authenticate(request({ 'x-forwarded-user': 'alice' })).kind).toBe('none');
    const proxied = new ConsoleSecurity({ port: 9, logins, userHeader: 'X-Forwarded-User' });
    expect(proxied.authenticate(request({ 'x-forwarded-user': 'alice' }))).toEqual({ kind: 'proxy', user: 'alice' });
    expect(proxied.authenticate(request({ 'x-forwarded-user': 'mallory' })).kind).toBe('none');
    const proxyAuth = { kind: 'proxy' as const, user: 'alice' };
    const json = { 'content-type': 'application/json', host: '127.0.0.1:9' };
    expect(proxied.refuseStateChange(request(json), proxyAuth)).toMatch(/CSRF/);
    expect(
      proxied.refuseStateChange(request({ ...json, 'x-csrf-token': proxied.csrfTokenFor(proxyAuth) }), proxyAuth),
    ).toBeUndefined();
  });

  it('refuses cross-site and tokenless state changes', () => {
    const cookieAuth = { kind: 'cookie' as const, browserSession: 'abcdefghijklmnopqrstuvwx', user: 'ann' };
    const csrf = security.csrfToken(cookieAuth.browserSession);
    const json = { 'content-type': 'application/json', host: '127.0.0.1:9' };
    expect(
      security.refuseStateChange(
        request({ ...json, 'x-csrf-token': csrf, origin: 'http://127.0.0.1:9', 'sec-fetch-site': 'same-origin' }),
        cookieAuth,
      ),
    ).toBeUndefined();
    expect(
      security.refuseStateChange(request({ ...json, 'x-csrf-token': csrf, 'sec-fetch-site': 'same-site' }), cookieAuth),
    ).toMatch(/cross-site/);
    expect(
      security.refuseStateChange(request({ ...json, 'x-csrf-token': csrf, origin: 'http://127.0.0.1:10' }), cookieAuth),
    ).toMatch(/cross-origin/);
    expect(security.refuseStateChange(request({ ...json }), cookieAuth)).toMatch(/CSRF/);
    expect(
      security.refuseStateChange(
        request({ host: '127.0.0.1:9', 'content-type': 'text/plain', 'x-csrf-token': csrf }),
        cookieAuth,
      ),
    ).toMatch(/JSON/);
    expect(hostAllowed('evil.example:9', { boundToLoopback: true })).toBe(false);
    expect(hostAllowed('localhost:9', { boundToLoopback: true })).toBe(true);
  });
});
