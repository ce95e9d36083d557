import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Worker } from '@temporalio/worker';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { FileArtifactStore } from '../../src/artifacts/file-artifact-store.js';
import { SwitchyardClient } from '../../src/client/switchyard-client.js';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import type { ApprovalRequest } from '../../src/contracts/approval.js';
import { startDevServer } from '../../src/server/dev-server.js';
import type { DevServer } from '../../src/server/dev-server.js';
import { createSwitchyardWorker } from '../../src/worker/create-worker.js';
import { createHarness, scratchDir, uniqueName } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { freePort } from '../support/free-port.js';
import { launchTestBrowser } from '../support/test-browser.js';
import { waitFor } from '../support/wait-for.js';

// docs/CONCEPTS.md's screenshot is written only when asked: SWITCHYARD_WEB_UI_SCREENSHOTS=docs npx vitest run test/integration/web-ui.test.ts
const screenshotDir = process.env.SWITCHYARD_WEB_UI_SCREENSHOTS;

/** The Web UI renders each markdown field (summary, details, current details) in an iframe of its own. */
async function markdownFrameTexts(page: Page): Promise<string[]> {
  const texts: string[] = [];
  for (const frame of page.frames()) {
    if (!frame.url().includes('/render?')) continue;
    texts.push(
      await frame
        .locator('body')
        .innerText()
        .catch(() => ''),
    );
  }
  return texts;
}

async function openUserMetadata(page: Page, uiUrl: string, sessionId: string): Promise<void> {
  await page.goto(`${uiUrl}/namespaces/default/workflows/${encodeURIComponent(sessionId)}`);
  await page.getByRole('tab', { name: /User Metadata/ }).click();
}

/**
 * The dev server's own Temporal Web UI (UI 2.42.1 with CLI 1.5.1), on a private dev server: the shared test server
 * runs without the UI. An operator finds a waiting session there, reads what it waits for, and approves it with
 * "Send a Signal" alone.
 */
describe('sessions in the Temporal Web UI', () => {
  let runtimeHarness: Harness;
  let server: DevServer;
  let uiUrl: string;
  let client: SwitchyardClient;
  let connection: Connection;
  let nativeConnection: NativeConnection;
  let worker: Worker;
  let workerDone: Promise<void>;
  let browser: Browser;
  let cwd: string;
  const sessions: SessionHandle[] = [];

  beforeAll(async () => {
    // The harness installs the Temporal Runtime, which must exist before a worker connects.
    runtimeHarness = await createHarness();
    cwd = await scratchDir();
    const binary = inject('temporalBinaryPath');
    server = await startDevServer({
      port: await freePort(),
      ui: true,
      uiPort: await freePort(),
      env: binary === '' ? process.env : { ...process.env, TEMPORAL_CLI_PATH: binary },
    });
    uiUrl = server.uiUrl ?? '';
    connection = await Connection.connect({ address: server.address });
    const dataDir = await scratchDir('switchyard-data-');
    const taskQueue = uniqueName('tq');
    client = new SwitchyardClient({
      client: new Client({ connection, namespace: server.namespace }),
      taskQueue,
      artifacts: new FileArtifactStore(dataDir),
    });
    nativeConnection = await NativeConnection.connect({ address: server.address });
    worker = await createSwitchyardWorker({
      connection: nativeConnection,
      namespace: server.namespace,
      taskQueue,
      defaultCwd: cwd,
      dataDir,
      userSettingsDir: await scratchDir('switchyard-user-'),
      workflowBundle: { codePath: inject('workflowBundlePath') },
    });
    workerDone = worker.run();
    browser = await launchTestBrowser();
  });

  afterAll(async () => {
    await Promise.allSettled(sessions.map((session) => session.workflow.terminate('web UI test done')));
    await browser?.close();
    worker?.shutdown();
    await workerDone;
    await nativeConnection?.close();
    await connection?.close();
    await server?.stop();
    await runtimeHarness?.close();
  });

  it("shows a waiting Bash call's command and the signal JSON to paste, and approves it through Send a Signal", async () => {
    const session = await client.startSession(uniqueName('waiting'), { cwd, label: 'Clean the build output' });
    sessions.push(session);
    const command = 'mkdir -p build-output && rm -rf build-output && echo removed';
    const turn = session.executeTurn({
      turnId: 't1',
      calls: [{ id: 'b1', name: 'Bash', input: { command, description: 'List the files' } }],
    });
    // Awaited at the end; if an assertion fails first, afterAll's terminate must not surface as an unhandled rejection.
    turn.catch(() => undefined);
    const [request] = (await waitFor(
      () => session.pendingApprovals(),
      (list) => list.length === 1,
      { what: 'the pending approval' },
    )) as [ApprovalRequest];

    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    try {
      await openUserMetadata(page, uiUrl, session.sessionId);
      // Each field renders in an iframe of its own, loaded independently: wait for both the summary and the details.
      // The session's label leads the summary, as the Web UI's list shows it.
      const summary = `Clean the build output · Switchyard session ${session.sessionId} · cwd ${cwd} · mode default`;
      const texts = await waitFor(
        () => markdownFrameTexts(page),
        (found) =>
          found.some((text) => text.includes('Waiting for 1 approval(s)')) &&
          found.some((text) => text.includes('Switchyard session ')),
        { what: 'the summary and the current details in the Web UI' },
      );
      // The static summary instead of "No summary available".
      expect(texts).toContain(summary);
      const current = texts.find((text) => text.includes('Waiting for 1 approval(s)')) ?? '';
      expect(current).toContain(`1. Bash ${command} — waiting since ${request.requestedAt}`);
      expect(current).not.toContain('List the files');

      // The ready-to-paste block is exactly the signal that approves this request.
      const detailsFrame = page
        .frames()
        .find((frame) => frame.url().includes('/render?') && frame.url().includes('Waiting'));
      const json = (await detailsFrame?.locator('code.language-json').first().innerText()) ?? '';
      expect(JSON.parse(json)).toEqual({
        requestId: request.requestId,
        decision: 'allow',
        inputDigest: request.inputDigest,
      });
      if (screenshotDir !== undefined) {
        await mkdir(screenshotDir, { recursive: true });
        await page.screenshot({ path: path.join(screenshotDir, 'web-ui-session.png') });
      }

      // docs/CONCEPTS.md's fallback, as an operator does it: More Actions → Send a Signal → approval → paste → Submit.
      await page.getByRole('button', { name: 'More Actions' }).click();
      await page.getByRole('menuitem', { name: 'Send a Signal' }).click();
      const dialog = page.locator('dialog[open]');
      await dialog.getByTestId('signal-select-button').click();
      await dialog.getByRole('option', { name: 'approval' }).click();
      await dialog.locator('.cm-content').fill(json);
      await dialog.getByRole('button', { name: 'Submit' }).click();
      const result = await turn;
      expect(result.results[0]).toMatchObject({ status: 'success' });
      expect(result.results[0]?.modelContent).toContain('removed');
    } finally {
      await page.close();
    }
  });

  it("labels a running Bash call's activity with its command, not the model's description", async () => {
    const session = await client.startSession(uniqueName('running'), { cwd, permissionMode: 'bypassPermissions' });
    sessions.push(session);
    const turn = session.executeTurn({
      turnId: 't1',
      calls: [{ id: 'b1', name: 'Bash', input: { command: 'sleep 30', description: 'Wait a little' } }],
    });
    await waitFor(
      async () => (await session.events()).events,
      (events) => events.some((event) => event.type === 'ToolCallStarted'),
      { what: 'the Bash call to start' },
    );

    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    try {
      await openUserMetadata(page, uiUrl, session.sessionId);
      // "Events with Metadata": the activity's summary, while it runs.
      await page.getByText('Bash: sleep 30', { exact: true }).first().waitFor({ timeout: 30_000 });
      expect(await page.getByText('Wait a little').count()).toBe(0);
    } finally {
      await page.close();
    }
    // Still running when the page showed it (30 s); the interrupt ends it.
    await session.interrupt('test done');
    expect((await turn).results[0]?.status).not.toBe('success');
  });
});
