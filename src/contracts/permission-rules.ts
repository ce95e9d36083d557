/**
 * Permission rules in Claude Code's syntax, pure so the workflow can match them:
 * `Bash` (every call), `Bash(npm run test:*)` (prefix), `Bash(npm test)` (exact), `Read(src/**)` (glob against the
 * path relative to cwd, or absolute when the pattern starts with `/`; the Glob tool's dialect, see `glob-match.ts`:
 * `Read(src/*.{ts,js})`, `Read([abc].ts)`), `WebFetch(domain:example.com)` (host or a subdomain of it), `Tool(*)`
 * (every call).
 *
 * As in Claude Code, some rules cover more than their own tool (`ruleCoversTool`): `Edit(...)` rules cover Write,
 * `Read(...)` rules cover Grep and Glob, and `mcp__server` or `mcp__server__*` covers every tool of that MCP server.
 */

import { GlobSyntaxError, compileGlob, isGlobPattern } from './glob-match.js';
import type { PermissionRules } from './session.js';

/** How a tool's rule content is matched; declared by the tool. */
export type RuleContentKind = 'command' | 'path' | 'url' | 'text';

export interface ParsedRule {
  toolName: string;
  /** Undefined: the rule names the whole tool. */
  content?: string;
  source: string;
}

export interface ParsedRules {
  allow: ParsedRule[];
  ask: ParsedRule[];
  deny: ParsedRule[];
}

/** How a reason names a rule of the operator's policy file. */
export const OPERATOR_RULE_LABEL = " (the operator's policy)";

export class RuleSyntaxError extends Error {
  override readonly name = 'RuleSyntaxError';
}

export function parseRule(rule: string): ParsedRule {
  const text = rule.trim();
  const match = /^([^()\s]+)(?:\((.*)\))?$/s.exec(text);
  if (match === null || match[1] === undefined) {
    throw new RuleSyntaxError(`Invalid permission rule "${rule}": expected Tool or Tool(content)`);
  }
  const content = match[2];
  if (content === undefined || content === '' || content === '*') return { toolName: match[1], source: rule };
  return { toolName: match[1], content, source: rule };
}

/** The call as rules see it. */
export interface RuleSubject {
  toolName: string;
  content?: string;
  contentKind: RuleContentKind;
  /** Absolute session cwd, for relative path patterns. */
  cwd: string;
}

/** A rule's glob against a path; a pattern that cannot be compiled (`[[:foo:]]`) names only itself, spelt literally. */
function ruleGlobMatches(pattern: string, path: string): boolean {
  try {
    return compileGlob(pattern).test(path);
  } catch (error) {
    if (error instanceof GlobSyntaxError) return pattern === path;
    throw error;
  }
}

function relativeTo(cwd: string, absolute: string): string | undefined {
  const root = cwd.endsWith('/') ? cwd : `${cwd}/`;
  if (absolute === cwd) return '.';
  return absolute.startsWith(root) ? absolute.slice(root.length) : undefined;
}

function hostOf(url: string): string | undefined {
  const match = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?(\[[^\]]+\]|[^:/?#]+)/i.exec(url);
  return match?.[1]?.toLowerCase();
}

/** Tools whose calls the rules of another tool also govern (Claude Code: Edit rules cover every editing tool, Read rules every reading tool). */
const COVERED_TOOLS = new Map<string, readonly string[]>([
  ['Edit', ['Write', 'MultiEdit', 'NotebookEdit']],
  ['Read', ['Grep', 'Glob', 'LS', 'NotebookRead']],
]);

/** Whether a rule written for `ruleTool` governs calls of `tool`: the same tool, a covered tool, or an MCP server's tool. */
export function ruleCoversTool(ruleTool: string, tool: string): boolean {
  if (ruleTool === tool) return true;
  if (COVERED_TOOLS.get(ruleTool)?.includes(tool) === true) return true;
  if (!ruleTool.startsWith('mcp__') || !tool.startsWith('mcp__')) return false;
  // `mcp__server__*` and `mcp__server`: every tool of that server (`mcp__server__tool`).
  const server = ruleTool.endsWith('__*') ? ruleTool.slice(0, -1) : `${ruleTool}__`;
  return tool.startsWith(server) && tool.length > server.length;
}

/** Whether a rule is a prefix rule (`Bash(npm test:*)`). */
export function isPrefixRule(rule: ParsedRule): boolean {
  return rule.content?.endsWith(':*') === true;
}

/**
 * Whether one rule matches a call. With `beneath` (deny and ask rules), a path rule without wildcards also names
 * everything inside that directory: `Read(secret)` covers `secret/k.txt`, but never `secret2/…`.
 */
export function ruleMatches(rule: ParsedRule, subject: RuleSubject, options: { beneath?: boolean } = {}): boolean {
  if (!ruleCoversTool(rule.toolName, subject.toolName)) return false;
  if (rule.content === undefined) return true;
  const content = subject.content;
  if (content === undefined) return false;
  switch (subject.contentKind) {
    case 'command':
    case 'text': {
      if (rule.content.endsWith(':*')) {
        const prefix = rule.content.slice(0, -2);
        return (
          content === prefix ||
          content.startsWith(`${prefix} `) ||
          (subject.contentKind === 'text' && content.startsWith(prefix))
        );
      }
      return content === rule.content;
    }
    case 'path': {
      const pattern = rule.content.startsWith('//') ? rule.content.slice(1) : rule.content;
      const beneath = (literal: string, path: string): boolean =>
        options.beneath === true && !isGlobPattern(literal) && path.startsWith(`${literal.replace(/\/+$/, '')}/`);
      if (pattern.startsWith('/')) return ruleGlobMatches(pattern, content) || beneath(pattern, content);
      const relative = relativeTo(subject.cwd, content);
      const relativePattern = pattern.replace(/^\.\//, '');
      return (
        relative !== undefined && (ruleGlobMatches(relativePattern, relative) || beneath(relativePattern, relative))
      );
    }
    case 'url': {
      if (rule.content.startsWith('domain:')) {
        const domain = rule.content.slice('domain:'.length).toLowerCase();
        const host = hostOf(content);
        return host !== undefined && (host === domain || host.endsWith(`.${domain}`));
      }
      return content === rule.content;
    }
    default: {
      const exhaustive: never = subject.contentKind;
      return exhaustive;
    }
  }
}

/** The first rule of a list that matches, if any (`beneath`: see `ruleMatches`). */
export function findMatchingRule(
  rules: readonly ParsedRule[],
  subject: RuleSubject,
  options: { beneath?: boolean } = {},
): ParsedRule | undefined {
  return rules.find((rule) => ruleMatches(rule, subject, options));
}

/** Whether one path segment matches one glob segment: `*`, `?`, `[...]` (any one character), no leading `.` for a wildcard. */
function segmentMatches(pattern: string, name: string): boolean {
  if (name.startsWith('.') && /^[*?[]/.test(pattern)) return false;
  // Two pointers with one backtrack point (the last `*`): linear in practice, never exponential on model input.
  let p = 0;
  let n = 0;
  let star = -1;
  let resume = 0;
  while (n < name.length) {
    const char = pattern[p];
    if (char === '[') {
      const end = pattern.indexOf(']', p + 2);
      if (end > 0) {
        p = end + 1;
        n += 1;
        continue;
      }
    }
    if (char === '?' || (char !== undefined && char !== '*' && char === name[n])) {
      p += 1;
      n += 1;
    } else if (char === '*') {
      star = p;
      resume = n;
      p += 1;
    } else if (star >= 0) {
      p = star + 1;
      resume += 1;
      n = resume;
    } else {
      return false;
    }
  }
  while (pattern[p] === '*') p += 1;
  return p === pattern.length;
}

/**
 * Whether an absolute path matches a bash glob pattern: `*`, `?` and `[...]` stay within one segment and, as bash's
 * globbing does, do not match a leading `.`; a final `/**` (how a recursive read is described) matches everything
 * beneath. Linear, not a RegExp: patterns come from the model and are matched inside the workflow.
 */
export function bashGlobMatches(pattern: string, path: string): boolean {
  const patternSegments = pattern.split('/');
  const pathSegments = path.split('/');
  const tree = patternSegments.at(-1) === '**';
  if (tree) patternSegments.pop();
  if (tree ? pathSegments.length <= patternSegments.length : pathSegments.length !== patternSegments.length)
    return false;
  return patternSegments.every((segment, index) => segmentMatches(segment, pathSegments[index] ?? ''));
}

/** Wildcards of a bash glob (a read path the model wrote, `cat *.env`). */
const GLOB_CHAR = /[*?[]/;

/** Characters that may start glob syntax in a rule pattern (picomatch: wildcards, classes, braces, extglobs, escapes). */
const RULE_GLOB_CHAR = /[*?[{(!+@\\]/;

/** A path rule's pattern as an absolute glob (relative patterns are relative to cwd). */
function absolutePattern(content: string, cwd: string): string {
  const pattern = content.startsWith('//') ? content.slice(1) : content;
  if (pattern.startsWith('/')) return pattern;
  return `${cwd.endsWith('/') ? cwd.slice(0, -1) : cwd}/${pattern.replace(/^\.\//, '')}`;
}

/**
 * Whether a `Read(...)` rule may match something a read path names: exactly for a plain path; for a glob pattern
 * (`cat *.env`, a tree read `dir/**`), whether the two could name the same file (fail-closed approximation).
 */
export function readRuleMayMatch(rule: ParsedRule, readPath: string, cwd: string): boolean {
  if (rule.toolName !== 'Read') return false;
  if (rule.content === undefined) return true;
  // A read that could not be located (an expansion, a directory too large to list) may be any file: fail closed.
  if (!readPath.startsWith('/')) return true;
  if (!GLOB_CHAR.test(readPath))
    return ruleMatches(rule, { toolName: 'Read', content: readPath, contentKind: 'path', cwd }, { beneath: true });
  const denied = absolutePattern(rule.content, cwd);
  if (!isGlobPattern(denied)) return bashGlobMatches(readPath, denied);
  const readLiteral = readPath.slice(0, readPath.search(GLOB_CHAR));
  const deniedLiteral = denied.slice(0, Math.max(0, denied.search(RULE_GLOB_CHAR)));
  return deniedLiteral.startsWith(readLiteral) || readLiteral.startsWith(deniedLiteral);
}

/** What a call's read paths mean for permission: a deny or ask rule that reaches one, and the first read outside cwd. */
export interface ReadPathFindings {
  denied?: { rule: ParsedRule; readPath: string };
  asked?: { rule: ParsedRule; readPath: string };
  /** A read outside cwd (or that could not be located) that no `Read(...)` allow rule names. */
  unconfined?: string;
}

/** Checks read paths against `Read(...)` rules and cwd (see `PermissionFacts.readPaths`). */
export function checkReadPaths(options: {
  readPaths: readonly string[];
  rules: { allow: readonly ParsedRule[]; ask: readonly ParsedRule[]; deny: readonly ParsedRule[] };
  cwd: string;
}): ReadPathFindings {
  const { readPaths, rules, cwd } = options;
  const findings: ReadPathFindings = {};
  const root = cwd.endsWith('/') ? cwd : `${cwd}/`;
  for (const readPath of readPaths) {
    const deny = rules.deny.find((rule) => readRuleMayMatch(rule, readPath, cwd));
    if (deny !== undefined && findings.denied === undefined) findings.denied = { rule: deny, readPath };
    const ask = rules.ask.find((rule) => readRuleMayMatch(rule, readPath, cwd));
    if (ask !== undefined && findings.asked === undefined) findings.asked = { rule: ask, readPath };
    if (findings.unconfined !== undefined) continue;
    const literal = GLOB_CHAR.test(readPath) ? readPath.slice(0, readPath.search(GLOB_CHAR)) : readPath;
    const inside = readPath.startsWith('/') && (literal === cwd || literal.startsWith(root) || `${literal}/` === root);
    const allowed =
      readPath.startsWith('/') &&
      !GLOB_CHAR.test(readPath) &&
      rules.allow.some(
        (rule) =>
          rule.toolName === 'Read' &&
          rule.content !== undefined &&
          ruleMatches(rule, { toolName: 'Read', content: readPath, contentKind: 'path', cwd }),
      );
    if (!inside && !allowed) findings.unconfined = readPath;
  }
  return findings;
}

/** Parses a rule set; the first rule that does not parse is reported through `onError` and left out. */
export function parseRules(
  rules: PermissionRules | undefined,
  onError: (message: string) => void,
  label = '',
): ParsedRules {
  const parse = (list: readonly string[] | undefined): ParsedRule[] =>
    (list ?? []).flatMap((rule) => {
      try {
        const parsed = parseRule(rule);
        return [label === '' ? parsed : { ...parsed, source: `${rule}${label}` }];
      } catch (error) {
        onError((error as Error).message);
        return [];
      }
    });
  return { allow: parse(rules?.allow), ask: parse(rules?.ask), deny: parse(rules?.deny) };
}
