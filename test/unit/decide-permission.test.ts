import { describe, expect, it } from 'vitest';
import type { PermissionMode } from '../../src/contracts/session.js';
import { decidePermission } from '../../src/workflows/decide-permission.js';
import type { HookPermissionDecision, PermissionInput } from '../../src/workflows/decide-permission.js';
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
    rules: { allow: (row.allow ?? []).map(parseRule), ask: (row.ask ?? []).map(parseRule), deny: (row.deny ?? []).map(parseRule) },
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
  { name: 'a hook allow does not skip an explicit ask rule', hook: 'allow', ask: ['Bash'], expected: 'ask', source: 'rule' },
  { name: 'a hook allow does not skip alwaysAsk', hook: 'allow', alwaysAsk: true, expected: 'ask', source: 'tool' },
  { name: 'a hook ask turns an allow rule into an ask', hook: 'ask', allow: ['Bash'], expected: 'ask', source: 'hook' },
  { name: 'a hook ask turns a read-only allow into an ask', hook: 'ask', tool: 'Read', expected: 'ask', source: 'hook' },
  { name: 'a remembered allow allows', remembered: ['Bash(rm:*)'], expected: 'allow', source: 'remembered' },
  { name: 'a remembered allow does not beat an ask rule', remembered: ['Bash'], ask: ['Bash(rm:*)'], expected: 'ask', source: 'rule' },
  { name: 'a remembered allow does not beat alwaysAsk', remembered: ['Bash'], alwaysAsk: true, expected: 'ask', source: 'tool' },
  { name: 'alwaysAsk asks even with an allow rule', alwaysAsk: true, allow: ['Bash'], expected: 'ask', source: 'tool' },
  { name: 'acceptEdits allows an edit inside cwd', tool: 'Edit', mode: 'acceptEdits', expected: 'allow', source: 'mode' },
  { name: 'acceptEdits still asks for Bash', mode: 'acceptEdits', expected: 'ask' },
  { name: 'acceptEdits respects an explicit ask rule', tool: 'Edit', mode: 'acceptEdits', ask: ['Edit'], expected: 'ask', source: 'rule' },
  { name: 'plan mode denies a side-effecting tool', mode: 'plan', expected: 'deny', source: 'mode' },
  { name: 'plan mode denies even with an allow rule', mode: 'plan', allow: ['Bash'], expected: 'deny', source: 'mode' },
  { name: 'plan mode allows a read-only tool', mode: 'plan', tool: 'Read', expected: 'allow' },
  { name: 'bypassPermissions allows what would ask', mode: 'bypassPermissions', ask: ['Bash'], alwaysAsk: true, expected: 'allow', source: 'mode' },
  { name: 'dontAsk denies what would ask', mode: 'dontAsk', expected: 'deny', source: 'mode' },
  { name: 'dontAsk denies an explicit ask rule', mode: 'dontAsk', ask: ['Bash'], allow: ['Bash'], expected: 'deny', source: 'mode' },
  { name: 'dontAsk still allows an allow rule', mode: 'dontAsk', allow: ['Bash'], expected: 'allow', source: 'rule' },
  { name: 'dontAsk still allows read-only tools', mode: 'dontAsk', tool: 'Read', expected: 'allow' },
  { name: 'dontAsk denies a hook ask', mode: 'dontAsk', hook: 'ask', allow: ['Bash'], expected: 'deny' },
  { name: "prepareApproval narrows a default ask to allow", narrow: true, expected: 'allow', source: 'tool' },
  { name: "prepareApproval does not lift an explicit ask rule", narrow: true, ask: ['Bash'], expected: 'ask', source: 'rule' },
  { name: "prepareApproval does not lift alwaysAsk", narrow: true, alwaysAsk: true, expected: 'ask', source: 'tool' },
];

describe('decidePermission', () => {
  it.each(rows)('$name', (row) => {
    const decision = decidePermission(input(row));
    expect(decision.behavior).toBe(row.expected);
    if (row.source !== undefined) expect(decision.source).toBe(row.source);
    if (row.deny !== undefined || row.hook === 'deny') expect(decision.behavior).toBe('deny');
  });

  it('gives the hook reason, or the seed default, for a hook deny', () => {
    expect(decidePermission({ ...input({ name: '', expected: 'deny' }), hook: { decision: 'deny' } }).reason).toBe('Blocked by PreToolUse hook');
    expect(decidePermission({ ...input({ name: '', expected: 'deny' }), hook: { decision: 'deny', reason: 'no rm' } }).reason).toBe('no rm');
  });
});
