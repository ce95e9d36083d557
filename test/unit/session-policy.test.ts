import { describe, expect, it } from 'vitest';
import { parseRule } from '../../src/contracts/permission-rules.js';
import { decidePermission } from '../../src/contracts/decide-permission.js';
import type { PermissionInput } from '../../src/contracts/decide-permission.js';
import { parseRules } from '../../src/contracts/permission-rules.js';
import { PolicyState } from '../../src/workflows/session-policy.js';

const cwd = '/p';

function bashCall(options: {
  command: string;
  mode?: PermissionInput['mode'];
  allow?: string[];
  operator?: { allow?: string[]; ask?: string[]; deny?: string[] };
}): PermissionInput {
  return {
    subject: { toolName: 'Bash', content: options.command, contentKind: 'command', cwd },
    mode: options.mode ?? 'default',
    rules: { allow: (options.allow ?? []).map(parseRule), ask: [], deny: [] },
    remembered: [],
    readOnly: false,
    editsInsideCwd: false,
    alwaysAsk: false,
    hook: { decision: 'allow' },
    ...(options.operator === undefined
      ? {}
      : { operator: parseRules(options.operator, () => undefined, ' (operator)') }),
    // What Prepare finds for a plain list of simple commands, split on `&&`.
    facts: {
      commands: {
        parsed: true,
        parts: options.command.split(' && ').map((content) => ({ content, readOnly: content.startsWith('ls') })),
        otherSpellings: [],
      },
    },
  };
}

describe('operator rules: a tier no session rule, mode or hook can loosen', () => {
  it.each([
    {
      name: 'operator deny beats a session allow',
      command: 'touch a',
      allow: ['Bash'],
      operator: { deny: ['Bash(touch:*)'] },
      expected: 'deny',
    },
    {
      name: 'operator deny beats bypassPermissions',
      command: 'touch a',
      mode: 'bypassPermissions' as const,
      operator: { deny: ['Bash(touch:*)'] },
      expected: 'deny',
    },
    {
      name: 'operator ask beats a session allow and a hook allow',
      command: 'mkdir a',
      allow: ['Bash(mkdir:*)'],
      operator: { ask: ['Bash(mkdir:*)'] },
      expected: 'ask',
    },
    {
      name: 'operator ask holds in bypassPermissions',
      command: 'mkdir a',
      mode: 'bypassPermissions' as const,
      operator: { ask: ['Bash(mkdir:*)'] },
      expected: 'ask',
    },
    {
      name: 'operator ask turns into deny in dontAsk (stricter only)',
      command: 'mkdir a',
      mode: 'dontAsk' as const,
      operator: { ask: ['Bash(mkdir:*)'] },
      expected: 'deny',
    },
    {
      name: 'operator deny reaches a part of a compound command',
      command: 'ls && touch a',
      allow: ['Bash'],
      operator: { deny: ['Bash(touch:*)'] },
      expected: 'deny',
    },
    { name: 'operator allow allows', command: 'touch a', operator: { allow: ['Bash(touch:*)'] }, expected: 'allow' },
    {
      name: 'without operator rules the session allow decides',
      command: 'touch a',
      allow: ['Bash(touch:*)'],
      expected: 'allow',
    },
  ])('$name', ({ command, mode, allow, operator, expected }) => {
    const decision = decidePermission(
      bashCall({
        command,
        ...(mode === undefined ? {} : { mode }),
        ...(allow === undefined ? {} : { allow }),
        ...(operator === undefined ? {} : { operator }),
      }),
    );
    expect(decision.behavior).toBe(expected);
    if (operator !== undefined && expected !== 'allow' && mode !== 'dontAsk')
      expect(decision.reason).toContain('(operator)');
  });
});

describe('PolicyState', () => {
  it('versions each update; a rule list given replaces that list, one left out is kept; continue-as-new carries it', () => {
    const policy = new PolicyState({ rules: { allow: ['Read'], deny: ['Bash(rm:*)'] } }, undefined);
    expect(policy.version).toBe(1);
    expect(policy.carry()).toEqual({});
    expect(policy.update({ rules: { allow: ['Bash(touch:*)'] }, permissionMode: 'acceptEdits' })).toBe(2);
    expect(policy.ruleTexts).toEqual({ allow: ['Bash(touch:*)'], deny: ['Bash(rm:*)'] });
    expect(policy.permissionMode).toBe('acceptEdits');
    const next = new PolicyState({ rules: { allow: ['Read'] } }, policy.carry());
    expect(next.version).toBe(2);
    expect(next.rules.allow.map((rule) => rule.source)).toEqual(['Bash(touch:*)']);
    expect(next.permissionMode).toBe('acceptEdits');
  });

  it('counts limits per session and per turn; a spent limit denies naming it, counts nothing, and can be given back', () => {
    const policy = new PolicyState(
      {
        limits: [
          { rule: 'Bash(touch:*)', max: 1, per: 'session' },
          { rule: 'Bash', max: 2, per: 'turn' },
        ],
      },
      undefined,
    );
    const touch = (rule: ReturnType<typeof parseRule>): boolean => rule.toolName === 'Bash';
    expect(policy.takeLimits('t1', touch)).toEqual({ taken: [0, 1] });
    const spent = policy.takeLimits('t1', touch);
    expect(spent).toEqual({
      denied: 'Denied by the limit Bash(touch:*) (at most 1 per session): 1 matching call has already run.',
    });
    policy.returnLimits('t1', [0, 1]);
    expect(policy.takeLimits('t1', touch)).toEqual({ taken: [0, 1] });
    expect(
      new PolicyState({ limits: [{ rule: 'Bash(touch:*)', max: 1, per: 'session' }] }, policy.carry()).takeLimits(
        't9',
        touch,
      ),
    ).toMatchObject({ denied: expect.stringContaining('at most 1 per session') });
    const perTurn = policy.takeLimits('t2', (rule) => rule.content === undefined);
    expect(perTurn).toEqual({ taken: [1] });
  });

  it('reports a limit or shadow rule that does not parse as the session rule error', () => {
    expect(new PolicyState({ limits: [{ rule: 'Bash(', max: 1, per: 'turn' }] }, undefined).ruleError).toContain(
      'Invalid permission rule',
    );
    expect(new PolicyState({ shadowRules: { deny: ['(x'] } }, undefined).ruleError).toContain(
      'Invalid permission rule',
    );
  });
});
