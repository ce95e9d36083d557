import { describe, expect, it } from 'vitest';
import type { ApprovalDecisionRecord, ApprovalRequest } from '../../src/contracts/approval.js';
import { requestCard, sessionSections } from '../../src/console/render.js';
import { ruleReach } from '../../src/console/rule-reach.js';

/** What a person reads: the markup without its tags, entities decoded, spaces folded. */
const textOf = (markup: string): string =>
  markup
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');

const request: ApprovalRequest = {
  requestId: 'req-1',
  turnId: 't1',
  callId: 'c1',
  toolName: 'Bash',
  input: { command: 'npm test' },
  inputDigest: 'a'.repeat(64),
  rememberRule: 'Bash(npm test)',
  requestedAt: '2026-03-04T09:08:07.123Z',
  cwd: '/home/ann/shop',
};
const viewer = { name: 'ann', groups: [] };

describe('approval cards say who asks, where, when, and what each button does', () => {
  const card = (entry: Partial<Parameters<typeof requestCard>[0]> = {}): string =>
    requestCard({ sessionId: 's-1', request, label: 'Fix the login bug', agent: 'my-agent', ...entry }, Date.now(), {
      showSession: true,
      viewer,
    }).html;

  it("names the session's label and agent, the working folder and the request time", () => {
    const origin = /<p class="origin">([\s\S]*?)<\/p>/.exec(card())?.[1] ?? '';
    expect(textOf(origin)).toContain('Fix the login bug');
    expect(textOf(origin)).toContain('agent my-agent');
    expect(textOf(origin)).toContain('in /home/ann/shop');
    expect(textOf(origin)).toContain('asked 2026-03-04 09:08:07 UTC');
    expect(origin).toContain('datetime="2026-03-04T09:08:07.123Z"');
    // Said once: the Bash block does not repeat the folder.
    expect(card().match(/\/home\/ann\/shop/g)).toHaveLength(1);
  });

  it('says a session has no label, and escapes the label', () => {
    expect(textOf(card({ label: undefined }))).toContain('no label');
    expect(card({ label: '<b>x</b>' })).toContain('&lt;b&gt;x&lt;/b&gt;');
  });

  it('says Approve runs this call once, and what Always allow adds and how far it reaches', () => {
    const shown = card();
    expect(textOf(/<button class="approve"[^>]*>([\s\S]*?)<\/button>/.exec(shown)?.[1] ?? '')).toContain(
      'Approve — run this call once',
    );
    const rule = textOf(/<p class="rule">([\s\S]*?)<\/p>/.exec(shown)?.[1] ?? '');
    expect(rule).toContain('Bash(npm test)');
    expect(rule).toContain('every Bash npm test in this session');
    expect(textOf(card({ request: { ...request, rememberRule: undefined } }))).toContain(
      'nothing: this call can only be allowed once',
    );
  });
});

describe('how far a remembered rule reaches', () => {
  const reach = (rule: string): string => textOf(ruleReach(rule).html);
  it('reads each rule form as a person would', () => {
    expect(reach('Bash(npm test)')).toBe('every Bash npm test in this session');
    expect(reach('Bash(git commit:*)')).toBe('every Bash command starting with git commit in this session');
    expect(reach('Bash')).toBe('every Bash call in this session');
    expect(reach('Edit(/w/src/a.ts)')).toBe(
      'every Edit, Write, MultiEdit and NotebookEdit of /w/src/a.ts in this session',
    );
    expect(reach('Write(src/**)')).toBe('every Write of a path matching src/** in this session');
    expect(reach('WebFetch(domain:example.com)')).toBe(
      'every WebFetch of example.com and its subdomains in this session',
    );
    expect(reach('mcp__notes')).toBe('every tool of the MCP server notes in this session');
    expect(reach('mcp__notes__search')).toBe('every mcp__notes__search call in this session');
    expect(reach('Lookup(term)')).toBe('every Lookup call for term in this session');
  });
});

describe('the decision log shows what ran', () => {
  it('gives the tool, the readable input summary and the digest of each decision', () => {
    const record: ApprovalDecisionRecord = {
      seq: 0,
      at: '2026-03-04T09:08:10.000Z',
      requestId: 'req-1',
      inputDigest: 'b'.repeat(64),
      decision: 'allow',
      by: 'ann',
      verified: false,
      outcome: 'accepted',
      policyVersion: 1,
      callId: 'c1',
      toolName: 'Bash',
      inputSummary: 'npm test',
    };
    const sections = sessionSections(
      {
        sessionId: 's-1',
        status: 'RUNNING',
        pending: [],
        events: [],
        decisions: [record],
        turns: [],
        activeTurn: null,
        live: [],
      },
      { now: Date.now(), viewer },
    );
    const log = sections.decisions?.html ?? '';
    expect(log).toContain('<code class="input-summary">npm test</code>');
    expect(log).toContain('b'.repeat(64));
  });
});
