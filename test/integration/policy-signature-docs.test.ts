import { execFile } from 'node:child_process';
import { access, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { policySigningPayload, verifyApprovalSignature } from '../../src/approvals/approval-signature.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { allEvents, eventsOfType, waitForPendingApprovals } from '../support/session-probes.js';

const run = promisify(execFile);

/** Go from PATH, else where the official tarball puts it (as approval-signature-go.test.ts finds it). */
async function goBinary(): Promise<string> {
  for (const directory of [...(process.env.PATH ?? '').split(path.delimiter), '/usr/local/go/bin']) {
    const candidate = path.join(directory, 'go');
    if (
      await access(candidate).then(
        () => true,
        () => false,
      )
    )
      return candidate;
  }
  throw new Error('no Go toolchain (go on PATH or /usr/local/go/bin/go)');
}

/** The first fenced block of `language` under the heading `heading` in docs/APPROVALS.md. */
function snippet(doc: string, heading: string, language: string): string {
  const start = doc.indexOf(`## ${heading}\n`);
  expect(start, `docs/APPROVALS.md has "## ${heading}"`).toBeGreaterThanOrEqual(0);
  const block = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``).exec(doc.slice(start))?.[1];
  expect(block, `a ${language} block under "## ${heading}"`).toBeDefined();
  return block ?? '';
}

const VECTOR_PRIVATE_KEY = `-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g
-----END PRIVATE KEY-----
`;
const VECTOR_PUBLIC_KEY = `-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=
-----END PUBLIC KEY-----
`;
const VECTOR_CHANGE = { rules: { allow: ['Write(src/**)'] }, permissionMode: 'acceptEdits' as const };

// docs/APPROVALS.md promises a policy change can be signed outside Switchyard: its Go program, run as printed, must
// print the vector's signature; its shell lines, run as printed against a real session, must apply the change.
describe('signing a setPolicy from Go and from the shell, as docs/APPROVALS.md shows', () => {
  let harness: Harness;
  let approversFile: string;
  let doc: string;
  beforeAll(async () => {
    doc = await readFile(path.resolve('docs/APPROVALS.md'), 'utf8');
    approversFile = path.join(await scratchDir('switchyard-approvers-'), 'approvers.json');
    await writeFile(approversFile, JSON.stringify({ approvers: { alice: { publicKey: VECTOR_PUBLIC_KEY } } }));
    harness = await createHarness({ tools: builtinTools(), approversFile });
  });
  afterAll(async () => harness.close());

  it('the documented Go program prints the signature of the policy test vector, and Switchyard verifies it', async () => {
    const program = snippet(doc, 'Signing a policy change from Go', 'go');
    const expected = /\/\/ ([A-Za-z0-9+/]{86}==)/.exec(program)?.[1];
    expect(expected, 'the program shows the signature it prints').toBeDefined();
    const directory = path.join(await scratchDir('switchyard-go-policy-'), 'sign');
    await mkdir(directory);
    await writeFile(path.join(directory, 'main.go'), program);
    const env = {
      ...process.env,
      GO111MODULE: 'off',
      GOCACHE: process.env.GOCACHE ?? path.join(directory, '.gocache'),
    };
    const { stdout } = await run(await goBinary(), ['run', 'main.go'], { cwd: directory, env, timeout: 120_000 });
    expect(stdout.trim()).toBe(expected);
    const payload = policySigningPayload({
      sessionId: 'session-42',
      change: VECTOR_CHANGE,
      by: 'alice',
      expiresAt: '2030-01-01T00:00:00Z',
    });
    const approvers = { approvers: { alice: { publicKey: VECTOR_PUBLIC_KEY } } };
    expect(
      verifyApprovalSignature({ payload, signature: stdout.trim(), approvers, sessionApprovers: ['alice'] }),
    ).toEqual({ verified: true, approver: 'alice' });
  }, 180_000);

  it('the documented shell lines (openssl, temporal CLI) sign a setPolicy that releases a waiting Write', async () => {
    const cwd = await scratchDir();
    await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, approvers: ['alice'] });
      const turn = session.executeTurn({
        turnId: 't1',
        calls: [{ id: 'w1', name: 'Write', input: { file_path: 'src/signed.txt', content: 'from the shell\n' } }],
      });
      await waitForPendingApprovals(session);
      const directory = await scratchDir('switchyard-shell-policy-');
      await writeFile(path.join(directory, 'alice.key'), VECTOR_PRIVATE_KEY, { mode: 0o600 });
      await mkdir(path.join(directory, 'bin'));
      await symlink(inject('temporalBinaryPath'), path.join(directory, 'bin', 'temporal'));
      const script = snippet(doc, 'Signing a policy change from the shell', 'sh').replace(
        'SESSION=session-42',
        `SESSION=${session.sessionId}`,
      );
      await run('bash', ['-euo', 'pipefail', '-c', script], {
        cwd: directory,
        env: {
          ...process.env,
          PATH: `${path.join(directory, 'bin')}${path.delimiter}${process.env.PATH ?? ''}`,
          TEMPORAL_ADDRESS: inject('temporalAddress'),
          TEMPORAL_NAMESPACE: inject('temporalNamespace'),
        },
        timeout: 60_000,
      });
      expect((await turn).results[0]).toMatchObject({ status: 'success' });
      expect(await readFile(path.join(cwd, 'src', 'signed.txt'), 'utf8')).toBe('from the shell\n');
      expect(eventsOfType(await allEvents(session), 'PolicyChanged')).toMatchObject([
        { policyVersion: 2, by: 'alice', verified: true, released: ['w1'] },
      ]);
    });
  });
});
