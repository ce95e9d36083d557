import { describe, expect, it } from 'vitest';
import {
  RuleSyntaxError,
  bashGlobMatches,
  checkReadPaths,
  parseRule,
  readRuleMayMatch,
  ruleCoversTool,
  ruleMatches,
} from '../../src/contracts/permission-rules.js';
import type { RuleSubject } from '../../src/contracts/permission-rules.js';
import { costRatio } from '../support/growth.js';

const cwd = '/work/project';
const bash = (command: string): RuleSubject => ({ toolName: 'Bash', content: command, contentKind: 'command', cwd });
const read = (file: string): RuleSubject => ({ toolName: 'Read', content: file, contentKind: 'path', cwd });
const fetch = (url: string): RuleSubject => ({ toolName: 'WebFetch', content: url, contentKind: 'url', cwd });
const matches = (rule: string, subject: RuleSubject) => ruleMatches(parseRule(rule), subject);

describe('permission rules (Claude Code syntax)', () => {
  it('parses whole-tool and content rules, and rejects garbage', () => {
    expect(parseRule('Bash')).toEqual({ toolName: 'Bash', source: 'Bash' });
    expect(parseRule('Bash(*)')).toEqual({ toolName: 'Bash', source: 'Bash(*)' });
    expect(parseRule('Bash(npm run test:*)')).toEqual({
      toolName: 'Bash',
      content: 'npm run test:*',
      source: 'Bash(npm run test:*)',
    });
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
    expect(matches('Read(a.b)', read(`${cwd}/axb`))).toBe(false);
    expect(matches('Read(a?c)', read(`${cwd}/abc`))).toBe(true);
    expect(matches('Read(a+b$)', read(`${cwd}/a+b$`))).toBe(true);
    expect(matches('Read(a+b$)', read(`${cwd}/aab`))).toBe(false);
  });

  it("reads path patterns in the Glob tool's dialect: braces, classes, dotfiles", () => {
    expect(matches('Read(src/*.{ts,js})', read(`${cwd}/src/a.ts`))).toBe(true);
    expect(matches('Read(src/*.{ts,js})', read(`${cwd}/src/a.js`))).toBe(true);
    expect(matches('Read(src/*.{ts,js})', read(`${cwd}/src/a.md`))).toBe(false);
    expect(matches('Read(src/[abc].ts)', read(`${cwd}/src/b.ts`))).toBe(true);
    expect(matches('Read(src/[abc].ts)', read(`${cwd}/src/d.ts`))).toBe(false);
    expect(matches('Read(src/[!abc].ts)', read(`${cwd}/src/d.ts`))).toBe(true);
    // A file named like the pattern is named by it too (Next.js routes: `[id].ts`).
    expect(matches('Read(src/[abc].ts)', read(`${cwd}/src/[abc].ts`))).toBe(true);
    expect(matches('Read(src/**)', read(`${cwd}/src/.env`))).toBe(true);
    expect(matches('Read(src/*)', read(`${cwd}/src/.env`))).toBe(true);
    expect(matches('Read(src/\\*.ts)', read(`${cwd}/src/*.ts`))).toBe(true);
    expect(matches('Read(src/\\*.ts)', read(`${cwd}/src/a.ts`))).toBe(false);
  });

  it('never throws on a rule pattern the matcher cannot compile: it names only itself', () => {
    expect(matches('Read([[:nope:]])', read(`${cwd}/[[:nope:]]`))).toBe(true);
    expect(matches('Read([[:nope:]])', read(`${cwd}/n`))).toBe(false);
  });

  it('matches a long path against a rule in linear time (rules are matched inside the workflow)', () => {
    expect(matches(`Read(${'*a'.repeat(20)}b*)`, read(`${cwd}/${'a'.repeat(250)}`))).toBe(false);
    expect(matches('Read(**/*.env)', read(`${cwd}/${'a/'.repeat(5_000)}x`))).toBe(false);
    // Not a wall-clock bound (a loaded machine breaks those): four times the path costs about four times the time,
    // where a backtracking matcher's cost multiplies by thousands (test/support/growth.ts).
    const stars = (length: number) => () => matches(`Read(${'*a'.repeat(20)}b*)`, read(`${cwd}/${'a'.repeat(length)}`));
    expect(costRatio(stars(2_000), stars(8_000))).toBeLessThan(12);
    const deep = (depth: number) => () => matches('Read(**/*.env)', read(`${cwd}/${'a/'.repeat(depth)}x`));
    expect(costRatio(deep(2_000), deep(8_000))).toBeLessThan(12);
  });

  it("lets Edit rules cover Write, Read rules cover Grep and Glob, and MCP server rules cover the server's tools", () => {
    expect(ruleCoversTool('Edit', 'Write')).toBe(true);
    expect(ruleCoversTool('Write', 'Edit')).toBe(false);
    expect(ruleCoversTool('Read', 'Grep')).toBe(true);
    expect(ruleCoversTool('Read', 'Glob')).toBe(true);
    expect(ruleCoversTool('Read', 'Bash')).toBe(false);
    expect(ruleCoversTool('mcp__srv', 'mcp__srv__tool')).toBe(true);
    expect(ruleCoversTool('mcp__srv__*', 'mcp__srv__tool')).toBe(true);
    expect(ruleCoversTool('mcp__srv__tool', 'mcp__srv__tool')).toBe(true);
    expect(ruleCoversTool('mcp__srv', 'mcp__srv2__tool')).toBe(false);
    expect(ruleCoversTool('mcp__sr', 'mcp__srv__tool')).toBe(false);
    expect(ruleCoversTool('mcp__srv__*', 'mcp__srv__')).toBe(false);
    expect(matches('Edit(.env)', { toolName: 'Write', content: `${cwd}/.env`, contentKind: 'path', cwd })).toBe(true);
    expect(matches('Read(.env)', { toolName: 'Grep', content: `${cwd}/.env`, contentKind: 'path', cwd })).toBe(true);
  });

  it('matches bash globs segment by segment, without a leading dot, and a final /** beneath', () => {
    expect(bashGlobMatches('/p/*.md', '/p/a.md')).toBe(true);
    expect(bashGlobMatches('/p/*.md', '/p/sub/a.md')).toBe(false);
    expect(bashGlobMatches('/p/*', '/p/.env')).toBe(false);
    expect(bashGlobMatches('/p/.e*', '/p/.env')).toBe(true);
    expect(bashGlobMatches('/p/?env', '/p/.env')).toBe(false);
    expect(bashGlobMatches('/p/[.]env', '/p/.env')).toBe(false);
    expect(bashGlobMatches('/p/[ab]x', '/p/bx')).toBe(true);
    expect(bashGlobMatches('/p/**', '/p/deep/.env')).toBe(true);
    expect(bashGlobMatches('/p/**', '/p')).toBe(false);
    expect(bashGlobMatches('/p/a*b*c', '/p/aXbYc')).toBe(true);
    expect(bashGlobMatches('/p/a*b*c', '/p/aXbY')).toBe(false);
  });

  it('matches a pathological model glob in linear time (it runs inside the workflow)', () => {
    expect(bashGlobMatches(`/p/${'*a'.repeat(40)}b`, `/p/${'a'.repeat(250)}`)).toBe(false);
    expect(readRuleMayMatch(parseRule(`Read(${'a'.repeat(200)})`), `/p/${'*a'.repeat(40)}b`, '/p')).toBe(false);
    // Growth, not a wall-clock bound (test/support/growth.ts): linear is about 4 at four times the length.
    const glob = (length: number) => () => bashGlobMatches(`/p/${'*a'.repeat(40)}b`, `/p/${'a'.repeat(length)}`);
    expect(costRatio(glob(5_000), glob(20_000))).toBeLessThan(12);
    const rule = (length: number) => () =>
      readRuleMayMatch(parseRule(`Read(${'a'.repeat(length)})`), `/p/${'*a'.repeat(40)}b`, '/p');
    expect(costRatio(rule(5_000), rule(20_000))).toBeLessThan(12);
  });

  it('checks read paths against Read rules and cwd', () => {
    const rules = (deny: string[], allow: string[] = []) => ({
      allow: allow.map(parseRule),
      ask: [],
      deny: deny.map(parseRule),
    });
    expect(checkReadPaths({ readPaths: [`${cwd}/.env`], rules: rules(['Read(.env)']), cwd }).denied?.rule.source).toBe(
      'Read(.env)',
    );
    expect(
      checkReadPaths({ readPaths: [`${cwd}/sub/.env`], rules: rules(['Read(.env)']), cwd }).denied,
    ).toBeUndefined();
    expect(
      checkReadPaths({ readPaths: [`${cwd}/sub/.env`], rules: rules(['Read(**/.env)']), cwd }).denied,
    ).toBeDefined();
    expect(checkReadPaths({ readPaths: ['/etc/passwd'], rules: rules([]), cwd }).unconfined).toBe('/etc/passwd');
    expect(
      checkReadPaths({ readPaths: ['/etc/passwd'], rules: rules([], ['Read(/etc/**)']), cwd }).unconfined,
    ).toBeUndefined();
    expect(checkReadPaths({ readPaths: [`${cwd}`, `${cwd}/a`], rules: rules([]), cwd })).toEqual({});
    expect(checkReadPaths({ readPaths: [`${cwd}2/a`], rules: rules([]), cwd }).unconfined).toBe(`${cwd}2/a`);
  });
});
