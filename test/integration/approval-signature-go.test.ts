import { execFile } from 'node:child_process';
import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { verifyApprovalSignature } from '../../src/approvals/approval-signature.js';
import { scratchDir } from '../support/scratch.js';

const run = promisify(execFile);

/** Go from PATH, else where the official tarball puts it (as the Temporal binary lookup does). */
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
  throw new Error(
    'no Go toolchain (go on PATH or /usr/local/go/bin/go): this project needs Go to build the Temporal CLI too',
  );
}

// docs/APPROVALS.md promises that another language can sign: its "Signing from Go" program, run as printed, must
// print the test vector's signature, and that signature must verify here.
describe('signing an approval from Go, as docs/APPROVALS.md shows', () => {
  it('the documented Go program prints the signature of the fixed test vector, and Switchyard verifies it', async () => {
    const doc = await readFile(path.resolve('docs/APPROVALS.md'), 'utf8');
    const program = /## Signing from Go[\s\S]*?```go\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(program, 'docs/APPROVALS.md has a Go program under "Signing from Go"').toBeDefined();
    const expected = /\/\/ ([A-Za-z0-9+/]{86}==)/.exec(program ?? '')?.[1];
    expect(expected, 'the program shows the signature it prints').toBeDefined();
    const directory = path.join(await scratchDir('switchyard-go-sign-'), 'sign');
    await mkdir(directory);
    await writeFile(path.join(directory, 'main.go'), program ?? '');
    const env = {
      ...process.env,
      GO111MODULE: 'off',
      GOCACHE: process.env.GOCACHE ?? path.join(directory, '.gocache'),
    };
    const { stdout } = await run(await goBinary(), ['run', 'main.go'], { cwd: directory, env, timeout: 120_000 });
    expect(stdout.trim()).toBe(expected);
    const payload = {
      sessionId: 'session-42',
      requestId: '6f1c2a9e-3b7d-4c1a-9e52-0d8f4b7a1c3e',
      inputDigest: '5b2d3f0e8a4c6b1d9e7f2a3c4b5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f',
      decision: 'allow' as const,
      by: 'alice',
      expiresAt: '2030-01-01T00:00:00Z',
    };
    const publicKey = /```\n(-----BEGIN PUBLIC KEY-----[\s\S]*?-----END PUBLIC KEY-----\n)```/.exec(doc)?.[1];
    expect(publicKey, 'docs/APPROVALS.md prints the vector public key').toBeDefined();
    const approvers = { approvers: { alice: { publicKey: publicKey ?? '' } } };
    expect(
      verifyApprovalSignature({ payload, signature: stdout.trim(), approvers, sessionApprovers: ['alice'] }),
    ).toEqual({ verified: true, approver: 'alice' });
  }, 180_000);
});
