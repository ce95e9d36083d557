import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileArtifactStore } from '../../src/artifacts/file-artifact-store.js';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { ApprovalDecisionRecord } from '../../src/contracts/approval.js';
import { approvalDecisionsQuery, sessionStateQuery } from '../../src/contracts/messages.js';
import { startConsole } from '../../src/console/console-server.js';
import type { RunningConsole } from '../../src/console/console-server.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { launchTestBrowser } from '../support/test-browser.js';

// Screenshots for the README are written only when asked: SWITCHYARD_CONSOLE_SCREENSHOTS=docs npx vitest run ...
const screenshotDir = process.env.SWITCHYARD_CONSOLE_SCREENSHOTS;

describe('approval console in a real browser', () => {
  let harness: Harness;
  let worker: Awaited<ReturnType<Harness['startWorker']>> | undefined;
  let cwd: string;
  let console_: RunningConsole;
  let browser: Browser;
  let context: BrowserContext;
  const sessions: SessionHandle[] = [];

  beforeAll(async () => {
    cwd = await scratchDir();
    harness = await createHarness({ defaultCwd: cwd });
    worker = await harness.startWorker();
    console_ = await startConsole({
      client: harness.client.client,
      port: 0,
      token: 'test-token-0123456789abcdef',
      identity: 'test-operator',
      temporalUiUrl: 'http://127.0.0.1:8233',
      artifacts: new FileArtifactStore(harness.dataDir),
      // No timed refresh of session pages: what a session page shows live here arrives because its stream saw a change.
      streamRefreshMs: 600_000,
    });
    browser = await launchTestBrowser();
    context = await browser.newContext({ viewport: { width: 1180, height: 900 } });
  });

  afterAll(async () => {
    await Promise.allSettled(sessions.map((session) => session.workflow.terminate('console test done')));
    await context?.close();
    await browser?.close();
    await console_?.close();
    worker?.worker.shutdown();
    await worker?.done;
    await harness?.close();
  });

  const startSession = async (options: Parameters<Harness['startSession']>[0] = {}): Promise<SessionHandle> => {
    const session = await harness.startSession({ cwd, ...options });
    sessions.push(session);
    return session;
  };

  /** A page logged in with the token (the console turns `?token=` into a cookie and drops it from the URL). */
  const openConsole = async (pathname = '/'): Promise<Page> => {
    const page = await context.newPage();
    await page.goto(`${console_.loginUrl}`);
    if (pathname !== '/') await page.goto(new URL(pathname, console_.url).href);
    expect(page.url()).not.toContain('token=');
    return page;
  };
  /** A turn left running while the test goes on: a failing test must not leave an unhandled rejection behind. */
  const running = <T>(promise: Promise<T>): Promise<T> => {
    promise.catch(() => undefined);
    return promise;
  };
  const cardOf = (page: Page, session: SessionHandle) =>
    page.locator(`article.request[data-session="${session.sessionId}"]`);
  const decisionsOf = (session: SessionHandle) => session.workflow.query(approvalDecisionsQuery);

  it('lists a waiting Bash call with its command, and approving it by clicking completes the turn', async () => {
    const session = await startSession({ label: 'Write the click demo file' });
    const clickCommand = {
      command: "printf 'approved by click\\n' > clicked.txt && cat clicked.txt",
      description: 'Write a file',
    };
    const turn = running(
      session.executeTurn({
        turnId: 't1',
        calls: [{ id: 'b1', name: 'Bash', input: clickCommand }],
      }),
    );
    // Two more waiting sessions, so the list shows a diff and a fetch too.
    const editSession = await startSession({ label: 'Polish the notes' });
    await writeFile(path.join(cwd, 'notes.txt'), 'alpha\nbeta\ngamma\n');
    const notesEdit = { file_path: 'notes.txt', old_string: 'beta', new_string: 'BETA (edited)' };
    const editTurn = running(
      editSession.executeTurn({
        turnId: 't1',
        calls: [{ id: 'e1', name: 'Edit', input: notesEdit }],
      }),
    );
    const fetchSession = await startSession({ label: 'Read the guide' });
    const guideFetch = { url: 'https://docs.example.com/guide?q=1', prompt: 'Summarise the guide' };
    const fetchTurn = running(
      fetchSession.executeTurn({
        turnId: 't1',
        calls: [{ id: 'w1', name: 'WebFetch', input: guideFetch }],
      }),
    );

    const page = await openConsole();
    const card = cardOf(page, session);
    await card.waitFor({ timeout: 30_000 });
    await expect
      .poll(() => card.locator('pre.command').textContent())
      .toContain("printf 'approved by click\\n' > clicked.txt && cat clicked.txt");
    expect(await card.locator('.why').textContent()).toMatch(/Why it asks/);
    expect(await card.locator('.rule').textContent()).toContain('Always allow');
    expect(await card.locator('.ago').textContent()).toMatch(/\d+ s/);
    // Who asks, where, since when: the session's label and agent (its task queue), the working folder, the time.
    const [request] = await session.pendingApprovals();
    const origin = (await card.locator('.origin').textContent())?.replace(/\s+/g, ' ') ?? '';
    expect(origin).toContain('Write the click demo file');
    expect(origin).toContain(`agent ${harness.taskQueue}`);
    expect(origin).toContain(`in ${cwd}`);
    expect(origin).toContain(`asked ${request?.requestedAt.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}`);
    // What each button does: Approve runs this one call; Always allow adds the card's rule, for this session.
    expect(await card.locator('button[data-decision="allow"]').textContent()).toContain('Approve — run this call once');
    const rule = (await card.locator('.rule').textContent())?.replace(/\s+/g, ' ') ?? '';
    expect(rule).toContain(request?.rememberRule ?? 'no rule');
    expect(rule).toMatch(/every Bash .+ in this session/);
    // The same, as the JSON the page reads live.
    const fragment = await fetch(new URL('/fragment/home', console_.url), {
      headers: { accept: 'application/json', authorization: 'Bearer test-token-0123456789abcdef' },
    });
    const pendingMarkup = ((await fragment.json()) as Record<string, string>).pending ?? '';
    expect(pendingMarkup).toContain('Write the click demo file');
    expect(pendingMarkup).toContain(`datetime="${request?.requestedAt}"`);
    expect(pendingMarkup).toContain('run this call once');
    const editCard = cardOf(page, editSession);
    await editCard.waitFor({ timeout: 30_000 });
    expect((await editCard.locator('pre.diff .add').allTextContents()).map((line) => line.trim())).toContain(
      '+BETA (edited)',
    );
    expect((await editCard.locator('pre.diff .del').allTextContents()).map((line) => line.trim())).toContain('-beta');
    const fetchCard = cardOf(page, fetchSession);
    await fetchCard.waitFor({ timeout: 30_000 });
    expect(await fetchCard.locator('.host').textContent()).toBe('docs.example.com');
    expect(await fetchCard.locator('.rule').textContent()).toContain(
      'every WebFetch of docs.example.com and its subdomains in this session',
    );
    if (screenshotDir !== undefined) {
      await mkdir(screenshotDir, { recursive: true });
      await page.screenshot({ path: path.join(screenshotDir, 'console-pending.png'), fullPage: true });
    }

    await card.locator('button[data-decision="allow"]').click();
    // The answer goes to the card and to the flash line; the card may already have left the live list by then.
    await expect
      .poll(() => page.locator('#flash').textContent(), { timeout: 20_000 })
      .toMatch(/took effect \(by test-operator\)/);
    const result = await turn;
    expect(result.results[0]).toMatchObject({ status: 'success', modelContent: 'approved by click\n' });
    // The card leaves the live list without a reload; the flash line keeps the confirmation.
    await card.waitFor({ state: 'detached', timeout: 20_000 });
    expect(await page.locator('#flash').textContent()).toContain('Approve took effect (by test-operator)');
    expect(await decisionsOf(session)).toMatchObject([
      { outcome: 'accepted', decision: 'allow', by: 'test-operator', callId: 'b1', toolName: 'Bash' },
    ]);

    // Keyboard: A on the focused card is "Always allow", remembered as the card's rule.
    await editCard.focus();
    await page.keyboard.press('Shift+A');
    expect((await editTurn).results[0]).toMatchObject({ status: 'success' });
    const rules = await editSession.workflow.query(sessionStateQuery);
    expect(rules.rememberedRules.length).toBe(1);
    await fetchSession.interrupt('test over');
    await fetchTurn;
    await page.close();
  });

  it('denies with a reason that reaches the result, and says why a second answer is ignored', async () => {
    const session = await startSession();
    const turn = running(
      session.executeTurn({
        turnId: 't1',
        calls: [{ id: 'b1', name: 'Bash', input: { command: 'touch should-not-exist.txt' } }],
      }),
    );
    const page = await openConsole();
    const card = cardOf(page, session);
    await card.waitFor({ timeout: 30_000 });
    const digest = await card.getAttribute('data-digest');
    const requestId = await card.getAttribute('data-request');
    await card.locator('input.reason').fill('use the staging box, not this one');
    await card.locator('button[data-decision="deny"]').click();
    const result = await turn;
    expect(result.results[0]?.status).toBe('denied');
    expect(result.results[0]?.modelContent).toContain('use the staging box, not this one');

    // The same decision again, through the console's API with the page's CSRF token: ignored, and the reason is said.
    const csrf = await page.locator('meta[name="csrf-token"]').getAttribute('content');
    const again = await page.evaluate(
      async ({ body, token }) => {
        const response = await fetch('/api/approval', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-csrf-token': token },
          body: JSON.stringify(body),
        });
        return { status: response.status, json: (await response.json()) as { outcome: string; message: string } };
      },
      { body: { sessionId: session.sessionId, requestId, inputDigest: digest, decision: 'allow' }, token: csrf ?? '' },
    );
    expect(again.status).toBe(200);
    expect(again.json.outcome).toBe('ignored');
    expect(again.json.message).toMatch(/already decided/);
    const log: ApprovalDecisionRecord[] = await decisionsOf(session);
    expect(log.map((record) => [record.outcome, record.decision, record.by])).toEqual([
      ['accepted', 'deny', 'test-operator'],
      ['ignored', 'allow', 'test-operator'],
    ]);

    // The session page lists the decision log.
    await page.goto(new URL(`/session/${encodeURIComponent(session.sessionId)}`, console_.url).href);
    await expect.poll(() => page.locator('table.decisions tbody tr').count()).toBe(2);
    expect(await page.locator('table.decisions').textContent()).toContain('use the staging box, not this one');
    // The audit view: the tool and what it would have run, next to the digest the decision carried.
    const accepted = page.locator('table.decisions tbody tr.accepted');
    expect(await accepted.locator('.input-summary').textContent()).toBe('touch should-not-exist.txt');
    expect(await accepted.textContent()).toContain(digest ?? 'no digest');
    await page.close();
  });

  it('refuses a request without the token (401) and a cross-site POST (403); Interrupt ends the turn', async () => {
    const bare = await fetch(console_.url);
    expect(bare.status).toBe(401);
    expect(await bare.text()).toContain('needs its token');
    expect((await fetch(`${console_.url}?token=wrong`)).status).toBe(401);
    expect(
      (await fetch(new URL('/fragment/home', console_.url), { headers: { accept: 'application/json' } })).status,
    ).toBe(401);
    const unauthenticatedPost = await fetch(new URL('/api/interrupt', console_.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"sessionId":"x"}',
    });
    expect(unauthenticatedPost.status).toBe(401);
    // A script with the token is let in; the same POST from another origin is not.
    const scripted = await fetch(new URL('/api/interrupt', console_.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer test-token-0123456789abcdef' },
      body: '{"sessionId":"no-such-session-xyz"}',
    });
    expect(scripted.status).not.toBe(401);
    expect(scripted.status).not.toBe(403);
    const crossOrigin = await fetch(new URL('/api/interrupt', console_.url), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer test-token-0123456789abcdef',
        origin: 'http://evil.example',
      },
      body: '{"sessionId":"x"}',
    });
    expect(crossOrigin.status).toBe(403);

    // In the browser: the console's cookie is set, then a page on another origin posts a form to the console.
    const session = await startSession();
    const turn = running(
      session.executeTurn({
        turnId: 't1',
        calls: [{ id: 'b1', name: 'Bash', input: { command: 'touch cross-site.txt' } }],
      }),
    );
    const consolePage = await openConsole();
    const card = cardOf(consolePage, session);
    await card.waitFor({ timeout: 30_000 });
    const body = JSON.stringify({
      sessionId: session.sessionId,
      requestId: await card.getAttribute('data-request'),
      inputDigest: await card.getAttribute('data-digest'),
      decision: 'allow',
    });
    const evil: Server = createServer((_, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      const action = new URL('/api/approval', console_.url).href;
      response.end(
        `<form id="f" method="POST" action="${action}" enctype="text/plain"><input name='${body.slice(0, -2)}' value='${body.slice(-2)}'></form><script>document.getElementById('f').submit()</script>`,
      );
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    try {
      const evilPage = await context.newPage();
      const refused = evilPage.waitForResponse((response) => response.url().endsWith('/api/approval'));
      await evilPage.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
      expect((await refused).status()).toBe(403);
      await evilPage.close();
    } finally {
      evil.close();
    }
    expect(await decisionsOf(session)).toEqual([]);
    expect(await session.pendingApprovals()).toHaveLength(1);
    // The session page's Interrupt button ends the waiting turn.
    await consolePage.goto(new URL(`/session/${encodeURIComponent(session.sessionId)}`, console_.url).href);
    await consolePage.locator('button.interrupt:not([disabled])').click();
    expect((await turn).results[0]?.status).toBe('cancelled');
    await expect
      .poll(() => consolePage.locator('#flash').textContent())
      .toContain(`Interrupt sent to turn t1 of ${session.sessionId}`);
    await consolePage.close();
  });

  it('says a decision was ignored because a PermissionRequest hook answered first', async () => {
    // A second worker, with a hook, on its own task queue: the console watches the whole namespace.
    const hooked = await createHarness({
      defaultCwd: cwd,
      hooks: { permissionRequest: [{ matcher: 'Bash', run: async () => ({ behavior: 'allow' as const }) }] },
    });
    const hookedWorker = await hooked.startWorker();
    try {
      const session = await hooked.startSession({ cwd });
      sessions.push(session);
      const result = await session.executeTurn({
        turnId: 't1',
        calls: [{ id: 'b1', name: 'Bash', input: { command: 'touch hooked.txt' } }],
      });
      expect(result.results[0]?.status).toBe('success');
      const requested = (await session.events()).events.find((event) => event.type === 'PermissionRequested');
      const requestId = requested?.type === 'PermissionRequested' ? requested.requestId : '';
      const response = await fetch(new URL('/api/approval', console_.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer test-token-0123456789abcdef' },
        body: JSON.stringify({
          sessionId: session.sessionId,
          requestId,
          inputDigest: 'f'.repeat(64),
          decision: 'deny',
        }),
      });
      expect(await response.json()).toMatchObject({
        outcome: 'ignored',
        message: 'Deny was ignored: a PermissionRequest hook answered first.',
      });
      // The hook's own decision is logged as the hook's (`hook:<name>`), never a person's.
      expect(await decisionsOf(session)).toMatchObject([
        { requestId, outcome: 'accepted', decision: 'allow', by: 'hook:PermissionRequest hook #1', verified: false },
        { requestId, outcome: 'ignored', ignoredBecause: 'hook_answered_first', by: 'test-operator', callId: 'b1' },
      ]);
    } finally {
      hookedWorker.worker.shutdown();
      await hookedWorker.done;
      await hooked.close();
    }
  });

  it('tails a running call from its heartbeat, live, and its Interrupt button stops it', async () => {
    // A short heartbeat timeout, so the worker sends heartbeats (and their output tail) often.
    const session = await startSession({ permissionMode: 'bypassPermissions', heartbeatTimeoutMs: 2_000 });
    const turn = running(
      session.executeTurn({
        turnId: 't1',
        calls: [
          { id: 'b1', name: 'Bash', input: { command: 'for i in $(seq 1 120); do echo tick-$i; sleep 0.25; done' } },
        ],
      }),
    );
    const page = await openConsole(`/session/${encodeURIComponent(session.sessionId)}`);
    const tail = page.locator('#live .live-call');
    await expect.poll(() => tail.textContent().catch(() => ''), { timeout: 30_000 }).toMatch(/call b1[\s\S]*tick-\d+/);
    const first = Number(/tick-(\d+)\s*$/.exec((await tail.locator('pre.tail').textContent()) ?? '')?.[1]);
    // It moves without a reload.
    await expect
      .poll(
        async () =>
          Number(
            /tick-(\d+)\s*$/.exec(
              (await tail
                .locator('pre.tail')
                .textContent()
                .catch(() => '')) ?? '',
            )?.[1],
          ),
        { timeout: 30_000 },
      )
      .toBeGreaterThan(first);
    await page.locator('button.interrupt:not([disabled])').click();
    expect((await turn).results[0]?.status).toBe('cancelled');
    await page.close();
  });

  it('shows a tool output holding <script> as text', async () => {
    const session = await startSession({ permissionMode: 'bypassPermissions' });
    const payload = '<script>window.__pwned = 1</script><b id="injected">bold</b>';
    await session.executeTurn({
      turnId: 't1',
      calls: [{ id: 'b1', name: 'Bash', input: { command: `printf '%s\\n' '${payload}'` } }],
    });
    const page = await openConsole(`/session/${encodeURIComponent(session.sessionId)}`);
    const output = page.locator('.result[data-call="b1"] pre.output');
    await output.waitFor({ timeout: 30_000 });
    expect(await output.textContent()).toContain(payload);
    expect(await page.locator('#injected').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    // The live update re-renders the section; still text.
    await page.waitForTimeout(2_000);
    expect(await page.locator('#injected').count()).toBe(0);
    expect(await page.locator('.result[data-call="b1"] pre.output').textContent()).toContain(payload);
    await page.close();
  });

  it('draws a turn with a read group and an exclusive call as two lanes, the approval wait shaded', async () => {
    await writeFile(path.join(cwd, 'a.txt'), 'first file\n');
    await writeFile(path.join(cwd, 'b.txt'), 'second file\n');
    const session = await startSession({ label: 'Join the two notes' });
    const turn = running(
      session.executeTurn({
        turnId: 't1',
        calls: [
          { id: 'r1', name: 'Read', input: { file_path: 'a.txt' } },
          { id: 'r2', name: 'Read', input: { file_path: 'b.txt' } },
          { id: 'b1', name: 'Bash', input: { command: 'cat a.txt b.txt > both.txt && wc -l both.txt' } },
        ],
      }),
    );
    const page = await openConsole(`/session/${encodeURIComponent(session.sessionId)}`);
    const card = page.locator('article.request');
    await card.waitFor({ timeout: 30_000 });
    // The session page's card names who asks too.
    expect(await card.locator('.origin').textContent()).toContain(`Join the two notes · agent ${harness.taskQueue}`);
    await page.waitForTimeout(1_500);
    await card.locator('button[data-decision="allow"]').click();
    const result = await turn;
    expect(result.results.map((entry) => entry.status)).toEqual(['success', 'success', 'success']);
    await expect.poll(() => page.locator('.timeline').textContent(), { timeout: 20_000 }).toMatch(/ms · 2 group\(s\)/);
    const lanes = page.locator('.timeline .lane');
    expect(await lanes.count()).toBe(2);
    expect(await lanes.nth(0).locator('.bar').count()).toBe(2);
    expect(await lanes.nth(0).textContent()).toContain('2 in parallel');
    expect(await lanes.nth(1).locator('.bar').count()).toBe(1);
    expect(await lanes.nth(1).textContent()).toContain('exclusive');
    expect(await lanes.nth(1).locator('.bar.status-success .wait').count()).toBe(1);
    expect(await page.locator('h1 .session-label').textContent()).toBe('Join the two notes');
    expect(await page.locator('a.webui').getAttribute('href')).toMatch(
      new RegExp(`^http://127\\.0\\.0\\.1:8233/namespaces/[^/]+/workflows/${session.sessionId}/[0-9a-f-]+/history$`),
    );
    await expect.poll(() => page.locator('.result').count()).toBe(3);
    if (screenshotDir !== undefined)
      await page.screenshot({ path: path.join(screenshotDir, 'console-timeline.png'), fullPage: true });
    await page.close();
  });
});
