import { describe, expect, it } from 'vitest';
import { prepareCall } from '../../src/activities/prepare-call.js';
import type { ReadyCallPlan } from '../../src/contracts/call-plan.js';
import { parseRule } from '../../src/contracts/permission-rules.js';
import type { PermissionMode } from '../../src/contracts/session.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { webFetchTool } from '../../src/tools/builtin/web-fetch.js';
import { decidePermission } from '../../src/contracts/decide-permission.js';
import { ready } from '../support/tool-plans.js';

const registry = new ToolRegistry([webFetchTool]);
const cwd = '/nonexistent-cwd';

const plan = async (url: string, rules: { allow?: string[]; deny?: string[] } = {}): Promise<ReadyCallPlan> =>
  ready(
    await prepareCall({
      registry,
      call: { id: 'c', name: 'WebFetch', input: { url } },
      context: { sessionId: 's', cwd, allowRules: rules.allow ?? [], denyRules: rules.deny ?? [] },
    }),
  );

/** What the session decides for one WebFetch call: the plan as the activity makes it, then the workflow's chain. */
async function decide(
  url: string,
  options: { mode?: PermissionMode; allow?: string[]; deny?: string[] } = {},
): Promise<'allow' | 'ask' | 'deny'> {
  const planned = await plan(url, options);
  return decidePermission({
    subject: {
      toolName: planned.toolName,
      contentKind: planned.ruleKind,
      cwd,
      ...(planned.ruleContent === undefined ? {} : { content: planned.ruleContent }),
    },
    mode: options.mode ?? 'default',
    rules: { allow: (options.allow ?? []).map(parseRule), ask: [], deny: (options.deny ?? []).map(parseRule) },
    remembered: [],
    readOnly: planned.flags.declaredReadOnly,
    editsInsideCwd: planned.editsInsideCwd,
    alwaysAsk: planned.alwaysAsk,
    ...(planned.permission === undefined ? {} : { facts: planned.permission }),
  }).behavior;
}

type Fact = 'none' | 'strongAsk' | 'deny';
const factOf = (planned: ReadyCallPlan): Fact =>
  planned.permission?.deny !== undefined ? 'deny' : planned.permission?.strongAsk !== undefined ? 'strongAsk' : 'none';

// [url the model sends, canonical URL that rules, the approver and the handler see, fact without rules, the exact allow rule's host]
const rows: Array<[string, string, Fact, string]> = [
  ['http://EVIL.com./x', 'http://evil.com/x', 'none', 'evil.com'],
  ['https://Example.COM/a?b=1', 'https://example.com/a?b=1', 'none', 'example.com'],
  ['http://127.1/', 'http://127.0.0.1/', 'strongAsk', '127.0.0.1'],
  ['http://2130706433/', 'http://127.0.0.1/', 'strongAsk', '127.0.0.1'],
  ['http://0x7f000001/', 'http://127.0.0.1/', 'strongAsk', '127.0.0.1'],
  ['http://0x7f.1:8080/p', 'http://127.0.0.1:8080/p', 'strongAsk', '127.0.0.1'],
  ['http://0177.0.0.1/', 'http://127.0.0.1/', 'strongAsk', '127.0.0.1'],
  ['http://[::1]/', 'http://[::1]/', 'strongAsk', '[::1]'],
  ['http://[::ffff:127.0.0.1]/', 'http://127.0.0.1/', 'strongAsk', '127.0.0.1'],
  ['http://localhost:3000/', 'http://localhost:3000/', 'strongAsk', 'localhost'],
  ['http://LOCALHOST./', 'http://localhost/', 'strongAsk', 'localhost'],
  ['http://app.localhost/', 'http://app.localhost/', 'strongAsk', 'app.localhost'],
  ['http://0.0.0.0/', 'http://0.0.0.0/', 'strongAsk', '0.0.0.0'],
  ['http://10.0.0.1/', 'http://10.0.0.1/', 'strongAsk', '10.0.0.1'],
  ['http://192.168.1.1/', 'http://192.168.1.1/', 'strongAsk', '192.168.1.1'],
  ['http://172.16.5.4/', 'http://172.16.5.4/', 'strongAsk', '172.16.5.4'],
  ['http://100.64.0.1/', 'http://100.64.0.1/', 'strongAsk', '100.64.0.1'],
  ['http://[fd12:3456::1]/', 'http://[fd12:3456::1]/', 'strongAsk', '[fd12:3456::1]'],
  ['http://[::ffff:10.0.0.1]/', 'http://10.0.0.1/', 'strongAsk', '10.0.0.1'],
  ['http://169.254.169.254/latest/meta-data', 'http://169.254.169.254/latest/meta-data', 'deny', '169.254.169.254'],
  ['http://[::ffff:169.254.169.254]/', 'http://169.254.169.254/', 'deny', '169.254.169.254'],
  ['http://2852039166/', 'http://169.254.169.254/', 'deny', '169.254.169.254'],
  ['http://169.254.1.1/', 'http://169.254.1.1/', 'deny', '169.254.1.1'],
  ['http://[fe80::1]/', 'http://[fe80::1]/', 'deny', '[fe80::1]'],
  [
    'http://metadata.google.internal./computeMetadata/v1/',
    'http://metadata.google.internal/computeMetadata/v1/',
    'deny',
    'metadata.google.internal',
  ],
  ['http://[fd00:ec2::254]/', 'http://[fd00:ec2::254]/', 'deny', '[fd00:ec2::254]'],
  ['http://100.100.100.200/', 'http://100.100.100.200/', 'deny', '100.100.100.200'],
];

describe('WebFetch host policy', () => {
  it.each(rows)(
    '%s → %s: %s without an allow rule, nothing with WebFetch(domain:%s)',
    async (url, canonical, fact, exactHost) => {
      const planned = await plan(url);
      expect(planned.input).toEqual({ url: canonical });
      expect(planned.ruleContent).toBe(canonical);
      expect(factOf(planned)).toBe(fact);
      // A whole-tool rule or a rule naming a parent domain does not lift a fact; only the exact host does.
      expect(factOf(await plan(url, { allow: ['WebFetch'] }))).toBe(fact);
      expect(factOf(await plan(url, { allow: [`WebFetch(domain:${exactHost})`] }))).toBe('none');
    },
  );

  it('explains a fact in words the approver and the model understand', async () => {
    expect((await plan('http://169.254.169.254/latest/meta-data')).permission?.deny?.reason).toMatch(
      /169\.254\.169\.254 is a cloud metadata address.*WebFetch\(domain:169\.254\.169\.254\)/,
    );
    expect((await plan('http://[fe80::1]/')).permission?.deny?.reason).toMatch(/\[fe80::1\] is a link-local address/);
    expect((await plan('http://127.1/')).permission?.strongAsk?.reason).toMatch(
      /127\.0\.0\.1 is a loopback address.*WebFetch\(domain:127\.0\.0\.1\)/,
    );
    expect((await plan('http://10.1.2.3/')).permission?.strongAsk?.reason).toMatch(
      /10\.1\.2\.3 is a private-network address/,
    );
  });

  it('lifts a fact only for a domain rule of WebFetch naming that exact host', async () => {
    const url = 'http://metadata.google.internal/';
    for (const allow of [
      'WebFetch',
      'WebFetch(domain:google.internal)',
      'WebFetch(domain:internal)',
      'Read(domain:metadata.google.internal)',
      'WebFetch(http://metadata.google.internal/)',
    ]) {
      expect(factOf(await plan(url, { allow: [allow] })), allow).toBe('deny');
    }
    expect(factOf(await plan(url, { allow: ['WebFetch(domain:METADATA.google.internal.)'] }))).toBe('none');
    expect(factOf(await plan('http://127.0.0.1/', { allow: ['WebFetch(domain:2130706433)'] }))).toBe('none');
    expect(factOf(await plan('http://[::1]/', { allow: ['WebFetch(domain:::1)'] }))).toBe('none');
  });

  it('denies a metadata address even with a whole-tool allow rule and in bypassPermissions mode', async () => {
    const url = 'http://169.254.169.254/latest/meta-data';
    expect(await decide(url)).toBe('deny');
    expect(await decide(url, { allow: ['WebFetch'] })).toBe('deny');
    expect(await decide(url, { mode: 'bypassPermissions' })).toBe('deny');
    expect(await decide('http://[::ffff:a9fe:a9fe]/', { mode: 'acceptEdits', allow: ['WebFetch'] })).toBe('deny');
    expect(await decide(url, { allow: ['WebFetch(domain:169.254.169.254)'] })).toBe('allow');
  });

  it('asks for loopback and private addresses even with a whole-tool allow rule; dontAsk denies them', async () => {
    expect(await decide('http://127.1:8080/', { allow: ['WebFetch'] })).toBe('ask');
    expect(await decide('http://2130706433/', { allow: ['WebFetch(domain:127.0.0.1)'] })).toBe('allow');
    expect(await decide('http://192.168.1.1/', { allow: ['WebFetch'], mode: 'dontAsk' })).toBe('deny');
    expect(await decide('http://192.168.1.1/', { mode: 'bypassPermissions' })).toBe('allow');
    expect(await decide('https://example.com/', { allow: ['WebFetch'] })).toBe('allow');
  });

  it('applies a domain deny rule to every spelling of its host', async () => {
    expect(await decide('http://EVIL.com./', { deny: ['WebFetch(domain:evil.com)'], allow: ['WebFetch'] })).toBe(
      'deny',
    );
    expect(await decide('http://a.evil.com./x', { deny: ['WebFetch(domain:evil.com)'], allow: ['WebFetch'] })).toBe(
      'deny',
    );
    // The rule's own spelling is canonicalised by the tool too: a trailing dot, upper case, an IP in another notation.
    expect(await decide('http://evil.com/', { deny: ['WebFetch(domain:EVIL.COM.)'], allow: ['WebFetch'] })).toBe(
      'deny',
    );
    expect(
      await decide('http://127.0.0.1/', {
        deny: ['WebFetch(domain:2130706433)'],
        allow: ['WebFetch(domain:127.0.0.1)'],
      }),
    ).toBe('deny');
    expect(await decide('http://notevil.com/', { deny: ['WebFetch(domain:evil.com)'], allow: ['WebFetch'] })).toBe(
      'allow',
    );
  });

  it('refuses a URL whose host is empty once trailing dots are stripped', async () => {
    const planned = await prepareCall({
      registry,
      call: { id: 'c', name: 'WebFetch', input: { url: 'http://./' } },
      context: { sessionId: 's', cwd, allowRules: [], denyRules: [] },
    });
    expect(planned.kind).toBe('rejected');
  });
});
