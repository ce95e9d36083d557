import { describe, expect, it } from 'vitest';
import { RuleSyntaxError, globToRegExp, parseRule, ruleMatches } from '../../src/contracts/permission-rules.js';
import type { RuleSubject } from '../../src/contracts/permission-rules.js';

const cwd = '/work/project';
const bash = (command: string): RuleSubject => ({ toolName: 'Bash', content: command, contentKind: 'command', cwd });
const read = (file: string): RuleSubject => ({ toolName: 'Read', content: file, contentKind: 'path', cwd });
const fetch = (url: string): RuleSubject => ({ toolName: 'WebFetch', content: url, contentKind: 'url', cwd });
const matches = (rule: string, subject: RuleSubject) => ruleMatches(parseRule(rule), subject);

describe('permission rules (Claude Code syntax)', () => {
  it('parses whole-tool and content rules, and rejects garbage', () => {
    expect(parseRule('Bash')).toEqual({ toolName: 'Bash', source: 'Bash' });
    expect(parseRule('Bash(*)')).toEqual({ toolName: 'Bash', source: 'Bash(*)' });
    expect(parseRule('Bash(npm run test:*)')).toEqual({ toolName: 'Bash', content: 'npm run test:*', source: 'Bash(npm run test:*)' });
    expect(() => parseRule('Bash(')).toThrow(RuleSyntaxError);
    expect(() => parseRule('')).toThrow(RuleSyntaxError);
  });

  it('matches a whole tool, and only that tool', () => {
    expect(matches('Bash', bash('rm -rf /'))).toBe(true);
    expect(matches('Bash', read(`${cwd}/a`))).toBe(false);
  });

  it('matches command prefixes with :* on word boundaries, and exact commands otherwise', () => {
    expect(matches('Bash(npm run test:*)', bash('npm run test'))).toBe(true);
    expect(matches('Bash(npm run test:*)', bash('npm run test -- --watch'))).toBe(true);
    expect(matches('Bash(npm run test:*)', bash('npm run testing'))).toBe(false);
    expect(matches('Bash(npm test)', bash('npm test'))).toBe(true);
    expect(matches('Bash(npm test)', bash('npm test && rm -rf /'))).toBe(false);
  });

  it('matches path globs relative to cwd, and absolute ones', () => {
    expect(matches('Read(src/**)', read(`${cwd}/src/a/b.ts`))).toBe(true);
    expect(matches('Read(src/**)', read(`${cwd}/test/a.ts`))).toBe(false);
    expect(matches('Read(src/*.ts)', read(`${cwd}/src/a/b.ts`))).toBe(false);
    expect(matches('Read(**/*.env)', read(`${cwd}/deep/x/prod.env`))).toBe(true);
    expect(matches('Read(**/.env)', read(`${cwd}/deep/x/.env`))).toBe(true);
    expect(matches('Read(**/.env)', read(`${cwd}/.env`))).toBe(true);
    expect(matches('Read(/etc/**)', read('/etc/passwd'))).toBe(true);
    expect(matches('Read(//etc/**)', read('/etc/passwd'))).toBe(true);
    expect(matches('Read(src/**)', read('/elsewhere/src/a.ts'))).toBe(false);
  });

  it('matches WebFetch domains and their subdomains only', () => {
    expect(matches('WebFetch(domain:example.com)', fetch('https://example.com/x'))).toBe(true);
    expect(matches('WebFetch(domain:example.com)', fetch('https://docs.example.com/x'))).toBe(true);
    expect(matches('WebFetch(domain:example.com)', fetch('https://badexample.com/x'))).toBe(false);
    expect(matches('WebFetch(domain:example.com)', fetch('https://example.com.evil.io/'))).toBe(false);
  });

  it('escapes regular-expression characters in globs', () => {
    expect(globToRegExp('a.b').test('axb')).toBe(false);
    expect(globToRegExp('a?c').test('abc')).toBe(true);
  });
});
