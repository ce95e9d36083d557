import { describe, expect, it } from 'vitest';
import type { PermissionMode } from '../../src/contracts/session.js';
import { decidePermission } from '../../src/contracts/decide-permission.js';
import type { HookPermissionDecision, PermissionInput } from '../../src/contracts/decide-permission.js';
import { parseRule } from '../../src/contracts/permission-rules.js';

const cwd = '/p';
type Row = {
  name: string;
  tool?: 'Bash' | 'Read' | 'Edit';
  mode?: PermissionMode;
  allow?: string[];
  ask?: string[];
  deny?: string[];
  remembered?: string[];
  hook?: HookPermissionDecision;
  alwaysAsk?: boolean;
  narrow?: boolean;
  expected: 'allow' | 'deny' | 'ask';
  source?: string;
};

function input(row: Row): PermissionInput {
  const tool = row.tool ?? 'Bash';
  const content = tool === 'Bash' ? 'rm -rf build' : tool === 'Read' ? '/p/src/a.ts' : '/p/src/b.ts';
  return {
    subject: { toolName: tool, content, contentKind: tool === 'Bash' ? 'command' : 'path', cwd },
    mode: row.mode ?? 'default',
    rules: {
      allow: (row.allow ?? []).map(parseRule),
      ask: (row.ask ?? []).map(parseRule),
      deny: (row.deny ?? []).map(parseRule),
    },
    remembered: (row.remembered ?? []).map(parseRule),
    readOnly: tool === 'Read',
    editsInsideCwd: tool === 'Edit',
    alwaysAsk: row.alwaysAsk === true,
    ...(row.hook === undefined ? {} : { hook: { decision: row.hook } }),
    ...(row.narrow ? { toolNarrowedToAllow: true } : {}),
  };
}

// Rules × modes × hook decisions × remembered approvals × alwaysAsk; deny wins in every row that has one.
const rows: Row[] = [
  { name: 'default mode asks for a side-effecting tool', expected: 'ask', source: 'mode' },
  { name: 'default mode allows a read-only tool', tool: 'Read', expected: 'allow', source: 'mode' },
  { name: 'an allow rule allows', allow: ['Bash(rm:*)'], expected: 'allow', source: 'rule' },
  { name: 'an ask rule beats an allow rule', allow: ['Bash'], ask: ['Bash(rm:*)'], expected: 'ask', source: 'rule' },
  { name: 'a deny rule beats an allow rule', allow: ['Bash'], deny: ['Bash(rm:*)'], expected: 'deny', source: 'rule' },
  { name: 'a deny rule beats an ask rule', ask: ['Bash'], deny: ['Bash'], expected: 'deny', source: 'rule' },
  { name: 'a deny rule denies even a read-only tool', tool: 'Read', deny: ['Read(src/**)'], expected: 'deny' },
  { name: 'a deny rule beats bypassPermissions', mode: 'bypassPermissions', deny: ['Bash'], expected: 'deny' },
  { name: 'a deny rule beats a hook allow', deny: ['Bash'], hook: 'allow', expected: 'deny', source: 'rule' },
  { name: 'a deny rule beats a remembered allow', deny: ['Bash'], remembered: ['Bash(rm:*)'], expected: 'deny' },
  { name: 'a deny rule beats acceptEdits', tool: 'Edit', mode: 'acceptEdits', deny: ['Edit'], expected: 'deny' },
  { name: 'a hook deny denies', hook: 'deny', allow: ['Bash'], expected: 'deny', source: 'hook' },
  { name: 'a hook deny beats bypassPermissions', hook: 'deny', mode: 'bypassPermissions', expected: 'deny' },
  { name: 'a hook allow skips a default ask', hook: 'allow', expected: 'allow', source: 'hook' },
  {
    name: 'a hook allow does not skip an explicit ask rule',
    hook: 'allow',
    ask: ['Bash'],
    expected: 'ask',
    source: 'rule',
  },
  { name: 'a hook allow does not skip alwaysAsk', hook: 'allow', alwaysAsk: true, expected: 'ask', source: 'tool' },
  { name: 'a hook ask turns an allow rule into an ask', hook: 'ask', allow: ['Bash'], expected: 'ask', source: 'hook' },
  {
    name: 'a hook ask turns a read-only allow into an ask',
    hook: 'ask',
    tool: 'Read',
    expected: 'ask',
    source: 'hook',
  },
  { name: 'a remembered allow allows', remembered: ['Bash(rm:*)'], expected: 'allow', source: 'remembered' },
  {
    name: 'a remembered allow does not beat an ask rule',
    remembered: ['Bash'],
    ask: ['Bash(rm:*)'],
    expected: 'ask',
    source: 'rule',
  },
  {
    name: 'a remembered allow does not beat alwaysAsk',
    remembered: ['Bash'],
    alwaysAsk: true,
    expected: 'ask',
    source: 'tool',
  },
  { name: 'alwaysAsk asks even with an allow rule', alwaysAsk: true, allow: ['Bash'], expected: 'ask', source: 'tool' },
  {
    name: 'acceptEdits allows an edit inside cwd',
    tool: 'Edit',
    mode: 'acceptEdits',
    expected: 'allow',
    source: 'mode',
  },
  { name: 'acceptEdits still asks for Bash', mode: 'acceptEdits', expected: 'ask' },
  {
    name: 'acceptEdits respects an explicit ask rule',
    tool: 'Edit',
    mode: 'acceptEdits',
    ask: ['Edit'],
    expected: 'ask',
    source: 'rule',
  },
  { name: 'plan mode denies a side-effecting tool', mode: 'plan', expected: 'deny', source: 'mode' },
  { name: 'plan mode denies even with an allow rule', mode: 'plan', allow: ['Bash'], expected: 'deny', source: 'mode' },
  { name: 'plan mode allows a read-only tool', mode: 'plan', tool: 'Read', expected: 'allow' },
  {
    name: 'bypassPermissions allows what would ask',
    mode: 'bypassPermissions',
    ask: ['Bash'],
    alwaysAsk: true,
    expected: 'allow',
    source: 'mode',
  },
  { name: 'dontAsk denies what would ask', mode: 'dontAsk', expected: 'deny', source: 'mode' },
  {
    name: 'dontAsk denies an explicit ask rule',
    mode: 'dontAsk',
    ask: ['Bash'],
    allow: ['Bash'],
    expected: 'deny',
    source: 'mode',
  },
  { name: 'dontAsk still allows an allow rule', mode: 'dontAsk', allow: ['Bash'], expected: 'allow', source: 'rule' },
  { name: 'dontAsk still allows read-only tools', mode: 'dontAsk', tool: 'Read', expected: 'allow' },
  { name: 'dontAsk denies a hook ask', mode: 'dontAsk', hook: 'ask', allow: ['Bash'], expected: 'deny' },
  { name: 'prepareApproval narrows a default ask to allow', narrow: true, expected: 'allow', source: 'tool' },
  {
    name: 'prepareApproval does not lift an explicit ask rule',
    narrow: true,
    ask: ['Bash'],
    expected: 'ask',
    source: 'rule',
  },
  { name: 'prepareApproval does not lift alwaysAsk', narrow: true, alwaysAsk: true, expected: 'ask', source: 'tool' },
];

describe('decidePermission', () => {
  it.each(rows)('$name', (row) => {
    const decision = decidePermission(input(row));
    expect(decision.behavior).toBe(row.expected);
    if (row.source !== undefined) expect(decision.source).toBe(row.source);
    if (row.deny !== undefined || row.hook === 'deny') expect(decision.behavior).toBe('deny');
  });

  it('gives the hook reason, or the default text, for a hook deny', () => {
    expect(decidePermission({ ...input({ name: '', expected: 'deny' }), hook: { decision: 'deny' } }).reason).toBe(
      'Blocked by PreToolUse hook',
    );
    expect(
      decidePermission({ ...input({ name: '', expected: 'deny' }), hook: { decision: 'deny', reason: 'no rm' } })
        .reason,
    ).toBe('no rm');
  });
});

describe('decidePermission for a shell command judged part by part (facts.commands)', () => {
  const part = (content: string, readOnly = false, runner = false) => ({
    content,
    readOnly,
    ...(runner ? { runner: true as const } : {}),
  });
  const bash = (
    command: string,
    facts: PermissionInput['facts'],
    rules: { allow?: string[]; ask?: string[]; deny?: string[]; remembered?: string[] } = {},
    mode: PermissionMode = 'default',
  ): PermissionInput => ({
    subject: { toolName: 'Bash', content: command, contentKind: 'command', cwd },
    mode,
    rules: {
      allow: (rules.allow ?? []).map(parseRule),
      ask: (rules.ask ?? []).map(parseRule),
      deny: (rules.deny ?? []).map(parseRule),
    },
    remembered: (rules.remembered ?? []).map(parseRule),
    readOnly: false,
    editsInsideCwd: false,
    alwaysAsk: false,
    ...(facts === undefined ? {} : { facts }),
  });
  const plain = (...parts: ReturnType<typeof part>[]) => ({
    commands: { parsed: true as const, parts, otherSpellings: [] },
  });

  it('allows only when every part is allowed or read-only', () => {
    const facts = plain(part('npm test'), part('ls', true));
    expect(decidePermission(bash('npm test && ls', facts, { allow: ['Bash(npm test:*)'] }))).toMatchObject({
      behavior: 'allow',
      source: 'rule',
    });
    const withCurl = plain(part('npm test'), part('curl x'));
    expect(decidePermission(bash('npm test && curl x', withCurl, { allow: ['Bash(npm test:*)'] }))).toMatchObject({
      behavior: 'ask',
      reason: expect.stringContaining('`curl x`'),
    });
    expect(
      decidePermission(
        bash('npm test && curl x', withCurl, { allow: ['Bash(npm test:*)'], remembered: ['Bash(curl:*)'] }),
      ),
    ).toMatchObject({ behavior: 'allow', source: 'remembered' });
  });

  it('denies when any part or other spelling matches a deny rule, even in bypassPermissions', () => {
    const facts = {
      commands: {
        parsed: false as const,
        reason: '`$(...)` command substitution',
        parts: [part('echo $(rm -rf x)')],
        otherSpellings: ['rm -rf x'],
      },
    };
    expect(
      decidePermission(bash('echo $(rm -rf x)', facts, { deny: ['Bash(rm:*)'] }, 'bypassPermissions')),
    ).toMatchObject({ behavior: 'deny', reason: expect.stringContaining('`rm -rf x`') });
  });

  it('never allows a command that is not a plain list by a prefix rule, only by Bash or the exact command', () => {
    const facts = {
      commands: {
        parsed: false as const,
        reason: 'redirection to a file',
        parts: [part('npm test')],
        otherSpellings: [],
      },
    };
    expect(decidePermission(bash('npm test > out', facts, { allow: ['Bash(npm test:*)'] }))).toMatchObject({
      behavior: 'ask',
      reason: expect.stringContaining('redirection to a file'),
    });
    expect(decidePermission(bash('npm test > out', facts, { allow: ['Bash(npm test > out)'] })).behavior).toBe('allow');
    expect(decidePermission(bash('npm test > out', facts, { allow: ['Bash'] })).behavior).toBe('allow');
    expect(decidePermission(bash('npm test > out', facts, { allow: ['Bash(npm test > out:*)'] })).behavior).toBe('ask');
  });

  it('allows a runner only by an exact rule', () => {
    const facts = plain(part('sudo apt update', false, true));
    expect(decidePermission(bash('sudo apt update', facts, { allow: ['Bash(sudo:*)'] })).behavior).toBe('ask');
    expect(decidePermission(bash('sudo apt update', facts, { allow: ['Bash(sudo apt update:*)'] })).behavior).toBe(
      'ask',
    );
    expect(decidePermission(bash('sudo  apt update', facts, { allow: ['Bash(sudo apt update)'] })).behavior).toBe(
      'allow',
    );
  });

  it('judges plan mode by the parts: read-only only when every part is', () => {
    expect(decidePermission(bash('ls; cat a', plain(part('ls', true), part('cat a', true)), {}, 'plan')).behavior).toBe(
      'allow',
    );
    expect(
      decidePermission(bash('ls; rm a', plain(part('ls', true), part('rm a')), { allow: ['Bash'] }, 'plan')).behavior,
    ).toBe('deny');
  });

  it('lets a hook allow lift the default ask of an unparsed command, but not a deny', () => {
    const facts = {
      commands: { parsed: false as const, reason: 'a `#` comment', parts: [part('rm x')], otherSpellings: [] },
    };
    expect(decidePermission({ ...bash('rm x # c', facts), hook: { decision: 'allow' } })).toMatchObject({
      behavior: 'allow',
      source: 'hook',
    });
    expect(
      decidePermission({ ...bash('rm x # c', facts, { deny: ['Bash(rm:*)'] }), hook: { decision: 'allow' } }).behavior,
    ).toBe('deny');
  });
});

describe('decidePermission with read paths (one read confinement)', () => {
  const readOnlyBash = (
    readPaths: string[],
    rules: { allow?: string[]; ask?: string[]; deny?: string[] } = {},
    mode: PermissionMode = 'default',
  ) =>
    decidePermission({
      subject: { toolName: 'Bash', content: 'cat x', contentKind: 'command', cwd },
      mode,
      rules: {
        allow: (rules.allow ?? []).map(parseRule),
        ask: (rules.ask ?? []).map(parseRule),
        deny: (rules.deny ?? []).map(parseRule),
      },
      remembered: [],
      readOnly: true,
      editsInsideCwd: false,
      alwaysAsk: false,
      facts: {
        commands: { parsed: true, parts: [{ content: 'cat x', readOnly: true }], otherSpellings: [] },
        readPaths,
      },
    });

  it.each([
    { name: 'a read inside cwd is allowed', readPaths: ['/p/src/a.ts'], expected: 'allow' },
    { name: 'a read outside cwd asks', readPaths: ['/etc/passwd'], expected: 'ask' },
    { name: 'a read that could not be located asks', readPaths: ['y'], expected: 'ask' },
    {
      name: 'a Read allow rule names a read outside cwd',
      readPaths: ['/etc/hosts'],
      allow: ['Read(/etc/**)'],
      expected: 'allow',
    },
    { name: 'a Read deny rule denies a read', readPaths: ['/p/.env'], deny: ['Read(.env)'], expected: 'deny' },
    {
      name: 'a Read deny rule denies even in bypassPermissions',
      readPaths: ['/p/.env'],
      deny: ['Read(.env)'],
      mode: 'bypassPermissions' as const,
      expected: 'deny',
    },
    { name: 'a whole-tool Read deny denies any read', readPaths: ['/p/src/a.ts'], deny: ['Read'], expected: 'deny' },
    { name: 'a Read ask rule asks', readPaths: ['/p/secret/a'], ask: ['Read(secret/**)'], expected: 'ask' },
    {
      name: 'a glob that may match a denied file denies',
      readPaths: ['/p/.e*'],
      deny: ['Read(.env)'],
      expected: 'deny',
    },
    {
      name: 'a glob does not match a dotfile with a leading wildcard',
      readPaths: ['/p/*'],
      deny: ['Read(.env)'],
      expected: 'allow',
    },
    { name: 'a tree read over a denied file denies', readPaths: ['/p/**'], deny: ['Read(.env)'], expected: 'deny' },
    {
      name: 'a tree read beside a denied file is allowed',
      readPaths: ['/p/src/**'],
      deny: ['Read(.env)'],
      expected: 'allow',
    },
    {
      name: 'a tree read over a denied directory denies',
      readPaths: ['/p/**'],
      deny: ['Read(secret/**)'],
      expected: 'deny',
    },
    {
      name: 'a read outside cwd in dontAsk is denied',
      readPaths: ['/etc/passwd'],
      mode: 'dontAsk' as const,
      expected: 'deny',
    },
  ])('$name', (row) => {
    expect(readOnlyBash(row.readPaths, row, row.mode).behavior).toBe(row.expected);
  });
});
