/**
 * Permission rules in Claude Code's syntax, pure so the workflow can match them:
 * `Bash` (every call), `Bash(npm run test:*)` (prefix), `Bash(npm test)` (exact), `Read(src/**)` (glob against the
 * path relative to cwd, or absolute when the pattern starts with `/`), `WebFetch(domain:example.com)` (host or a
 * subdomain of it), `Tool(*)` (every call).
 */

/** How a tool's rule content is matched; declared by the tool. */
export type RuleContentKind = 'command' | 'path' | 'url' | 'text';

export interface ParsedRule {
  toolName: string;
  /** Undefined: the rule names the whole tool. */
  content?: string;
  source: string;
}

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

/** Glob to RegExp: `**` any characters, `*` any but `/`, `?` one but `/`. */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let index = 0; index < glob.length; index++) {
    const char = glob[index] ?? '';
    if (char === '*') {
      if (glob[index + 1] === '*') {
        index += 1;
        if (glob[index + 1] === '/') {
          index += 1;
          source += '(?:.*/)?';
        } else {
          source += '.*';
        }
      } else {
        source += '[^/]*';
      }
    } else if (char === '?') {
      source += '[^/]';
    } else {
      source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    }
  }
  return new RegExp(`^${source}$`, 's');
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

/** Whether one rule matches a call. */
export function ruleMatches(rule: ParsedRule, subject: RuleSubject): boolean {
  if (rule.toolName !== subject.toolName) return false;
  if (rule.content === undefined) return true;
  const content = subject.content;
  if (content === undefined) return false;
  switch (subject.contentKind) {
    case 'command':
    case 'text': {
      if (rule.content.endsWith(':*')) {
        const prefix = rule.content.slice(0, -2);
        return content === prefix || content.startsWith(`${prefix} `) || (subject.contentKind === 'text' && content.startsWith(prefix));
      }
      return content === rule.content;
    }
    case 'path': {
      const pattern = rule.content.startsWith('//') ? rule.content.slice(1) : rule.content;
      if (pattern.startsWith('/')) return globToRegExp(pattern).test(content);
      const relative = relativeTo(subject.cwd, content);
      return relative !== undefined && globToRegExp(pattern.replace(/^\.\//, '')).test(relative);
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

/** The first rule of a list that matches, if any. */
export function findMatchingRule(rules: readonly ParsedRule[], subject: RuleSubject): ParsedRule | undefined {
  return rules.find((rule) => ruleMatches(rule, subject));
}
