import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApproverKeyPair } from '../../src/approvals/approval-signature.js';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { ApprovalRequest } from '../../src/contracts/approval.js';
import { approvalDecisionsQuery } from '../../src/contracts/messages.js';
import { startConsole } from '../../src/console/console-server.js';
import type { RunningConsole } from '../../src/console/console-server.js';
import { loadConsoleUsers } from '../../src/console/console-users.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { launchTestBrowser } from '../support/test-browser.js';
import { waitFor } from '../support/wait-for.js';

const ALICE_TOKEN = 'alice-token-0123456789abcdef';
const BOB_TOKEN = 'bob-token-0123456789abcdef';

describe('the console with a login per person, for sessions with approvers, in a real browser', () => {
  let harness: Harness;
  let worker: Awaited<ReturnType<Harness['startWorker']>> | undefined;
  let cwd: string;
  let console_: RunningConsole;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const sessions: SessionHandle[] = [];

  beforeAll(async () => {
    cwd = await scratchDir();
    const secrets = await scratchDir('switchyard-console-users-');
    const alice = generateApproverKeyPair();
    const bob = generateApproverKeyPair();
    await writeFile(path.join(secrets, 'alice.key'), alice.privateKeyPem, { mode: 0o600 });
    await writeFile(path.join(secrets, 'bob.key'), bob.privateKeyPem, { mode: 0o600 });
    // Both are known approvers with keys; only alice is an approver of the sessions below.
    const approversFile = path.join(secrets, 'approvers.json');
    await writeFile(
      approversFile,
      JSON.stringify({ approvers: { alice: { publicKey: alice.publicKeyPem }, bob: { publicKey: bob.publicKeyPem } } }),
    );
    const usersFile = path.join(secrets, 'users.json');
    await writeFile(
      usersFile,
      JSON.stringify({
        users: {
          alice: { token: ALICE_TOKEN, signingKeyFile: 'alice.key' },
          bob: { token: BOB_TOKEN, signingKeyFile: 'bob.key' },
        },
      }),
    );
    harness = await createHarness({ tools: builtinTools(), defaultCwd: cwd, approversFile });
    worker = await harness.startWorker();
    console_ = await startConsole({
      client: harness.client.client,
      port: 0,
      identity: 'unused',
      users: await loadConsoleUsers(usersFile),
    });
    browser = await launchTestBrowser();
  });

  afterAll(async () => {
    await Promise.allSettled(sessions.map((session) => session.workflow.terminate('console test done')));
    for (const context of contexts) await context.close();
    await browser?.close();
    await console_?.close();
    worker?.worker.shutdown();
    await worker?.done;
    await harness?.close();
  });

  /** A browser of its own (its own cookies) logged in with one person's token. */
  const loginAs = async (token: string, pathname: string): Promise<Page> => {
    const context = await browser.newContext();
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${console_.url}?token=${token}`);
    await page.goto(new URL(pathname, console_.url).href);
    expect(page.url()).not.toContain('token=');
    return page;
  };
  /** A POST as the page's own script sends it (same origin, the page's CSRF token), with any body. */
  const post = (page: Page, body: Record<string, unknown>): Promise<{ status: number; message: string }> =>
    page.evaluate(async (payload) => {
      // Runs in the browser (the test's tsconfig has no DOM types).
      const page = globalThis as unknown as {
        document: { querySelector(selector: string): { getAttribute(name: string): string | null } | null };
      };
      const csrf = page.document.querySelector('meta[name="csrf-token"]')?.getAttribute('content') ?? '';
      const response = await fetch('/api/approval', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': csrf },
        body: JSON.stringify(payload),
      });
      return { status: response.status, message: ((await response.json()) as { message: string }).message };
    }, body);
  const waitingWrite = async (
    file: string,
  ): Promise<{ session: SessionHandle; turn: Promise<unknown>; request: ApprovalRequest }> => {
    const session = await harness.startSession({ cwd, approvers: ['alice'] });
    sessions.push(session);
    const turn = session.executeTurn({
      turnId: 't1',
      calls: [{ id: 'w1', name: 'Write', input: { file_path: file, content: 'by alice\n' } }],
    });
    turn.catch(() => undefined);
    const [request] = await waitFor(
      () => session.pendingApprovals(),
      (list) => list.length === 1,
      { what: 'the Write to wait' },
    );
    return { session, turn, request: request as ApprovalRequest };
  };

  it("shows each request's approvers, gives only the approver working buttons, and decides as the logged-in person", async () => {
    const { session, turn, request } = await waitingWrite('clicked.txt');
    const sessionPath = `/session/${encodeURIComponent(session.sessionId)}`;
    const card = (page: Page) => page.locator(`article.request[data-request="${request.requestId}"]`);

    const bobPage = await loginAs(BOB_TOKEN, sessionPath);
    await card(bobPage).waitFor({ timeout: 30_000 });
    expect(await bobPage.locator('header .who').textContent()).toContain('bob');
    expect(await card(bobPage).locator('.approvers').textContent()).toContain('alice');
    expect(await card(bobPage).locator('button[data-decision]').count()).toBe(0);
    expect(await card(bobPage).locator('.not-approver').textContent()).toContain("not one of this request's approvers");
    // Bob sends the POST himself, even in alice's name: refused, nothing reaches the session.
    const forged = await post(bobPage, {
      sessionId: session.sessionId,
      requestId: request.requestId,
      decision: 'allow',
      inputDigest: request.inputDigest,
      by: 'alice',
    });
    expect(forged.status).toBe(403);
    expect(await session.workflow.query(approvalDecisionsQuery)).toEqual([]);
    expect(await session.pendingApprovals()).toHaveLength(1);

    const alicePage = await loginAs(ALICE_TOKEN, sessionPath);
    await card(alicePage).waitFor({ timeout: 30_000 });
    expect(await alicePage.locator('header .who').textContent()).toContain('alice');
    await card(alicePage).locator('button[data-decision="allow"]').click();
    // The answer goes to the card and to the flash line; the card itself may already have left the live list (the
    // session's stream can push the decided request's removal before the console answers the click), so the flash
    // line is where the confirmation is sure to be.
    await expect
      .poll(() => alicePage.locator('#flash').textContent(), { timeout: 20_000 })
      .toMatch(/took effect \(by alice, signature verified\)/);
    await turn;
    expect(await session.workflow.query(approvalDecisionsQuery)).toMatchObject([
      { outcome: 'accepted', decision: 'allow', by: 'alice', verified: true },
    ]);
  });

  it('takes who decides from the login: a forged `by` in the POST body has no effect', async () => {
    const { session, turn, request } = await waitingWrite('forged.txt');
    const alicePage = await loginAs(ALICE_TOKEN, '/');
    const answer = await post(alicePage, {
      sessionId: session.sessionId,
      requestId: request.requestId,
      decision: 'allow',
      inputDigest: request.inputDigest,
      by: 'mallory',
    });
    expect(answer).toMatchObject({ status: 200, message: expect.stringContaining('by alice') });
    await turn;
    const decisions = await session.workflow.query(approvalDecisionsQuery);
    expect(decisions).toMatchObject([{ outcome: 'accepted', by: 'alice', verified: true }]);
    expect(JSON.stringify(decisions)).not.toContain('mallory');
  });
});
