import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { connectMcpTools } from '../../src/tools/mcp/mcp.js';
import { toolContext } from '../support/tool-context.js';
import {
  approvalSigningBytes,
  generateApproverKeyPair,
  signInDoubtResolution,
  verifyApprovalSignature,
} from '../../src/approvals/approval-signature.js';
import {
  IN_DOUBT_OUTPUT_MAX_CHARS,
  idempotencyKeyOf,
  inDoubtSigningPayload,
  ranInDoubtText,
} from '../../src/contracts/calls-in-doubt.js';
import { resolveInDoubtRequestSchema } from '../../src/contracts/schemas.js';
import { inDoubtBlock } from '../../src/console/render.js';
import { CallsInDoubtLedger, IN_DOUBT_INPUT_MAX_BYTES } from '../../src/workflows/doubt-ledger.js';
import { ranEntry, retryCall } from '../../src/workflows/doubt-resolution.js';

const call = {
  callId: 'b1',
  turnId: 't1',
  toolName: 'Bash',
  inputDigest: 'd'.repeat(64),
  idempotencyKey: 's:b1:1',
  startedAt: '2026-01-01T00:00:00.000Z',
};

describe('idempotency keys and the resolveInDoubt request', () => {
  it('keys an execution <sessionId>:<callId>:<attempt>', () => {
    expect(idempotencyKeyOf('session-1', 'toolu_1', 1)).toBe('session-1:toolu_1:1');
  });

  it('takes output only with ran, and bounds it', () => {
    const parse = (request: unknown) => resolveInDoubtRequestSchema.safeParse(request).success;
    expect(parse({ callId: 'b1', outcome: 'ran', output: 'ok', by: 'ann' })).toBe(true);
    expect(parse({ callId: 'b1', outcome: 'retry', by: 'ann' })).toBe(true);
    expect(parse({ callId: 'b1', outcome: 'retry', output: 'ok', by: 'ann' })).toBe(false);
    expect(parse({ callId: 'b1', outcome: 'maybe', by: 'ann' })).toBe(false);
    expect(parse({ callId: 'b1', outcome: 'ran', by: '' })).toBe(false);
    expect(parse({ callId: 'b1', outcome: 'ran', by: 'ann', extra: 1 })).toBe(false);
    expect(parse({ callId: 'b1', outcome: 'ran', by: 'ann', output: 'x'.repeat(IN_DOUBT_OUTPUT_MAX_CHARS + 1) })).toBe(
      false,
    );
  });

  it('signs the canonical bytes docs/APPROVALS.md shows', () => {
    const payload = inDoubtSigningPayload('session-42', {
      callId: 'toolu_01',
      outcome: 'retry',
      by: 'alice',
      expiresAt: '2030-01-01T00:00:00Z',
    });
    expect(approvalSigningBytes(payload).toString('utf8')).toBe(
      '{"by":"alice","callId":"toolu_01","expiresAt":"2030-01-01T00:00:00Z","outcome":"retry","sessionId":"session-42"}',
    );
  });

  it('signs { sessionId, callId, outcome, by, expiresAt }: verified as signed, refused for another outcome or session', () => {
    const keys = generateApproverKeyPair();
    const approvers = { approvers: { alice: { publicKey: keys.publicKeyPem } } };
    const request = { callId: 'b1', outcome: 'retry' as const, by: 'alice' };
    const signed = signInDoubtResolution({
      sessionId: 's',
      request,
      expiresAt: '2030-01-01T00:00:00.000Z',
      privateKeyPem: keys.privateKeyPem,
    });
    expect(signed.expiresAt).toBe('2030-01-01T00:00:00.000Z');
    const verdict = (payload: ReturnType<typeof inDoubtSigningPayload>) =>
      verifyApprovalSignature({ payload, signature: signed.signature ?? '', approvers, sessionApprovers: ['alice'] });
    expect(verdict(inDoubtSigningPayload('s', signed))).toEqual({ verified: true, approver: 'alice' });
    expect(verdict(inDoubtSigningPayload('s', { ...signed, outcome: 'ran' }))).toMatchObject({
      verified: false,
      reason: 'bad_signature',
      detail: "the signature is not alice's signature over this session, call, outcome and expiry",
    });
    expect(verdict(inDoubtSigningPayload('other', signed))).toMatchObject({ verified: false });
    expect(inDoubtSigningPayload('s', request)).toEqual({
      sessionId: 's',
      callId: 'b1',
      outcome: 'retry',
      by: 'alice',
    });
  });
});

describe('the ledger of calls in doubt', () => {
  it('lists a call until it is settled; ran and retry wait for the next turn, not-ran does not', () => {
    const ledger = new CallsInDoubtLedger();
    ledger.record(call, { command: 'echo hi\nsleep 30' });
    ledger.record({ ...call, callId: 'b2', idempotencyKey: 's:b2:1' }, { command: 'x' });
    ledger.record({ ...call, callId: 'b3', idempotencyKey: 's:b3:1' }, { command: 'y' });
    expect(ledger.list()).toEqual([
      { ...call, inputSummary: 'echo hi\\nsleep 30' },
      { ...call, callId: 'b2', idempotencyKey: 's:b2:1', inputSummary: 'x' },
      { ...call, callId: 'b3', idempotencyKey: 's:b3:1', inputSummary: 'y' },
    ]);
    ledger.settle(ledger.get('b1')!, 'retry', undefined);
    ledger.settle(ledger.get('b2')!, 'ran', 'done');
    ledger.settle(ledger.get('b3')!, 'not-ran', undefined);
    expect(ledger.list()).toEqual([]);
    expect(ledger.pendingReports).toBe(2);
    // A turn whose own calls use a settled call's id leaves that report for a later turn.
    expect(ledger.takeReports(new Set(['b1'])).map((report) => report.call.callId)).toEqual(['b2']);
    const [retry] = ledger.takeReports(new Set());
    const expected = { id: 'b1', name: 'Bash', input: { command: 'echo hi\nsleep 30' } };
    expect(retry === undefined ? undefined : retryCall(retry)).toEqual(expected);
    expect(ledger.pendingReports).toBe(0);
    expect(ledger.carry()).toBeUndefined();
  });

  it('is carried across continue-as-new, open calls and reports alike', () => {
    const ledger = new CallsInDoubtLedger();
    ledger.record(call, { command: 'a' });
    ledger.record({ ...call, callId: 'b2' }, { command: 'b' });
    ledger.settle(ledger.get('b2')!, 'ran', 'out');
    const next = new CallsInDoubtLedger(JSON.parse(JSON.stringify(ledger.carry())));
    expect(next.list().map((entry) => entry.callId)).toEqual(['b1']);
    expect(next.takeReports(new Set()).map((report) => [report.call.callId, report.outcome, report.output])).toEqual([
      ['b2', 'ran', 'out'],
    ]);
  });

  it('keeps no input over the bound (such a call cannot be retried)', () => {
    const ledger = new CallsInDoubtLedger();
    const held = ledger.record(call, { command: 'x'.repeat(IN_DOUBT_INPUT_MAX_BYTES) });
    expect('input' in held).toBe(false);
    expect(held.inputSummary.length).toBeLessThanOrEqual(200);
  });

  it('reports ran as a complete, successful result with the output given', () => {
    const ledger = new CallsInDoubtLedger();
    const held = ledger.record(call, { command: 'a' });
    const entry = ranEntry({ outcome: 'ran', call: held, output: 'it ran' }, 0, 0);
    expect(entry.state).toBe('completed');
    expect(entry.completion?.result).toMatchObject({ callId: 'b1', status: 'success', modelContent: 'it ran' });
    expect(ranInDoubtText('Bash', '')).toBe('(Bash completed with no output)');
  });
});

describe('the console section', () => {
  it('lists each call in doubt, escaped, with its key and the three ways to settle it; nothing when none', () => {
    const block = String(inDoubtBlock('s1', [{ ...call, inputSummary: 'echo <b>hi</b> && sleep 30' }]));
    expect(block).toContain('Calls in doubt');
    expect(block).toContain('echo &lt;b&gt;hi&lt;/b&gt; &amp;&amp; sleep 30');
    expect(block).toContain('s:b1:1');
    for (const outcome of ['ran --output', 'not-ran', 'retry'])
      expect(block).toContain(`switchyard doubt resolve b1 --session s1 --outcome ${outcome}`);
    expect(String(inDoubtBlock('s1', []))).toBe('');
  });
});

describe('the idempotency key reaches an MCP server', () => {
  it('in tools/call as _meta.idempotencyKey', { timeout: 60_000 }, async () => {
    const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
    const mcp = await connectMcpTools([
      {
        name: 'notes',
        transport: 'stdio',
        command: process.execPath,
        args: ['--import', 'tsx', 'test/support/mcp-test-server.ts'],
        cwd: repoRoot,
      },
    ]);
    try {
      const tool = mcp.tools.find((entry) => entry.name === 'mcp__notes__echo_meta');
      if (tool === undefined) throw new Error('no echo_meta tool');
      const output = await tool.execute({}, toolContext({ cwd: repoRoot, idempotencyKey: 'sess:call-7:1' }));
      const text = typeof output === 'string' ? output : output.content;
      expect(JSON.parse(text)).toMatchObject({ idempotencyKey: 'sess:call-7:1' });
    } finally {
      await mcp.close();
    }
  });
});
